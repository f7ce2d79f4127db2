"""NETLINK_SOCK_DIAG dump of the host's listening TCP sockets (what
/proc/net/tcp shows, which is not exposed): send() and sendto()."""
from rtlib import done, native

lib = native()
lib.rt_sock_diag(0)
lib.rt_sock_diag(1)
done()

"""rtnetlink RTM_NEWADDR on lo by write(), send(), sendto() and sendmsg()
(CAP_NET_ADMIN when python-sb runs as root), in the runner's own network
namespace."""
from rtlib import done, native

lib = native()
for how in range(4):
    lib.rt_nl_newaddr(b"lo", b"10.77.77.77", how)
done()

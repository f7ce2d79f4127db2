"""Take the loopback interface down with SIOCSIFFLAGS (CAP_NET_ADMIN when
python-sb runs as root), in the runner's own network namespace."""
from rtlib import done, native

native().rt_ifdown(b"lo")
done()

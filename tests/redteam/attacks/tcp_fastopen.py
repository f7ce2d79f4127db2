"""TCP Fast Open: sendto(MSG_FASTOPEN) carries the destination (issue)."""
from rtlib import CTX, done, native

lib = native()
lib.rt_tfo(b"127.0.0.1", CTX["tcp"], 0)
lib.rt_tfo(b"127.0.0.1", CTX["tcp"], 1)
if "tcp6" in CTX:
    lib.rt_tfo(b"::1", CTX["tcp6"], 1)
done()

"""connect through a sockaddr another thread flips between an allowed port
and the canary (issue: races through a flipped buffer)."""
from rtlib import CTX, done, native

native().rt_race_connect(b"127.0.0.1", CTX["allowed_tcp"], CTX["tcp"], 1.0)
done()

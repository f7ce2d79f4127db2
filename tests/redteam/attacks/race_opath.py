"""O_PATH opens are decided and CONTINUEd: a thread flips the path between a
public directory and the hidden one, then every use of the descriptor that
could reach content is tried (openat, /proc/self/fd/N/key, fchdir, listing)."""
import os
from rtlib import CTX, done, native

lib = native()
os.chdir(CTX["root"])
lib.rt_race_opath(b"data/sub", b"secret/.", b"key", b"public", 1.0)
done()

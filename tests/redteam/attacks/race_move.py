"""rename/link through a buffer another thread flips between a writable file
and the secret (issue: rename and link races)."""
import os
from rtlib import CTX, b, done, native

lib = native()
os.chdir(CTX["root"])
how = 1 if "link" in CTX["args"] else 0
pub, sec = "out/aaaaaa", "secret/key"
open(pub, "w").write("public mine\n")
lib.rt_race_move(b(pub), b(sec), b"out/dst", b"public", 1.0, how)
done()

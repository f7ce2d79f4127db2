"""chdir through a flipped buffer (data/. or secret), then a relative open."""
import os
from rtlib import CTX, done, native

lib = native()
os.chdir(CTX["root"])
lib.rt_race_chdir(b"data/.", b"secret", b"key", b"public", 1.0)
done()

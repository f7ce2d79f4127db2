"""A thread flips the path buffer between a public file and the secret while
the main thread opens through it (issue: races through a flipped buffer).
Without ignore= in the policy, os-sandbox=auto takes the CONTINUE fast path
that Landlock backs."""
import os
from rtlib import CTX, b, done, native

lib = native()
os.chdir(CTX["root"])
pub, sec = ("data/pub1", "data/.env") if "dotenv" in CTX["args"] else ("data/public.txt", "secret//////key")
assert len(pub) == len(sec), (pub, sec)
lib.rt_race_open(b(pub), b(sec), b"public", 1.0)
done()

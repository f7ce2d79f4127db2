"""A symlink in the writable tree swapped between a public target and the
secret (or a directory symlink between data/ and secret/) while the main
thread opens through it (issue: symlink swaps)."""
import os
from rtlib import CTX, b, done, native

lib = native()
os.chdir(CTX["root"])
if "dir" in CTX["args"]:
    lib.rt_race_symlink(b"out/d", b"out/d.tmp", b"../data", b"../secret", b"out/d/key", b"public", 1.0)
else:
    lib.rt_race_symlink(b"out/l", b"out/l.tmp", b"../data/public.txt", b"../secret/key", b"out/l",
                        b"public", 1.0)
done()

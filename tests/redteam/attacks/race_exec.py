"""execve through a buffer flipped between an allowed program (prog/ok, a
copy of true) and a forbidden one (out/no, the marker program)."""
import os
import shutil
from rtlib import CTX, done, native

lib = native()
os.chdir(CTX["root"])
shutil.copy(CTX["marker_prog"], "out/nox")
os.chmod("out/nox", 0o755)
lib.rt_race_exec(b"prog/ok", b"out/nox", CTX["marker"].encode(), 1.5)
done()

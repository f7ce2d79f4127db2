"""vfork + execve of a program exec= does not list (issue)."""
from rtlib import CTX, b, done, native

lib = native()
lib.rt_vfork_exec(b(CTX["marker_prog"]), b(CTX["marker"]))
done()

"""memfd_create, copy a program in, execveat(AT_EMPTY_PATH) or execve of
/proc/self/fd/N (issue; exec= names /usr/bin/true only)."""
from rtlib import CTX, b, done, native

lib = native()
lib.rt_exec_memfd(b(CTX["marker_prog"]), b(CTX["marker"]), 1 if "procfd" in CTX["args"] else 0)
done()

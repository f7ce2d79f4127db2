"""Replace the interpreter with another program, no fork (row 18)."""
import os
from rtlib import CTX, done, try_

m, mp = CTX["marker"], CTX["marker_prog"]
try_("execve", os.execve, mp, [mp, m], {})
try_("execv /bin/sh", os.execv, "/bin/sh", ["sh", "-c", f"{mp} {m}"])
try_("execvp", os.execvp, "rt_marker", ["rt_marker", m])
try_("fexecve", lambda: os.execve(os.open(mp, os.O_RDONLY), [mp, m], {}))
done()

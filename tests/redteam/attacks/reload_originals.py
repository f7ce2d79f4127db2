"""Get the unpatched functions back: importlib.reload, posix twins,
__wrapped__, closure cells, obfuscated names (rows 21, 23, 24)."""
import importlib
import os
from rtlib import CTX, done, try_

cmd = f"{CTX['marker_prog']} {CTX['marker']}"
try_("reload os", lambda: importlib.reload(os).system(cmd))
try_("posix.system", lambda: __import__("posix").system(cmd))
try_("getattr", lambda: getattr(__import__("o" + "s"), "sy" + "stem")(cmd))
try_("__wrapped__", lambda: os.system.__wrapped__(cmd))


def closure_original(f):
    for cell in getattr(f, "__closure__", None) or ():
        v = cell.cell_contents
        if callable(v) and getattr(v, "__name__", "") == "system":
            return v
    raise LookupError("no original in the closure")


try_("closure", lambda: closure_original(os.system)(cmd))
try_("_posixsubprocess", lambda: __import__("subprocess").Popen([CTX["marker_prog"], CTX["marker"]]).wait())
done()

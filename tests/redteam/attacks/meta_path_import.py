"""Unhook the agent's import finder and import a module python-import= does
not list (row 27); then load it by path and by spec."""
import importlib.util
import sys
from rtlib import CTX, done, try_

try_("drop finders", lambda: [sys.meta_path.remove(f) for f in list(sys.meta_path)
                              if "pysandboxes" in type(f).__module__ or "Guard" in type(f).__name__])
sys.path.insert(0, CTX["prog"])
try_("import evilmod", lambda: __import__("evilmod"))
try_("spec_from_file_location", lambda: importlib.util.spec_from_file_location(
    "evil2", CTX["prog"] + "/evilmod.py").loader.exec_module(importlib.util.module_from_spec(
        importlib.util.spec_from_file_location("evil2", CTX["prog"] + "/evilmod.py"))))
done()

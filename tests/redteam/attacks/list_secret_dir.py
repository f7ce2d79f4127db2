"""List a directory no rule exposes (its file names are secret too)."""
import glob
import os
from rtlib import CTX, done, try_

s = CTX["secret_dir"]
try_("listdir", os.listdir, s)
try_("scandir", lambda: [e.name for e in os.scandir(s)])
try_("glob", glob.glob, s + "/*")
try_("walk root", lambda: [(p, f) for p, _, f in os.walk(CTX["root"])])
try_("fd listdir", lambda: os.listdir(os.open(s, os.O_RDONLY | os.O_DIRECTORY)))
try_("O_PATH fd listdir", lambda: os.listdir(os.open(s, os.O_PATH | os.O_DIRECTORY)))
try_("via data/..", os.listdir, CTX["data"] + "/../secret")
try_("via /proc/self/cwd", lambda: (os.chdir(CTX["root"]), os.listdir("/proc/self/cwd/secret")))
done()

"""A .env file that ignore=.env hides inside a read-only exposure (row 7)."""
import glob
import os
import shutil
from rtlib import CTX, done, read, read_fd, try_

d, o, env = CTX["data"], CTX["out"], CTX["data"] + "/.env"
try_("open", read, env)
try_("relative", lambda: (os.chdir(d), read(".env")))
try_("dir_fd", lambda: read_fd(os.open(".env", os.O_RDONLY, dir_fd=os.open(d, os.O_RDONLY))))
try_("procfd", lambda: read(f"/proc/self/fd/{os.open(d, os.O_PATH)}/.env"))
try_("symlink", lambda: (os.symlink(env, f"{o}/e"), read(f"{o}/e")))
try_("hardlink", lambda: (os.link(env, f"{o}/h"), read(f"{o}/h")))
try_("copy", shutil.copy, env, f"{o}/c")
try_("glob", glob.glob, d + "/.*")
try_("dotdot", read, f"{d}/sub/../.env")
try_("rename", os.rename, env, f"{o}/moved")
try_("load_dotenv style", lambda: [l for l in open(os.path.join(d, ".", ".env"))])
done()

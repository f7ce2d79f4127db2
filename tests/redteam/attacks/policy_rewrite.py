"""Rewrite, replace, remove or move the active rule file so the next run is
wider; the rule file lies inside the writable tree (row 8)."""
import os
from rtlib import CTX, done, try_

o = CTX["out"]
pol = f"{o}/cfg/.py-sandboxes"
wide = f"expose-ro=/\nexpose-rw={CTX['root']}\n"


def write(p, mode):
    with open(p, mode) as f:
        f.write(wide)
    return "written"


try_("append", write, pol, "a")
try_("truncate-write", write, pol, "w")
try_("r+", write, pol, "r+")
try_("os.truncate", os.truncate, pol, 0)
try_("chmod", os.chmod, pol, 0o666)
open(f"{o}/new", "w").write(wide)
try_("replace", os.replace, f"{o}/new", pol)
try_("link over", lambda: (os.unlink(pol), os.link(f"{o}/new", pol)))
try_("unlink", os.unlink, pol)
try_("symlink over", lambda: os.symlink(f"{o}/new", pol))
fd = try_("open ro", os.open, pol, os.O_RDONLY)
if fd is not None:
    try_("procfd reopen w", write, f"/proc/self/fd/{fd}", "w")
    try_("ftruncate", os.ftruncate, fd, 0)
try_("hard link out", lambda: (os.link(pol, f"{o}/pl"), write(f"{o}/pl", "w")))
try_("O_CREAT|O_TRUNC", os.open, pol, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
try_("rename dir", os.rename, f"{o}/cfg", f"{o}/cfg2")
try_("recreate", lambda: (os.makedirs(f"{o}/cfg", exist_ok=True), write(pol, "w")))
try_("rename dir over", lambda: (os.mkdir(f"{o}/cfg3"), write(f"{o}/cfg3/.py-sandboxes", "w"),
                                 os.rename(f"{o}/cfg3", f"{o}/cfg")))
try_("rename out", os.rename, o, CTX["root"] + "/out-moved")
done()

"""O_TMPFILE, then linkat into a read-only directory; and a writable file
linked into it (issue: hard-link swaps)."""
import os
from rtlib import CTX, done, try_

d, o = CTX["data"], CTX["out"]
fd = try_("O_TMPFILE in data", os.open, d, os.O_TMPFILE | os.O_WRONLY, 0o644)
if fd is not None:
    try_("linkat data", os.link, f"/proc/self/fd/{fd}", f"{d}/RT-new", follow_symlinks=True)
fd = try_("O_TMPFILE in out", os.open, o, os.O_TMPFILE | os.O_WRONLY, 0o644)
if fd is not None:
    os.write(fd, b"RT-WRITTEN\n")
    try_("linkat into data", os.link, f"/proc/self/fd/{fd}", f"{d}/RT-new2", follow_symlinks=True)
    try_("linkat into secret", os.link, f"/proc/self/fd/{fd}", f"{CTX['secret_dir']}/RT-new3",
         follow_symlinks=True)
open(f"{o}/w", "w").write("RT-WRITTEN\n")
try_("link w into data", os.link, f"{o}/w", f"{d}/RT-new4")
try_("symlink into data", os.symlink, f"{o}/w", f"{d}/RT-new5")
try_("rename into data", os.rename, f"{o}/w", f"{d}/RT-new6")
done()

"""chroot into an exposure, then the classic escapes ('..' past the new root,
a directory descriptor kept outside it, /proc/self/root)."""
import os
from rtlib import CTX, done, read, try_

o, r = CTX["out"], CTX["root"]
os.makedirs(f"{o}/jail/x", exist_ok=True)
keep = os.open(o, os.O_RDONLY | os.O_DIRECTORY)
try_("chroot", os.chroot, f"{o}/jail")
try_("dotdot", read, "/../../../" + r.lstrip("/") + "/secret/key")
try_("inner chroot", lambda: (os.chroot("x"), os.fchdir(keep), read("../secret/key")))
try_("fchdir keep", lambda: (os.fchdir(keep), read("../secret/key")))
try_("proc root", read, f"/proc/self/root{r}/secret/key")
done()

"""Hard links to the secret from the writable tree (issue: hard-link swaps)."""
import os
from rtlib import CTX, done, read, try_

o, s = CTX["out"], CTX["secret"]
try_("link", os.link, s, f"{o}/k")
try_("read k", read, f"{o}/k")
try_("link via data/..", os.link, CTX["data"] + "/../secret/key", f"{o}/k2")
try_("read k2", read, f"{o}/k2")
try_("link via symlink", os.link, CTX["data"] + "/link", f"{o}/k3", follow_symlinks=True)
try_("read k3", read, f"{o}/k3")
try_("link the link", os.link, CTX["data"] + "/link", f"{o}/k4", follow_symlinks=False)
try_("read k4", read, f"{o}/k4")
fd = try_("O_PATH secret", os.open, s, os.O_PATH)
if fd is not None:
    try_("linkat procfd", os.link, f"/proc/self/fd/{fd}", f"{o}/k5", follow_symlinks=True)
done()

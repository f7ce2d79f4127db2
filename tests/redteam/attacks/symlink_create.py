"""Create symlinks in the writable tree that point at the secret (row 5)."""
import os
from rtlib import CTX, done, read, try_

o = CTX["out"]
try_("symlink abs", os.symlink, CTX["secret"], f"{o}/l1")
try_("read l1", read, f"{o}/l1")
try_("symlink rel", os.symlink, "../secret/key", f"{o}/l2")
try_("read l2", read, f"{o}/l2")
try_("symlink dir", os.symlink, CTX["secret_dir"], f"{o}/d")
try_("read d/key", read, f"{o}/d/key")
try_("list d", os.listdir, f"{o}/d")
try_("symlink /proc", os.symlink, f"/proc/self/root{CTX['secret']}", f"{o}/l3")
try_("read l3", read, f"{o}/l3")
try_("chain", lambda: (os.symlink("l2", f"{o}/l4"), read(f"{o}/l4")))
done()

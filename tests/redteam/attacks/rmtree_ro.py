"""Remove a read-only tree (row 6: shutil.rmtree on a read-only exposure)."""
import os
import shutil
from rtlib import CTX, done, try_

d = CTX["data"]
try_("rmtree", shutil.rmtree, d)
try_("rmtree ignore", shutil.rmtree, d, ignore_errors=True)
try_("remove", os.remove, CTX["public"])
try_("unlink link", os.unlink, d + "/link")
try_("rmdir", os.rmdir, d + "/sub")
try_("rename away", os.rename, CTX["public"], CTX["out"] + "/p")
try_("remove secret", os.remove, CTX["secret"])
try_("rmtree secret", shutil.rmtree, CTX["secret_dir"])
done()

"""Move the secret into the writable tree, or swap it with a writable file."""
import ctypes
import os
import shutil
from rtlib import CTX, done, read, try_

o, s = CTX["out"], CTX["secret"]
open(f"{o}/x", "w").write("x\n")
try_("rename", os.rename, s, f"{o}/k")
try_("replace", os.replace, s, f"{o}/k")
try_("shutil.move", shutil.move, s, f"{o}/k")
try_("rename dir", os.rename, CTX["secret_dir"], f"{o}/sd")
try_("read", read, f"{o}/k")
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2


def exchange(a, b_):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b_.encode(), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return read(f"{o}/x")


try_("RENAME_EXCHANGE", exchange, f"{o}/x", s)
try_("RENAME_EXCHANGE dirs", lambda: (os.mkdir(f"{o}/dd"), exchange(f"{o}/dd", CTX["secret_dir"]),
                                      read(f"{o}/dd/key")))
done()

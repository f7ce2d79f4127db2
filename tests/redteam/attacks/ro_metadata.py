"""Change a read-only exposed file through descriptors and metadata calls:
reopen for writing via /proc/self/fd, fchmod, fchown, utime, xattr, truncate."""
import os
from rtlib import CTX, done, try_

p = CTX["public"]
fd = os.open(p, os.O_RDONLY)
try_("procfd reopen w", lambda: open(f"/proc/self/fd/{fd}", "w").write("RT-WRITTEN"))
try_("procfd reopen a", lambda: open(f"/proc/self/fd/{fd}", "a").write("RT-WRITTEN"))
try_("fchmod", os.fchmod, fd, 0o777)
try_("fchown", os.fchown, fd, 65534, 65534)
try_("chmod", os.chmod, p, 0o777)
try_("chown", os.chown, p, 65534, 65534)
try_("lchown link", os.lchown, CTX["data"] + "/link", 65534, 65534)
try_("utime", os.utime, p, (0, 0))
try_("futime", os.utime, fd, (0, 0))
try_("setxattr", os.setxattr, p, "user.rt", b"x")
try_("fsetxattr", os.setxattr, fd, "user.rt", b"x")
try_("truncate", os.truncate, p, 0)
try_("O_TRUNC", os.open, p, os.O_RDONLY | os.O_TRUNC)
try_("secret chmod", os.chmod, CTX["secret"], 0o777)
try_("secret utime", os.utime, CTX["secret"], (0, 0))
done()

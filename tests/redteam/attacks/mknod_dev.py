"""Create device nodes in the writable tree (the program runs as its user;
as root the kernel itself would allow it)."""
import os
import stat
from rtlib import CTX, done, try_

o = CTX["out"]
try_("mknod char", os.mknod, f"{o}/zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
try_("mknod block", os.mknod, f"{o}/blk", stat.S_IFBLK | 0o600, os.makedev(7, 0))
try_("mknod fifo", os.mknod, f"{o}/fifo", stat.S_IFIFO | 0o600)
try_("mkfifo", os.mkfifo, f"{o}/fifo2")
try_("mknod sock", os.mknod, f"{o}/sock", stat.S_IFSOCK | 0o600)
done()

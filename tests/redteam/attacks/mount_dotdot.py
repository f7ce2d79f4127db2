"""'..' across a mount boundary: data/sub is a bind mount of an unexposed
directory (hidden/inner) whose parent holds a hidden file."""
import os
from rtlib import CTX, done, read, read_fd, try_

d, r = CTX["data"], CTX["root"]
os.chdir(r)
try_("mounted?", os.listdir, f"{d}/sub")
for p in (f"{d}/sub/../../hidden/key", f"{d}/sub/../key", f"{d}/sub/../../secret/key", "data/sub/../../hidden/key",
          f"{d}/sub/../../../{os.path.basename(r)}/hidden/key"):
    try_(p, read, p)
fd = os.open(f"{d}/sub", os.O_PATH | os.O_DIRECTORY)
try_("procfd ..", read, f"/proc/self/fd/{fd}/../../hidden/key")
try_("dir_fd ..", lambda: read_fd(os.open("../../hidden/key", os.O_RDONLY, dir_fd=fd)))
try_("fchdir ..", lambda: (os.fchdir(fd), read("../../hidden/key")))
try_("listdir ..", lambda: os.listdir(f"/proc/self/fd/{fd}/../.."))
done()

"""dir_fd and O_PATH descriptors of an exposed directory, then '..'
(row 6; /proc/self/fd reopen from the issue)."""
import os
from rtlib import CTX, done, read, read_fd, try_

d = CTX["data"]
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
try_("dir_fd ..", lambda: read_fd(os.open("../secret/key", os.O_RDONLY, dir_fd=fd)))
try_("dir_fd link", lambda: read_fd(os.open("link", os.O_RDONLY, dir_fd=fd)))
pfd = os.open(d, os.O_PATH | os.O_DIRECTORY)
try_("O_PATH dir_fd ..", lambda: read_fd(os.open("../secret/key", os.O_RDONLY, dir_fd=pfd)))
try_("procfd ..", read, f"/proc/self/fd/{pfd}/../secret/key")
try_("procfd link", read, f"/proc/self/fd/{pfd}/link")
sfd = try_("O_PATH secret", os.open, CTX["secret"], os.O_PATH)
if sfd is not None:
    try_("reopen O_PATH secret", read, f"/proc/self/fd/{sfd}")
sd = try_("O_PATH secret dir", os.open, CTX["secret_dir"], os.O_PATH | os.O_DIRECTORY)
if sd is not None:
    try_("reopen O_PATH dir", read, f"/proc/self/fd/{sd}/key")
    try_("openat O_PATH dir", lambda: read_fd(os.open("key", os.O_RDONLY, dir_fd=sd)))
lfd = try_("O_PATH|O_NOFOLLOW link", os.open, f"{d}/link", os.O_PATH | os.O_NOFOLLOW)
if lfd is not None:
    try_("reopen link fd", read, f"/proc/self/fd/{lfd}")
try_("stat dir_fd", lambda: os.stat("../secret/key", dir_fd=fd).st_size)
try_("fchdir", lambda: (os.fchdir(fd), read("../secret/key")))
done()

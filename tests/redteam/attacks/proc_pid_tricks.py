"""/proc/PID/root, /proc/PID/cwd and /proc/PID/fd of processes that are not
the program: python-sb (its parent, which holds the secret open), init."""
import os
from rtlib import CTX, done, read, read_fd, try_

pp, sec, r = os.getppid(), CTX["secret"], CTX["root"]
for p in (f"/proc/{pp}/root{sec}", f"/proc/{pp}/cwd/secret/key", f"/proc/1/root{sec}", f"/proc/1/cwd{sec}",
          f"/proc/{pp}/root/proc/{pp}/cwd/secret/key", f"/proc/{pp}/task/{pp}/root{sec}",
          f"/proc/self/root/proc/{pp}/root{sec}"):
    try_(p, read, p)
for n in range(0, 40):
    # O_NONBLOCK: python-sb's descriptors include pipes nobody writes to.
    p = f"/proc/{pp}/fd/{n}"
    try_(p, lambda: read_fd(os.open(p, os.O_RDONLY | os.O_NONBLOCK)))
try_("listdir parent fd", os.listdir, f"/proc/{pp}/fd")
try_("readlink parent cwd", os.readlink, f"/proc/{pp}/cwd")
try_("parent maps", read, f"/proc/{pp}/maps")
done()

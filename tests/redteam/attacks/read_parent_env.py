"""The host environment through /proc: python-sb's environ, the init
process's, the program's own (rows 2, 17)."""
import os
from rtlib import done, read, try_

pp = os.getppid()
for p in (f"/proc/{pp}/environ", f"/proc/{pp}/cmdline", "/proc/1/environ", "/proc/self/environ",
          f"/proc/{pp}/task/{pp}/environ", "/proc/thread-self/environ"):
    try_(p, read, p, mode="rb")
done()

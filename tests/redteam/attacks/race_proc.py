"""A thread flips the path between the program's own /proc entry (readable)
and python-sb's environ (not), while the main thread opens it."""
import os
from rtlib import b, done, native

lib = native()
own, other = f"/proc/{os.getpid()}/status", f"/proc/{os.getppid()}/environ"
d = len(own) - len(other)
if d > 0:
    other = other.replace("/proc/", "/proc/" + "/" * d, 1)
elif d < 0:
    own = own.replace("/proc/", "/proc/" + "/" * -d, 1)
lib.rt_race_open(b(own), b(other), b"Name:", 1.0)
done()

"""Change another process's limits and priority (prlimit64, setpriority)."""
import ctypes
import os
import resource
from rtlib import CTX, done, try_

c, pp = CTX["canary_pid"], os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def chk(rc):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc


try_("prlimit canary", resource.prlimit, c, resource.RLIMIT_NOFILE, (7, 7))
try_("setpriority canary", os.setpriority, os.PRIO_PROCESS, c, 19)
try_("setpriority pgrp", os.setpriority, os.PRIO_PGRP, 0, 19)
try_("setpriority user", os.setpriority, os.PRIO_USER, 0, 19)
try_("prlimit parent", resource.prlimit, pp, resource.RLIMIT_NOFILE, (7, 7))
done()

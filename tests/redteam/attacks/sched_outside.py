"""Change another process's scheduling: sched_setscheduler(SCHED_IDLE),
sched_setaffinity, ioprio_set (allowed by the kernel between processes of
the same user, like setpriority, which python-sb refuses)."""
import ctypes
import os
from rtlib import CTX, done, try_

c, pp = CTX["canary_pid"], os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def chk(rc):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc


try_("sched_setscheduler canary", os.sched_setscheduler, c, os.SCHED_IDLE, os.sched_param(0))
try_("sched_setaffinity canary", os.sched_setaffinity, c, {0})
try_("ioprio_set canary", lambda: chk(libc.syscall(251, 1, c, 3 << 13)))   # IOPRIO_WHO_PROCESS, CLASS_IDLE
try_("sched_setaffinity parent", os.sched_setaffinity, pp, {0})
done()

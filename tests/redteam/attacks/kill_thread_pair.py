"""With process-control: tgkill and rt_tgsigqueueinfo naming a sandboxed
process as the thread group and a thread of another process (the outside
canary, then python-sb) as the thread.  The kernel refuses such a pair
(ESRCH); a supervisor that judges the group but signals the thread's pidfd
would deliver it."""
import ctypes
import os
import signal
import struct
import time
from rtlib import CTX, done, try_

c = CTX["canary_pid"]
pp = os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sys_(nr, *args):
    if libc.syscall(nr, *args) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
# si_signo, si_errno, si_code = SI_QUEUE (-1): what a process may queue to another.
info = ctypes.create_string_buffer(struct.pack("iii", signal.SIGTERM, 0, -1), 128)
for who, tid in (("canary", c), ("python-sb", pp)):
    try_(f"tgkill child+{who} SIGURG", sys_, 234, child, tid, signal.SIGURG)
    try_(f"rt_tgsigqueueinfo child+{who} SIGTERM", sys_, 297, child, tid, signal.SIGTERM, info)
    try_(f"tgkill child+{who} SIGSTOP", sys_, 234, child, tid, signal.SIGSTOP)
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
done()

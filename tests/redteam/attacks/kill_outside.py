"""Signal a process outside the sandbox (a canary the harness started):
kill, pidfd_send_signal, tgkill, rt_sigqueueinfo."""
import ctypes
import os
import signal
from rtlib import CTX, done, try_

c = CTX["canary_pid"]
libc = ctypes.CDLL(None, use_errno=True)
try_("SIGURG", os.kill, c, signal.SIGURG)
try_("SIGSTOP", os.kill, c, signal.SIGSTOP)
try_("rt_sigqueueinfo", lambda: libc.syscall(129, c, signal.SIGTERM, ctypes.create_string_buffer(128)))
try_("tgkill", lambda: libc.syscall(234, c, c, signal.SIGUSR1))
try_("killpg", os.killpg, c, signal.SIGHUP)
try_("pidfd", lambda: signal.pidfd_send_signal(os.pidfd_open(c), signal.SIGKILL))
try_("SIGKILL", os.kill, c, signal.SIGKILL)
done()

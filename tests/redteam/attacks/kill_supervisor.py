"""Signal python-sb itself (the program's parent): SIGSTOP, SIGTERM,
SIGKILL, through kill, tgkill, pidfd (issue: kill of the supervisor)."""
import ctypes
import os
import signal
from rtlib import done, try_

pp = os.getppid()
libc = ctypes.CDLL(None, use_errno=True)
try_("SIGSTOP", os.kill, pp, signal.SIGSTOP)
try_("SIGTERM", os.kill, pp, signal.SIGTERM)
try_("pidfd SIGKILL", lambda: signal.pidfd_send_signal(os.pidfd_open(pp), signal.SIGKILL))
try_("tgkill SIGKILL", lambda: libc.syscall(234, pp, pp, 9))
try_("killpg own group", lambda: os.killpg(os.getpgid(0), signal.SIGTERM))
try_("SIGKILL", os.kill, pp, signal.SIGKILL)
try_("SIGCONT", os.kill, pp, signal.SIGCONT)
print("RT-AFTER", flush=True)
done()

"""kill(0) reaches the whole process group python-sb shares with its caller;
kill(-1) every process the user may signal (SIGURG: ignored by default, so
nothing else on the machine is disturbed even if it got through)."""
import os
import signal
from rtlib import CTX, done, try_

if "all" in CTX["args"]:
    try_("kill(-1)", os.kill, -1, signal.SIGURG)
else:
    try_("kill(0)", os.kill, 0, signal.SIGURG)
    try_("killpg", os.killpg, os.getpgid(0), signal.SIGURG)
done()

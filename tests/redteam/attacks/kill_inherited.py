"""Signal a process python-sb inherited as its child from the shell that
exec'd it (`job & exec python-sb ...`): never part of the sandbox."""
import os
import signal
import time
from rtlib import CTX, done, try_

f = os.path.join(CTX["data"], "child-canary.pid")
end = time.time() + 5
while not os.path.exists(f) and time.time() < end:
    time.sleep(0.02)
pid = int(open(f).read())
try_("SIGURG", os.kill, pid, signal.SIGURG)
try_("SIGKILL", os.kill, pid, signal.SIGKILL)
done()

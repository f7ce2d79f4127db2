"""Outlive the sandbox (row 36): a CLONE_PARENT child (python-sb's own
child) or a double-forked daemon that speaks after the program exited."""
import os
import time
from rtlib import CTX, done, native

if "daemon" in CTX["args"]:
    if os.fork() == 0:
        try:
            os.setsid()
        except OSError:
            pass
        if os.fork() == 0:
            time.sleep(1.0)
            print("RT-ORPHAN-ALIVE daemon", flush=True)
        os._exit(0)
    os.wait()
else:
    native().rt_clone_parent_linger(1000)
done()

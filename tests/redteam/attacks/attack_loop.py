"""Keep attacking while the harness SIGKILLs python-sb (fault injection):
open the secret, connect to the canary, start the marker program, for a few
seconds; whatever works is printed.  Variants: clear PDEATHSIG first
(pdeath), attack from a grandchild (grandchild)."""
import ctypes
import os
import socket
import subprocess
import sys
import time
from rtlib import CTX, done

LOOP = r'''
import os, socket, sys, time
secret, port, mp, m = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
end = time.time() + float(sys.argv[5])
errs = {}
while time.time() < end:
    for name, fn in (("open", lambda: open(secret).read()),
                     ("connect", lambda: socket.create_connection(("127.0.0.1", port), 1).sendall(b"RT-LOOP")),
                     ("exec", lambda: os.posix_spawn(mp, [mp, m], {}))):
        try:
            r = fn()
            print(name, "OK", repr(r)[:200], flush=True)
        except Exception as e:
            errs[name + " " + type(e).__name__ + " " + str(getattr(e, "errno", ""))] = 1
    time.sleep(0.01)
print("loop errors", sorted(errs), flush=True)
'''
args = [CTX["secret"], str(CTX["tcp"]), CTX["marker_prog"], CTX["marker"], "12"]
if "pdeath" in CTX["args"]:
    ctypes.CDLL(None, use_errno=True).prctl(1, 0, 0, 0, 0)     # PR_SET_PDEATHSIG, 0
if "grandchild" in CTX["args"]:
    p = subprocess.Popen([CTX["python"], "-c", LOOP, *args])
    print("RT-READY", os.getpid(), flush=True)
    print("RT-READY-GC", p.pid, flush=True)
    p.wait()
else:
    print("RT-READY", os.getpid(), flush=True)
    sys.argv = ["loop", *args]
    exec(compile(LOOP, "loop", "exec"), {"__name__": "loop"})
done()

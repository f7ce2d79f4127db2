"""RLIMIT_NOFILE exhausted in the program: the supervisor's ADDFD fails and
must answer with an error (EMFILE), never hand over a descriptor beyond the
limit nor let the call through; afterwards everything still works."""
import os
import resource
from rtlib import CTX, b, done, native, try_

lib = native()
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
held = []
while True:
    try:
        held.append(os.open(CTX["public"], os.O_RDONLY))
    except OSError as e:
        print("exhausted at", len(held), "errno", e.errno, flush=True)
        break
    if held[-1] >= 64:
        print("RT-FD-OVER-LIMIT", held[-1], flush=True)
        break
errs = {}
for i in range(300):
    for p in (CTX["public"], CTX["secret"], CTX["data"] + "/link"):
        try:
            fd = os.open(p, os.O_RDONLY)
            print("RT-FD-OVER-LIMIT" if fd >= 64 else "opened", fd, os.pread(fd, 100, 0), flush=True)
            os.close(fd)
        except OSError as e:
            errs[(p.rsplit("/", 1)[1], e.errno)] = errs.get((p.rsplit("/", 1)[1], e.errno), 0) + 1
print("errors while exhausted", errs, flush=True)
os.close(held.pop())
try_("public after", lambda: os.pread(os.open(CTX["public"], os.O_RDONLY), 100, 0))
os.close(held.pop())
os.close(held.pop())
os.chdir(CTX["root"])
lib.rt_race_open(b"data/public.txt", b"secret//////key", b"public", 0.5)
try_("secret after", lambda: os.pread(os.open(CTX["secret"], os.O_RDONLY), 100, 0))
done()

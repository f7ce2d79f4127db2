"""Many short-lived processes: forks that exit at once, then execs of an
allowed program; every one must be accounted for, and the supervisor must
stay bounded (the harness samples its descriptors and threads)."""
import subprocess
import time
from rtlib import CTX, done, native

n_fork, n_exec = (int(x) for x in CTX["args"][:2])
t0 = time.monotonic()
bad = 0
native().rt_fork_many(n_fork)
t1 = time.monotonic()
for i in range(n_exec):
    if subprocess.run(["/usr/bin/true"]).returncode != 0:
        bad += 1
t2 = time.monotonic()
print(f"forks {n_fork} in {t1 - t0:.2f}s, execs {n_exec} in {t2 - t1:.2f}s", flush=True)
if bad:
    print("RT-ANOMALY", bad, "children did not end as they should", flush=True)
try:
    print("secret", open(CTX["secret"]).read(), flush=True)
except OSError:
    pass
done()

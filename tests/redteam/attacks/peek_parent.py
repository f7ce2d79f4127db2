"""Read python-sb's own memory where its environment lives (the host's
variables): process_vm_readv, /proc/PPID/mem, ptrace PEEKDATA."""
import os
import time
from rtlib import CTX, done, native

lib = native()
how = {"vm": 0, "mem": 1, "ptrace": 2}[CTX["args"][0]]
f = os.path.join(CTX["data"], "parent_env.txt")
end = time.time() + 5
while not os.path.exists(f) and time.time() < end:
    time.sleep(0.02)
pid, start, stop = (int(x) for x in open(f).read().split())
print("parent", pid, os.getppid(), hex(start), stop - start, flush=True)
lib.rt_peek(os.getppid(), start, stop - start, how)
done()

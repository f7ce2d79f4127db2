"""Signals without kill(): F_SETOWN + O_ASYNC + F_SETSIG make the kernel
signal the owner of a descriptor when it becomes readable."""
import os
from rtlib import CTX, done, native

lib = native()
target = os.getppid() if "parent" in CTX["args"] else CTX["canary_pid"]
lib.rt_fsetown_signal(target, 9)
print("RT-AFTER", flush=True)
done()

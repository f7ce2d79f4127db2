"""clone3 and clone with CLONE_NEWUSER|NEWNS|NEWPID|NEWNET; unshare (issue)."""
from rtlib import CTX, b, done, native

lib = native()
lib.rt_clone_ns(b(CTX["marker"]), 1)
lib.rt_clone_ns(b(CTX["marker"]), 0)
lib.rt_unshare()
done()

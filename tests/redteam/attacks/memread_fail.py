"""The page holding the secret's path flips between unreadable and readable
(fault injection: memory read failure must refuse, never CONTINUE)."""
from rtlib import CTX, b, done, native

native().rt_race_mprotect(b(CTX["secret"]), 1.0)
done()

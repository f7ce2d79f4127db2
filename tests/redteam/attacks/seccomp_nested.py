"""Install a nested seccomp filter with its own listener that answers
CONTINUE to every openat, then open the secret; or prctl(PR_SET_SECCOMP)."""
from rtlib import CTX, b, done, native

native().rt_seccomp_nested(b(CTX["secret"]), 1 if "prctl" in CTX["args"] else 0)
done()

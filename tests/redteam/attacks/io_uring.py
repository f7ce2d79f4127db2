"""io_uring: IORING_OP_OPENAT + IORING_OP_READ of the secret, operations
that would never pass through system call entry (issue)."""
from rtlib import CTX, b, done, native

native().rt_io_uring_read(b(CTX["secret"]))
done()

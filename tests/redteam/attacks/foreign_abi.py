"""open+read of the secret through the x32 ABI or i386 int 0x80 (issue)."""
from rtlib import CTX, b, done, native

lib = native()
if "x32" in CTX["args"]:
    lib.rt_x32_read(b(CTX["secret"]))
else:
    lib.rt_int80_read(b(CTX["secret"]))
done()

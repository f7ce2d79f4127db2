"""openat2 with RESOLVE_* flags from exposed and unexposed directories."""
from rtlib import CTX, b, done, native

lib = native()
BENEATH, IN_ROOT, NO_SYMLINKS, NO_MAGICLINKS, NO_XDEV = 0x08, 0x10, 0x04, 0x02, 0x01
r, d = CTX["root"], CTX["data"]
for dir_, rel, res in ((d, "../secret/key", 0), (d, "link", 0), (d, "link", NO_MAGICLINKS),
                       (r, "secret/key", BENEATH), (r, "secret/key", IN_ROOT), (r, "secret/key", NO_XDEV),
                       (d, "../secret/key", NO_SYMLINKS), ("/", r.lstrip("/") + "/secret/key", IN_ROOT),
                       ("/proc/self", f"root{r}/secret/key", 0), ("/proc/self", "cwd/secret/key", 0),
                       (d, f"/proc/self/root{r}/secret/key", 0), (d, "/../../" + r + "/secret/key", IN_ROOT)):
    print("openat2", dir_, rel, hex(res), flush=True)
    lib.rt_openat2(b(dir_), b(rel), res)
done()

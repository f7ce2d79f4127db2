"""Mount tricks (root's CAP_SYS_ADMIN): a tmpfs over the read-only tree, a
bind of the hidden directory into the writable one, open_tree + move_mount,
fsopen; run in a private mount namespace so nothing leaks to the host."""
import ctypes
import os
from rtlib import CTX, done, read, try_

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
d, o, s = CTX["data"], CTX["out"], CTX["secret_dir"]
os.makedirs(f"{o}/m1", exist_ok=True)
os.makedirs(f"{o}/m2", exist_ok=True)


def chk(rc):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc


try_("tmpfs over data", lambda: (chk(libc.mount(b"tmpfs", d.encode(), b"tmpfs", 0, None)),
                                 open(f"{d}/RT-new", "w").write("x")))
try_("bind secret", lambda: (chk(libc.mount(s.encode(), f"{o}/m1".encode(), None, 4096, None)),  # MS_BIND
                             read(f"{o}/m1/key")))
try_("open_tree+move_mount", lambda: (
    chk(libc.syscall(429, chk(libc.syscall(428, -100, s.encode(), 1 | 0x80000)),  # OPEN_TREE_CLONE|CLOEXEC
                     b"", -100, f"{o}/m2".encode(), 4)),                           # MOVE_MOUNT_F_EMPTY_PATH
    read(f"{o}/m2/key")))
try_("fsopen", lambda: chk(libc.syscall(430, b"tmpfs", 0)))
try_("umount data", lambda: chk(libc.umount2(d.encode(), 2)))
done()

"""ctypes straight into libc: open/read, raw syscall(openat), connect,
execv, fork (row 19; issue: "the same attacks from ctypes")."""
import ctypes
import os
import socket
import struct
from rtlib import CTX, done, try_

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def c_read(fd):
    buf = ctypes.create_string_buffer(4096)
    n = libc.read(fd, buf, 4095)
    return buf.raw[:max(n, 0)]


try_("libc.open", lambda: c_read(libc.open(CTX["secret"].encode(), os.O_RDONLY)))
try_("syscall openat", lambda: c_read(libc.syscall(257, -100, CTX["secret"].encode(), os.O_RDONLY, 0)))
try_("syscall open", lambda: c_read(libc.syscall(2, CTX["secret"].encode(), os.O_RDONLY, 0)))
libc.fopen.restype = ctypes.c_void_p
libc.fgets.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]


def c_fopen():
    f = libc.fopen(CTX["secret"].encode(), b"r")
    if not f:
        raise OSError(ctypes.get_errno(), "fopen")
    buf = ctypes.create_string_buffer(256)
    libc.fgets(buf, 256, f)
    return buf.value


try_("fopen", c_fopen)
sa = struct.pack("!HH4s8x", socket.AF_INET, CTX["tcp"], socket.inet_aton("127.0.0.1"))
sa = struct.pack("=H", socket.AF_INET) + sa[2:]
fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
try_("libc.connect", lambda: (libc.connect(fd, sa, len(sa)), libc.send(fd, b"RT-CTYPES", 9, 0)))
try_("syscall connect", lambda: libc.syscall(42, libc.socket(2, 1, 0), sa, len(sa)))
argv = (ctypes.c_char_p * 3)(CTX["marker_prog"].encode(), CTX["marker"].encode(), None)
try_("libc.fork+execv", lambda: (lambda pid: libc.execv(argv[0], argv) if pid == 0 else os.waitpid(pid, 0))(libc.fork()))
try_("libc.execv", lambda: libc.execv(argv[0], argv))
done()

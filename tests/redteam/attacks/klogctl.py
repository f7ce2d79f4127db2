"""Read the kernel log with syslog(2) (glibc klogctl), and /dev/kmsg."""
import ctypes
import os
from rtlib import done, try_

libc = ctypes.CDLL(None, use_errno=True)


def klog():
    buf = ctypes.create_string_buffer(1 << 20)
    n = libc.klogctl(3, buf, len(buf))         # SYSLOG_ACTION_READ_ALL
    if n < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return buf.raw[:n].decode(errors="replace")[-1500:]


try_("klogctl", klog)
try_("/dev/kmsg", lambda: os.read(os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK), 8192))
done()

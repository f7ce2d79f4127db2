"""AF_UNIX: an abstract listener, a socket file in a hidden directory
(docker.sock, ssh-agent), through symlinks, /proc/self/cwd, datagrams (row 15)."""
import os
import socket
from rtlib import CTX, done, try_


def conn(addr, kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_UNIX, kind)
    s.settimeout(2)
    s.connect(addr)
    s.send(b"RT-UNIX")
    return "connected"


def dgram(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    return s.sendto(b"RT-UNIX-DGRAM", addr)


o = CTX["out"]
os.chdir(CTX["root"])
try_("abstract", conn, "\0" + CTX["abstract"])
try_("abstract autobind+connect", lambda: (lambda s: (s.bind(""), s.connect("\0" + CTX["abstract"])))(socket.socket(socket.AF_UNIX)))
try_("path", conn, CTX["unix"])
try_("relative", conn, "secret/sock")
try_("dotdot", conn, CTX["data"] + "/../secret/sock")
try_("symlink", lambda: (os.symlink(CTX["unix"], f"{o}/s"), conn(f"{o}/s")))
try_("proc cwd", conn, "/proc/self/cwd/secret/sock")
try_("procfd", lambda: conn(f"/proc/self/fd/{os.open(CTX['secret_dir'], os.O_PATH)}/sock"))
try_("dgram", dgram, CTX["unix_dgram"])
try_("dgram symlink", lambda: (os.symlink(CTX["unix_dgram"], f"{o}/d"), dgram(f"{o}/d")))
try_("sendmsg", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendmsg([b"RT"], [], 0, CTX["unix_dgram"]))
done()

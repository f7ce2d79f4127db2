"""Intranet, cloud metadata and "internet" addresses (rows 9, 10, 12).  They
live on the loopback device of the runner's own network namespace: a
refusal by the supervisor means the canary listening there never accepts."""
import socket
import urllib.request
from rtlib import CTX, done, try_


def conn(host, port, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect((host, port))
    s.sendall(b"RT-INTRANET")
    s.close()
    return "connected"


for ip in CTX["intranet"]:
    for port in (80, 443):
        try_(f"{ip}:{port}", conn, ip, port)
        try_(f"[::ffff:{ip}]:{port}", conn, f"::ffff:{ip}", port, socket.AF_INET6)
try_("metadata urllib", lambda: urllib.request.urlopen("http://169.254.169.254/latest/meta-data/", timeout=2).read())
try_("decimal 10.255.255.1", lambda: socket.create_connection(("184549121", 80), 2).sendall(b"RT"))
done()

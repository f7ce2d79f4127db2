#!/usr/bin/env python3
"""Landlock alone (no supervisor) holds the TCP ports of the policy's net=
ALLOW rules (ABI >= 4): a denied port can be neither connected nor bound, an
allowed one works end to end on loopback.  UDP is outside Landlock, as the
layer's description says."""
import socket
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PROGRAM = ou.PROBE_PRELUDE + r'''
allowed, denied = {allowed}, {denied}
def serve_and_talk():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", allowed))
    srv.listen(1)
    c = socket.create_connection(("127.0.0.1", allowed))
    a, _ = srv.accept()
    c.sendall(b"ping")
    assert a.recv(4) == b"ping"
    for s in (a, c, srv):
        s.close()
attempt("allowed port end to end", serve_and_talk)
attempt("connect denied", lambda: tcp(denied))
attempt("bind denied", lambda: tcp(denied, bind=True))
attempt("bind ephemeral", lambda: tcp(0, bind=True))
def udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        u.sendto(b"x", ("127.0.0.1", denied))
attempt("udp to denied port", udp)
'''


class LandlockNet(unittest.TestCase):
    def run_under(self, python, rules):
        allowed, denied = free_port(), free_port()
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, python, "landlock", rules.format(allowed=allowed))
            cp = layer.run(PROGRAM.format(allowed=allowed, denied=denied))
            self.assertEqual(cp.returncode, 0, cp.stderr)
            d = layer.describe("--no-selftest")
            return ou.outcomes(cp), d.stdout

    def test_ports(self):
        for python in ou.PYTHONS:
            with self.subTest(python=python):
                r, text = self.run_under(python, "net=ALLOW|tcp|127.0.0.1|{allowed}|IN,OUT\n")
                self.assertEqual(r["allowed port end to end"], "OK")
                self.assertEqual(r["connect denied"], "EACCES")
                self.assertEqual(r["bind denied"], "EACCES")
                self.assertEqual(r["bind ephemeral"], "EACCES")
                # Landlock has no UDP rules: the layer says so, the supervisor decides it
                self.assertEqual(r["udp to denied port"], "OK")
                self.assertIn("TCP connect ports (1 allowed)", text)
                self.assertIn("UDP", text.split("does not enforce")[1])

    def test_port_rules_ignore_addresses(self):
        # A port allowed for one address is open for every address as far as
        # Landlock goes; DENY rules never open anything.
        r, _ = self.run_under("/usr/bin/python3",
                              "net=ALLOW|tcp|10.1.2.3|{allowed}|IN,OUT\nnet=DENY|tcp|127.0.0.1|{allowed}|OUT\n")
        self.assertEqual(r["allowed port end to end"], "OK")
        self.assertEqual(r["connect denied"], "EACCES")

    def test_ephemeral_bind_rule(self):
        r, _ = self.run_under("/usr/bin/python3", "net=ALLOW|tcp|127.0.0.1|0,{allowed}|IN,OUT\n")
        self.assertEqual(r["bind ephemeral"], "OK")
        self.assertEqual(r["bind denied"], "EACCES")


if __name__ == "__main__":
    ou.require_landlock(4)
    ou.require_driver()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(LandlockNet)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if res.wasSuccessful() else 1)

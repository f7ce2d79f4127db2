#!/usr/bin/env python3
"""os-sandbox=unshare through python-sb: the supervised program runs in its
own user, mount, pid, net, ipc and uts namespaces (pid 1 is the layer's init),
in a fresh root holding only the exposures, with the namespace's own loopback
only, unless a net= rule needs the host (slirp4netns) and
unshare.host-loopback=yes lets 10.0.2.2 reach the host's 127.0.0.1.  The
supervisor still decides every file, exec and connect inside it.

Skips (77) when user namespaces are not usable here."""
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_sb_util as osb  # noqa: E402
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402

PROGRAM = ou.PROBE_PRELUDE + r'''
def talk(host, port):
    c = socket.create_connection((host, port), timeout=10)
    c.sendall(b"hi")
    c.close()
attempt("gateway allowed", lambda: talk("10.0.2.2", {allowed}))
attempt("gateway denied", lambda: talk("10.0.2.2", {denied}))
attempt("loopback allowed", lambda: talk("127.0.0.1", {allowed}))
'''


class UnshareThroughPythonSb(osb.LayerThroughPythonSb):
    LAYER = "unshare"

    def test_confined(self):
        super().test_confined()
        with sbtest.Scratch() as s:
            cp, r = self.run_program(s, self.layer(s))
            self.assertEqual(r.get("pid"), "2", cp.stderr)	# pid 1 is the layer's init

    def test_check_config_says_loopback_only(self):
        with sbtest.Scratch() as s:
            cp = sbtest.run_sb(["--check-config"], cwd=self.layer(s).dir, python="/usr/bin/python3")
            self.assertIn("network: own namespace with loopback only", cp.stdout)
            self.assertIn("self-test: TCP connect to 127.0.0.1", cp.stdout)

    def test_host_loopback(self):
        # Only the host's own loopback is targeted: through slirp4netns the
        # gateway 10.0.2.2 is the host's 127.0.0.1 when (and only when) the
        # policy says unshare.host-loopback=yes; the supervisor still judges
        # each port.
        if not shutil.which("slirp4netns"):
            self.skipTest("slirp4netns is not installed")
        allowed, denied = self.allowed.getsockname()[1], self.denied.getsockname()[1]
        for host_loopback, want in (("yes", "OK"), ("no", "ENETUNREACH")):
            with self.subTest(host_loopback=host_loopback), sbtest.Scratch() as s:
                layer = ou.Layer(s, "/usr/bin/python3", "unshare",
                                 f"python-import=*\nnet=ALLOW|tcp|10.0.2.2|{allowed}|OUT\n"
                                 f"net=ALLOW|tcp|127.0.0.1|{allowed}|OUT\n"
                                 f"unshare.host-loopback={host_loopback}\n")
                cc = sbtest.run_sb(["--check-config"], cwd=layer.dir, python="/usr/bin/python3")
                self.assertIn("other hosts through slirp4netns", cc.stdout, cc.stderr)
                self.assertIn("at 10.0.2.2 (unshare.host-loopback=yes)" if want == "OK" else "out of reach",
                              cc.stdout)
                prog = s.write("net.py", PROGRAM.format(allowed=allowed, denied=denied))
                cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3")
                self.assertEqual(cp.returncode, 0, cp.stderr)
                r = ou.outcomes(cp)
                self.assertEqual(r.get("gateway allowed"), want, cp.stdout + cp.stderr)
                self.assertEqual(r.get("gateway denied"), "ECONNREFUSED")
                self.assertIn("DENIED connect 10.0.2.2:%d" % denied, cp.stderr)
                self.assertEqual(r.get("loopback allowed"), "ECONNREFUSED")	# the namespace's own
                if want == "OK":
                    conn, _ = self.allowed.accept()
                    self.assertEqual(conn.recv(2), b"hi")
                    conn.close()

    def test_fails_closed_without_slirp4netns(self):
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", "unshare", "net=ALLOW|tcp|0.0.0.0/0|443|OUT\n")
            prog = s.write("started.py", "open('rw/started', 'w')\n")
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3", env={"PATH": "/nonexistent"})
            self.assertEqual(cp.returncode, 255)
            self.assertIn("os-sandbox=unshare cannot be applied", cp.stderr)
            self.assertIn("Hint: apt-get install slirp4netns", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists())


if __name__ == "__main__":
    osb.main(UnshareThroughPythonSb, osb.layer_unusable("unshare"))

#!/usr/bin/env python3
"""os-sandbox=unshare alone (no supervisor): the program runs in its own user,
mount, pid, net, ipc and uts namespaces, as the invoking uid, in a fresh root
that holds only the exposures; the host's loopback services are out of reach.
The self-test catches a layer that does nothing."""
import os
import shutil
import socket
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402

PROGRAM = ou.PROBE_PRELUDE + r'''
print("pid", os.getpid(), flush=True)
print("ppid", os.getppid(), flush=True)
print("uid", os.getuid(), flush=True)
print("procs", len([d for d in os.listdir("/proc") if d.isdigit()]), flush=True)
print("hostname", socket.gethostname(), flush=True)
attempt("read ro", lambda: read("ro/data.txt"))
attempt("read secret", lambda: read({secret!r}))
attempt("list secret dir", lambda: os.listdir({secret_dir!r}))
attempt("create in ro", lambda: write("ro/new.txt"))
attempt("create in rw", lambda: write("rw/new.txt"))
attempt("write /usr", lambda: write("/usr/sb-test"))
attempt("write the root", lambda: write("/sb-test"))
attempt("connect host loopback", lambda: tcp({host_port}))
def own_loopback():
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
    c = socket.create_connection(srv.getsockname()); a, _ = srv.accept()
    c.sendall(b"hi"); assert a.recv(2) == b"hi"
    for s in (a, c, srv): s.close()
attempt("own loopback", own_loopback)
sys.exit({exit_code})
'''


class Unshare(unittest.TestCase):
    def setUp(self):
        self.secret_dir = Path(tempfile.mkdtemp(prefix="sbsecret-"))
        self.secret = self.secret_dir / "token"
        self.secret.write_text("secret\n")
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)

    def tearDown(self):
        self.listener.close()
        shutil.rmtree(self.secret_dir, ignore_errors=True)

    def program(self, exit_code=0):
        return PROGRAM.format(secret=str(self.secret), secret_dir=str(self.secret_dir),
                              host_port=self.listener.getsockname()[1], exit_code=exit_code)

    def test_namespaces(self):
        for python in ou.PYTHONS:
            with self.subTest(python=python), sbtest.Scratch() as s:
                layer = ou.Layer(s, python, "unshare")
                cp = layer.run(self.program(exit_code=7))
                self.assertEqual(cp.returncode, 7, cp.stderr)
                r = ou.outcomes(cp)
                self.assertEqual(r["pid"], "2")		# pid 1 is the layer's init
                # the listener of a filter installed in the namespaces reached us
                self.assertEqual(r["ppid"], "4242")
                self.assertEqual(r["uid"], str(os.getuid()))
                self.assertLessEqual(int(r["procs"]), 3)
                self.assertEqual(r["hostname"], "python-sb")
                self.assertEqual(r["read ro"], "OK")
                self.assertEqual(r["read secret"], "ENOENT")
                self.assertEqual(r["list secret dir"], "ENOENT")
                self.assertEqual(r["create in ro"], "EROFS")
                self.assertEqual(r["create in rw"], "OK")
                self.assertEqual(r["write /usr"], "EROFS")
                self.assertIn(r["write the root"], ("EROFS", "EACCES"))
                self.assertEqual(r["connect host loopback"], "ECONNREFUSED")
                self.assertEqual(r["own loopback"], "OK")
                self.assertTrue((s.dir / "rw" / "new.txt").exists())

    def test_policy_file_in_rw_stays_read_only(self):
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", "unshare", top_rw=True)
            cp = layer.run(ou.PROBE_PRELUDE + f"attempt('write policy', lambda: write({str(layer.policy)!r}, 'a'))\n"
                           f"attempt('unlink policy', lambda: os.unlink({str(layer.policy)!r}))\n"
                           "attempt('write beside it', lambda: write('beside.txt'))\n")
            self.assertEqual(cp.returncode, 0, cp.stderr)
            r = ou.outcomes(cp)
            self.assertEqual(r["write policy"], "EROFS")
            self.assertEqual(r["unlink policy"], "EBUSY")
            self.assertEqual(r["write beside it"], "OK")

    def test_signal_status(self):
        with sbtest.Scratch() as s:
            cp = ou.Layer(s, "/usr/bin/python3", "unshare").run("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
            self.assertEqual(cp.returncode, 128 + 15, cp.stderr)

    def test_noop_layer_stops_the_run(self):
        with sbtest.Scratch() as s:
            cp = ou.Layer(s, "/usr/bin/python3", "unshare").run("open('rw/started', 'w')\n", "--noop")
            self.assertEqual(cp.returncode, ou.EXIT_LAYER)
            self.assertIn("os-sandbox=unshare: the self-test failed", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists())

    def test_host_network_needs_slirp4netns(self):
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", "unshare", "net=ALLOW|tcp|0.0.0.0/0|443|OUT\n")
            cp = layer.run("pass\n", env={"PATH": "/nonexistent"})
            self.assertEqual(cp.returncode, ou.EXIT_LAYER)
            self.assertIn("os-sandbox=unshare cannot be applied: net= rules allow hosts beyond loopback",
                          cp.stderr)
            self.assertIn("Hint: apt-get install slirp4netns", cp.stderr)

    def test_host_network_through_slirp4netns(self):
        # Only the host's own loopback is targeted: through slirp4netns the
        # gateway 10.0.2.2 is the host's 127.0.0.1 when (and only when) the
        # policy says unshare.host-loopback=yes.
        if not shutil.which("slirp4netns"):
            self.skipTest("slirp4netns is not installed")
        port = self.listener.getsockname()[1]
        program = ou.PROBE_PRELUDE + f"""
def talk():
    c = socket.create_connection(("10.0.2.2", {port}), timeout=10)
    c.sendall(b"hi")
    c.close()
attempt("host via gateway", talk)
"""
        for host_loopback, want in (("yes", "OK"), ("no", "ENETUNREACH")):
            with self.subTest(host_loopback=host_loopback), sbtest.Scratch() as s:
                layer = ou.Layer(s, "/usr/bin/python3", "unshare",
                                 f"net=ALLOW|tcp|10.0.2.2|{port}|OUT\nunshare.host-loopback={host_loopback}\n")
                text = layer.describe().stdout
                self.assertIn("other hosts through slirp4netns", text)
                cp = layer.run(program)
                self.assertEqual(cp.returncode, 0, cp.stderr)
                self.assertEqual(cp.stderr, "")
                self.assertEqual(ou.outcomes(cp)["host via gateway"], want)
                if want == "OK":
                    conn, _ = self.listener.accept()
                    self.assertEqual(conn.recv(2), b"hi")
                    conn.close()


def unshare_usable() -> str:
    with sbtest.Scratch() as s:
        cp = ou.Layer(s, "/usr/bin/python3", "unshare").describe()
    if cp.returncode == 0:
        return ""
    return cp.stderr.strip() or f"exit {cp.returncode}"


if __name__ == "__main__":
    ou.require_driver()
    why = unshare_usable()
    if why:
        sbtest.skip(f"user namespaces are not usable here: {why}")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Unshare)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if res.wasSuccessful() else 1)

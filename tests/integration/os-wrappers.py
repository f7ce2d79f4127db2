#!/usr/bin/env python3
"""os-sandbox=bwrap and os-sandbox=firejail (no supervisor): the command line
generated from the policy confines the program, the self-test (the
interpreter run inside the wrapper as a probe) catches a wrapper that
confines nothing, and the exec stub inside the wrapper hands a seccomp
listener back across it, so the supervisor's filter is the innermost one.  The driver's stand-in supervisor answers getppid()
with 4242: a program that sees 4242 runs under a listener installed after
the wrapper's own set-up."""
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402

PROGRAM = ou.PROBE_PRELUDE + r'''
print("ppid", os.getppid(), flush=True)
attempt("read ro", lambda: read("ro/data.txt"))
attempt("read secret", lambda: read({secret!r}))
attempt("create in ro", lambda: write("ro/new.txt"))
attempt("create in rw", lambda: write("rw/new.txt"))
attempt("write policy", lambda: write({policy!r}, "a"))
sys.exit(5)
'''


class Wrappers(unittest.TestCase):
    def setUp(self):
        self.secret_dir = Path(tempfile.mkdtemp(prefix="sbsecret-"))
        self.secret = self.secret_dir / "token"
        self.secret.write_text("secret\n")

    def tearDown(self):
        shutil.rmtree(self.secret_dir, ignore_errors=True)

    def check(self, wrapper, refused_secret):
        if not shutil.which(wrapper):
            self.skipTest(f"{wrapper} is not installed")
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", wrapper)
            cp = layer.run(PROGRAM.format(secret=str(self.secret), policy=str(layer.policy)))
            if cp.returncode == ou.EXIT_LAYER and "cannot" in cp.stderr:
                self.skipTest(f"{wrapper} cannot run here: {cp.stderr.strip()}")
            self.assertEqual(cp.returncode, 5, cp.stdout + cp.stderr)
            r = ou.outcomes(cp)
            self.assertEqual(r["ppid"], "4242", "the stub's listener is not the innermost filter")
            self.assertEqual(r["read ro"], "OK")
            self.assertIn(r["read secret"], refused_secret)
            self.assertIn(r["create in ro"], ("EROFS", "EACCES"))
            self.assertEqual(r["create in rw"], "OK")
            self.assertIn(r["write policy"], ("EROFS", "EACCES"))
            self.assertTrue((s.dir / "rw" / "new.txt").exists())

    def check_policy_protected(self, wrapper):
        if not shutil.which(wrapper):
            self.skipTest(f"{wrapper} is not installed")
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", wrapper, top_rw=True)
            cp = layer.run(ou.PROBE_PRELUDE + f"attempt('write policy', lambda: write({str(layer.policy)!r}, 'a'))\n"
                           "attempt('write beside it', lambda: write('beside.txt'))\n")
            self.assertEqual(cp.returncode, 0, cp.stderr)
            r = ou.outcomes(cp)
            self.assertIn(r["write policy"], ("EROFS", "EACCES"))
            self.assertEqual(r["write beside it"], "OK")

    def test_bwrap_policy_file_in_rw(self):
        self.check_policy_protected("bwrap")

    def test_firejail_policy_file_in_rw(self):
        self.check_policy_protected("firejail")

    def check_selftest(self, wrapper):
        if not shutil.which(wrapper):
            self.skipTest(f"{wrapper} is not installed")
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", wrapper)
            cp = layer.describe()
            self.assertEqual(cp.returncode, 0, cp.stderr)
            self.assertRegex(cp.stdout, r"self-test: reading /\S+ refused \((ENOENT|EACCES)\)")
            self.assertRegex(cp.stdout, r"self-test: TCP connect to 127.0.0.1 port \d+ refused")
            cp = layer.run("open('rw/started', 'w')\n", "--noop")
            self.assertEqual(cp.returncode, ou.EXIT_LAYER)
            self.assertIn(f"os-sandbox={wrapper}: the self-test failed", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists())

    def test_bwrap_selftest(self):
        self.check_selftest("bwrap")

    def test_firejail_selftest(self):
        self.check_selftest("firejail")

    def test_bwrap(self):
        self.check("bwrap", ("ENOENT",))

    def test_firejail(self):
        # firejail hides by blacklisting: the directory is there, unreadable
        self.check("firejail", ("ENOENT", "EACCES"))


if __name__ == "__main__":
    ou.require_driver()
    if not shutil.which("bwrap") and not shutil.which("firejail"):
        sbtest.skip("neither bwrap (bubblewrap) nor firejail is installed")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Wrappers)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not res.wasSuccessful():
        sys.exit(1)
    sys.exit(sbtest.SKIP if len(res.skipped) == res.testsRun else 0)

#!/usr/bin/env python3
"""The Landlock layer proves itself before the program starts: a probe child
applies the same rules and must be refused one path and one TCP port.  A
layer that restricts nothing (injected with --noop, or in python-sb's own
child with the test-only build's SB_TEST_NOOP_LAYER) stops the run before the
program runs; a named layer the kernel cannot apply fails closed with a hint;
auto falls back to the supervisor alone with one warning."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402

EOPNOTSUPP, ENOSYS = 95, 38

PROGRAM = r'''
open("rw/started", "w").close()
try:
    open({secret!r}).read()
    print("secret readable")
except OSError as e:
    print("secret refused", e.errno)
'''


class LandlockSelfTest(unittest.TestCase):
    def setUp(self):
        self.secret_dir = Path(tempfile.mkdtemp(prefix="sbsecret-"))
        self.secret = self.secret_dir / "token"
        self.secret.write_text("secret\n")

    def tearDown(self):
        shutil.rmtree(self.secret_dir, ignore_errors=True)

    def layer(self, s, os_sandbox="landlock", rules="net=ALLOW|tcp|127.0.0.1|8080|IN,OUT\n"):
        return ou.Layer(s, "/usr/bin/python3", os_sandbox, rules)

    def test_selftest_reported(self):
        with sbtest.Scratch() as s:
            cp = self.layer(s).describe()
            self.assertEqual(cp.returncode, 0, cp.stderr)
            self.assertRegex(cp.stdout, r"self-test: reading /\S+ refused \(EACCES\)")
            self.assertRegex(cp.stdout, r"self-test: TCP connect to 127.0.0.1 port \d+ refused \(EACCES\)")
            self.assertRegex(cp.stdout, r"self-test: TCP bind to 127.0.0.1 port \d+ refused \(EACCES\)")
            # the probe file was fresh, outside every exposure, and is gone
            probe = re.search(r"self-test: reading (/\S+) refused", cp.stdout).group(1)
            self.assertIn(".python-sb-probe-", probe)
            self.assertFalse(os.path.exists(probe))

    def test_noop_layer_stops_the_run(self):
        with sbtest.Scratch() as s:
            cp = self.layer(s).run(PROGRAM.format(secret=str(self.secret)), "--noop")
            self.assertEqual(cp.returncode, ou.EXIT_LAYER, cp.stdout + cp.stderr)
            self.assertIn("the self-test failed", cp.stderr)
            self.assertIn("was not refused (it succeeded)", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists(), "the program ran")

    def test_python_sb_noop_layer_stops_the_run(self):
        # python-sb itself: the probe runs in the program's own child right
        # after the layer, and the parent judges it before the execve.  The
        # test-only build's SB_TEST_NOOP_LAYER makes the layer restrict
        # nothing; the program must never start.
        widen = os.environ.get("PYTHON_SB_WIDEN", "")
        if not os.access(widen, os.X_OK):
            self.skipTest("tests/progs/python-sb-widen not built")
        with sbtest.Scratch() as s:
            (s.dir / "rw").mkdir()
            (s.dir / "main.py").write_text(PROGRAM.format(secret=str(self.secret)))
            (s.dir / ".py-sandboxes").write_text("expose-rw=.\nos-sandbox=landlock\npy-sandbox=false\n")
            env = dict(os.environ, SB_TEST_NOOP_LAYER="1")
            cp = subprocess.run([widen, f"--python={sbtest.PYTHON}", "main.py"], cwd=s.dir, env=env,
                                capture_output=True, text=True, timeout=60)
            self.assertEqual(cp.returncode, 255, cp.stdout + cp.stderr)
            self.assertIn("the self-test failed", cp.stderr)
            self.assertIn("was not refused (it succeeded)", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists(), "the program ran")
            probe = re.search(r"reading (/\S+) was not refused", cp.stderr).group(1)
            self.assertFalse(os.path.exists(probe), "the probe file was left behind")
            # The same build and policy with the layer on: the program runs.
            cp = subprocess.run([widen, f"--python={sbtest.PYTHON}", "main.py"], cwd=s.dir,
                                capture_output=True, text=True, timeout=60)
            self.assertEqual(cp.returncode, 0, cp.stderr)
            self.assertIn("secret refused 2", cp.stdout)  # the supervisor hides it

    def test_layer_on(self):
        with sbtest.Scratch() as s:
            cp = self.layer(s).run(PROGRAM.format(secret=str(self.secret)))
            self.assertEqual(cp.returncode, 0, cp.stderr)
            self.assertIn("secret refused 13", cp.stdout)

    def test_named_layer_unavailable_fails_closed(self):
        with sbtest.Scratch() as s:
            cp = self.layer(s).run(PROGRAM.format(secret=str(self.secret)), "--abi", str(-EOPNOTSUPP))
            self.assertEqual(cp.returncode, ou.EXIT_LAYER)
            self.assertIn("os-sandbox=landlock cannot be applied: Landlock is built in but disabled at boot",
                          cp.stderr)
            self.assertIn("Hint: add landlock to the kernel's lsm= boot parameter", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists())

    def test_auto_falls_back_with_one_warning(self):
        with sbtest.Scratch() as s:
            cp = self.layer(s, "auto").run(PROGRAM.format(secret=str(self.secret)), "--abi", str(-ENOSYS))
            self.assertEqual(cp.returncode, 0, cp.stderr)
            self.assertEqual(cp.stderr.count("warning:"), 1, cp.stderr)
            self.assertIn("os-sandbox=auto: this kernel has no Landlock; the supervisor alone", cp.stderr)
            # no kernel layer: only the supervisor (absent here) would refuse
            self.assertIn("secret readable", cp.stdout)

    def test_none(self):
        with sbtest.Scratch() as s:
            cp = self.layer(s, "none").describe()
            self.assertIn("os-sandbox: none (os-sandbox=none: the supervisor alone)", cp.stdout)


if __name__ == "__main__":
    ou.require_landlock()
    ou.require_driver()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(LandlockSelfTest)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if res.wasSuccessful() else 1)

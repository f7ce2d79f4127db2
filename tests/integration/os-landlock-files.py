#!/usr/bin/env python3
"""Landlock alone (no supervisor) holds the file exposure of the policy:
unexposed files cannot be read, read-only exposures cannot be changed,
writable ones can, and only the executables the policy names may run."""
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402

ABI = 0

PROGRAM = ou.PROBE_PRELUDE + r'''
import subprocess
secret = sys.argv[1] if len(sys.argv) > 1 else os.environ["SECRET"]
print("ppid", os.getppid(), flush=True)
attempt("read ro", lambda: read("ro/data.txt"))
attempt("read secret", lambda: read(secret))
attempt("create in ro", lambda: write("ro/new.txt"))
attempt("overwrite ro", lambda: write("ro/data.txt"))
attempt("append ro", lambda: write("ro/data.txt", "a"))
attempt("truncate ro", lambda: os.truncate("ro/data.txt", 0))
attempt("unlink ro", lambda: os.unlink("ro/data.txt"))
attempt("mkdir in ro", lambda: os.mkdir("ro/d"))
attempt("rename in ro", lambda: os.rename("ro/data.txt", "ro/moved.txt"))
attempt("create in rw", lambda: write("rw/new.txt"))
attempt("truncate rw", lambda: os.truncate("rw/new.txt", 0))
attempt("mkdir in rw", lambda: os.mkdir("rw/d"))
attempt("rename in rw", lambda: os.rename("rw/new.txt", "rw/d/moved.txt"))
attempt("rename rw to ro", lambda: os.rename("rw/d/moved.txt", "ro/moved.txt"))
attempt("link secret into rw", lambda: os.link(secret, "rw/stolen"))
attempt("symlink to secret", lambda: os.symlink(secret, "rw/link"))
attempt("read through symlink", lambda: read("rw/link"))
attempt("unlink rw", lambda: os.unlink("rw/d/moved.txt"))
attempt("exec true", lambda: subprocess.run(["/usr/bin/true"], check=True))
attempt("exec env", lambda: subprocess.run(["/usr/bin/env", "true"], check=True))
'''


class LandlockFiles(unittest.TestCase):
    def setUp(self):
        self.secret_dir = Path(tempfile.mkdtemp(prefix="sbsecret-"))
        self.secret = self.secret_dir / "id_rsa"
        self.secret.write_text("secret\n")

    def tearDown(self):
        shutil.rmtree(self.secret_dir, ignore_errors=True)

    def run_under(self, python, rules="", *driver_args):
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, python, "landlock", rules)
            cp = layer.run(PROGRAM.replace('sys.argv[1] if len(sys.argv) > 1 else os.environ["SECRET"]',
                                           repr(str(self.secret))), *driver_args)
            self.assertEqual(cp.returncode, 0, cp.stderr)
            r = ou.outcomes(cp)
            if r["truncate ro"] != "OK":
                self.assertEqual((s.dir / "ro" / "data.txt").read_text(), "read-only data\n")
            return r

    def test_exposure(self):
        for python in ou.PYTHONS:
            with self.subTest(python=python):
                r = self.run_under(python)
                # the filter installed after Landlock still hands its listener over
                self.assertEqual(r["ppid"], "4242")
                self.assertEqual(r["read ro"], "OK")
                self.assertEqual(r["read secret"], "EACCES")
                for op in ("create in ro", "overwrite ro", "append ro", "unlink ro", "mkdir in ro",
                           "rename in ro"):
                    self.assertEqual(r[op], "EACCES", op)
                self.assertEqual(r["truncate ro"], "EACCES" if ABI >= 3 else "OK")
                for op in ("create in rw", "truncate rw", "mkdir in rw", "rename in rw", "unlink rw",
                           "symlink to secret"):
                    self.assertEqual(r[op], "OK", op)
                self.assertIn(r["rename rw to ro"], ("EACCES", "EXDEV"))
                self.assertIn(r["link secret into rw"], ("EACCES", "EXDEV"))
                self.assertEqual(r["read through symlink"], "EACCES")
                # no python-api=process-exec: nothing but the interpreter may run
                self.assertEqual(r["exec true"], "EACCES")
                self.assertEqual(r["exec env"], "EACCES")

    def test_older_abis_degrade(self):
        # The rules computed for an older kernel still apply here, with the
        # rights that ABI lacks left open (truncate before ABI 3).
        for abi in range(1, min(ABI, 3) + 1):
            with self.subTest(abi=abi):
                r = self.run_under("/usr/bin/python3", "", "--abi", str(abi))
                self.assertEqual(r["read secret"], "EACCES")
                self.assertEqual(r["overwrite ro"], "EACCES")
                self.assertEqual(r["create in rw"], "OK")
                self.assertEqual(r["truncate ro"], "EACCES" if abi >= 3 else "OK")

    def test_exec_rules(self):
        r = self.run_under("/usr/bin/python3", "python-api=ALLOW:process-exec\nexec=/usr/bin/true\n")
        self.assertEqual(r["exec true"], "OK")
        self.assertEqual(r["exec env"], "EACCES")
        r = self.run_under("/usr/bin/python3", "python-api=ALLOW:process-exec\n")
        self.assertEqual(r["exec env"], "OK")


if __name__ == "__main__":
    ABI = ou.require_landlock()
    ou.require_driver()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(LandlockFiles)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if res.wasSuccessful() else 1)

#!/usr/bin/env python3
"""python-sb --attach PID --learn FILE learns what a running program does
while attached and merges it into FILE (the learner's writer and merge):
a program whose start-up was learned by `python-sb --learn`, and which then
reads a new file and writes where it only read before, runs enforced
under the merged file, while the file learned before the attach refuses
those accesses."""
import re
import shutil
import signal
import unittest

import attachlib as al
import sbtest


class AttachLearn(unittest.TestCase):
    def setUp(self):
        self.server = al.LoopbackServer()
        self.t = None

    def tearDown(self):
        if self.t:
            self.t.cleanup()
        self.server.close()

    def enforced(self, policy, *extra):
        """A fresh run of the program under python-sb with `policy`."""
        return sbtest.run_sb([f"--pysandboxes-config={policy}", str(al.TARGET), str(self.t.data),
                              str(self.server.port), "--rounds", "2", "--exit", "3", *extra],
                             cwd=self.t.dir, python=al.DEBIAN_PYTHON, timeout=al.WAIT)

    def test_learn_merges_what_was_seen(self):
        # A running program, started without python-sb, doing new things.
        extra = ["--write", "--deny", "extra/key"]
        t = self.t = al.Target(al.DEBIAN_PYTHON, self.server.port, "--exit", "3", *extra,
                               files={"extra/key": "k\n"})
        rules = t.dir / ".py-sandboxes"
        # Its start-up and first rounds, learned the usual way (without the new accesses).
        r = sbtest.run_sb([f"--learn={rules}", str(al.TARGET), str(t.data), str(self.server.port),
                           "--rounds", "2", "--exit", "3"], cwd=t.dir, python=al.DEBIAN_PYTHON, timeout=al.WAIT)
        self.assertEqual(r.returncode, 3, r.stderr)
        before = t.dir / "before.py-sandboxes"
        shutil.copy(rules, before)
        r = self.enforced(before, *extra)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertRegex(r.stdout, r"DENY errno=EACCES")
        self.assertRegex(r.stdout, r"DENY errno=ENOENT")

        # Attach and learn until both new accesses were made.
        tr = al.Tracer(al.attach_argv(str(t.pid), learn=str(rules), trace=True), cwd=t.dir)
        self.assertTrue(tr.wait_for(r'\] openat\(AT_FDCWD, "extra/key", O_RDONLY\|O_CLOEXEC\) = \d+'), tr.err.text())
        self.assertTrue(tr.wait_for(r'\] openat\(AT_FDCWD, "%s/out0", O_WRONLY\|O_CREAT\|O_APPEND\|O_CLOEXEC, '
                                    r"0666\) = \d+" % t.data), tr.err.text())
        tr.signal(signal.SIGINT)
        rc, text = tr.finish()
        self.assertEqual(rc, 0, text)
        self.assertIn("Write all learning rules in", text)
        learned = rules.read_text()
        self.assertRegex(learned, r"(?m)^expose-ro=(\./extra|%s)$" % re.escape(str(t.dir / "extra")))
        self.assertRegex(learned, r"(?m)^expose-rw=(\./data|%s)$" % re.escape(str(t.data)))
        self.assertTrue((t.dir / ".py-sandboxes.old").exists())
        # Each learned line says which Python line needed it.
        self.assertIn(f"{al.TARGET}:{al.marker_line('deny')}", learned)

        # The program itself carried on, and a fresh enforced run now works.
        rc, out = t.finish()
        self.assertEqual(rc, 3, out)
        self.assertNotIn("DENY errno=", out)
        (t.data / "stop").unlink()
        r = self.enforced(rules, *extra)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertNotIn("DENY errno=", r.stdout)
        self.assertRegex(r.stdout, r"DONE n=2\n$")
        # (python-sb's own agent files are not the program's business here)
        self.assertFalse([line for line in r.stderr.splitlines() if "DENIED" in line and str(t.dir) in line],
                         r.stderr)


if __name__ == "__main__":
    al.main(AttachLearn)

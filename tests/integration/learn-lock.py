#!/usr/bin/env python3
"""E3 (reference §9.2): learning under the learn=false lock is refused (255)."""
from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402


class LearnLock(unittest.TestCase):
    def test_learn_refused_under_lock(self) -> None:
        with sbtest.Scratch() as s:
            s.write("prog.py", "print('RAN')\n")
            policy = s.policy("expose-ro=.\nlearn=false\n")
            before = policy.read_text()
            r = sbtest.run_sb(["--learn", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 255, r.stderr)
            self.assertNotIn("RAN", r.stdout)
            self.assertIn("learning mode is forbidden", r.stderr)
            self.assertEqual(policy.read_text(), before)
            self.assertFalse((s.dir / ".py-sandboxes.old").exists())

    def test_learn_line_refused_under_lock(self) -> None:
        with sbtest.Scratch() as s:
            s.write("prog.py", "print('RAN')\n")
            s.write("locked.profile", "learn=false\n")
            s.policy('include "locked.profile"\nexpose-ro=.\nlearn=.py-sandboxes\n')
            r = sbtest.run_sb(["prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 255, r.stderr)
            self.assertNotIn("RAN", r.stdout)


if __name__ == "__main__":
    sbtest.main(LearnLock)

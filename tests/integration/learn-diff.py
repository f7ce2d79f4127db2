#!/usr/bin/env python3
"""python-sb --diff OLD NEW: policy drift for CI review.

Comments, order, blank lines and "# Add rules" headers do not count; list
values compare item by item; the exit status is 1 only when NEW allows
something OLD did not.
"""
from __future__ import annotations

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

OLD = """# reviewed
expose-ro=./data
net=ALLOW|TCP|example.com|80,443|OUT
python-import=json, re
env=HOME=${HOME}
"""


def diff(old: str, new: str) -> subprocess.CompletedProcess[str]:
    sbtest.require_binary()
    with sbtest.Scratch() as s:
        a = s.write("old.py-sandboxes", old)
        b = s.write("new.py-sandboxes", new)
        return subprocess.run([sbtest.PYTHON_SB, "--diff", str(a), str(b)], capture_output=True, text=True,
                              timeout=60)


class Diff(unittest.TestCase):
    def test_same_rules_other_order_and_comments(self) -> None:
        new = """python-import=re,json
# Add rules (2026/01/01 at 10:00)
env=HOME=${HOME}   # kept
net=ALLOW|tcp|example.com|443,80|OUT

expose-ro=./data
"""
        r = diff(OLD, new)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("No semantic difference.", r.stdout)

    def test_widening_exits_1(self) -> None:
        r = diff(OLD, OLD + "expose-rw=./out\nnet=ALLOW|TCP|example.com|8080|OUT\n")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("+ expose-rw=./out   (widens)", r.stdout)
        self.assertIn("+ net=ALLOW|TCP|example.com|8080|OUT   (widens)", r.stdout)
        self.assertIn("NEW widens OLD", r.stdout)

    def test_narrowing_exits_0(self) -> None:
        r = diff(OLD, OLD.replace("python-import=json, re", "python-import=json") + "ignore=.env\n")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("- python-import=re", r.stdout)
        self.assertIn("+ ignore=.env", r.stdout)
        self.assertIn("NEW only narrows OLD", r.stdout)

    def test_removing_a_deny_widens(self) -> None:
        r = diff(OLD + "net=DENY|*|10.0.0.0/8|*|OUT\n", OLD)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("- net=DENY|*|10.0.0.0/8|*|OUT   (widens)", r.stdout)

    def test_missing_file_is_an_error(self) -> None:
        sbtest.require_binary()
        r = subprocess.run([sbtest.PYTHON_SB, "--diff", "/nonexistent-a", "/nonexistent-b"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 255, r.stdout + r.stderr)


if __name__ == "__main__":
    sbtest.main(Diff)

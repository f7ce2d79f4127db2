#!/usr/bin/env python3
"""However the program ends, what it did before is learned (issue 4).

The supervisor outlives the program, so the rule file is written after a
normal exit, sys.exit(), an uncaught exception, the program killing itself
with SIGKILL, and python-sb itself receiving SIGTERM (forwarded to the
program, then the file written).  The exit status is the program's (128+N
for a signal).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learnlib  # noqa: E402
import sbtest  # noqa: E402

PROGRAM = """
import os, signal, sys, time
how = sys.argv[1]
os.listdir("data")
with open("data/notes.txt") as f:
    f.read()
os.makedirs("out", exist_ok=True)
with open("out/partial.txt", "w") as f:
    f.write("before the end\\n")
print("ready", flush=True)
if how == "exit":
    sys.exit(3)
if how == "raise":
    raise RuntimeError("boom")
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if how == "wait":
    time.sleep(60)
"""


class Endings(unittest.TestCase):
    def learned(self, how: str, status: int) -> str:
        with sbtest.Scratch() as s:
            s.write("app/prog.py", PROGRAM)
            s.write("data/notes.txt", "x\n")
            r = sbtest.run_sb(["app/prog.py", how], cwd=s.dir)
            self.assertEqual(r.returncode, status, r.stderr)
            self.assertEqual(r.stdout, "ready\n")
            rules = s.dir / learnlib.RULES
            self.assertTrue(rules.exists(), f"{how}: nothing written\n{r.stderr}")
            self.assertIn("Write all learning rules in '.py-sandboxes'.", r.stderr)
            lines = learnlib.rule_lines(rules)
            self.assertIn("expose-ro=./data", lines)
            self.assertIn("expose-rw=./out", lines)
            return rules.read_text()

    def test_normal_exit(self) -> None:
        self.learned("normal", 0)

    def test_sys_exit(self) -> None:
        self.learned("exit", 3)

    def test_uncaught_exception(self) -> None:
        self.learned("raise", 1)

    def test_program_killed_by_sigkill(self) -> None:
        self.learned("kill", 128 + signal.SIGKILL)

    def test_python_sb_terminated(self) -> None:
        sbtest.require_binary()
        with sbtest.Scratch() as s:
            s.write("app/prog.py", PROGRAM)
            s.write("data/notes.txt", "x\n")
            p = subprocess.Popen([sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}", "app/prog.py", "wait"],
                                 cwd=s.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                # The program says "ready" once it has done everything to learn.
                self.assertEqual(p.stdout.readline(), "ready\n")
                p.send_signal(signal.SIGTERM)
                out, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
            rules = s.dir / learnlib.RULES
            self.assertTrue(rules.exists(), err)
            lines = learnlib.rule_lines(rules)
            self.assertIn("expose-ro=./data", lines)
            self.assertIn("expose-rw=./out", lines)


if __name__ == "__main__":
    sbtest.main(Endings)

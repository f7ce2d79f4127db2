#!/usr/bin/env python3
"""E1 (reference §9.2): no rule file, the first run learns one.

A script reads a data directory, an environment variable, writes an output
directory and talks to a loopback server; python-sb runs it unrestricted and
writes .py-sandboxes from the template with each of those as a generalised
rule, prints upstream's message, and a second run, now enforced by the
learned file, behaves exactly the same (a learned policy never refuses what
the learned run did).
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learnlib  # noqa: E402
import sbtest  # noqa: E402


def interpreters() -> list[str]:
    """The configured interpreter, and always the Debian one."""
    found = [sbtest.PYTHON]
    if os.path.realpath("/usr/bin/python3") not in map(os.path.realpath, found) and os.path.exists("/usr/bin/python3"):
        found.append("/usr/bin/python3")
    return found


class LearnNewFile(unittest.TestCase):
    def test_first_run_learns_then_enforces(self) -> None:
        for python in interpreters():
            with self.subTest(python=python):
                self.learn_then_enforce(python)

    def learn_then_enforce(self, python: str) -> None:
        with sbtest.Scratch() as s, learnlib.LoopbackServer() as srv:
            learnlib.make_project(s)
            env = {"LEARN_TEST_GREETING": "hello"}
            r = sbtest.run_sb(["app/prog.py", str(srv.port)], cwd=s.dir, env=env, python=python)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "words=5 greeting=hello answer=pong\n")
            self.assertIn("Write all learning rules in '.py-sandboxes'.", r.stderr)
            self.assertIn("Check and update this file to validate the rules.", r.stderr)
            rules = s.dir / learnlib.RULES
            self.assertTrue(rules.exists(), "no rule file was written")
            text = rules.read_text()
            lines = learnlib.rule_lines(rules)
            self.assertIn("env=LEARN_TEST_GREETING=${LEARN_TEST_GREETING}", lines)
            self.assertIn("expose-ro=./data", lines)
            self.assertIn("expose-rw=./out", lines)
            self.assertIn("expose-ro=./app", lines)
            self.assertTrue(
                f"net=ALLOW|TCP|localhost|{srv.port}|OUT" in lines
                or f"net=ALLOW|TCP|127.0.0.1/32|{srv.port}|OUT" in lines,
                text)
            # Each learned block sits under a dated header, before its end marker.
            self.assertRegex(text, r"# Add rules \(\d{4}/\d\d/\d\d at \d\d:\d\d\)\n(.*\n)*?expose-ro=./data\n")
            self.assertRegex(text, r"expose-rw=./out\n(# why: .*\n)?(.*\n)*?\n# </learning_guard_files>")
            # The template's comments are kept.
            self.assertIn("# <learning_guard_envs>", text)
            learnlib.check_common(self, text)
            # Nothing of the interpreter's own tree, nothing nested twice.
            self.assertFalse([l for l in lines if re.match(r"expose-r[ow]=.*python3\.\d+", l)], text)
            self.assertNotIn("expose-ro=./data/", text)

            # Enforced by the learned file: the same run, the same output.
            before = text
            r2 = sbtest.run_sb(["app/prog.py", str(srv.port)], cwd=s.dir, env=env, python=python)
            self.assertEqual(r2.returncode, 0, r2.stderr)
            self.assertEqual(r2.stdout, r.stdout)
            # Nothing the program itself did is refused.
            self.assertEqual(learnlib.program_denials(r2.stderr, s.dir), [], r2.stderr)
            self.assertEqual(rules.read_text(), before, "an enforced run must not touch the file")
            self.assertFalse((s.dir / ".py-sandboxes.old").exists())
            self.assertEqual((s.dir / "out" / "report.txt").read_text(), "5 hello pong\n")

    def test_env_valued_port_and_no_network(self) -> None:
        """A port that is the value of a *PORT* variable is written ${VAR}."""
        with sbtest.Scratch() as s, learnlib.LoopbackServer() as srv:
            learnlib.make_project(s)
            env = {"LEARN_TEST_GREETING": "hi", "LEARN_TEST_PORT": str(srv.port)}
            r = sbtest.run_sb(["app/prog.py", str(srv.port)], cwd=s.dir, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = learnlib.rule_lines(s.dir / learnlib.RULES)
            self.assertTrue(
                "net=ALLOW|TCP|localhost|${LEARN_TEST_PORT}|OUT" in lines
                or "net=ALLOW|TCP|127.0.0.1/32|${LEARN_TEST_PORT}|OUT" in lines, lines)

    def test_metadata_service_flagged(self) -> None:
        """A connection to the cloud metadata service, learned like any
        other, comes with a warning for whoever reviews the file.  The run is
        in a network namespace of its own with no interface up: the connect
        is learned (at the decision) and fails there, nothing leaves."""
        unshare = shutil.which("unshare")
        if not unshare:
            self.skipTest("no unshare(1)")
        with sbtest.Scratch() as s:
            (s.dir / "prog.py").write_text(
                "import socket\n"
                "s = socket.socket()\n"
                "s.settimeout(2)\n"
                "try:\n"
                "    s.connect(('169.254.169.254', 80))\n"
                "    print('connected')\n"
                "except OSError as e:\n"
                "    print('connect', e.errno)\n")
            cmd = [unshare, "-n" if os.geteuid() == 0 else "-rn", sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}",
                   "--learn", "prog.py"]
            r = subprocess.run(cmd, cwd=s.dir, capture_output=True, text=True, timeout=60)
            if r.returncode != 0 and "unshare" in r.stderr and not (s.dir / learnlib.RULES).exists():
                self.skipTest("no network namespace here: " + r.stderr.strip())
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), f"connect {errno.ENETUNREACH}", r.stdout + r.stderr)
            text = (s.dir / learnlib.RULES).read_text().splitlines()
            rule = "net=ALLOW|TCP|169.254.169.254/32|80|OUT"
            self.assertIn(rule, text)
            self.assertTrue(text[text.index(rule) - 1].startswith(
                "# careful: a cloud metadata service, it hands out this machine's credentials"), text)


if __name__ == "__main__":
    sbtest.main(LearnNewFile)

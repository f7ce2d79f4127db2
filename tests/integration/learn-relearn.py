#!/usr/bin/env python3
"""E2 (reference §9.2): --learn on an existing file adds only what is new.

The first run learns the E1 program; a second run with --learn reads one more
directory: the old file is kept as .py-sandboxes.old, the new one is the old
one plus the new rule under a new "# Add rules (...)" header.  A third run
that learns nothing new writes nothing (no .old_1).
"""
from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learnlib  # noqa: E402
import sbtest  # noqa: E402


class Relearn(unittest.TestCase):
    def test_relearn_adds_only_new_lines(self) -> None:
        with sbtest.Scratch() as s, learnlib.LoopbackServer() as srv:
            learnlib.make_project(s, extra_dirs=("data2",))
            env = {"LEARN_TEST_GREETING": "hello"}
            port = str(srv.port)
            r = sbtest.run_sb(["app/prog.py", port], cwd=s.dir, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            rules = s.dir / learnlib.RULES
            first = rules.read_text()
            self.assertNotIn("data2", first)

            # Enforced, the new directory is refused (it looks missing).
            r = sbtest.run_sb(["app/prog.py", port, "data2"], cwd=s.dir, env=env)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("DENIED", r.stderr)
            self.assertEqual(rules.read_text(), first)

            r = sbtest.run_sb(["--learn", "app/prog.py", port, "data2"], cwd=s.dir, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "words=7 greeting=hello answer=pong\n")
            self.assertIn("The old version is here '.py-sandboxes.old'.", r.stderr)
            old = s.dir / ".py-sandboxes.old"
            self.assertEqual(old.read_text(), first)
            second = rules.read_text()
            # The old file, line for line, plus new lines only.
            old_lines, new_lines = first.splitlines(), second.splitlines()
            it = iter(new_lines)
            for line in old_lines:
                for candidate in it:
                    if candidate == line:
                        break
                else:
                    self.fail(f"old line lost: {line!r}")
            added = list(new_lines)
            for line in old_lines:
                added.remove(line)
            added_rules = [l for l in added if l and not l.startswith("#")]
            self.assertEqual(added_rules, ["expose-ro=./data2"], second)
            self.assertEqual(len([l for l in added if l.startswith("# Add rules (")]), 1, second)

            # Now enforced, the run with data2 works.
            r = sbtest.run_sb(["app/prog.py", port, "data2"], cwd=s.dir, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)

            # Learning the same thing again writes nothing.
            r = sbtest.run_sb(["--learn", "app/prog.py", port, "data2"], cwd=s.dir, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("Write all learning rules", r.stderr)
            self.assertFalse((s.dir / ".py-sandboxes.old_1").exists())
            self.assertEqual(rules.read_text(), second)


if __name__ == "__main__":
    sbtest.main(Relearn)

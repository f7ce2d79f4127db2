#!/usr/bin/env python3
"""The interpreter's bytecode cache is never learned as writable.

A program importing its own module writes __pycache__ while it is learned.
A rule making that directory writable would let a taken-over run plant a
.pyc whose header matches the source (time and size) and that every later
run would execute on import.  So the learned file has no such rule; the
enforced run still works (the cache written while learning is read, a
stale one is replaced by an in-memory compile, the refused write is not
printed); a planted .pyc is refused and the cache left as it was; and
--audit --fail-on-violation and the CI report do not count the cache write
as a violation, as enforce mode does not print it.
"""
from __future__ import annotations

import json
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learnlib  # noqa: E402
import sbtest  # noqa: E402

# The test is about the writes the interpreter makes: let it make them.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HELPER = "def answer():\n    return 42\n"
PROGRAM = """\
import sys
import helper
print("answer", helper.answer())
if len(sys.argv) > 1:
    import importlib.util
    target = importlib.util.cache_from_source(helper.__file__)
    try:
        with open(target, "wb") as f:
            f.write(b"planted")
        print("planted")
    except PermissionError:
        print("refused")
"""


def cache_of(d: Path) -> list[Path]:
    return sorted((d / "__pycache__").glob("helper.*.pyc"))


class Bytecode(unittest.TestCase):
    def setUp(self) -> None:
        self.s = sbtest.Scratch()
        self.s.write("helper.py", HELPER)
        self.s.write("prog.py", PROGRAM)
        # No policy file: the first run learns one (reference §1).
        r = sbtest.run_sb(["prog.py"], cwd=self.s.dir)
        self.assertEqual((r.returncode, r.stdout), (0, "answer 42\n"), r.stderr)
        self.rules = learnlib.rule_lines(self.s.dir / learnlib.RULES)

    def tearDown(self) -> None:
        self.s.__exit__()

    def test_the_learned_file_has_no_writable_cache(self) -> None:
        self.assertTrue(cache_of(self.s.dir), "learning runs as bare: the interpreter wrote its cache")
        self.assertFalse([l for l in self.rules if "__pycache__" in l], self.rules)
        self.assertFalse([l for l in self.rules if l.startswith("expose-rw=")], self.rules)

    def test_enforced_runs_work_and_a_planted_pyc_is_refused(self) -> None:
        before = {p: p.read_bytes() for p in cache_of(self.s.dir)}
        self.assertTrue(before)
        r = sbtest.run_sb(["prog.py", "plant"], cwd=self.s.dir)
        self.assertEqual((r.returncode, r.stdout), (0, "answer 42\nrefused\n"), r.stderr)
        self.assertEqual({p: p.read_bytes() for p in cache_of(self.s.dir)}, before)
        # A stale cache: the source changes, the interpreter cannot write the
        # new bytecode, compiles in memory and says nothing about it.
        self.s.write("helper.py", HELPER.replace("42", "43") + "# changed\n")
        r = sbtest.run_sb(["prog.py"], cwd=self.s.dir)
        self.assertEqual((r.returncode, r.stdout), (0, "answer 43\n"), r.stderr)
        self.assertNotIn("__pycache__", r.stderr)
        self.assertEqual({p: p.read_bytes() for p in cache_of(self.s.dir)}, before)

    def test_audit_and_the_report_do_not_count_the_cache(self) -> None:
        # Whatever was learned, a policy without a writable cache.
        policy = self.s.dir / learnlib.RULES
        policy.write_text("".join(l for l in policy.read_text().splitlines(True) if "__pycache__" not in l))
        self.s.write("helper.py", HELPER + "# stale cache from here on\n")
        report = self.s.dir.parent / (self.s.dir.name + "-report.json")
        try:
            r = sbtest.run_sb(["--audit", "--fail-on-violation", f"--report={report}", "prog.py"], cwd=self.s.dir)
            self.assertEqual((r.returncode, r.stdout), (0, "answer 42\n"), r.stderr)
            doc = json.loads(report.read_text())
            self.assertEqual(doc["violations"], [], doc["violations"])
            # The cache was written (audit refuses nothing) and is current.
            self.assertTrue(all(p.stat().st_mtime >= (self.s.dir / "helper.py").stat().st_mtime
                                for p in cache_of(self.s.dir)))
        finally:
            report.unlink(missing_ok=True)


if __name__ == "__main__":
    sbtest.main(Bytecode)

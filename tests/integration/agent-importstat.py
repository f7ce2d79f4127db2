#!/usr/bin/env python3
"""The agent's import stats (python/pysandboxes/_importstat.py) on the real
python-sb: in enforce mode a module directory the policy keeps read-only is
stat-ed once, not at every lookup, and a module file once per import; a
writable directory is looked at each time, so a module the program writes
there imports at once, as bare.  The supervisor's log counts the calls.
Audit mode and --py-sandbox=false look at every directory each time
(nothing is refused there, or no agent runs)."""
from __future__ import annotations

import json
import subprocess
import unittest

import sbtest
from agentlib import Case, pythons

PROG = """
import importlib, sys
ro, rw = sys.argv[1], sys.argv[2]
sys.path[:0] = [ro, rw]
missing = 0
for i in range(30):
    try:
        importlib.import_module(f"sb_absent_{i}")
    except ImportError:
        missing += 1
import ro_mod
with open(rw + "/rw_late.py", "w") as f:
    f.write("VALUE = 'late'\\n")
import rw_late
print(missing, ro_mod.VALUE, rw_late.VALUE)
"""


class ImportStats(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        root = self.scratch.dir.resolve()
        self.ro, self.rw = root / "lib_ro", root / "lib_rw"
        self.ro.mkdir()
        self.rw.mkdir()
        (self.ro / "ro_mod.py").write_text("VALUE = 'ro'\n")
        self.case = Case(self.scratch, ["python-import=*", f"expose-rw={self.rw}"])
        self.prog = self.case.script(PROG)
        self.log = root / "log.jsonl"

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def stats(self, python: str, *opts: str) -> dict[str, int]:
        # With its bytecode there, as an installed module has it: without,
        # the loader stats the source once more to write it.
        subprocess.run([python, "-m", "compileall", "-q", str(self.ro)], check=True)
        self.log.unlink(missing_ok=True)
        cp = self.case.run([f"--log={self.log}", *opts, str(self.prog), str(self.ro), str(self.rw)],
                           python=python)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(cp.stdout.split(), ["30", "ro", "late"])
        counts: dict[str, int] = {}
        for e in map(json.loads, self.log.read_text().splitlines()):
            if e.get("syscall") in ("newfstatat", "statx", "stat", "lstat"):
                counts[e["object"]] = counts.get(e["object"], 0) + 1
        return counts

    def test_read_only_directory_stat_ed_once(self) -> None:
        for python in pythons():
            with self.subTest(python=python):
                n = self.stats(python)
                # The path hooks' checks and the finder's first look share
                # one lstat.
                self.assertEqual(n.get(str(self.ro), 0), 1, n)
                self.assertEqual(n.get(str(self.ro / "ro_mod.py"), 0), 1, n)
                self.assertGreaterEqual(n.get(str(self.rw), 0), 30, n)

    def test_every_lookup_without_enforcement_or_agent(self) -> None:
        # Auditing, the agent keeps no directory but still spares the
        # loader's repeat of the finder's stat; without it, both are made.
        for opts, file_stats in ((["--audit"], 1), (["--py-sandbox=false"], 2)):
            with self.subTest(opts=opts):
                n = self.stats(sbtest.PYTHON, *opts)
                self.assertGreaterEqual(n.get(str(self.ro), 0), 30, n)
                self.assertEqual(n.get(str(self.ro / "ro_mod.py"), 0), file_stats, n)


if __name__ == "__main__":
    sbtest.main(ImportStats)

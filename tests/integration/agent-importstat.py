#!/usr/bin/env python3
"""The agent's import stats (python/pysandboxes/_importstat.py) on the real
python-sb: in enforce mode a module directory the policy keeps read-only is
stat-ed once, not at every lookup, and a module file once per import; a
writable directory is looked at each time, so a module the program writes
there imports at once, as bare.  The supervisor's log counts the calls.
Audit and learning keep only a directory the user could not write bare (as
root, only the interpreter's own trees); --py-sandbox=false looks at every directory each time (no
agent runs)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import unittest

import sbtest
from agentlib import DEBIAN_PYTHON, Case, pythons

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

    def stats(self, python: str, *opts: str, user: bool = False) -> dict[str, int]:
        # With its bytecode there, as an installed module has it: without,
        # the loader stats the source once more to write it.
        subprocess.run([python, "-m", "compileall", "-q", str(self.ro)], check=True)
        self.log.unlink(missing_ok=True)
        (self.rw / "rw_late.py").unlink(missing_ok=True)
        args = [f"--log={self.log}", *opts, str(self.prog), str(self.ro), str(self.rw)]
        if user:
            # python-sb itself as an ordinary user, who may write rw only.
            cp = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sbtest.PYTHON_SB,
                                 f"--python={python}", f"--pysandboxes-config={self.case.policy}", *args],
                                cwd=self.case.dir, capture_output=True, text=True, timeout=120)
        else:
            cp = self.case.run(args, python=python)
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
        # Auditing as root, the agent keeps no directory but still spares
        # the loader's repeat of the finder's stat; without it, both are made.
        if os.geteuid() != 0:
            self.skipTest("needs root: as another user the agent keeps what it may not write")
        for opts, file_stats in ((["--audit"], 1), (["--py-sandbox=false"], 2)):
            with self.subTest(opts=opts):
                n = self.stats(sbtest.PYTHON, *opts)
                self.assertGreaterEqual(n.get(str(self.ro), 0), 30, n)
                self.assertEqual(n.get(str(self.ro / "ro_mod.py"), 0), file_stats, n)

    def test_interpreter_tree_kept_when_learning_as_root(self) -> None:
        # Learning never makes the interpreter's trees writable and the
        # policy keeps them read-only, so even root's learning and auditing
        # look at the standard library's directory once; the program's own
        # directories (root may write them) still at every lookup.
        if os.geteuid() != 0:
            self.skipTest("needs root: as another user the agent keeps what it may not write")
        for python in pythons():
            stdlib = subprocess.run([python, "-c", "import os, sysconfig; "
                                     "print(os.path.realpath(sysconfig.get_path('stdlib')))"],
                                    capture_output=True, text=True, check=True).stdout.strip()
            for opts in (["--audit"], [f"--learn={self.case.dir / 'learned'}"]):
                with self.subTest(python=python, opts=opts):
                    n = self.stats(python, *opts)
                    # The interpreter's own start looks at it 7-9 times
                    # before the agent runs; each of the 30 lookups after
                    # would add one (40-43 before this was kept).
                    self.assertLess(n.get(stdlib, 0), 15, (stdlib, n))
                    self.assertGreaterEqual(n.get(str(self.ro), 0), 30, n)
                    self.assertGreaterEqual(n.get(str(self.rw), 0), 30, n)

    def test_audit_and_learning_keep_what_the_user_cannot_write(self) -> None:
        # Nothing is refused there, so the line is the kernel's: a user
        # cannot add a module to a directory of root's (0755) even bare, and
        # still sees at once the one it writes into its own.
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            self.skipTest("needs root and setpriv to run python-sb as another user")
        root = self.case.dir
        os.chmod(root, 0o755)
        for f in root.iterdir():
            os.chmod(f, 0o755 if f.is_dir() else 0o644)
        os.chown(self.rw, 65534, 65534)
        self.log = self.rw / "log.jsonl"
        for opts in (["--audit"], [f"--learn={self.rw / 'learned'}"]):
            with self.subTest(opts=opts):
                n = self.stats(DEBIAN_PYTHON, *opts, user=True)
                self.assertEqual(n.get(str(self.ro), 0), 1, n)
                self.assertEqual(n.get(str(self.ro / "ro_mod.py"), 0), 1, n)
                self.assertGreaterEqual(n.get(str(self.rw), 0), 30, n)


if __name__ == "__main__":
    sbtest.main(ImportStats)

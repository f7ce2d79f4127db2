#!/usr/bin/env python3
"""A thread flips a path buffer between an allowed and a secret file while
another thread opens, renames or hard-links through it (tests/progs/sup_race.c):
the secret is never read, moved or linked into a writable exposure (SPEC §9),
with the supervisor alone (os-sandbox=none) and with Landlock under it (the
supervisor then CONTINUEs allowed read-only opens: the kernel must refuse what
the race substitutes).  sup_race exits 1 on a leak and 3 when the race never
produced both outcomes."""
from __future__ import annotations

import os
import subprocess
import unittest

import sbtest
from sup_util import PROGS, RACE, SECRET_TEXT, Tree, need_progs, real_python, run

DRIVER_BIN = PROGS / "sup_driver"

SECONDS = "3"

DRIVER = '''
import subprocess, sys
race, mode, allowed, secret, secs = sys.argv[1:6]
r = subprocess.run([race, mode, allowed, secret, secs, *sys.argv[6:]], stderr=subprocess.DEVNULL)
sys.exit(r.returncode)
'''


class Race(unittest.TestCase):
    def setUp(self) -> None:
        need_progs(self)
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)
        # Same-length paths: "out" (writable) and "sec" (never exposed).
        self.sec = self.t.root / "sec"
        self.sec.mkdir()
        (self.sec / "f").write_text(SECRET_TEXT + "\n")
        (self.t.out / "f").write_text("public\n")
        self.s = self.t.script(DRIVER)
        self.rules = ["python-api=ALLOW:process-exec", "python-api=ALLOW:threads", f"exec={RACE}"]

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def race(self, mode: str, layer: bool = False) -> None:
        extra = [str(self.t.out / "dst")] if mode != "open" else []
        args = [str(self.s), str(RACE), mode, str(self.t.out / "f"), str(self.sec / "f"), SECONDS, *extra]
        if not layer:
            cp = run(self.t, args, [*self.rules, "os-sandbox=none"], timeout=120)
        else:
            # The supervisor with the kernel layer (tests/progs/sup_driver
            # adds it as the CLI does).
            # Landlock then covers exactly the exposure (exec= targets exposed).
            self.t.write_policy([*self.rules, "os-sandbox=landlock", f"expose-ro={PROGS}"])
            cp = subprocess.run([str(DRIVER_BIN), "--layer", str(self.t.policy), real_python(), *args],
                                capture_output=True, text=True, timeout=120, cwd=self.t.root)
            if cp.returncode == 255 and "layer" in cp.stderr:
                self.skipTest("no Landlock here: " + cp.stderr.strip().splitlines()[-1])
            self.assertIn("kernel enforces the files: yes", cp.stderr[:2000])
        self.assertEqual(cp.returncode, 0, cp.stdout + cp.stderr[-2000:])
        self.assertRegex(cp.stdout, rf"race {mode} tries=\d+ ok=\d+ refused=\d+ leaks=0")
        self.assertEqual((self.sec / "f").read_text(), SECRET_TEXT + "\n")
        self.assertFalse((self.t.out / "dst").exists())

    def test_open(self) -> None:
        self.race("open")

    def test_rename(self) -> None:
        self.race("rename")

    def test_link(self) -> None:
        self.race("link")

    def test_open_landlock(self) -> None:
        self.race("open", layer=True)

    def test_rename_landlock(self) -> None:
        self.race("rename", layer=True)


if __name__ == "__main__":
    sbtest.main(Race)

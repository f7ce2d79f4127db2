#!/usr/bin/env python3
"""--audit keeps emulating opens (learning CONTINUEs them, doc/security.md §3):
a thread flips an open's path buffer between a public file and the secret
while another opens through it (tests/redteam's rt_race_open).  Audit lets
the secret through, and every read of it must show in the log as a
would-deny open of the secret: a path swapped after the decision cannot hide
an access from the audit.  Learning the same race writes rules as usual."""
from __future__ import annotations

import json
import os
import re
import unittest

import sbtest
from sup_util import SECRET_TEXT, Tree

NATIVE = sbtest.TOP_BUILDDIR / "tests" / "redteam" / "rt_native.so"

RACE = '''
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
os.chdir(sys.argv[2])
# Same length, as the flip needs; the secret's extra slashes are harmless.
# Each round stops after five reads of the secret: four rounds, twenty reads.
for _ in range(4):
    lib.rt_race_open(b"data/public.txt", b"secret//////key", b"public", ctypes.c_double(3.0))
'''


class AuditRace(unittest.TestCase):
    def setUp(self) -> None:
        if not NATIVE.exists():
            self.fail(f"{NATIVE} not built (make check builds it)")
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)
        self.t.write_policy(["python-api=ALLOW:threads"])
        self.script = self.t.script(RACE)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_every_secret_read_is_in_the_audit(self) -> None:
        log = self.t.out / "audit.jsonl"
        cp = sbtest.run_sb(["--audit", f"--log={log}", f"--pysandboxes-config={self.t.policy}",
                            str(self.script), str(NATIVE), str(self.t.root)], timeout=120)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        leaks = [l for l in cp.stdout.splitlines() if "READ" in l and SECRET_TEXT in l]
        secret = str(self.t.secret / "key")
        seen = [e for e in map(json.loads, log.read_text().splitlines())
                if e.get("object") == secret and e.get("syscall") == "openat"]
        self.assertTrue(leaks, "audit enforces nothing: the race must reach the secret\n" + cp.stdout)
        self.assertTrue(all(e["verdict"] == "would-deny" for e in seen), seen[:3])
        # Emulated, an open decided on the secret returns the secret and one
        # decided on the public file returns that: the audit's secret opens
        # and the program's reads of the secret are the same number.  A
        # CONTINUE would let the kernel re-read the flipped path, and the two
        # counts drift apart in either direction.
        self.assertEqual(len(seen), len(leaks), cp.stdout)

    def test_learning_the_race(self) -> None:
        learned = self.t.out / "learned.txt"
        cp = sbtest.run_sb([f"--learn={learned}", f"--pysandboxes-config={self.t.policy}",
                            str(self.script), str(NATIVE), str(self.t.root)], timeout=120)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertIn("race open tries=", cp.stdout)
        # data/ is exposed already; the reads of the secret are learned.
        self.assertRegex(learned.read_text(),
                         r"\nexpose-ro=\S*/" + re.escape(self.t.root.name) + r"/secret\n")


if __name__ == "__main__":
    sbtest.main(AuditRace)

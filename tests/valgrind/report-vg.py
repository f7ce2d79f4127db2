#!/usr/bin/env python3
"""--report in each format, small enough for the valgrind set (issue 10).

report-audit.py runs the project's whole Python suite three times, too long
under valgrind; this test drives the same report writer (src/report.c) on a
three-line program: a read of a file the policy does not expose and an
os.system() it does not grant, audited (each format, checked by the strict
validators of report-validate.py, both findings at their Python lines) and
enforced (SARIF, the refusals as errors).  Object names carry a quote, a
backslash, a control character and an invalid UTF-8 byte, so the report's
escaping runs too.  Run by make check-valgrind with PYTHON_SB under valgrind;
it passes the same way with the plain binary.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(os.environ.get("SB_TOP_SRCDIR", Path(__file__).resolve().parents[2]),
                            "tests", "integration")))
import sbtest  # noqa: E402

VALIDATOR = sbtest.TOP_SRCDIR / "tests" / "integration" / "report-validate.py"
TIMEOUT = 240

PROGRAM = """\
import os, sys
open(sys.argv[1], "rb").read()          # line 2: not exposed
os.system("true")                       # line 3: python-api not granted
"""


def load_validator():
    spec = importlib.util.spec_from_file_location("report_validate", VALIDATOR)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


V = load_validator()


class Reports(unittest.TestCase):
    def run_prog(self, s: sbtest.Scratch, report: Path, *mode: str):
        (s.dir / "secret").mkdir()
        secret = os.fsencode(s.dir / "secret") + b"/to\"k\\en\x01\xe9.txt"   # 0xe9: not UTF-8
        with open(secret, "wb") as f:
            f.write(b"not for the program\n")
        prog = s.write("prog/main.py", PROGRAM)
        policy = s.policy(f"expose-ro={prog.parent}\npython-import=*\n")
        p = sbtest.run_sb([f"--pysandboxes-config={policy}", *mode, f"--report={report}", "-B", str(prog),
                           os.fsdecode(secret)], cwd=s.dir, timeout=TIMEOUT)
        self.assertTrue(report.exists(), f"--report ignored:\n{p.stderr[-2000:]}")
        self.assertEqual(V.validate_file(report), [])
        return p, secret

    def test_audit_each_format(self) -> None:
        for ext in ("sarif", "xml", "json"):
            with self.subTest(ext=ext), sbtest.Scratch() as s:
                out = s.dir / f"out.{ext}"
                p, secret = self.run_prog(s, out, "--audit")
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                text = out.read_text(encoding="utf-8")
                self.assertIn("os.system", text)
                # The invalid byte is the text \xe9 in every format.
                self.assertIn("\\xe9", text.replace("\\\\", "\\"))
                if ext == "json":
                    doc = json.loads(text)
                    self.assertGreaterEqual(doc["summary"]["would_deny"], 2, doc["summary"])
                    objects = [v.get("object", "") for v in doc["violations"]]
                    self.assertIn(str(s.dir / "secret") + '/to"k\\en\x01\\xe9.txt', objects)

    def test_enforced_refusals_are_errors(self) -> None:
        with sbtest.Scratch() as s:
            out = s.dir / "enforce.sarif"
            p, secret = self.run_prog(s, out)
            self.assertNotEqual(p.returncode, 0, "the read of the secret must fail")
            run = json.loads(out.read_text())["runs"][0]
            levels = {r["ruleId"]: r["level"] for r in run["results"]}
            self.assertEqual(levels.get("file-read"), "error", levels)


if __name__ == "__main__":
    sbtest.main(Reports)

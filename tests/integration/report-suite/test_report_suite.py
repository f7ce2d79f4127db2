"""The suite tests/integration/report-audit.py runs under python-sb --audit.

It is the project's own Python unit tests (python/tests, pulled in through
the load_tests protocol, so the command stays the ordinary
``python -m unittest discover -s tests/integration/report-suite``) plus two
accesses made on purpose, which the audit policy of report-audit.py does not
grant: a read of the file named by REPORT_SECRET, and an os.system() call.
The report must list both, located at the lines marked below.
"""
from __future__ import annotations

import os
import unittest
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]


def load_tests(loader: unittest.TestLoader, tests: unittest.TestSuite, pattern: str | None) -> unittest.TestSuite:
    project = TOP / "python" / "tests"
    if os.environ.get("REPORT_SUITE_PROJECT", "1") == "1" and project.is_dir():
        tests.addTests(loader.discover(str(project), top_level_dir=str(project)))
    return tests


class OnPurpose(unittest.TestCase):
    def test_reads_a_secret(self) -> None:
        with open(os.environ["REPORT_SECRET"], encoding="utf-8") as f:  # REPORT-MARK: file-read
            self.assertEqual(f.read().strip(), "not for the suite")

    def test_runs_a_command(self) -> None:
        self.assertEqual(os.system("exit 0"), 0)  # REPORT-MARK: python-api


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""--audit --report=FILE on a real test suite (issue 11).

The project's own Python unit tests (python/tests) plus two accesses made on
purpose (tests/integration/report-suite) run as
``python-sb --audit --report=out.{sarif,xml,json} -m unittest discover``
under a policy that grants what the suite needs except a secret file and
os.system().  Each report is checked by the strict validators
(report-validate.py: SARIF 2.1.0 structure, JUnit schema shape, JSON schema)
and must hold both would-be refusals, located at the Python lines that made
them.  Also, on the two on-purpose tests alone: the exit codes of --audit
with and without --fail-on-violation, with and without violations; an
enforced run (refusals are errors, the report is written although the suite
fails); an unknown report extension (a usage error before anything runs).
Until python-sb writes the report, every check fails: none is skipped.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import textwrap
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

HERE = Path(__file__).resolve().parent
SUITE = HERE / "report-suite"
SUITE_FILE = SUITE / "test_report_suite.py"
TOP = sbtest.TOP_SRCDIR.resolve()
TIMEOUT = 240


def load_validator():
    spec = importlib.util.spec_from_file_location("report_validate", HERE / "report-validate.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


V = load_validator()


def marked_line(tag: str) -> int:
    for n, line in enumerate(SUITE_FILE.read_text().splitlines(), 1):
        if f"REPORT-MARK: {tag}" in line:
            return n
    raise AssertionError(f"no REPORT-MARK: {tag} in {SUITE_FILE}")


class AuditReport(unittest.TestCase):
    """One audited run per format, shared by the checks."""

    scratch: sbtest.Scratch
    runs: dict

    @classmethod
    def setUpClass(cls) -> None:
        cls.scratch = sbtest.Scratch()
        d = cls.scratch.dir
        cls.secret = d / "secret" / "token.txt"
        cls.scratch.write("secret/token.txt", "not for the suite\n")
        (d / "tmp").mkdir()
        cls.policy = cls.scratch.policy(f"""\
            # What the suite needs, except the secret and os.system().
            env=REPORT_SECRET=${{REPORT_SECRET}}
            env=REPORT_SUITE_PROJECT=${{REPORT_SUITE_PROJECT}}
            env=SB_TOP_SRCDIR=${{SB_TOP_SRCDIR}}
            env=PATH=${{PATH}}
            env=HOME=${{HOME}}
            env=TMPDIR=${{TMPDIR}}
            expose-ro={TOP}
            expose-rw=${{TMPDIR}}
            python-import=*
            python-api=ALLOW:*
            python-api=DENY:os.system
            net=ALLOW|*|127.0.0.1|*|*
            net=ALLOW|*|::1|*|*
            """, name="audit.py-sandboxes")
        # The suite's temporary files go to a directory of their own, granted;
        # the secret sits next to it, not granted.
        cls.env = {"REPORT_SECRET": str(cls.secret), "REPORT_SUITE_PROJECT": "1",
                   "SB_TOP_SRCDIR": str(TOP), "TMPDIR": str(d / "tmp")}
        cls.runs = {}
        for ext in ("sarif", "xml", "json"):
            out = d / f"out.{ext}"
            log = d / f"log-{ext}.jsonl"
            p = sbtest.run_sb([f"--pysandboxes-config={cls.policy}", "--audit", f"--report={out}",
                               f"--log={log}", "-B", "-m", "unittest", "discover", "-s", str(SUITE)],
                              cwd=TOP, env=cls.env, timeout=TIMEOUT)
            cls.runs[ext] = (p, out, log)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.scratch.__exit__(None, None, None)

    # ---- helpers --------------------------------------------------------------------

    def report(self, ext: str) -> Path:
        p, out, _log = self.runs[ext]
        self.assertTrue(out.exists(), f"python-sb wrote no report: --report={out} was ignored "
                                      f"(status {p.returncode}); stderr:\n{p.stderr[-2000:]}")
        errors = V.validate_file(out)
        self.assertEqual(errors, [], f"{out.name} is not valid:\n" + "\n".join(errors[:30]))
        return out

    def logged_locations(self, ext: str) -> dict:
        """object -> the Python locations the decision log gave its refusals."""
        _p, _out, log = self.runs[ext]
        found: dict = {}
        for line in log.read_text(errors="replace").splitlines():
            ev = json.loads(line)
            if ev.get("verdict") != "allowed":
                found.setdefault(ev.get("object"), set()).add(ev.get("python"))
        return found

    def expected_loc(self, tag: str) -> tuple:
        return (str(SUITE_FILE.relative_to(TOP)), marked_line(tag))

    # ---- the run ------------------------------------------------------------------------

    def test_the_suite_ran(self) -> None:
        # Not every project test can pass under python-sb (some drive the
        # agent in ways python-sb forbids): what matters here is that the
        # suite ran and python-sb reported on it.
        for ext in self.runs:
            p, out, _log = self.runs[ext]
            m = re.search(r"\nRan (\d+) tests? in ", p.stderr)
            self.assertIsNotNone(m, f"{ext}: the suite did not run:\n{p.stderr[-3000:]}")
            self.assertGreater(int(m.group(1)), 10, f"{ext}: the project's tests were not loaded")
            if out.suffix == ".json" and out.exists():
                self.assertEqual(json.loads(out.read_text())["exit_status"], p.returncode)

    # ---- SARIF ----------------------------------------------------------------------------

    def sarif_results(self) -> list:
        doc = json.loads(self.report("sarif").read_text())
        run = doc["runs"][0]
        self.assertEqual(run["tool"]["driver"]["name"], "python-sb")
        self.assertEqual(run["originalUriBaseIds"]["SRCROOT"]["uri"], TOP.as_uri() + "/")
        return run["results"]

    def sarif_find(self, rule: str, obj: str) -> dict:
        hits = [r for r in self.sarif_results() if r["ruleId"] == rule and r["properties"]["object"] == obj]
        self.assertEqual(len(hits), 1, f"expected one {rule} result for {obj!r}, got "
                         f"{[(r['ruleId'], r['properties']['object']) for r in self.sarif_results()][:40]}")
        return hits[0]

    def assert_sarif_loc(self, res: dict, tag: str, obj: str) -> None:
        loc = res["locations"][0]["physicalLocation"]
        logged = {x for x in self.logged_locations("sarif").get(obj, set()) if x}
        if tag == "python-api" or logged:
            # the agent always knows the line of an API call; for a
            # supervisor refusal, the report must carry what the log had
            want_file, want_line = self.expected_loc(tag)
            self.assertEqual(loc["artifactLocation"].get("uriBaseId"), "SRCROOT", loc)
            self.assertEqual(loc["artifactLocation"]["uri"], want_file)
            self.assertEqual(loc["region"]["startLine"], want_line)
        else:
            self.assertEqual(loc["artifactLocation"]["uri"], self.policy.as_uri(),
                             "without a Python location the finding points at the rule file")

    def test_sarif_secret_read(self) -> None:
        res = self.sarif_find("file-read", str(self.secret))
        self.assertEqual(res["level"], "warning")          # would-deny under --audit
        self.assertIn("WOULD DENY", res["message"]["text"])
        self.assertIn(str(self.secret), res["message"]["text"])
        self.assertEqual(res["properties"]["tip"], f"expose-ro={self.secret.parent}")
        self.assert_sarif_loc(res, "file-read", str(self.secret))

    def test_sarif_os_system(self) -> None:
        res = self.sarif_find("python-api", "os.system")
        self.assertEqual(res["level"], "warning")
        self.assertIn("os.system", res["message"]["text"])
        self.assertEqual(res["properties"]["category"], "process-exec")
        self.assert_sarif_loc(res, "python-api", "os.system")
        self.assertEqual(res["locations"][0]["logicalLocations"][0]["name"], "test_runs_a_command")

    def test_sarif_granted_things_are_not_findings(self) -> None:
        for r in self.sarif_results():
            obj = r["properties"]["object"]
            if r["ruleId"] == "file-read":
                self.assertFalse(obj.startswith(str(TOP) + "/"), f"{obj} is exposed: not a finding")
            self.assertNotEqual(r["ruleId"], "import", "python-import=* grants every import")

    # ---- JUnit ----------------------------------------------------------------------------------

    def test_junit(self) -> None:
        root = ET.parse(self.report("xml")).getroot()
        cases = {c.get("name"): c for c in root.iter("testcase")}
        self.assertTrue({"file-read", "python-api", "net-connect", "exec"} <= set(cases), sorted(cases))
        fr = cases["file-read"].find("failure")
        self.assertIsNotNone(fr, "file-read must fail: the secret was read")
        self.assertEqual(fr.get("type"), "would-deny")
        self.assertIn(str(self.secret), fr.text)
        api = cases["python-api"].find("failure")
        self.assertIsNotNone(api)
        file, line = self.expected_loc("python-api")
        self.assertRegex(api.text, rf"os\.system\(\) at \S*{re.escape(Path(file).name)}:{line} in test_runs_a_command")
        # net is granted on loopback and the suite goes nowhere else
        self.assertIsNone(cases["net-bind"].find("failure"))

    # ---- JSON -------------------------------------------------------------------------------------

    def test_json(self) -> None:
        doc = json.loads(self.report("json").read_text())
        self.assertEqual(doc["config"], str(self.policy))
        by = {(v["family"], v["object"]): v for v in doc["violations"]}
        sec = by.get(("file-read", str(self.secret)))
        self.assertIsNotNone(sec, sorted(by)[:40])
        self.assertEqual((sec["verdict"], sec["denied"]), ("would-deny", 0))
        logged = {x for x in self.logged_locations("json").get(str(self.secret), set()) if x}
        if logged:
            self.assertIn(sec["python"], logged)
        api = by.get(("python-api", "os.system"))
        self.assertIsNotNone(api)
        file, line = self.expected_loc("python-api")
        self.assertEqual((api["line"], api["function"]), (line, "test_runs_a_command"))
        self.assertTrue(api["file"].endswith(file), api["file"])
        self.assertGreaterEqual(doc["summary"]["families"]["python-api"], 1)


def two_tests_policy(s: sbtest.Scratch, secret: Path, grant_all: bool) -> Path:
    """A policy for the two on-purpose tests alone (REPORT_SUITE_PROJECT=0):
    with grant_all, everything they do is allowed."""
    extra = f"""\
        expose-ro={secret.parent}
        python-api=ALLOW:process-exec
        exec=/usr/bin/*
        exec=/bin/*
        """ if grant_all else """\
        python-api=ALLOW:*
        python-api=DENY:os.system
        """
    return s.policy(f"""\
        env=REPORT_SECRET=${{REPORT_SECRET}}
        env=REPORT_SUITE_PROJECT=0
        expose-ro={TOP}
        python-import=*
        """ + textwrap.dedent(extra))


class ExitCodes(unittest.TestCase):
    def run_two(self, grant_all: bool, *args: str) -> tuple:
        with sbtest.Scratch() as s:
            secret = s.write("secret/token.txt", "not for the suite\n")
            policy = two_tests_policy(s, secret, grant_all)
            out = s.dir / "r.json"
            p = sbtest.run_sb([f"--pysandboxes-config={policy}", f"--report={out}", *args, "-B", "-m", "unittest",
                               "discover", "-s", str(SUITE)], cwd=TOP, env={"REPORT_SECRET": str(secret)},
                              timeout=TIMEOUT)
            self.assertTrue(out.exists(), f"--report ignored:\n{p.stderr[-2000:]}")
            self.assertEqual(V.validate_file(out), [])
            return p, json.loads(out.read_text())

    def test_audit_alone_keeps_the_program_status(self) -> None:
        p, doc = self.run_two(False, "--audit")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(doc["summary"]["would_deny"] > 0, True, doc["summary"])

    def test_fail_on_violation_exits_3(self) -> None:
        p, doc = self.run_two(False, "--audit", "--fail-on-violation")
        self.assertEqual(p.returncode, 3, p.stderr[-2000:])
        self.assertEqual(doc["exit_status"], 3)

    def test_fail_on_violation_without_violation_exits_0(self) -> None:
        p, doc = self.run_two(True, "--audit", "--fail-on-violation")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(doc["violations"], [], "the policy grants everything the two tests do")


class EnforcedReport(unittest.TestCase):
    def test_enforced_refusals_are_errors_and_the_report_survives_a_failing_suite(self) -> None:
        with sbtest.Scratch() as s:
            secret = s.write("secret/token.txt", "not for the suite\n")
            policy = s.policy(f"""\
                env=REPORT_SECRET=${{REPORT_SECRET}}
                env=REPORT_SUITE_PROJECT=0
                expose-ro={SUITE}
                python-import=*
                python-api=ALLOW:*
                python-api=DENY:os.system
                """)
            out = s.dir / "enforce.sarif"
            p = sbtest.run_sb([f"--pysandboxes-config={policy}", f"--report={out}", "-B", "-m", "unittest",
                               "discover", "-s", str(SUITE)], cwd=TOP, env={"REPORT_SECRET": str(secret)},
                              timeout=TIMEOUT)
            self.assertEqual(p.returncode, 1, f"the suite must fail when enforced:\n{p.stderr[-3000:]}")
            self.assertTrue(out.exists(), f"--report ignored in enforce mode:\n{p.stderr[-2000:]}")
            self.assertEqual(V.validate_file(out), [])
            run = json.loads(out.read_text())["runs"][0]
            self.assertEqual(run["invocations"][0]["exitCode"], 1)
            levels = {(r["ruleId"], r["properties"]["object"]): r["level"] for r in run["results"]}
            self.assertEqual(levels.get(("file-read", str(secret))), "error", levels)
            self.assertEqual(levels.get(("python-api", "os.system")), "error", levels)

    def test_unknown_extension_is_a_usage_error(self) -> None:
        with sbtest.Scratch() as s:
            marker = s.dir / "ran"
            s.policy(f"expose-rw={s.dir}\n")
            p = sbtest.run_sb(["--report=out.txt", "-c", f"open({str(marker)!r}, 'w').close()"], cwd=s.dir,
                              timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("report", p.stderr)
            self.assertFalse(marker.exists(), "the program ran although --report was unusable")
            self.assertFalse((s.dir / "out.txt").exists())


if __name__ == "__main__":
    if not sbtest.seccomp_unotify_available():
        sbtest.skip("no seccomp in this kernel")
    sbtest.require_binary()
    suite = unittest.TestSuite()
    for case in (AuditReport, ExitCodes, EnforcedReport):
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)

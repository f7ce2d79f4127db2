#!/usr/bin/env python3
"""Reference §9.2, cases A1-A10, on the real python-sb: dynamic code, the API
guard and its exact message, imports (including what the framework imports
itself), output plumbing and errors."""
from __future__ import annotations

import unittest

import sbtest
from agentlib import Case, program_stderr, pythons

API_MESSAGE = ("os.system() is denied by the API guard (category: process-exec).\n"
               "Add `python-api=ALLOW:os.system` for this function only, "
               "or `python-api=ALLOW:process-exec` for the whole category.")


class Acceptance(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def each(self, rules: list[str], program: str, *args: str):  # type: ignore[no-untyped-def]
        case = Case(self.scratch, rules)
        prog = case.script(program)
        for python in pythons():
            yield python, case.run([str(prog), *args], python=python)

    def test_a1_dynamic_code_refused(self) -> None:
        for python, cp in self.each(["python-import=*"], "print(eval('40 + 2'))"):
            with self.subTest(python=python):
                self.assertNotEqual(cp.returncode, 0)
                self.assertIn("dynamic-code", cp.stderr)
                self.assertIn("RuleApiPermissionError: builtins.eval() is denied by the API guard", cp.stderr)
                self.assertEqual(cp.stdout, "")

    def test_a2_dynamic_code_granted(self) -> None:
        for python, cp in self.each(["python-import=*", "python-api=ALLOW:dynamic-code"], "print(eval('40 + 2'))"):
            with self.subTest(python=python):
                self.assertEqual((cp.returncode, cp.stdout), (0, "42\n"), cp.stderr)

    def test_a3_api_refused_with_exact_message(self) -> None:
        prog = """
            import os
            try:
                os.system('true')
            except PermissionError as e:
                print(type(e).__name__, e.qualname, e.category)
                print(str(e))
            os.system('true')
        """
        for python, cp in self.each(["python-import=*"], prog):
            with self.subTest(python=python):
                self.assertNotEqual(cp.returncode, 0)
                self.assertIn("denied by the API guard", cp.stderr)
                self.assertEqual(cp.stdout, "RuleApiPermissionError os.system process-exec\n"
                                            + API_MESSAGE + "\n")
                self.assertTrue(program_stderr(cp).rstrip().endswith("RuleApiPermissionError: " + API_MESSAGE))

    def test_a4_api_granted(self) -> None:
        prog = "import os\nrc = os.system('true')\nprint('CALLED', rc in (0, 127 << 8))\n"
        rules = ["python-import=*", "python-api=ALLOW:os.system,posix.system", "exec=/bin/sh", "exec=/usr/bin/true",
                 "exec=/bin/true"]
        for python, cp in self.each(rules, prog):
            with self.subTest(python=python):
                self.assertEqual((cp.returncode, cp.stdout), (0, "CALLED True\n"), cp.stderr)

    def test_a5_import_refused(self) -> None:
        for python, cp in self.each(["python-import=json"], "import colorsys\nprint('IMPORTED')\n"):
            with self.subTest(python=python):
                self.assertNotEqual(cp.returncode, 0)
                self.assertNotIn("IMPORTED", cp.stdout)
                self.assertIn("'colorsys' is not allowed by a rule", cp.stderr)
                self.assertIn("RuleModuleNotFoundError: Module named 'colorsys' is not allowed by a rule", cp.stderr)

    def test_a6_import_granted(self) -> None:
        prog = "import colorsys\nprint('IMPORTED', colorsys.hls_to_rgb(0.0, 0.5, 1.0))\n"
        for python, cp in self.each(["python-import=json,colorsys"], prog):
            with self.subTest(python=python):
                self.assertEqual((cp.returncode, cp.stdout), (0, "IMPORTED (1.0, 0.0, 0.0)\n"), cp.stderr)

    def test_a7_output(self) -> None:
        for python, cp in self.each(["python-import=*"], "print('MARKER-OUT', 40 + 2)\n"):
            with self.subTest(python=python):
                self.assertEqual((cp.returncode, cp.stdout), (0, "MARKER-OUT 42\n"), cp.stderr)

    def test_a8_framework_imports_not_charged(self) -> None:
        for python, cp in self.each(["python-import=json"], "print('STARTED')\n"):
            with self.subTest(python=python):
                self.assertEqual((cp.returncode, cp.stdout), (0, "STARTED\n"), cp.stderr)
                self.assertNotIn("not allowed by a rule", cp.stderr)

    def test_refusals_the_agent_loads_on_first_use(self) -> None:
        # The agent loads its exceptions and the conversion of refusal notes
        # when it first refuses: neither its import guard nor the supervisor
        # may charge those imports to the program (python-import= listing
        # other modules; code from eval, whose imports the supervisor judges).
        prog = """
            import os, sys
            calls = {"os.system('true')": lambda: os.system('true'),
                     "open(sys.argv[2])": lambda: open(sys.argv[2])}
            for code, call in calls.items():
                try:
                    exec(code) if sys.argv[1] == "eval" else call()
                except OSError as e:
                    print(type(e).__name__)
        """
        cases = ((["python-import=json"], "direct"),
                 (["python-import=*", "python-api=ALLOW:dynamic-code"], "eval"))
        with sbtest.Scratch() as elsewhere:
            secret = elsewhere.write("secret", "k\n")
            runs = [(rules, python, cp) for rules, how in cases
                    for python, cp in self.each(rules, prog, how, str(secret))]
        for rules, python, cp in runs:
            with self.subTest(rules=rules, python=python):
                self.assertEqual(cp.stdout.split(), ["RuleApiPermissionError", "RuleFileNotFoundError"],
                                 cp.stderr)
                self.assertNotIn("pysandboxes", cp.stderr)

    def test_a9_exception(self) -> None:
        for python, cp in self.each([], "raise RuntimeError('MARKER-BOOM')\n"):
            with self.subTest(python=python):
                self.assertEqual(cp.returncode, 1)
                self.assertIn("RuntimeError: MARKER-BOOM", cp.stderr)

    def test_a10_streams_stay_separate(self) -> None:
        prog = "import sys\nprint('TO-OUT')\nprint('TO-ERR', file=sys.stderr)\n"
        for python, cp in self.each(["python-import=sys"], prog):
            with self.subTest(python=python):
                self.assertEqual((cp.returncode, cp.stdout), (0, "TO-OUT\n"), cp.stderr)
                self.assertEqual(program_stderr(cp), "TO-ERR\n")

    def test_modes_of_running(self) -> None:
        # -c, -m and stdin arm the guards just as a script does.
        case = Case(self.scratch, ["python-import=json"])
        for python in pythons():
            with self.subTest(python=python):
                cp = case.run(["-c", "import colorsys"], python=python)
                self.assertIn("'colorsys' is not allowed", cp.stderr)
                cp = case.run(["-"], python=python, input="import colorsys\n")
                self.assertIn("'colorsys' is not allowed", cp.stderr)
                cp = case.run(["-m", "json.tool"], python=python, input='{"a": 1}')
                self.assertEqual((cp.returncode, cp.stdout), (0, '{\n    "a": 1\n}\n'), cp.stderr)
                cp = case.run(["-m", "colorsys"], python=python)
                self.assertIn("'colorsys' is not allowed", cp.stderr)

    def test_no_agent_with_isolated_mode(self) -> None:
        # -I ignores PYTHONPATH: python-sb warns, the supervisor alone decides,
        # python-import= included (it judges the files an import opens).
        case = Case(self.scratch, ["python-import=json"])
        cp = case.run(["-I", "-c", "import json, sys; print('pysandboxes' in sys.modules)"])
        self.assertEqual((cp.returncode, cp.stdout), (0, "False\n"), cp.stderr)
        self.assertIn("python-sb:", cp.stderr)
        cp = case.run(["-I", "-c", "import colorsys; print('IMPORTED')"])
        self.assertNotEqual(cp.returncode, 0)
        self.assertNotIn("IMPORTED", cp.stdout)
        self.assertIn("ModuleNotFoundError", cp.stderr)

    def test_py_sandbox_false(self) -> None:
        case = Case(self.scratch, ["python-import=json"])
        case.policy.write_text(case.policy.read_text().replace("py-sandbox=true", "py-sandbox=false"))
        cp = case.run(["-c", "import os, sys; print('pysandboxes' in sys.modules, "
                             "[k for k in os.environ if k.startswith('PYSANDBOXES')])"])
        self.assertEqual((cp.returncode, cp.stdout), (0, "False []\n"), cp.stderr)


if __name__ == "__main__":
    sbtest.main(Acceptance)

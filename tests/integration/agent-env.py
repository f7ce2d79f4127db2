#!/usr/bin/env python3
"""Reference §9.2, cases C1-C4: the environment the program sees (env= is
applied by the supervisor at spawn; the agent leaves no trace in it)."""
from __future__ import annotations

import json
import os
import unittest

import sbtest
from agentlib import Case, pythons

SHOW = """
import json, os
print(json.dumps(dict(os.environ), sort_keys=True))
"""

HOST = {"TERM": "xterm-test", "My_ENV": "my-value", "USER": "someone", "USAGE_SECRET": "s3cr3t",
        "DEMO_API_KEY": "sk-host", "OPENAI_API_KEY": "sk-openai", "OTHER_API_KEY": "", "API_KEY_NOT": "no"}


class Env(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def seen(self, rules: list[str], program: str = SHOW) -> dict[str, dict]:
        case = Case(self.scratch, ["python-import=*", *rules])
        prog = case.script(program)
        env = dict(os.environ, **HOST)
        out = {}
        for python in pythons():
            cp = case.run([str(prog)], python=python, env=env)
            self.assertEqual(cp.returncode, 0, cp.stderr)
            out[python] = json.loads(cp.stdout.splitlines()[-1]) if program is SHOW else cp.stdout
        return out

    def test_c1_only_listed_variables(self) -> None:
        for python, env in self.seen(["env=TERM=${TERM}", "env=My_ENV=${My_ENV}"]).items():
            with self.subTest(python=python):
                self.assertEqual(env.get("TERM"), "xterm-test")
                self.assertEqual(env.get("My_ENV"), "my-value")
                for absent in ("USER", "USAGE_SECRET", "DEMO_API_KEY"):
                    self.assertNotIn(absent, env)
                # Nothing of the agent's own plumbing is left for the program.
                self.assertEqual([k for k in env if k.startswith("PYSANDBOXES") or k == "PYTHONPATH"], [])

    def test_c2_missing_rule_means_key_error(self) -> None:
        prog = "import os\ntry:\n    os.environ['DEMO_API_KEY']\nexcept KeyError as e:\n    print('KeyError', e)\n"
        for python, out in self.seen([], prog).items():
            with self.subTest(python=python):
                self.assertEqual(out, "KeyError 'DEMO_API_KEY'\n")

    def test_c3_literal_value(self) -> None:
        prog = "import os\nprint(os.environ['DEMO_API_KEY'])\n"
        for python, out in self.seen(["env=DEMO_API_KEY=sk-fake-for-tests"], prog).items():
            with self.subTest(python=python):
                self.assertEqual(out, "sk-fake-for-tests\n")

    def test_c4_glob(self) -> None:
        for python, env in self.seen(["env=*_API_KEY=${*_API_KEY}"]).items():
            with self.subTest(python=python):
                keys = {k for k in env if "API_KEY" in k}
                # Matching host variables with a value; an empty one stays absent.
                self.assertEqual(keys, {"DEMO_API_KEY", "OPENAI_API_KEY"})
                self.assertEqual(env["OPENAI_API_KEY"], "sk-openai")

    def test_pythonpath_given_by_the_policy_is_kept(self) -> None:
        prog = "import os, sys\nprint(os.environ.get('PYTHONPATH'), '/opt/sb-pp' in sys.path)\n"
        case = Case(self.scratch, ["python-import=*", "env=PYTHONPATH=/opt/sb-pp"])
        cp = case.run([str(case.script(prog))])
        self.assertEqual((cp.returncode, cp.stdout), (0, "/opt/sb-pp True\n"), cp.stderr)


if __name__ == "__main__":
    sbtest.main(Env)

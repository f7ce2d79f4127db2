#!/usr/bin/env python3
"""Learning mode writes the eval-* rules a program's evaluations needed
(reference §3, eval part), through the real binary, and the learned file
then runs the same program enforced.

The learned ``<learning_guard_eval>`` block must hold the syntax groups seen
in full (never a pattern), the builtins called, the attributes read (marked
runtime-observed), and no ``python-api`` grant of dynamic-code (the escape
hatch would turn the guard off).  Exits 77 only when ``python-sb
--check-config`` says the agent is disabled.
"""
from __future__ import annotations

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

PROGRAM = """\
print(eval("-(1 + 2)"))
print(eval("len('a b'.split())"))
print(eval("[x for x in (1, 2)]"))
"""
EXPECTED = "-3\n2\n[1, 2]\n"


def eval_block(text: str) -> str:
    m = re.search(r"# <learning_guard_eval>\n(.*?)# </learning_guard_eval>", text, re.S)
    return m.group(1) if m else ""


class EvalLearn(unittest.TestCase):
    def test_learned_rules_and_enforced_rerun(self):
        with sbtest.Scratch() as s:
            base = s.policy(f"py-sandbox=true\nos-sandbox=none\npython-import=*\nexpose-ro={s.dir}\n",
                            name="base")
            check = sbtest.run_sb([f"--pysandboxes-config={base}", "--check-config"], cwd=s.dir)
            if "py-sandbox=false" in check.stdout:
                sbtest.skip("the in-interpreter agent is disabled (python-sb --check-config)")
            s.write("prog.py", PROGRAM)
            learned = s.dir / "learned.py-sandboxes"
            r = sbtest.run_sb([f"--learn={learned}", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, EXPECTED)
            text = learned.read_text()
            block = eval_block(text)
            self.assertIn("eval-syntax=", block, f"no eval-syntax line learned:\n{text}")
            syntax = [line for line in block.splitlines() if line.startswith("eval-syntax=")][0]
            tokens = {t.strip() for t in syntax.partition("=")[2].split(",")}
            self.assertTrue({"arith", "ListComp", "comprehension"} <= tokens, syntax)
            self.assertIn("eval-call=len", block)
            self.assertRegex(block, r"eval-attribute=split\s+# ⚠ runtime-observed")
            self.assertNotIn("*", "".join(line.partition("#")[0] for line in block.splitlines()))
            self.assertNotRegex(text, r"(?m)^python-api=ALLOW:(dynamic-code|builtins\.eval)")
            r = sbtest.run_sb([f"--pysandboxes-config={learned}", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, EXPECTED)


if __name__ == "__main__":
    sbtest.main(EvalLearn)

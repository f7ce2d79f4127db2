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

# A declared named profile, a caller-supplied namespace, and a refusal the
# learned file must not lift (a frame walk is never learnable).
PROGRAM2 = """\
from pysandboxes.evalguard import guarded_eval
print(guarded_eval("max([4, 7]) * 2", profile="calc"))
ns = {"n": 5}
print(eval("n.bit_length() + 1", ns))
print(eval("sum([1, 2])"))
"""
EXPECTED2 = "14\n4\n3\n"


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


    def test_the_guard_loads_on_the_program_s_first_evaluation(self):
        # Learning from scratch starts without the eval guard: doors stand in
        # for eval/exec/compile, let the standard library's own calls through
        # and load the guard on the program's first one.  A reference taken
        # before, builtins the program replaced meanwhile and threads racing
        # the first call must not change what is learned.
        program = """\
import builtins, collections, dataclasses, sys, threading
T = collections.namedtuple("T", "a b")

@dataclasses.dataclass
class P:
    x: int

print(T(1, 2).b, P(3).x, "pysandboxes.evalguard" in sys.modules)
early = eval
real_getattr, real_import = builtins.getattr, builtins.__import__
builtins.getattr = lambda *a: real_getattr(*a)
builtins.__import__ = lambda *a, **k: real_import(*a, **k)
results = []
threads = [threading.Thread(target=lambda i=i: results.append(early(f"{i} * 2"))) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sorted(results), "pysandboxes.evalguard" in sys.modules)
exec("y = abs(-4)")
print(y, eval("getattr(3, 'real')"))
"""
        with sbtest.Scratch() as s:
            s.write("prog.py", program)
            learned = s.dir / "learned.py-sandboxes"
            learned.write_text(f"py-sandbox=true\nos-sandbox=none\nexpose-ro={s.dir}\n")
            r = sbtest.run_sb([f"--learn={learned}", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "2 3 False\n[0, 2, 4, 6, 8, 10, 12, 14] True\n4 3\n")
            text = learned.read_text()  # learned onto a file: added lines, not the block
            syntax = re.findall(r"(?m)^eval-syntax=(.*)$", text)
            self.assertTrue(syntax, f"no eval-syntax line learned:\n{text}")
            tokens = {t.strip() for t in syntax[0].split(",")}
            self.assertTrue({"arith", "Assign"} <= tokens, syntax)
            self.assertRegex(text, r"(?m)^eval-call=getattr$")
            self.assertRegex(text, r"(?m)^eval-attribute=real\b")
            self.assertNotRegex(text, r"(?m)^eval-.*(namedtuple|dataclass|_tuplegetter)")
            r = sbtest.run_sb([f"--pysandboxes-config={learned}", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("[0, 2, 4, 6, 8, 10, 12, 14]", r.stdout)

    def test_named_profile_call_site_and_merge(self):
        with sbtest.Scratch() as s:
            base = (f"py-sandbox=true\nos-sandbox=none\npython-import=*\nexpose-ro={s.dir}\n"
                    "eval-syntax:calc=Constant\neval-timeout=2s\n")
            s.write("prog.py", PROGRAM2)
            learned = s.dir / ".py-sandboxes"
            learned.write_text(base)
            r = sbtest.run_sb(["--learn", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, EXPECTED2)
            text = learned.read_text()
            self.assertIn("eval-call:calc=max\n", text)
            self.assertRegex(text, r"(?m)^eval-syntax:calc=BinOp$")
            self.assertRegex(text, r"(?m)^eval-syntax=BinOp$")
            # The namespace at line 4 came from the caller: noted, not granted;
            # the bare eval at line 5 still gets its builtin.
            self.assertIn("#   (prog.py:4). Set eval-namespace=closed to declare it here.", text)
            self.assertRegex(text, r"(?m)^eval-call=sum$")
            self.assertRegex(text, r"(?m)^eval-attribute=bit_length\s+# ⚠ runtime-observed$")
            self.assertNotRegex(text, r"(?m)^python-api=ALLOW:(dynamic-code|builtins\.)")
            r = sbtest.run_sb(["prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, EXPECTED2)
            # Learning again adds nothing: the file is left as it is.
            before = learned.read_text()
            r = sbtest.run_sb(["--learn", "prog.py"], cwd=s.dir)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(learned.read_text(), before)

    def test_audit_lists_the_eval_lines(self):
        with sbtest.Scratch() as s:
            policy = s.policy(f"py-sandbox=true\nos-sandbox=none\npython-import=*\nexpose-ro={s.dir}\n"
                              "eval-timeout=2s\n", name="audit")
            s.write("prog.py", 'print(eval("2 ** 5"))\n')
            r = sbtest.run_sb([f"--pysandboxes-config={policy}", "--audit", "--fail-on-violation", "prog.py"],
                              cwd=s.dir)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertEqual(r.stdout, "32\n")
            self.assertIn("eval-syntax=BinOp", r.stderr)


if __name__ == "__main__":
    sbtest.main(EvalLearn)

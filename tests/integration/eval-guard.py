#!/usr/bin/env python3
"""The eval guard through the real binary: the three states, the upstream
cases G1-G8 of reference §9.2, the calculator profile, named profiles and
guarded_eval(), the standard-library exemption.

Each case writes a policy and a program into a scratch directory and runs
``python-sb --pysandboxes-config=<policy> prog.py``.  The program prints one
line per evaluation, ``<label>: OK <repr>`` or ``<label>: <Exception>: <first
line>``, and ``DONE`` at the end.  The test exits 77 only when
``python-sb --check-config`` says the in-interpreter agent is disabled.
"""
from __future__ import annotations

import json
import os
import sys
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

BASE = """\
py-sandbox=true
os-sandbox=none
python-import=*
expose-ro={scratch}
"""

PRELUDE = """\
import sys, time
def show(label, fn):
    try:
        value = fn()
    except BaseException as e:
        text = str(e).splitlines()[0] if str(e) else ""
        print(f"{label}: {type(e).__name__}: {text}", flush=True)
        return e
    print(f"{label}: OK {value!r}", flush=True)
    return value
"""

PYTHONS = [sbtest.PYTHON] + [p for p in sbtest.pyenv_pythons() if os.path.realpath(p) != os.path.realpath(sbtest.PYTHON)]


class EvalGuard(unittest.TestCase):
    checked = False

    def run_case(self, rules: str, body: str, python: str | None = None, log: list | None = None):
        """Run the program; with `log`, append the eval events of --log to it."""
        with sbtest.Scratch() as s:
            policy = s.policy(BASE.format(scratch=s.dir) + textwrap.dedent(rules), name="policy")
            if not EvalGuard.checked:
                check = sbtest.run_sb([f"--pysandboxes-config={policy}", "--check-config"], cwd=s.dir)
                if "py-sandbox=false" in check.stdout:
                    sbtest.skip("the in-interpreter agent is disabled (python-sb --check-config)")
                EvalGuard.checked = True
            s.write("prog.py", PRELUDE + textwrap.dedent(body) + "\nprint('DONE', flush=True)\n")
            args = [f"--pysandboxes-config={policy}", "prog.py"]
            if log is not None:
                args.insert(0, f"--log={s.dir}/log.json")
            r = sbtest.run_sb(args, cwd=s.dir, python=python, timeout=120)
            if log is not None:
                for line in Path(s.dir, "log.json").read_text().splitlines():
                    if '"kind":"eval"' in line:
                        log.append(json.loads(line))
        lines = {}
        for line in r.stdout.splitlines():
            label, sep, rest = line.partition(": ")
            if sep:
                lines[label] = rest
        return r, lines

    def expect(self, r, lines, label, prefix):
        self.assertIn(label, lines, f"no line {label!r}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        self.assertTrue(lines[label].startswith(prefix), f"{label}: {lines[label]!r} does not start with {prefix!r}"
                        f"\nstderr:\n{r.stderr}")

    def done(self, r):
        self.assertIn("DONE", r.stdout.splitlines(), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        self.assertEqual(r.returncode, 0, r.stderr)

    # -- the three states ------------------------------------------------------

    def test_a1_no_eval_rule_refuses_dynamic_code(self):
        r, lines = self.run_case("", """
            show("eval", lambda: eval("40 + 2"))
            show("exec", lambda: exec("x = 1"))
            show("compile", lambda: compile("1", "f", "eval"))
            import collections, dataclasses
            show("namedtuple", lambda: collections.namedtuple("T", "a b")(1, 2).b)
            show("dataclass", lambda: dataclasses.make_dataclass("P", [("x", int)])(3).x)
            eval("40 + 2")
        """)
        for label in ("eval", "exec", "compile"):
            self.expect(r, lines, label, "RuleApiPermissionError: builtins.")
            self.assertIn("(category: dynamic-code)", lines[label])
        self.expect(r, lines, "namedtuple", "OK 2")
        self.expect(r, lines, "dataclass", "OK 3")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("dynamic-code", r.stderr)

    def test_a2_allow_dynamic_code_is_unguarded(self):
        r, lines = self.run_case("python-api=ALLOW:dynamic-code\n", """
            show("eval", lambda: eval("40 + 2"))
            show("dunder", lambda: eval("().__class__.__name__"))
        """)
        self.expect(r, lines, "eval", "OK 42")
        self.expect(r, lines, "dunder", "OK 'tuple'")
        self.done(r)

    def test_eval_rules_with_allow_dynamic_code_are_refused_at_load(self):
        r, _lines = self.run_case("python-api=ALLOW:dynamic-code\neval-syntax=arith\n", 'print("RAN")')
        self.assertEqual(r.returncode, 255, r.stderr)
        self.assertNotIn("RAN", r.stdout)
        self.assertIn("dynamic-code", r.stderr)

    def test_guarded_state_keeps_the_standard_library_working(self):
        r, lines = self.run_case("eval-syntax=arith\n", """
            show("eval", lambda: eval("40 + 2"))
            import collections, dataclasses, typing
            show("namedtuple", lambda: collections.namedtuple("T", "a b")(1, 2).b)
            show("dataclass", lambda: dataclasses.make_dataclass("P", [("x", int)])(3).x)
            def f(x: "int"): pass
            show("typing", lambda: typing.get_type_hints(f)["x"].__name__)
        """)
        self.expect(r, lines, "eval", "OK 42")
        self.expect(r, lines, "namedtuple", "OK 2")
        self.expect(r, lines, "dataclass", "OK 3")
        self.expect(r, lines, "typing", "OK 'int'")
        self.done(r)

    # -- G1-G8 ----------------------------------------------------------------

    def test_g1_core_only(self):
        for python in PYTHONS:
            with self.subTest(python=python):
                r, lines = self.run_case("eval-timeout=2s\n", """
                    show("list", lambda: eval("[1, 2, 3]"))
                    e = show("binop", lambda: eval("1 + 1"))
                    print("detail:", "add: eval-syntax=arith" in str(e))
                """, python=python)
                self.expect(r, lines, "list", "OK [1, 2, 3]")
                self.expect(r, lines, "binop", "EvalSyntaxRejected: 1 rules violated in <eval>")
                self.expect(r, lines, "detail", "True")
                self.done(r)

    def test_g2_calculator(self):
        rules = ("eval-namespace=closed\neval-syntax=arith, compare\neval-max-iterations=100_000\n"
                 "eval-timeout=2s\n")
        for python in PYTHONS:
            with self.subTest(python=python):
                r, lines = self.run_case(rules, """
                    show("a", lambda: eval("(3 + 4) * 2"))
                    show("b", lambda: eval("2 ** 10"))
                    show("c", lambda: eval("len([1,2])"))
                    show("d", lambda: eval("().__class__.__base__"))
                    t0 = time.monotonic()
                    show("e", lambda: eval("10 ** 10**9"))
                    print("fast:", time.monotonic() - t0 < 1.0)
                """, python=python)
                self.expect(r, lines, "a", "OK 14")
                self.expect(r, lines, "b", "OK 1024")
                self.expect(r, lines, "c", "EvalSyntaxRejected")
                self.expect(r, lines, "d", "EvalSyntaxRejected")
                self.expect(r, lines, "e", "RuleEvalPermissionError: '10 ** 1000000000' is denied by the eval guard.")
                self.expect(r, lines, "fast", "True")
                self.done(r)

    def test_g3_infinite_loop(self):
        log: list = []
        r, lines = self.run_case("eval-syntax=loop\neval-timeout=1s\n", """
            t0 = time.monotonic()
            try:
                try:
                    exec("while True: pass")
                except Exception as e:
                    print("caught-by-Exception:", type(e).__name__)
            except BaseException as e:
                print("interrupted:", type(e).__name__, e.reason)
            print("regained:", time.monotonic() - t0 < 2.0)
        """, log=log)
        self.expect(r, lines, "interrupted", "EvalInterrupted eval-")
        self.expect(r, lines, "regained", "True")
        self.assertNotIn("caught-by-Exception", lines)
        self.done(r)
        # The refusal is in the log, named by the limit that stopped it.
        reason = lines["interrupted"].split()[-1]
        refused = [e for e in log if e.get("eval_key") == "refused"]
        self.assertEqual(len(refused), 1, log)
        self.assertEqual((refused[0]["verdict"], refused[0]["object"]), ("denied", reason), refused)
        self.assertIn("prog.py", refused[0].get("python", ""), refused)

    def test_g4_recursion(self):
        r, lines = self.run_case("eval-syntax=func, arith\neval-max-call-depth=10\n", """
            show("def", lambda: exec("def f(n): return f(n+1)\\nf(0)"))
            show("lambda", lambda: exec("(lambda g: g(g))(lambda f: f(f))"))
        """)
        self.expect(r, lines, "def", "EvalInterrupted: evaluation interrupted: eval-max-call-depth=10")
        self.expect(r, lines, "lambda", "EvalInterrupted: evaluation interrupted: eval-max-call-depth=10")
        self.done(r)

    def test_g5_getattr(self):
        r, lines = self.run_case("eval-call=getattr\n", """
            show("g5", lambda: eval("getattr((), '__class__')"))
        """)
        self.expect(r, lines, "g5", "RuleEvalPermissionError: '__class__' is denied by the eval guard.")
        self.done(r)

    def test_g6_format_template(self):
        r, lines = self.run_case("eval-attribute=format\n", """
            show("g6", lambda: eval("'{0.__class__}'.format(())"))
            show("ok", lambda: eval("'{0}-{1[0]}'.format(5, (7,))"))
        """)
        self.expect(r, lines, "g6", "RuleEvalPermissionError: '__class__' is denied by the eval guard.")
        self.expect(r, lines, "ok", "OK '5-7'")
        self.done(r)

    def test_g7_deep_and_huge(self):
        r, lines = self.run_case("eval-timeout=5s\n", """
            e1 = show("deep", lambda: eval("[" * 5000 + "]" * 5000))
            e2 = show("wide", lambda: eval("[" + ", ".join("1" for _ in range(10_000)) + "]"))
            print("depth-rule:", "eval-max-depth" in str(e1))
            print("nodes-rule:", "eval-max-nodes=10002" in str(e2))
        """)
        self.expect(r, lines, "deep", "EvalSyntaxRejected")
        self.expect(r, lines, "wide", "EvalSyntaxRejected")
        self.expect(r, lines, "depth-rule", "True")
        self.expect(r, lines, "nodes-rule", "True")
        self.done(r)

    def test_g8_reserved_prefix(self):
        for rules in ("eval-timeout=5s\n", "eval-syntax=func, assign\neval-call=getattr\neval-magic=*\n"):
            with self.subTest(rules=rules):
                r, lines = self.run_case(rules, """
                    e = show("g8", lambda: eval("__sb_getattr__((),'x')"))
                    print("prefix:", "reserved prefix" in str(e))
                """)
                self.expect(r, lines, "g8", "EvalSyntaxRejected")
                self.expect(r, lines, "prefix", "True")
                self.done(r)

    # -- profiles ----------------------------------------------------------------

    def test_named_profiles_and_guarded_eval(self):
        rules = ("eval-syntax=arith, compare, loop\n"
                 "eval-namespace:calc=closed\neval-syntax:calc=arith, compare\n"
                 "eval-max-iterations:calc=100_000\neval-timeout:calc=2s\n")
        r, lines = self.run_case(rules, """
            from pysandboxes.evalguard import guarded_eval
            show("calc", lambda: guarded_eval("(3 + 4) * x", profile="calc", names={"x": 2}))
            show("calc-len", lambda: guarded_eval("len(x)", profile="calc", names={"x": []}))
            show("unknown", lambda: guarded_eval("1", profile="clac"))
            show("default", lambda: guarded_eval("x < 3", names={"x": 1}))
            from pysandboxes import evalguard
            show("configure", lambda: evalguard.configure(["eval-syntax=*"]))
        """)
        self.expect(r, lines, "calc", "OK 14")
        self.expect(r, lines, "calc-len", "EvalSyntaxRejected")
        self.expect(r, lines, "unknown", "ConfigSyntaxError: unknown eval profile 'clac', closest known token is 'calc'")
        self.expect(r, lines, "default", "OK True")
        self.expect(r, lines, "configure", "SandBoxError: evalguard.configure() is not available under python-sb")
        self.done(r)


if __name__ == "__main__":
    sbtest.main(EvalGuard)

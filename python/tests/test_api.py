"""python-api=: the sensitive-function registry inside the interpreter (reference §2.7)."""
from __future__ import annotations

import textwrap
import unittest

import support
from support import rules, run_agent

# A call per category (and a few delegation chains), each printing OK or the refusal.
PROBES = {
    "os.system": "os.system('true')",
    "os.popen": "os.popen('true').read()",
    "subprocess.run": "subprocess.run(['true'])",
    "os.fork": "os.fork()",
    "os.kill": "os.kill(os.getpid(), 0)",
    "os.umask": "os.umask(0o22)",
    "threading.Thread.start": "threading.Thread(target=lambda: None).start()",
    "ctypes.CDLL": "ctypes.CDLL(None)",
    "ctypes.cast": "ctypes.cast(ctypes.c_char_p(b'x'), ctypes.c_void_p)",
    "sys._getframe": "sys._getframe()",
    "sys.settrace": "sys.settrace(None)",
    "inspect.currentframe": "inspect.currentframe()",
    "importlib.reload": "importlib.reload(colorsys)",
    "builtins.eval": "eval('1')",
    "builtins.exec": "exec('x = 1')",
    "builtins.compile": "compile('1', 's', 'eval')",
    "pickle.loads": "pickle.loads(pickle.dumps(1))",
    "_pickle.loads": "_pickle.loads(pickle.dumps(1))",
    "pickle._Unpickler": "pickle._Unpickler(io.BytesIO(pickle.dumps(1))).load()",
}


def probe_program(names: list[str]) -> str:
    lines = ["import os, sys, io, subprocess, threading, ctypes, inspect, importlib, colorsys, pickle, _pickle",
             "def t(label, fn):",
             "    try:",
             "        fn(); print(label, 'OK')",
             "    except Exception as e:",
             "        print(label, type(e).__name__, str(e).split(chr(10))[0])"]
    lines += [f"t({n!r}, lambda: {PROBES[n]})" for n in names]
    return "\n".join(lines) + "\n"


def results(run: support.AgentRun) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)


class Enforce(unittest.TestCase):
    def test_every_probe_refused_by_default(self) -> None:
        run = run_agent(["-c", probe_program(list(PROBES))], rules())
        self.assertEqual(run.returncode, 0, run.stderr)
        got = results(run)
        for name in PROBES:
            with self.subTest(name=name):
                cat = support.registry()[name]
                self.assertEqual(got[name], f"RuleApiPermissionError {name}() is denied by the API guard "
                                            f"(category: {cat}).")
        denied = {m["name"]: m for m in run.of("api")}
        self.assertEqual(set(denied), set(PROBES))
        self.assertEqual(denied["os.system"]["category"], "process-exec")
        self.assertTrue(all(m["verdict"] == "denied" for m in denied.values()))

    def test_exact_message_and_attributes(self) -> None:
        code = textwrap.dedent("""
            import os
            from pysandboxes import RuleApiPermissionError
            try:
                os.system('true')
            except RuleApiPermissionError as e:
                print(repr(str(e))); print(e.qualname, e.category, isinstance(e, PermissionError))
        """)
        run = run_agent(["-c", code], rules())
        self.assertEqual(run.stdout.splitlines(), [
            repr("os.system() is denied by the API guard (category: process-exec).\n"
                 "Add `python-api=ALLOW:os.system` for this function only, "
                 "or `python-api=ALLOW:process-exec` for the whole category."),
            "os.system process-exec True"])

    def test_function_grant(self) -> None:
        run = run_agent(["-c", probe_program(["os.system", "os.popen"])], rules(allow=("os.system",)))
        got = results(run)
        self.assertEqual(got["os.system"], "OK")
        self.assertTrue(got["os.popen"].startswith("RuleApiPermissionError os.popen()"))

    def test_twin_names_of_one_function(self) -> None:
        # posix.system is os.system: a grant of either lets it run; an explicit DENY of one refuses it.
        code = "import posix; posix.system('true'); print('RAN')"
        self.assertEqual(run_agent(["-c", code], rules(allow=("os.system",))).stdout, "RAN\n")
        run = run_agent(["-c", code], rules(allow=("process-exec",), deny_rule=("posix.system",)))
        self.assertIn("os.system() is denied", run.stderr)

    def test_category_grant_and_delegation(self) -> None:
        run = run_agent(["-c", probe_program(["os.system", "subprocess.run", "os.popen", "os.kill"])],
                        rules(allow=("process-exec",)))
        got = results(run)
        self.assertEqual([got[n] for n in ("os.system", "subprocess.run", "os.popen")], ["OK"] * 3)
        self.assertTrue(got["os.kill"].startswith("RuleApiPermissionError"))
        # One door granted, the next one of the chain not: refused there, naming it.
        run = run_agent(["-c", probe_program(["subprocess.run"])], rules(allow=("subprocess.run",)))
        self.assertEqual(results(run)["subprocess.run"],
                         "RuleApiPermissionError subprocess.Popen() is denied by the API guard "
                         "(category: process-exec).")

    def test_an_import_right_is_not_a_call_right(self) -> None:
        run = run_agent(["-c", "import subprocess; subprocess.run(['true'])"], rules(imports="subprocess"))
        self.assertIn("subprocess.run() is denied", run.stderr)

    def test_references_taken_before_the_program_do_not_escape(self) -> None:
        # The audit event judges os.system however it is reached.
        code = "import os\nf = os.__dict__['system']\nimport posix\nposix.system('true')"
        run = run_agent(["-c", code], rules())
        self.assertIn("os.system() is denied", run.stderr)

    def test_standard_library_keeps_working(self) -> None:
        # introspection and dynamic code denied: logging, typing, enum,
        # namedtuple, dataclasses, runpy and `-m` use them on our behalf.
        prog = support.program("""
            import logging, typing, enum, collections, dataclasses, ast, json, runpy, ctypes
            T = typing.TypeVar("T")
            P = collections.namedtuple("P", "a b")
            E = enum.Enum("E", "x y")
            @dataclasses.dataclass
            class D:
                a: int = 1
            logging.basicConfig(format="%(funcName)s:%(message)s")
            logging.warning("logged")
            ast.parse("1 + 1")
            print(P(1, 2), E.x, D(), json.dumps({"a": 1}))
        """)
        run = run_agent([prog], rules())
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, "P(a=1, b=2) E.x D(a=1) {\"a\": 1}\n")
        self.assertIn("<module>:logged", run.stderr)
        self.assertEqual(run.of("api"), [])
        jt = run_agent(["-m", "json.tool"], rules(), timeout=60)
        self.assertEqual(jt.returncode, 1)  # empty stdin: json.tool's own error, not ours
        self.assertNotIn("denied", jt.stderr)

    def test_dynamic_code_by_function(self) -> None:
        code = "exec('x = 1'); print('EXEC OK')\ntry:\n    eval('1')\nexcept PermissionError as e:\n    print(e.qualname)"
        run = run_agent(["-c", code], rules(allow=("builtins.exec",)))
        self.assertEqual(run.stdout, "EXEC OK\nbuiltins.eval\n", run.stderr)

    def test_bypassing_the_wrapper_is_still_judged(self) -> None:
        code = "from pysandboxes.guards.api import original\noriginal(eval)('40 + 2')"
        run = run_agent(["-c", code], rules())
        self.assertIn("builtins.compile() is denied by the API guard (category: dynamic-code)", run.stderr)

    def test_importlib_gets_the_originals_behind_the_events(self) -> None:
        # Module code runs through importlib's own reference to the builtin
        # exec (no wrapper per import); called from the program, that
        # reference is judged like any other.
        code = textwrap.dedent("""\
            import _frozen_importlib_external as bx, builtins, colorsys
            from pysandboxes.guards.api import original
            print(bx.exec is original(builtins.exec), bx.compile is original(builtins.compile))
            for label, call in (("exec", lambda: bx.exec((lambda: 0).__code__, {})),
                                ("compile", lambda: bx.compile("1", "s", "eval"))):
                try:
                    call()
                    print(label, "ran")
                except PermissionError as e:
                    print(label, e.qualname)
            """)
        run = run_agent(["-c", code], rules())
        self.assertEqual(run.stdout.split("\n")[:3], ["True True", "exec builtins.exec", "compile builtins.compile"],
                         run.stderr)
        # One of the three allowed: no event stands behind the originals,
        # and importlib keeps the builtins' (the wrappers).
        run = run_agent(["-c", "import _frozen_importlib_external as bx, colorsys; print('exec' in vars(bx))"],
                        rules(allow=("builtins.compile",)))
        self.assertEqual(run.stdout, "False\n", run.stderr)

    def test_eval_rules_guard_dynamic_code(self) -> None:
        # eval-* rules hand eval/exec/compile to the eval guard: the declared
        # sub-language runs, anything else is rejected before running.
        doc = rules(eval={"present": True, "profiles": {"": {"syntax": ["arith"]}}})
        run = run_agent(["-c", "print(eval('1 + 1'))"], doc)
        self.assertEqual(run.stdout, "2\n", run.stderr)
        run = run_agent(["-c", "print(eval('[x for x in (1, 2)]'))"], doc)
        self.assertEqual(run.stdout, "", run.stderr)
        self.assertIn("EvalSyntaxRejected", run.stderr)

    def test_audit_hook_refusal_of_addaudithook(self) -> None:
        # CPython silently drops a hook whose addition an audit hook refuses.
        code = "import sys\nsys.addaudithook(lambda *a: print('HOOK'))\nimport colorsys\nprint('END')"
        run = run_agent(["-c", code], rules())
        self.assertEqual(run.stdout, "END\n")


class Learn(unittest.TestCase):
    def test_learning_records_and_lets_through(self) -> None:
        names = ["os.system", "pickle.loads", "sys._getframe", "builtins.eval", "threading.Thread.start"]
        run = run_agent(["-c", probe_program(names)], rules(mode="learn", allow=("threads",)))
        got = results(run)
        self.assertEqual([got[n] for n in names], ["OK"] * len(names))
        learned = {m["name"]: (m["category"], m["verdict"]) for m in run.of("api")}
        # eval is learned by the eval guard (eval-* features), never as the
        # dynamic-code grant that would switch the guard off.
        self.assertEqual(learned, {"os.system": ("process-exec", "would-deny"),
                                   "pickle.loads": ("deserialization", "would-deny"),
                                   "sys._getframe": ("introspection", "would-deny")})
        self.assertTrue(all(m.get("pyloc", "").startswith("<string>:") for m in run.of("api")))

    def test_audit_reports_would_deny(self) -> None:
        run = run_agent(["-c", "import os; os.system('true'); print('RAN')"], rules(mode="audit"))
        self.assertEqual(run.stdout, "RAN\n")
        self.assertEqual([(m["name"], m["verdict"]) for m in run.of("api")], [("os.system", "would-deny")])


class DynamicCodeSemantics(unittest.TestCase):
    """The guarded eval/exec/compile behave like the builtins (learn mode keeps
    the wrappers installed and lets the calls run)."""

    def run_learn(self, code: str) -> str:
        """Output under the agent, checked equal to the output without it."""
        import subprocess

        prog = support.program(code)
        run = run_agent([prog], rules(mode="learn"))
        self.assertEqual(run.returncode, 0, run.stderr)
        bare = subprocess.run([support.PYTHON, prog], capture_output=True, text=True)
        self.assertEqual(run.stdout, bare.stdout)
        return run.stdout

    def test_default_namespaces(self) -> None:
        out = self.run_learn("""
            g = 1
            def f():
                x = 2
                print(eval('x + g'), eval(' x'))
                exec('y = x * 10; print(y)')
                try:
                    print(eval('[x for _ in range(1)]'))
                except NameError as e:
                    print('NameError')  # a comprehension in eval cannot see the locals (< 3.12)
                return locals().get('y')
            print(f())
            exec('z = 5')
            print(z)
            class C:
                a = 3
                exec('b = a + 1')
            print(C.b)
            print(eval('g', {'g': 7}), eval('h', {}, {'h': 8}))
        """)
        self.assertEqual(out.split()[:3], ["3", "2", "20"])

    def test_future_flags_follow_the_caller(self) -> None:
        out = self.run_learn("""
            from __future__ import annotations
            exec('def f(x: undefined_name) -> int: pass\\nprint(f.__annotations__)')
            code = compile('def g(x: nope): pass', 's', 'exec')
            ns = {}
            exec(code, ns)
            print(ns['g'].__annotations__)
            code = compile('def h(x: int): pass', 's', 'exec', dont_inherit=True)
            exec(code, ns)
            print(ns['h'].__annotations__)
        """)
        self.assertEqual(out.splitlines(), ["{'x': 'undefined_name', 'return': 'int'}", "{'x': 'nope'}",
                                            "{'x': <class 'int'>}"])

    def test_wrappers_look_like_the_builtins(self) -> None:
        out = self.run_learn("""
            import builtins
            print(eval.__name__, exec.__module__, compile.__qualname__, hasattr(eval, '__wrapped__'))
        """)
        self.assertEqual(out.split(), ["eval", "builtins", "compile", "False"])


if __name__ == "__main__":
    unittest.main()

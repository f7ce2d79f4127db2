"""The eval guard in-process: upstream cases G1-G8, the three states, every
syntax group and node, namespaces, profiles, guarded_eval, compile, reports."""
from __future__ import annotations

import ast
import builtins
import collections
import dataclasses
import os
import sys
import tempfile
import typing
import unittest
import warnings

from evalguard_corpus import support
from pysandboxes import evalguard, exceptions
from pysandboxes.evalguard import checker, profiles, rules, runtime

ORIGINAL_EVAL = runtime._ORIGINALS["eval"]


class UpstreamCases(support.GuardTest):
    """Reference §9.2 G1-G8, with the policies given there."""

    def test_g1_core_only(self):
        self.install(timeout_ms=2000)
        self.assertEqual(eval("[1, 2, 3]"), [1, 2, 3])
        self.assertRejected(lambda: eval("1 + 1"), "'BinOp' is not allowed",
                            "add: eval-syntax=arith        (or, narrower: eval-syntax=BinOp)")

    def test_g2_calculator(self):
        self.install(namespace="closed", syntax=["arith", "compare"], max_iterations=100_000, timeout_ms=2000)
        self.assertEqual(eval("(3 + 4) * 2"), 14)
        self.assertEqual(eval("2 ** 10"), 1024)
        self.assertRejected(lambda: eval("len([1,2])"), "call to 'len' is not allowed", "add: eval-call=len")
        self.assertRejected(lambda: eval("().__class__.__base__"), "eval-magic=__class__", "eval-magic=__base__")

        def attempt():
            t0 = runtime._now()
            self.assertDenied(lambda: eval("10 ** 10**9"), "eval-max-alloc=10000000")
            return runtime._now() - t0
        self.assertTimely(attempt, 0.5, "refused before computing")

    def test_g3_infinite_loop_returns_control(self):
        self.install(syntax=["loop"], timeout_ms=1000)
        caught = []
        try:
            try:
                exec("while True: pass")
            except Exception as e:  # must not catch it
                caught.append(e)
        except exceptions.EvalInterrupted as e:
            self.assertIn(e.reason, ("eval-max-iterations=1000000", "eval-timeout=1s"))
        else:
            self.fail("not interrupted")
        self.assertEqual(caught, [])

    def test_g3_timeout_when_iterations_are_plenty(self):
        self.install(syntax=["loop"], timeout_ms=300, max_iterations=10**12)

        def attempt():
            t0 = runtime._now()
            self.assertInterrupted(lambda: exec("while True: pass"), "eval-timeout=300ms")
            return runtime._now() - t0
        self.assertTimely(attempt, 1.3)

    def test_g4_recursion_is_a_budget_not_a_recursion_error(self):
        self.install(syntax=["func", "arith"], max_call_depth=10)
        e = self.assertInterrupted(lambda: exec("def f(n): return f(n+1)\nf(0)"), "eval-max-call-depth=10")
        self.assertEqual(str(e), "evaluation interrupted: eval-max-call-depth=10")
        self.assertInterrupted(lambda: exec("(lambda g: g(g))(lambda f: f(f))"), "eval-max-call-depth=10")
        evalguard.uninstall()
        self.install(syntax=["func", "arith", "conditional", "compare"], max_call_depth=10)
        self.assertEqual(eval("(lambda f: f(f, 5))(lambda f, n: n if n < 1 else f(f, n - 1))"), 0)

    def test_g5_getattr_is_a_guarded_shim(self):
        self.install(call=["getattr"])
        e = self.assertDenied(lambda: eval("getattr((), '__class__')"), "'__class__' is denied by the eval guard.",
                              "Add `eval-magic=__class__` to allow it.")
        self.assertIsInstance(e, PermissionError)
        self.assertIsInstance(e, exceptions.SandBoxError)
        self.assertDenied(lambda: eval("getattr((), 'missing', 7)"), "eval-attribute=missing")
        evalguard.uninstall()
        self.install(call=["getattr"], attribute=["missing"])
        self.assertEqual(eval("getattr((), 'missing', 7)"), 7, "the default applies once the name is allowed")

    def test_g6_format_template_is_validated(self):
        self.install(attribute=["format"])
        self.assertDenied(lambda: eval("'{0.__class__}'.format(())"), "'__class__'")
        self.assertEqual(eval("'{0}-{1[0]}'.format(5, (7,))"), "5-7")

    def test_g7_deep_and_huge_sources(self):
        self.install()
        self.assertRejected(lambda: eval("[" * 5000 + "]" * 5000), "eval-max-depth")
        self.assertRejected(lambda: eval("[" * 30 + "]" * 30), "the source nests 31 levels deep",
                            "add: eval-max-depth=31")
        self.assertRejected(lambda: eval("[" + ", ".join("1" for _ in range(10_000)) + "]"),
                            "the source holds 10002 nodes", "add: eval-max-nodes=10002")

    def test_g8_reserved_prefix(self):
        for fields in ({}, {"syntax": ["func", "assign"], "call": ["getattr"], "magic": ["*"]}):
            self.install(**fields)
            self.assertRejected(lambda: eval("__sb_getattr__((),'x')"), "reserved prefix '__sb_'")
            evalguard.uninstall()


class ThreeStates(support.GuardTest):
    def test_no_rule_refuses_as_dynamic_code(self):
        self.install(present=False)
        for call in (lambda: eval("40 + 2"), lambda: exec("x = 1"), lambda: compile("1", "f", "eval")):
            with self.assertRaises(exceptions.RuleApiPermissionError) as cm:
                call()
            self.assertIn("is denied by the API guard (category: dynamic-code).", str(cm.exception))
            self.assertIn("python-api=ALLOW:dynamic-code", str(cm.exception))
        self.assertEqual(self.sent[0]["kind"], "api")
        self.assertEqual(self.sent[0]["category"], "dynamic-code")
        self.assertEqual(self.sent[0]["verdict"], "denied")
        self.assertIn("test_evalguard_semantics.py", self.sent[0]["pyloc"])

    def test_standard_library_call_sites_are_exempt(self):
        self.install(present=False)
        P = dataclasses.make_dataclass("P", [("x", int)])
        self.assertEqual(P(1).x, 1)
        self.assertEqual(collections.namedtuple("T", "a b")(1, 2).b, 2)

        def f(x: "int") -> "typing.List[int]":
            return [x]
        self.assertEqual(typing.get_type_hints(f)["x"], int)
        import timeit
        self.assertGreaterEqual(timeit.timeit("1 + 1", number=1), 0)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.py")
            with open(path, "w") as fh:
                fh.write("VALUE = 40 + 2\n")
            import runpy
            self.assertEqual(runpy.run_path(path)["VALUE"], 42)

    def test_library_classification(self):
        from pysandboxes.evalguard import hooks
        self.assertTrue(hooks.library_file(os.__file__))
        self.assertTrue(hooks.library_file("<frozen importlib._bootstrap>"))
        self.assertTrue(hooks.library_file("/venv/lib/python3.11/site-packages/numpy/core.py"))
        self.assertFalse(hooks.library_file("/home/u/app/tools.py"))
        self.assertFalse(hooks.library_file("<eval>"))
        self.assertFalse(hooks.library_file("<string>"))
        main = sys.modules["__main__"]
        saved = getattr(main, "__spec__", None)
        main.__spec__ = type("Spec", (), {"name": "mcp_server.main"})()
        try:
            self.assertFalse(hooks.library_file("/venv/lib/python3.11/site-packages/mcp_server/tools.py"),
                             "the application run with -m is guarded even when installed")
            self.assertTrue(hooks.library_file("/venv/lib/python3.11/site-packages/numpy/core.py"))
        finally:
            main.__spec__ = saved

    def test_guarded_state(self):
        self.install(syntax=["arith"])
        self.assertIsNot(builtins.eval, ORIGINAL_EVAL)
        self.assertEqual(eval("40 + 2"), 42)
        self.assertEqual(builtins.eval.__name__, "eval")
        self.assertEqual(builtins.exec.__module__, "builtins")

    def test_dynamic_code_allowed_leaves_the_builtins(self):
        self.install(present=False, allowed=True)
        self.assertIs(builtins.eval, ORIGINAL_EVAL)
        self.assertEqual(eval("__import__('os').sep"), os.sep)

    def test_audit_reports_and_runs(self):
        self.install(present=False, mode="audit")
        self.assertEqual(eval("40 + 2"), 42)
        self.assertEqual(self.sent[0]["verdict"], "would-deny")

    def test_code_generated_inside_an_evaluation_stays_guarded(self):
        self.install(timeout_ms=2000)
        self.assertEqual(collections.namedtuple("T", "a")(1).a, 1, "outside an evaluation: exempt")
        with self.assertRaises(exceptions.EvalSyntaxRejected):
            evalguard.guarded_eval("nt('T', 'a b')", names={"nt": collections.namedtuple})


NODE_SNIPPETS = {
    "BinOp": ("a + b", ()), "UnaryOp": ("-a", ()), "Compare": ("a < b", ()), "BoolOp": ("a and b", ()),
    "If": ("if a:\n    pass", ()), "IfExp": ("a if b else c", ()),
    "For": ("for i in a:\n    pass", ()), "While": ("while a:\n    pass", ()),
    "Break": ("for i in a:\n    break", ("For",)), "Continue": ("for i in a:\n    continue", ("For",)),
    "ListComp": ("[i for i in a]", ("comprehension",)), "SetComp": ("{i for i in a}", ("comprehension",)),
    "DictComp": ("{i: i for i in a}", ("comprehension",)),
    "GeneratorExp": ("(i for i in a)", ("comprehension",)), "comprehension": ("[i for i in a]", ("ListComp",)),
    "Assign": ("x = 1", ()), "AugAssign": ("x += 1", ()), "AnnAssign": ("x: 'int' = 1", ()),
    "NamedExpr": ("(x := 1)", ()),
    "FunctionDef": ("def f():\n    pass", ("arguments",)),
    "Return": ("def f():\n    return 1", ("FunctionDef", "arguments")),
    "arguments": ("lambda: 0", ("Lambda",)), "arg": ("lambda x: x", ("Lambda", "arguments")),
    "Lambda": ("lambda: 0", ("arguments",)),
    "AsyncFunctionDef": ("async def f():\n    pass", ("arguments",)),
    "Await": ("async def f():\n    await a", ("AsyncFunctionDef", "arguments")),
    "AsyncFor": ("async def f():\n    async for i in a:\n        pass", ("AsyncFunctionDef", "arguments")),
    "AsyncWith": ("async def f():\n    async with a:\n        pass", ("AsyncFunctionDef", "arguments", "withitem")),
    "ClassDef": ("class C:\n    pass", ()),
    "Try": ("try:\n    pass\nfinally:\n    pass", ()), "Raise": ("raise a", ()),
    "ExceptHandler": ("try:\n    pass\nexcept a:\n    pass", ("Try",)),
    "TryStar": ("try:\n    pass\nexcept* a:\n    pass", ("ExceptHandler",)),
    "With": ("with a:\n    pass", ("withitem",)), "withitem": ("with a:\n    pass", ("With",)),
    "Import": ("import m", ("alias",)), "ImportFrom": ("from m import n", ("alias",)),
    "alias": ("import m", ("Import",)),
    "Subscript": ("a[0]", ()), "Slice": ("a[1:2]", ("Subscript",)), "Starred": ("[*a]", ()),
    "JoinedStr": ("f'{a}'", ("FormattedValue",)), "FormattedValue": ("f'{a}'", ("JoinedStr",)),
    "Yield": ("def g():\n    yield 1", ("FunctionDef", "arguments")),
    "YieldFrom": ("def g():\n    yield from a", ("FunctionDef", "arguments")),
    "TemplateStr": ("t'{a}'", ("Interpolation",)), "Interpolation": ("t'{a}'", ("TemplateStr",)),
}


def _syntax_violations(source: str, *tokens: str):
    profile = rules.profiles_from_lines([f"eval-syntax={', '.join(tokens)}"] if tokens else ["eval-timeout=1s"])[0][""]
    tree = ast.parse(source)
    return [v for v in checker.analyse(tree, profile, source).violations if v.key == "eval-syntax"]


class SyntaxGroups(unittest.TestCase):
    def test_every_group_and_every_node(self):
        self.assertEqual(set(NODE_SNIPPETS), set(rules.GROUP_OF_NODE))
        for node, (source, deps) in NODE_SNIPPETS.items():
            group = rules.GROUP_OF_NODE[node]
            with self.subTest(node=node):
                try:
                    ast.parse(source)
                except SyntaxError:
                    continue  # a node of a newer Python (TryStar before 3.11, t-strings before 3.14)
                self.assertEqual(_syntax_violations(source, *deps, node), [], "the exact node name grants it")
                self.assertEqual(_syntax_violations(source, *deps, group), [], "the group grants it")
                # "comprehension" is a group and a node: as a token it names the group
                refused = [v for v in _syntax_violations(source, *[d for d in deps if d not in rules.SYNTAX_GROUPS])
                           if v.token == node]
                self.assertTrue(refused, "refused without it")
                self.assertEqual(refused[0].remedy, group)
                self.assertEqual(refused[0].message, f"{node!r} is not allowed")

    def test_nodes_outside_groups_are_named_exactly(self):
        for source, node in (("assert a", "Assert"), ("del a", "Delete"), ("def f():\n    global a", "Global"),
                             ("match a:\n    case 1:\n        pass", "Match")):
            with self.subTest(node=node):
                found = [v.token for v in _syntax_violations(source, "func")]
                self.assertIn(node, found)
                self.assertNotIn(node, [v.token for v in _syntax_violations(source, "func", node,
                                                                            "match_case", "MatchValue")])

    def test_running_each_group(self):
        cases = [
            ("arith", "eval", "-(1 + 2) * 3", -9), ("compare", "eval", "1 < 2 and 3 > 2", True),
            ("conditional", "eval", "1 if a else 2", 2),
            ("comprehension", "eval", "[i for i in (1, 2)]", [1, 2]),
            ("subscript", "eval", "(1, 2, 3)[1:][0]", 2), ("fstring", "eval", "f'{a}!'", "0!"),
            ("func", "eval", "(lambda x: x)(3)", 3),
        ]
        for group, kind, source, expected in cases:
            with self.subTest(group=group):
                evalguard.configure([f"eval-syntax={group}"])
                self.assertEqual(evalguard.guarded_eval(source, names={"a": 0}), expected)
                evalguard.configure(["eval-timeout=1s"])
                with self.assertRaises(exceptions.EvalSyntaxRejected):
                    evalguard.guarded_eval(source, names={"a": 0})


class Namespaces(support.GuardTest):
    SECRET = "sensitive"

    def test_adaptive_bare_eval_sees_no_caller_names(self):
        self.install(call=["len"])
        secret = "local"  # noqa: F841 - what a bare eval must not see
        with self.assertRaises(NameError):
            eval("secret")
        self.assertEqual(eval("len('ab')"), 2)
        self.assertEqual(eval("x", {"x": 1}), 1)
        self.assertEqual(eval("y", None, {"y": 2}), 2)

    def setUp(self):
        super().setUp()
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore", evalguard.SandboxContextWarning)

    def tearDown(self):
        self._warnings.__exit__(None, None, None)
        super().tearDown()

    def test_adaptive_fills_missing_builtins_from_eval_call(self):
        self.install(call=["len"], syntax=["assign"])
        g = {"helper": lambda v: v * 2}
        self.assertEqual(eval("helper(len('abc'))", g), 6)
        self.assertEqual(set(g["__builtins__"]) - {"__name__"}, {"len"})
        self.assertRejected(lambda: eval("abs(-1)", {}), "call to 'abs' is not allowed")
        exec("y = 5", g)
        self.assertEqual(g["y"], 5)
        self.assertEqual(eval("1", {"__builtins__": {}}, {}), 1)

    def test_adaptive_context_findings(self):
        self.install(call=["len"])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(2):
                eval("1", {"os": os, "n": 3, "rows": [1, 2]})
        found = [str(x.message) for x in w if issubclass(x.category, evalguard.SandboxContextWarning)]
        self.assertEqual(len(found), 1, "once per call site")
        self.assertIn("eval() context provides module 'os'", found[0])
        self.assertIn("acknowledge with: eval-call=os", found[0])
        ctx = [m for m in self.sent if m.get("context")]
        self.assertEqual(ctx[0]["context"], [{"name": "os", "grade": "strong", "what": "module"}])

    def test_adaptive_raw_builtins_become_shims(self):
        self.install(call=["getattr"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assertDenied(lambda: eval("getattr((), '__class__')", {"__builtins__": builtins}))
            self.assertDenied(lambda: eval("g((), '__class__')", {"g": getattr}))

    def test_closed_ignores_caller_namespace(self):
        self.install(namespace="closed", syntax=["assign"])
        with self.assertRaises(NameError):
            eval("x", {"x": 1})
        g = {}
        exec("y = 5", g)
        self.assertNotIn("y", g)

    def test_caller_mode_honours_everything_but_the_static_check(self):
        self.install(namespace="caller", syntax=["arith"], call=["len"])
        local = 40  # noqa: F841
        self.assertEqual(eval("local + 2"), 42)
        self.assertEqual(eval("abs(-2)"), 2, "CPython's builtins are honoured")
        self.assertRejected(lambda: eval("local.__class__"), "eval-magic=__class__")


class Profiles(support.GuardTest):
    def test_named_profile_and_remedies(self):
        self.install(syntax=["arith", "compare", "loop"],
                     named={"llm": {"syntax": ["arith"], "namespace": "closed", "timeout_ms": 2000}})
        self.assertEqual(evalguard.guarded_eval("x * 2", profile="llm", names={"x": 21}), 42)
        e = self.assertRejected(lambda: evalguard.guarded_eval("x < 2", profile="llm", names={"x": 1}),
                                "in <eval:llm>", "add: eval-syntax:llm=compare")
        self.assertEqual(e.lineno, 1)
        self.assertTrue(evalguard.guarded_eval("x < 2", names={"x": 1}))

    def test_unknown_profile_is_an_error_at_call(self):
        self.install(named={"llm": {}})
        with self.assertRaises(exceptions.ConfigSyntaxError) as cm:
            evalguard.guarded_eval("1", profile="lmm")
        self.assertIn("closest known token is 'llm'", str(cm.exception))

    def test_calculator_profile(self):
        calc = profiles.profile("calculator")
        self.assertEqual(evalguard.guarded_eval("(3 + 4) * 2", profile=calc), 14)
        self.assertEqual(evalguard.guarded_eval("2 ** 10", profile=calc), 1024)
        self.assertEqual(evalguard.guarded_eval("1 < 2", profile=calc), True)
        self.assertRejected(lambda: evalguard.guarded_eval("len([1, 2])", profile=calc), "eval-call:calculator=len")
        self.assertRejected(lambda: evalguard.guarded_eval("().__class__.__base__", profile=calc))
        self.assertDenied(lambda: evalguard.guarded_eval("10 ** 10**9", profile=calc), "eval-max-alloc")
        self.assertRejected(lambda: evalguard.guarded_eval("open('/etc/passwd')", profile=calc))
        self.assertEqual(calc.namespace, "closed")
        self.assertEqual((calc.max_iterations, calc.timeout_ms), (100_000, 2000))

    def test_other_ready_made_profiles(self):
        rows = [{"region": "EU", "amount": 120.0}, {"region": "US", "amount": 80.0}]
        r = profiles.profile("rows")
        self.assertEqual(evalguard.guarded_eval("sum(x['amount'] for x in rows if x['region'] == 'EU')",
                                                profile=r, names={"rows": rows}), 120.0)
        self.assertEqual(evalguard.guarded_eval("sorted({x['region'] for x in rows})", profile=r,
                                                names={"rows": rows}), ["EU", "US"])
        self.assertRejected(lambda: evalguard.guarded_eval("[x for x in rows if x.get('region')]", profile=r,
                                                           names={"rows": rows}), "eval-attribute:rows=get")
        pred = profiles.profile("predicate")
        self.assertTrue(evalguard.guarded_eval("row['age'] >= 18 and row['country'] in ('FR', 'BE')",
                                               profile=pred, names={"row": {"age": 20, "country": "FR"}}))
        self.assertRejected(lambda: evalguard.guarded_eval("row['a'] + 1 > 2", profile=pred, names={"row": {}}))
        rul = profiles.profile("rules")
        self.assertEqual(evalguard.guarded_eval("round(amount * (0.15 if tier == 'gold' else 0.05), 2)", profile=rul,
                                                names={"amount": 250.0, "tier": "gold"}), 37.5)
        tpl = profiles.profile("template")
        self.assertEqual(evalguard.guarded_eval('f"{name.title()}: {total:.2f} EUR"', profile=tpl,
                                                names={"name": "ada", "total": 3}), "Ada: 3.00 EUR")
        self.assertRejected(lambda: evalguard.guarded_eval("'{0.__class__}'.format(o)", profile=tpl,
                                                           names={"o": 1}))
        agent = profiles.profile("agent")
        src = ("totals = {}\nfor r in rows:\n    totals[r['region']] = totals.get(r['region'], 0) + r['amount']\n"
               "sorted(totals.items())")
        self.assertEqual(evalguard.guarded_eval(src, profile=agent, names={"rows": rows}),
                         [("EU", 120.0), ("US", 80.0)])
        self.assertRejected(lambda: evalguard.guarded_eval("import os", profile=agent))
        self.assertInterrupted(lambda: evalguard.guarded_eval("def f(n): return f(n+1)\nf(0)", profile=agent),
                               "eval-max-call-depth=15")
        for name in profiles.READY_MADE:
            self.assertEqual(profiles.profile(name).name, name)


class GuardedEval(support.GuardTest):
    def test_names_are_data_and_callables_need_no_eval_call(self):
        self.configure("eval-syntax=arith")
        self.assertEqual(evalguard.guarded_eval("f(2) + x", names={"f": lambda v: v * 10, "x": 1}), 21)
        with self.assertRaises(ValueError):
            evalguard.guarded_eval("1", names={"__builtins__": builtins})
        with self.assertRaises(ValueError):
            evalguard.guarded_eval("1", names={"__sb_tick__": None})

    def test_statements_return_the_last_expression(self):
        self.configure("eval-syntax=assign, arith")
        self.assertEqual(evalguard.guarded_eval("a = 2\nb = a * 3\nb + 1"), 7)
        self.assertIsNone(evalguard.guarded_eval("a = 2"))

    def test_returned_functions_keep_a_budget(self):
        self.configure("eval-syntax=func, loop, arith, assign", "eval-max-iterations=1000", "eval-call=range")
        g = evalguard.guarded_eval("def g(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\ng")
        self.assertEqual(g(10), 45)
        self.assertEqual(g(10), 45, "each outermost call gets a fresh budget")
        with self.assertRaises(exceptions.EvalInterrupted):
            g(5000)
        self.assertEqual(g(3), 3)


class Compile(support.GuardTest):
    def test_compile_exec_eval(self):
        self.install(syntax=["arith", "assign"])
        code = compile("x = 40 + 2", "script.py", "exec")
        self.assertTrue(code.co_filename.startswith("<"), "never passes for a file")
        g = {}
        exec(code, g)
        self.assertEqual(g["x"], 42)
        self.assertEqual(eval(compile("6 * 7", "<calc>", "eval")), 42)
        self.assertRejected(lambda: compile("import os", "x", "exec"), "'Import' is not allowed")
        tree = compile("1 + 1", "x", "eval", ast.PyCF_ONLY_AST)
        self.assertIsInstance(tree, ast.Expression)
        self.assertEqual(eval(compile(tree, "x", "eval")), 2)
        self.assertRejected(lambda: compile(ast.parse("import os"), "x", "exec"))

    def test_foreign_code_objects_are_refused(self):
        self.install(syntax=["arith"])
        foreign = runtime._ORIGINALS["compile"]("(1).real + 1", "x", "eval")
        self.assertDenied(lambda: eval(foreign), "code object")
        self.assertDenied(lambda: exec((lambda: 0).__code__), "code object")


class Report(support.GuardTest):
    def test_every_violation_with_caret_and_rule(self):
        self.install()
        src = "x = 1\nwhile True:\n    import os\n    y = x.__class__\n"
        e = self.assertRejected(lambda: exec(src))
        text = str(e)
        self.assertTrue(text.startswith("6 rules violated in <eval>"), text)
        self.assertIn("  line 2, col 0: 'While' is not allowed\n      while True:\n      ^^^^^^^^^^^", text)
        self.assertIn("add: eval-syntax=loop        (or, narrower: eval-syntax=While)", text)
        self.assertIn("import 'os' is not allowed", text)
        self.assertIn("add: eval-import=os    ⚠ os exposes the process environment", text)
        self.assertIn("add: eval-magic=__class__    ⚠ opens the whole type hierarchy", text)
        self.assertEqual(len(e.violations), 6)
        self.assertIn("add: eval-syntax=import        (or, narrower: eval-syntax=Import, alias)", text)
        self.assertEqual((e.lineno, e.offset, e.text), (1, 1, "x = 1"))
        self.assertIsInstance(e, SyntaxError)
        self.assertIsInstance(e, exceptions.SandBoxError)

    def test_non_learnable_refusals_name_no_rule(self):
        self.install(syntax=["comprehension"])
        text = str(self.assertRejected(lambda: eval("(i for i in ()).gi_frame")))
        self.assertIn("no rule: frame capture is always refused", text)


class Exceptions(support.GuardTest):
    def test_private_fallback_classes_follow_the_reference(self):
        from pysandboxes.evalguard import _exc
        fb = _exc._fallbacks()
        self.assertTrue(issubclass(fb["SandBoxError"], RuntimeError))
        self.assertTrue(issubclass(fb["RuleEvalPermissionError"], PermissionError))
        self.assertTrue(issubclass(fb["RuleEvalPermissionError"], fb["SandBoxError"]))
        self.assertTrue(issubclass(fb["EvalSyntaxRejected"], SyntaxError))
        self.assertTrue(issubclass(fb["EvalSyntaxRejected"], fb["SandBoxError"]))
        self.assertFalse(issubclass(fb["EvalInterrupted"], Exception))
        self.assertEqual(str(fb["EvalInterrupted"]("eval-timeout=2s")), "evaluation interrupted: eval-timeout=2s")
        self.assertEqual(fb["EvalInterrupted"]("eval-timeout=2s").reason, "eval-timeout=2s")
        self.assertIn("(category: dynamic-code)", str(fb["RuleApiPermissionError"]("builtins.eval", "dynamic-code")))

    def test_eval_interrupted_is_base_exception_only(self):
        self.assertTrue(issubclass(exceptions.EvalInterrupted, BaseException))
        self.assertFalse(issubclass(exceptions.EvalInterrupted, Exception))
        self.assertFalse(issubclass(exceptions.EvalInterrupted, exceptions.SandBoxError))
        self.install(syntax=["loop", "exception"], call=["Exception", "BaseException"], max_iterations=1000)
        for handler in ("Exception", "BaseException", ""):
            with self.subTest(handler=handler):
                src = f"while True:\n    try:\n        while True:\n            pass\n    except {handler}:\n        pass"
                try:
                    try:
                        exec(src.replace("except :", "except:"))
                    except exceptions.SandBoxError:
                        self.fail("a SandBoxError handler caught the interruption")
                    except Exception:
                        self.fail("an Exception handler caught the interruption")
                except exceptions.EvalInterrupted as e:
                    self.assertEqual(e.reason, "eval-max-iterations=1000")


if __name__ == "__main__":
    unittest.main()

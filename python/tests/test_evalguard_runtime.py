"""Run-time helpers: budgets, allocation checks, shims, the worker thread and
its leak accounting, functions called after their evaluation."""
from __future__ import annotations

import contextvars
import threading
import time
import unittest

from evalguard_corpus import support
from pysandboxes import evalguard
from pysandboxes.evalguard import runner


def wait_until(predicate, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


class Budgets(support.GuardTest):
    def test_iterations_are_counted_exactly(self):
        self.configure("eval-syntax=loop", "eval-call=range", "eval-max-iterations=10")
        evalguard.guarded_eval("for i in range(10):\n    pass")
        self.configure("eval-syntax=loop", "eval-call=range", "eval-max-iterations=9")
        self.assertInterrupted(lambda: evalguard.guarded_eval("for i in range(10):\n    pass"),
                               "eval-max-iterations=9")
        self.configure("eval-syntax=comprehension", "eval-call=range", "eval-max-iterations=5")
        self.assertEqual(evalguard.guarded_eval("[i for i in range(5)]"), [0, 1, 2, 3, 4])
        self.assertInterrupted(lambda: evalguard.guarded_eval("[i for i in range(6)]"))

    def test_call_depth_is_counted_exactly(self):
        self.configure("eval-syntax=func, arith, conditional, compare", "eval-max-call-depth=3")
        src = "def f(n):\n    return 0 if n == 0 else f(n - 1)\nf({})"
        self.assertEqual(evalguard.guarded_eval(src.format(2)), 0)
        self.assertInterrupted(lambda: evalguard.guarded_eval(src.format(3)), "eval-max-call-depth=3")

    def test_allocation_boundaries(self):
        self.configure("eval-syntax=arith", "eval-max-alloc=100")
        self.assertEqual(len(evalguard.guarded_eval("'a' * n", names={"n": 100})), 100)
        self.assertDenied(lambda: evalguard.guarded_eval("'a' * n", names={"n": 101}),
                          "It would allocate about 101 bytes, more than eval-max-alloc=100")
        self.assertEqual(evalguard.guarded_eval("2 ** 790"), 2 ** 790)
        self.assertDenied(lambda: evalguard.guarded_eval("2 ** 900"))
        self.assertDenied(lambda: evalguard.guarded_eval("[0] * n", names={"n": 13}), "104 bytes")
        self.assertEqual(evalguard.guarded_eval("x * 3.0", names={"x": 2}), 6.0)
        self.assertEqual(evalguard.guarded_eval("'%5d' % 3"), "    3")
        self.assertDenied(lambda: evalguard.guarded_eval("'%500d' % 3"))

    def test_constant_folding_keeps_the_checks(self):
        self.configure("eval-syntax=arith")
        from pysandboxes.evalguard import engine
        code = engine.compile_source("(3 + 4) * 2", "eval", engine.state.profiles[""], False).code
        self.assertEqual(code.co_names, (), "folded: no helper call at run time")
        self.assertDenied(lambda: evalguard.guarded_eval("10 ** 10**9"))

    def test_big_integer_cost_is_checked_before_computing(self):
        self.configure("eval-syntax=arith", "eval-timeout=300ms")

        def attempt():
            t0 = time.monotonic()
            self.assertInterrupted(lambda: evalguard.guarded_eval("10 ** 10**7"), "eval-timeout=300ms")
            return time.monotonic() - t0
        self.assertTimely(attempt, 1.3)
        self.assertEqual(evalguard.guarded_eval("(10 ** 100) // 7 % 10"), (10 ** 100) // 7 % 10)

    def test_interruption_is_sticky(self):
        self.configure("eval-syntax=func, loop, exception", "eval-call=BaseException",
                       "eval-max-iterations=100")
        src = "def f():\n    try:\n        while True:\n            pass\n    finally:\n        return 1\nf()"
        self.assertInterrupted(lambda: evalguard.guarded_eval(src), "eval-max-iterations=100")
        src = "try:\n    while True:\n        pass\nexcept BaseException as e:\n    pass"
        self.assertInterrupted(lambda: evalguard.guarded_eval(src))

    def test_ordinary_exceptions_are_still_caught(self):
        self.configure("eval-syntax=exception, arith, assign", "eval-call=ZeroDivisionError")
        self.assertEqual(evalguard.guarded_eval("try:\n    r = 1 / 0\nexcept ZeroDivisionError:\n    r = 2\nr"), 2)
        with self.assertRaises(ZeroDivisionError):
            evalguard.guarded_eval("1 / 0")


class Shims(support.GuardTest):
    def test_type_range_bytes_keep_behaving_like_classes(self):
        self.configure("eval-syntax=subscript, class, arith", "eval-call=type, range, bytes, isinstance, len, list, int",
                       "eval-attribute=fromhex")
        self.assertIs(evalguard.guarded_eval("type(3)"), int)
        self.assertTrue(evalguard.guarded_eval("isinstance(int, type)"))
        self.assertTrue(evalguard.guarded_eval("isinstance(range(10**9), range)"))
        self.assertTrue(evalguard.guarded_eval("isinstance(b'x', bytes)"))
        self.assertEqual(evalguard.guarded_eval("bytes.fromhex('4142')"), b"AB")
        self.assertEqual(evalguard.guarded_eval("class B(bytes):\n    pass\nB(b'ab')"), b"ab")
        r = evalguard.guarded_eval("range(10**9)")
        self.assertEqual(evalguard.guarded_eval("len(r)", names={"r": r}), 10**9)
        self.assertEqual(evalguard.guarded_eval("(r[5], r[-1], r[2:5][0])", names={"r": r}), (5, 10**9 - 1, 2))
        self.assertEqual(evalguard.guarded_eval("list(range(3))"), [0, 1, 2])
        self.assertEqual(list(reversed(evalguard.guarded_eval("range(10**4, 10**4 + 5000)")))[0], 10**4 + 4999)
        self.assertTrue(5 in r)
        self.assertEqual(r, range(10**9))

    def test_dir_vars_hasattr(self):
        class O:
            def __init__(self):
                self.a, self.b = 1, 2
        self.configure("eval-call=dir, vars, hasattr", "eval-attribute=a")
        names = evalguard.guarded_eval("dir(o)", names={"o": O()})
        self.assertIn("a", names)
        self.assertNotIn("b", names)
        self.assertNotIn("__class__", names)
        self.assertTrue(evalguard.guarded_eval("hasattr(o, 'a')", names={"o": O()}))
        self.assertDenied(lambda: evalguard.guarded_eval("hasattr(o, 'b')", names={"o": O()}))
        self.assertDenied(lambda: evalguard.guarded_eval("vars(o)", names={"o": O()}), "eval-magic=__dict__")
        self.configure("eval-call=vars", "eval-magic=__dict__")
        self.assertEqual(evalguard.guarded_eval("vars(o)", names={"o": O()}), {"a": 1, "b": 2})

    def test_imports_go_through_eval_import(self):
        self.configure("eval-syntax=import, arith", "eval-import=math", "eval-attribute=sqrt")
        self.assertEqual(evalguard.guarded_eval("import math\nmath.sqrt(16)"), 4.0)
        self.assertEqual(evalguard.guarded_eval("from math import sqrt\nsqrt(9)"), 3.0)
        self.assertRejected(lambda: evalguard.guarded_eval("import json"), "eval-import=json")
        self.configure("eval-syntax=import", "eval-call=__import__", "eval-import=math")
        self.assertDenied(lambda: evalguard.guarded_eval("__import__('json')"), "eval-import=json")

    def test_a_first_import_inside_an_evaluation_runs_the_module(self):
        import sys
        self.install(syntax=["import", "arith"], imports=["colorsys"], attribute=["rgb_to_hls"])
        sys.modules.pop("colorsys", None)  # importlib executes its code: exempt even inside an evaluation
        self.assertEqual(evalguard.guarded_eval("import colorsys\ncolorsys.rgb_to_hls(1, 0, 0)"), (0.0, 0.5, 1.0))

    def test_format_checks_let_ordinary_formatting_through(self):
        self.configure("eval-syntax=fstring", "eval-call=format", "eval-attribute=format")
        self.assertEqual(evalguard.guarded_eval("f'{x:.2f}|{x!r:>6}'", names={"x": 3.14159}), "3.14|3.14159")
        self.assertEqual(evalguard.guarded_eval("format(5, '03d')"), "005")
        self.assertEqual(evalguard.guarded_eval("'{:>{}}'.format(1, 3)"), "  1")


class Threads(support.GuardTest):
    def test_worker_thread_and_context(self):
        var = contextvars.ContextVar("v")
        var.set("caller")
        self.configure("eval-timeout=2s", threads=True)
        ident = evalguard.guarded_eval("tid()", names={"tid": threading.get_ident})
        self.assertNotEqual(ident, threading.get_ident())
        self.assertEqual(evalguard.guarded_eval("get()", names={"get": var.get}), "caller")
        self.configure("eval-timeout=2s", threads=False)
        self.assertEqual(evalguard.guarded_eval("tid()", names={"tid": threading.get_ident}), threading.get_ident())

    def test_blocked_worker_is_abandoned_and_counted(self):
        self.configure("eval-timeout=200ms", "eval-max-leaked-threads=0", threads=True)
        release = threading.Event()

        def attempt():
            nonlocal release
            if runner.leaked_threads():  # an earlier try's worker: let it end
                release.set()
                self.assertTrue(wait_until(lambda: runner.leaked_threads() == 0))
                release = threading.Event()
            t0 = time.monotonic()
            self.assertInterrupted(lambda: evalguard.guarded_eval("wait(5)", names={"wait": release.wait}),
                                   "eval-timeout=200ms")
            return time.monotonic() - t0
        self.assertTimely(attempt, 1.2)
        self.assertEqual(runner.leaked_threads(), 1)
        self.assertInterrupted(lambda: evalguard.guarded_eval("1"), "eval-max-leaked-threads=0")
        release.set()
        self.assertTrue(wait_until(lambda: runner.leaked_threads() == 0), "a worker that ends is uncounted")
        self.assertEqual(evalguard.guarded_eval("1"), 1)

    def test_fork_child_gets_a_fresh_pool(self):
        import os
        import warnings
        self.configure("eval-syntax=arith", "eval-timeout=2s", threads=True)
        self.assertEqual(evalguard.guarded_eval("x + 1", names={"x": 1}), 2)  # a worker now waits in the pool
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a process with threads
            pid = os.fork()
        if pid == 0:
            try:
                ok = evalguard.guarded_eval("x + 1", names={"x": 1}) == 2
            except BaseException:
                ok = False
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)

    def test_refused_threads_fall_back_to_inline(self):
        self.configure("eval-syntax=loop", "eval-timeout=300ms", "eval-max-iterations=10_000_000_000", threads=True)
        real = runner._thread.start_new_thread

        def refuse(*a, **k):
            raise RuntimeError("can't start new thread")
        with runner._pool_lock:
            idle, runner._idle[:] = list(runner._idle), []
        runner._thread.start_new_thread = refuse
        try:
            self.assertEqual(evalguard.guarded_eval("tid()", names={"tid": threading.get_ident}),
                             threading.get_ident())
            self.assertFalse(runner.threads_enabled)

            def attempt():
                t0 = time.monotonic()
                self.assertInterrupted(lambda: evalguard.guarded_eval("while True:\n    pass"), "eval-timeout=300ms")
                return time.monotonic() - t0
            self.assertTimely(attempt, 1.3)
        finally:
            runner._thread.start_new_thread = real
            runner._idle.extend(idle)
            runner.threads_enabled = True

    def test_nested_evaluation_shares_the_outer_deadline(self):
        self.install(threads=True, syntax=["comprehension"], call=["iter", "int"], timeout_ms=5000,
                     max_iterations=10**10,
                     named={"outer": {"call": ["eval"], "timeout_ms": 300, "max_iterations": 10**10}})

        def attempt():
            t0 = time.monotonic()
            self.assertInterrupted(lambda: evalguard.guarded_eval("eval('[0 for _ in iter(int, 1)]')",
                                                                  profile="outer"), "eval-timeout=300ms")
            return time.monotonic() - t0
        self.assertTimely(attempt, 1.3)


if __name__ == "__main__":
    unittest.main()

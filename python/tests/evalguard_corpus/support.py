"""Shared helpers of the eval-guard unit tests (python/tests/test_evalguard*.py)."""
from __future__ import annotations

import os
import sys
import unittest

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)

from pysandboxes import evalguard, exceptions  # noqa: E402

DEFAULTS = {"syntax": [], "call": [], "attribute": [], "import": [], "magic": [], "namespace": "adaptive",
            "timeout_ms": 5000, "max_iterations": 1_000_000, "max_call_depth": 20, "max_depth": 20,
            "max_nodes": 5000, "max_alloc": 10_000_000, "max_leaked_threads": 4}


def profile_spec(**fields) -> dict:
    """One profile of the section; `imports` stands for the "import" field
    (a keyword in Python)."""
    spec = dict(DEFAULTS)
    if "imports" in fields:
        fields["import"] = fields.pop("imports")
    unknown = set(fields) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown profile fields {sorted(unknown)}")
    spec.update(fields)
    return spec


def section(present: bool = True, named: dict | None = None, **fields) -> dict:
    """An "eval" section as the supervisor sends it: the default profile from
    fields, named profiles from `named` (name -> fields)."""
    profiles = {"": profile_spec(**fields)}
    for name, f in (named or {}).items():
        profiles[name] = profile_spec(**f)
    return {"present": present, "profiles": profiles}


class GuardTest(unittest.TestCase):
    """Resets the guard (and the builtins) around every test."""

    def setUp(self) -> None:
        evalguard.uninstall()
        self.sent: list[dict] = []

    def tearDown(self) -> None:
        evalguard.uninstall()

    def install(self, mode: str = "enforce", allowed: bool = False, threads: bool = False, **fields) -> None:
        present = fields.pop("present", True)
        named = fields.pop("named", None)
        evalguard.install(section(present, named, **fields), mode=mode, dynamic_code_allowed=allowed,
                          send=self.sent.append, exc=exceptions, threads=threads)

    def configure(self, *lines: str, mode: str = "enforce", threads: bool = True) -> None:
        evalguard.configure(list(lines), mode=mode, threads=threads, send=self.sent.append)

    def assertTimely(self, attempt, bound: float, what: str = "the caller regains control",
                     tries: int = 3) -> None:
        """`attempt()` runs the timed step (asserting its outcome) and returns
        the seconds it took.  A loaded machine (make -j2 check on 2 cores)
        can delay one wake-up past `bound`; a guard that does not give
        control back misses it on every try."""
        took = []
        for _ in range(tries):
            took.append(attempt())
            if took[-1] < bound:
                return
        self.fail(f"{what}: {', '.join(f'{t:.2f}' for t in took)} s, bound {bound} s")

    def assertRejected(self, fn, *fragments: str):
        with self.assertRaises(exceptions.EvalSyntaxRejected) as cm:
            fn()
        for f in fragments:
            self.assertIn(f, str(cm.exception))
        return cm.exception

    def assertDenied(self, fn, *fragments: str):
        with self.assertRaises(exceptions.RuleEvalPermissionError) as cm:
            fn()
        for f in fragments:
            self.assertIn(f, str(cm.exception))
        return cm.exception

    def assertInterrupted(self, fn, reason_prefix: str = ""):
        with self.assertRaises(exceptions.EvalInterrupted) as cm:
            fn()
        self.assertTrue(cm.exception.reason.startswith(reason_prefix), cm.exception.reason)
        return cm.exception

#!/usr/bin/env python3
"""Cost of one guarded evaluation of an allowed arithmetic expression.

    python3 bench/eval_bench.py [--calls N]

Measures, with a warm cache (the source already parsed, checked and
rewritten), guarded_eval("(3 + 4) * 2") under the calculator profile, run
inline (python-sb without thread grants) and in the worker thread, and the
replaced builtins.eval with the same profile; the bare builtin eval is the
reference.  The expression folds to a constant (nothing to run in a worker);
"x * 2 + 1" shows the cost of an expression that reads a name.  The target is < 200 us per call (issue 9).  Prints one line per
case: the median of 5 rounds, in microseconds per call.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from pysandboxes import evalguard, exceptions  # noqa: E402
from pysandboxes.evalguard import profiles, runtime  # noqa: E402

EXPR = "(3 + 4) * 2"
TARGET_US = 200.0


def per_call(fn, calls: int) -> float:
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(rounds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    calc = profiles.profile("calculator")
    results = {}
    orig_eval = runtime._ORIGINALS["eval"]
    results["bare builtin eval"] = per_call(lambda: orig_eval(EXPR), args.calls)

    evalguard.configure(profiles.lines("calculator"), threads=False)
    assert evalguard.guarded_eval(EXPR, profile=calc) == 14
    results["guarded_eval, inline"] = per_call(lambda: evalguard.guarded_eval(EXPR, profile=calc), args.calls)

    evalguard.configure(profiles.lines("calculator"), threads=True)
    evalguard.guarded_eval(EXPR, profile=calc)
    results["guarded_eval, worker thread"] = per_call(lambda: evalguard.guarded_eval(EXPR, profile=calc),
                                                      max(args.calls // 4, 1000))

    results["guarded_eval 'x * 2 + 1', worker"] = per_call(
        lambda: evalguard.guarded_eval("x * 2 + 1", profile=calc, names={"x": 3}), max(args.calls // 4, 1000))
    evalguard.configure(profiles.lines("calculator"), threads=False)
    results["guarded_eval 'x * 2 + 1', inline"] = per_call(
        lambda: evalguard.guarded_eval("x * 2 + 1", profile=calc, names={"x": 3}), args.calls)

    section = {"present": True, "profiles": {"": {"syntax": ["arith", "compare"], "namespace": "closed",
                                                  "max_iterations": 100_000, "timeout_ms": 2000}}}
    evalguard.install(section, mode="enforce", dynamic_code_allowed=False, exc=exceptions)
    try:
        assert eval(EXPR) == 14
        results["builtins.eval replaced, inline"] = per_call(lambda: eval(EXPR), args.calls)
    finally:
        evalguard.uninstall()

    worst = 0.0
    for name, us in results.items():
        print(f"{name:36s} {us:8.2f} us/call")
        if name != "bare builtin eval":
            worst = max(worst, us)
    print(f"target < {TARGET_US:.0f} us/call: {'met' if worst < TARGET_US else 'NOT met'} (worst {worst:.2f})")
    return 0 if worst < TARGET_US else 1


if __name__ == "__main__":
    sys.exit(main())

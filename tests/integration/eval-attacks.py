#!/usr/bin/env python3
"""The attack corpus of the eval guard (python/tests/evalguard_corpus/attacks.py)
through the real binary.

Every attack gets its own named profile in the policy (``eval-<key>:a<N>=``,
the narrowest rules that make it reachable, ``eval-timeout=500ms`` unless it
sets one); one sandboxed program runs them all with
``guarded_eval(source, profile="a<N>")`` and prints, for each, the exception
that stopped it and how long the caller waited.  Each must be refused or
interrupted, and the caller must regain control within eval-timeout + 1 s.
Exits 77 only when ``python-sb --check-config`` says the agent is disabled.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

CORPUS = sbtest.TOP_SRCDIR / "python" / "tests" / "evalguard_corpus" / "attacks.py"

PROGRAM = """\
import builtins, importlib.util, operator, string, sys, time
from pysandboxes.evalguard import guarded_eval

spec = importlib.util.spec_from_file_location("attacks", {corpus!r})
attacks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(attacks)

class O:
    x = 1

def gen():
    yield 1

NAMES = {{
    "obj": lambda: {{"o": O()}},
    "operator": lambda: {{"op": operator}},
    "formatter": lambda: {{"F": string.Formatter()}},
    "gen": lambda: {{"gen": gen()}},
    "width": lambda: {{"w": 999_999_999}},
    "code": lambda: {{"code": (lambda: 0).__code__}},
}}
def run(i, source, names):
    t0 = time.monotonic()
    try:
        if names == "builtins":
            value = eval(source, {{"__builtins__": builtins}})
        else:
            value = guarded_eval(source, profile=f"a{{i}}", names=NAMES[names]() if names else None)
        outcome = "RAN " + repr(value)[:60]
    except BaseException as e:
        outcome = type(e).__name__
    return outcome, time.monotonic() - t0

{timeout_of}
# A loaded machine (make -j2 check on 2 cores, an ASan run beside it) can
# delay one wake-up past the bound, or let an attack the guard refuses run
# into eval-timeout before the refusal: such an attack runs again (at most
# twice) and the shortest time and the last outcome count; a guard that does
# not give control back is slow every time, an escape runs every time.
for i, (name, source, lines, names, expected) in enumerate(attacks.ATTACKS):
    outcome, took = run(i, source, names)
    for _ in range(2):
        timed_out = outcome == "EvalInterrupted" and "EvalInterrupted" not in expected
        if took < timeout_of(lines) + 1.0 and not timed_out:
            break
        outcome, again = run(i, source, names)
        took = min(took, again)
    print(f"{{name}}\\t{{outcome}}\\t{{took:.3f}}", flush=True)
print("DONE", flush=True)
"""


def load_corpus():
    spec = importlib.util.spec_from_file_location("attacks", CORPUS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ATTACKS


def timeout_of(lines) -> float:
    for line in lines:
        key, _, value = line.partition("=")
        if key == "eval-timeout":
            value = value.strip()
            return float(value[:-2]) / 1000 if value.endswith("ms") else float(value.rstrip("s"))
    return 0.5


class EvalAttacks(unittest.TestCase):
    def test_every_attack_is_stopped(self):
        attacks = load_corpus()
        self.assertGreaterEqual(len(attacks), 60)
        rules = ["py-sandbox=true", "os-sandbox=none", "python-import=*", "eval-call=getattr",
                 "eval-timeout=500ms"]
        for i, (_name, _source, lines, _names, _expected) in enumerate(attacks):
            if not any(line.startswith("eval-timeout=") for line in lines):
                lines = list(lines) + ["eval-timeout=500ms"]
            for line in lines:
                key, _, value = line.partition("=")
                rules.append(f"{key}:a{i}={value}")
        with sbtest.Scratch() as s:
            rules.append(f"expose-ro={s.dir}")
            rules.append(f"expose-ro={CORPUS.parent}")
            policy = s.policy("\n".join(rules) + "\n", name="policy")
            check = sbtest.run_sb([f"--pysandboxes-config={policy}", "--check-config"], cwd=s.dir)
            if "py-sandbox=false" in check.stdout:
                sbtest.skip("the in-interpreter agent is disabled (python-sb --check-config)")
            self.assertEqual(check.returncode, 0, check.stderr)
            s.write("prog.py", textwrap.dedent(PROGRAM).format(corpus=str(CORPUS),
                                                               timeout_of=inspect.getsource(timeout_of)))
            r = sbtest.run_sb([f"--pysandboxes-config={policy}", "prog.py"], cwd=s.dir, timeout=300)
        self.assertIn("DONE", r.stdout.splitlines(), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        seen = {}
        for line in r.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) == 3:
                seen[parts[0]] = (parts[1], float(parts[2]))
        for name, _source, lines, _names, expected in attacks:
            with self.subTest(attack=name):
                self.assertIn(name, seen)
                outcome, elapsed = seen[name]
                self.assertIn(outcome, expected, f"{name}: {outcome}")
                self.assertLess(elapsed, timeout_of(lines) + 1.0, f"{name}: the caller waited {elapsed:.2f}s")


if __name__ == "__main__":
    sbtest.main(EvalAttacks)

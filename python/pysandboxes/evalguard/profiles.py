"""Ready-made profiles: starting points to paste into ``.py-sandboxes``.

Ordered from the narrowest to the widest; each is complete (profiles do not
inherit) and sets ``eval-namespace=closed``, the posture for model output.
Narrow them with learning mode against your own corpus.  See
doc/eval-guard.md for what each one accepts and refuses.

>>> from pysandboxes.evalguard import guarded_eval, profiles
>>> guarded_eval("(3 + 4) * 2", profile=profiles.profile("calculator"))
14
"""
from __future__ import annotations

from .rules import Profile, profiles_from_lines

READY_MADE: dict[str, list[str]] = {
    # The model answers "40 + 2"; nothing else should ever run.  No eval-call:
    # __builtins__ stays empty, so no spelling reaches open or __import__.
    "calculator": [
        "eval-namespace=closed",
        "eval-syntax=arith, compare",
        "eval-max-iterations=100_000",
        "eval-timeout=2s",
    ],
    # Metrics over rows the host supplies as plain Python data.
    "rows": [
        "eval-namespace=closed",
        "eval-syntax=arith, compare, comprehension, conditional, subscript",
        "eval-call=len, sum, min, max, abs, round, sorted, any, all, set, list, dict",
        "eval-max-iterations=1_000_000",
        "eval-max-alloc=50MB",
        "eval-timeout=5s",
    ],
    # A DataFrame: eval-attribute carries the weight; DENY the writers and
    # the methods that run arbitrary callables or a second expression engine.
    "dataframe": [
        "eval-namespace=closed",
        "eval-syntax=arith, compare, subscript, conditional",
        "eval-call=len, round, min, max, sum, list",
        "eval-attribute=groupby, agg, mean, median, sum, count, nunique",
        "eval-attribute=min, max, std, describe, head, tail, sort_values",
        "eval-attribute=value_counts, dropna, fillna, columns, shape, loc, iloc",
        "eval-attribute=DENY:to_*, read_*, apply, pipe, eval, query",
        "eval-max-alloc=200MB",
        "eval-timeout=10s",
    ],
    # A boolean over one row: no call, no attribute, no arithmetic.
    "predicate": [
        "eval-namespace=closed",
        "eval-syntax=compare, subscript",
        "eval-max-nodes=200",
        "eval-timeout=1s",
    ],
    # Pricing, scoring, eligibility over named values.
    "rules": [
        "eval-namespace=closed",
        "eval-syntax=arith, compare, conditional",
        "eval-call=min, max, round, abs",
        "eval-max-nodes=500",
        "eval-timeout=1s",
    ],
    # A sentence composed from supplied values, with f-strings.
    "template": [
        "eval-namespace=closed",
        "eval-syntax=fstring, arith, compare, conditional",
        "eval-call=round, len, str, int, float",
        "eval-attribute=upper, lower, title, strip, replace, split, join",
        "eval-timeout=1s",
    ],
    # A few lines of real Python over supplied data: loops, helpers, try.
    "agent": [
        "eval-namespace=closed",
        "eval-syntax=arith, compare, conditional, loop, comprehension",
        "eval-syntax=assign, func, subscript, fstring, exception",
        "eval-call=len, sum, min, max, abs, round, sorted, enumerate, zip, range",
        "eval-call=any, all, list, dict, set, tuple, str, int, float, bool",
        "eval-attribute=str-methods, list-methods, dict-methods",
        "eval-max-iterations=500_000",
        "eval-max-call-depth=15",
        "eval-max-nodes=2_000",
        "eval-max-alloc=20MB",
        "eval-timeout=10s",
    ],
}

CALCULATOR = "calculator"


def lines(name: str, profile_name: str | None = None) -> list[str]:
    """The rule lines of a ready-made profile, as a named profile
    (``eval-syntax:<profile_name>=…``) when profile_name is given."""
    out = []
    for line in READY_MADE[name]:
        if profile_name:
            key, eq, value = line.partition("=")
            line = f"{key}:{profile_name}{eq}{value}"
        out.append(line)
    return out


_built: dict[str, Profile] = {}


def profile(name: str) -> Profile:
    """A ready-made profile as a Profile object (for guarded_eval(profile=...)),
    built once."""
    p = _built.get(name)
    if p is None:
        profiles, errors, _warnings = profiles_from_lines(lines(name, name), f"<ready-made {name}>")
        if errors:  # the table above is wrong: a bug, never a user error
            raise RuntimeError("; ".join(errors))
        p = _built[name] = profiles[name]
    return p

"""What every part of the guard needs and the install path must load cheaply:
the original builtins and the evaluation running on each thread.

Kept free of heavy imports (``ast`` and its dependencies load with the
engine, on the first guarded evaluation) so that a program which never
evaluates a string pays almost nothing at start-up.
"""
from __future__ import annotations

import builtins as _b

import _thread

from .. import guards as _guards

_BUILTIN_FN = type(len)


def _unwrap(name: str, value, depth: int = 0):
    """The C builtin behind a wrapper another guard installed first (it is
    kept in the wrapper's closure)."""
    if type(value) is _BUILTIN_FN or depth > 3:
        return value
    for cell in getattr(value, "__closure__", None) or ():
        try:
            inner = cell.cell_contents
        except ValueError:
            continue
        if callable(inner) and getattr(inner, "__name__", "") == name:
            found = _unwrap(name, inner, depth + 1)
            if type(found) is _BUILTIN_FN:
                return found
    return value


# Learning loads this package on the program's first evaluation (the doors
# of _bootstrap.py), when the program may have replaced builtins: the agent
# kept them as they were before the program ran.
ORIGINALS = dict(_guards.builtins_at_start or _b.__dict__)
for _name in ("eval", "exec", "compile", "getattr", "__import__"):
    ORIGINALS[_name] = _unwrap(_name, ORIGINALS[_name])
    if type(ORIGINALS[_name]) is not _BUILTIN_FN:
        raise ImportError(f"builtins.{_name} was replaced before the eval guard could keep the original")

_tls = _thread._local()


def current():
    """The evaluation running on this thread, or None."""
    stack = getattr(_tls, "stack", None)
    return stack[-1] if stack else None


def stack() -> list:
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s

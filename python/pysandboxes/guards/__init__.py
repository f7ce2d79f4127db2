"""The agent's guards: imports, the python-api registry, DNS names, refusals.

The package itself holds what every guard needs (it is loaded with the first
of them): where a piece of code comes from, the application, the standard
library, an installed third-party package, or the agent itself.

Guards use it for the exemptions of doc/agent-protocol.md ("Who is judged"):
the standard library may read frames for logging or typing, and compiles and
executes code to build namedtuples and dataclasses, on the application's
behalf.  Classification is by file name, cached; it is a convenience, not a
boundary (code objects can carry any file name).
"""
from __future__ import annotations

import os
import sys

import _thread

APP, STDLIB, THIRD_PARTY, AGENT = 0, 1, 2, 3

# co_flags bits of __future__ features (PyCF_MASK): what a string given to
# eval/exec/compile inherits from the code that passes it.
FUTURE_MASK = 0x1FE0000

_AGENT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIR = os.path.dirname(os.__file__) + os.sep
_cache: dict[str, int] = {}
_tls = _thread._local()


def classify(filename: str) -> int:
    kind = _cache.get(filename)
    if kind is not None:
        return kind
    if filename.startswith(_AGENT_DIR):
        kind = AGENT
    elif filename.startswith("<frozen "):
        kind = STDLIB
    elif "/site-packages/" in filename or "/dist-packages/" in filename:
        kind = THIRD_PARTY
    elif filename.startswith(_STDLIB_DIR):
        kind = STDLIB
    else:
        kind = APP
    if len(_cache) < 65536:
        _cache[filename] = kind
    return kind


def busy() -> bool:
    """True while this thread is inside frame_at(): the sys._getframe audit
    event that call raises is the agent's own and must not be judged."""
    return getattr(_tls, "busy", False)


def frame_at(depth: int):
    """The frame `depth` levels above the caller of frame_at (1 = its caller's
    caller), or None when the stack is shorter."""
    _tls.busy = True
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None
    finally:
        _tls.busy = False


def with_futures(source, mode: str, frame, compile_fn):
    """A source string compiled (by compile_fn, the original builtin) with
    the __future__ flags of `frame`, as eval/exec would have compiled it
    there; other sources unchanged.  For the API guard's wrappers and the
    eval guard's unguarded path alike."""
    if frame is None or not isinstance(source, (str, bytes, bytearray)):
        return source
    flags = frame.f_code.co_flags & FUTURE_MASK
    if not flags:
        return source
    if mode == "eval":
        source = source.lstrip(" \t" if isinstance(source, str) else b" \t")
    return compile_fn(source, "<string>", mode, flags, True)

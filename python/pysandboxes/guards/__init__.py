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

# The builtins when the agent installed its guards, for an eval guard that
# loads later (learning's doors, _bootstrap.py).
builtins_at_start: "dict | None" = None


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


# -- call sites the eval guard lets through ----------------------------------
# (here rather than in evalguard.hooks: learning's doors, _bootstrap.py, test
# them before the eval guard is loaded)

def _stdlib_dirs() -> tuple:
    dirs = {_STDLIB_DIR}
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        for lib in ("lib", "lib64"):
            dirs.add(os.path.join(prefix, lib, f"python{sys.version_info[0]}.{sys.version_info[1]}") + os.sep)
    return tuple(sorted(dirs))


STDLIB_DIRS = _stdlib_dirs()
_library_cache: dict[str, bool] = {}


def main_package() -> str:
    """The top-level package of ``python -m pkg.mod`` (an application installed
    into site-packages is still the application)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None) or ""
    return name.partition(".")[0]


def library_file(filename: str) -> bool:
    """True for code of the standard library, an installed package (other
    than the one ``-m`` runs), or this package."""
    v = _library_cache.get(filename)
    if v is None:
        for marker in ("/site-packages/", "/dist-packages/"):
            if marker in filename:
                top = filename.rpartition(marker)[2].partition("/")[0]
                main = main_package()
                return not main or top not in (main, main + ".py")
        v = (filename.startswith(_AGENT_DIR) or filename.startswith("<frozen ")
             or filename.startswith(STDLIB_DIRS))
        if len(_library_cache) < 65536:
            _library_cache[filename] = v
    return v


def import_machinery(filename: str) -> bool:
    return filename.startswith(("<frozen importlib.", "<frozen zipimport")) or \
        any(filename.startswith(d + "importlib" + os.sep) for d in STDLIB_DIRS)


def run_plain(fn, mode: str, source, g, loc, frame, compile_fn, closure=None):
    """The builtin eval or exec (`fn`) of `source` as if `frame` had called
    it: the caller's globals and locals where none are given, its
    __future__ flags (compile_fn: the original compile)."""
    if g is None and frame is not None:
        g = frame.f_globals
        if loc is None:
            loc = frame.f_locals
            if type(loc) is not dict:
                loc = dict(loc)  # 3.13+: the builtin sees a snapshot, not the write-through proxy
    source = with_futures(source, mode, frame, compile_fn)
    if closure is not None:  # before 3.11 the builtin refuses it, as it should
        return fn(source, g, loc, closure=closure)
    return fn(source, g, loc)

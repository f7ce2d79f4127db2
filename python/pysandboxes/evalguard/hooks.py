"""``builtins.eval``, ``exec`` and ``compile`` as the program sees them.

Three states (reference §7):

* no ``eval-*`` rule and no ``python-api=ALLOW:dynamic-code``: refused with
  RuleApiPermissionError (category ``dynamic-code``); audit mode reports and
  lets the call run; learn mode runs it guarded with an empty profile, so
  that the learned file gets ``eval-*`` lines rather than the escape hatch;
* at least one ``eval-*`` rule: guarded (engine.py);
* ``ALLOW:dynamic-code``: nothing is installed (combined with ``eval-*``
  rules, a configuration error).

Call sites in the standard library, in ``site-packages`` / ``dist-packages``
(but not in the package ``python -m`` runs) and in this package are exempt (``dataclasses``, ``namedtuple``, ``typing``,
``runpy``, ``importlib`` generate code on the program's behalf) -- unless a
guarded evaluation is running on the thread: what the evaluated code
triggers stays under its profile (the import machinery excepted).  The exemption is by file name: a library
evaluating a string the program hands it (``timeit``, ``typing`` forward
references) is exempt too.
"""
from __future__ import annotations

import builtins
import sys

from ..guards import FUTURE_MASK, import_machinery, library_file, run_plain
from . import _base, _exc
from .config import state

_orig_eval = _base.ORIGINALS["eval"]
_orig_exec = _base.ORIGINALS["exec"]
_orig_compile = _base.ORIGINALS["compile"]


def _engine():
    # Loaded on the first guarded call, not at start-up (ast and its
    # dependencies).  Importing pysandboxes.* is never judged by the import
    # guard, nor are the standard modules the engine imports at its top level.
    from . import engine
    return engine

def _exempt(frame) -> bool:
    if frame is None:
        return False
    filename = frame.f_code.co_filename
    if _base.current() is not None:
        # Inside a guarded evaluation only the import machinery is exempt (it
        # runs module code the import rules let load); a library evaluating a
        # string on the evaluated code's behalf is judged like the evaluated code.
        return import_machinery(filename)
    return library_file(filename)


def _caller(depth: int = 2):
    try:
        return sys._getframe(depth)
    except ValueError:
        return None


def _plain(kind: str, source, g, l, frame, closure=None):
    return run_plain(_orig_eval if kind == "eval" else _orig_exec, kind, source, g, l, frame, _orig_compile, closure)


def _refused(qual: str, frame) -> bool:
    """State 1 (no eval-* rule): True when the call must run as the builtin
    (audit), raise when enforcing; False when learning (run guarded)."""
    st = state
    if st.mode == "enforce":
        st.reporter.api(qual, "denied", frame)
        raise _exc.api_denied(qual, "dynamic-code")
    if st.mode == "audit":
        st.reporter.api(qual, "would-deny", frame)
        return True
    return False


# The doors, given the caller's frame: the builtins below, and learning's
# doors that load this module on first use (_bootstrap.py), call these.

def eval_from(frame, source, globals=None, locals=None):
    if _exempt(frame):
        return _plain("eval", source, globals, locals, frame)
    if not state.present and _refused("builtins.eval", frame):
        return _plain("eval", source, globals, locals, frame)
    return _engine().evaluate("eval", source, globals, locals, frame)


def exec_from(frame, source, globals=None, locals=None, closure=None):
    if _exempt(frame):
        return _plain("exec", source, globals, locals, frame, closure)
    if not state.present and _refused("builtins.exec", frame):
        return _plain("exec", source, globals, locals, frame, closure)
    return _engine().evaluate("exec", source, globals, locals, frame, closure=closure)


def compile_from(frame, source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):
    if not dont_inherit and frame is not None:
        flags |= frame.f_code.co_flags & FUTURE_MASK
    if _exempt(frame) or (not state.present and _refused("builtins.compile", frame)):
        return _orig_compile(source, filename, mode, flags, True, optimize, **kwargs)
    return _engine().guarded_compile(source, filename, mode, flags, frame, optimize)


def eval(source, globals=None, locals=None):  # noqa: A001 - stands for the builtin
    return eval_from(_caller(), source, globals, locals)


def compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):  # noqa: A001
    return compile_from(_caller(), source, filename, mode, flags, dont_inherit, optimize, **kwargs)


if sys.version_info >= (3, 11):
    def exec(source, globals=None, locals=None, *, closure=None):  # noqa: A001
        return exec_from(_caller(), source, globals, locals, closure)
else:
    def exec(source, globals=None, locals=None):  # noqa: A001 - no closure= before 3.11
        return exec_from(_caller(), source, globals, locals)


WRAPPERS = {"eval": eval, "exec": exec, "compile": compile}
for _name, _fn in WRAPPERS.items():
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__module__ = "builtins"
    _fn.__doc__ = _base.ORIGINALS[_name].__doc__
    _fn.__sb_qualname__ = "builtins." + _name
state.dynamic = dict(WRAPPERS)


def replace_builtins() -> None:
    for name, fn in WRAPPERS.items():
        setattr(builtins, name, fn)


def restore_builtins() -> None:
    for name in WRAPPERS:
        setattr(builtins, name, _base.ORIGINALS[name])

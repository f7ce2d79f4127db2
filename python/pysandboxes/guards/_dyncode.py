"""Guarded ``eval``, ``exec`` and ``compile`` that behave like the builtins.

A Python wrapper changes two things the builtins take from their *caller's*
frame: the default namespace (``eval(s)`` sees the caller's globals and
locals) and the ``from __future__`` flags strings are compiled with.  These
wrappers take both from the caller explicitly.  This module must itself
never use ``from __future__`` imports: a compile in its frames would inherit
them.
"""
import builtins

from ._where import frame_at

# co_flags bits of __future__ features that compile() inherits (PyCF_MASK).
FUTURE_MASK = 0x1FE0000
_compile = builtins.compile


def _namespace(args, kwargs, frame):
    """(args, kwargs) with the caller's globals/locals filled in where the
    builtin would have used them."""
    g = args[0] if args else kwargs.get("globals")
    if g is not None or frame is None:
        return args, kwargs
    loc = args[1] if len(args) > 1 else kwargs.get("locals")
    if loc is None:
        loc = frame.f_locals
        if type(loc) is not dict:
            loc = dict(loc)  # 3.13+: the builtin sees a snapshot, not the write-through proxy
    kwargs = {k: v for k, v in kwargs.items() if k not in ("globals", "locals")}
    return (frame.f_globals, loc) + tuple(args[2:]), kwargs


def _with_futures(source, mode, frame):
    """Compile a source string with the caller's __future__ flags, as the
    builtin would; other sources are returned unchanged."""
    if frame is None or not isinstance(source, (str, bytes, bytearray)):
        return source
    flags = frame.f_code.co_flags & FUTURE_MASK
    if not flags:
        return source
    if mode == "eval":
        source = source.lstrip(" \t" if isinstance(source, str) else b" \t")
    return _compile(source, "<string>", mode, flags, True)


def make(name, orig, qual, cat, judge):
    """The guarded replacement of builtins.<name>."""
    if name == "compile":
        def compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):
            frame = frame_at(1)
            exc = judge(qual, cat, frame)
            if exc is not None:
                raise exc
            if not dont_inherit and frame is not None:
                flags |= frame.f_code.co_flags & FUTURE_MASK
            return orig(source, filename, mode, flags, True, optimize, **kwargs)
        wrapper = compile
    else:
        mode = "eval" if name == "eval" else "exec"

        def run(source, *args, **kwargs):
            frame = frame_at(1)
            exc = judge(qual, cat, frame)
            if exc is not None:
                raise exc
            args, kwargs = _namespace(args, kwargs, frame)
            return orig(_with_futures(source, mode, frame), *args, **kwargs)
        wrapper = run
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = "builtins"
    wrapper.__doc__ = orig.__doc__
    wrapper.__sb_qualname__ = qual
    return wrapper

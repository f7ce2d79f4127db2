"""The exceptions of py-sandboxes (reference §4.1).

Every rule exception is a :class:`SandBoxError` and also the built-in exception
unaware code already catches: a refused file is a ``FileNotFoundError``, a
refused import a ``ModuleNotFoundError``, a refused call a ``PermissionError``.
"""
from __future__ import annotations

import errno as _errno

__all__ = [
    "SandBoxError", "RuleFileNotFoundError", "RulePermissionError",
    "RuleSocketConnectionRefusedError", "RuleModuleNotFoundError",
    "RuleApiPermissionError", "RuleEvalPermissionError", "EvalSyntaxRejected",
    "EvalInterrupted", "ConfigSyntaxError", "SandBoxProtocolError",
    "SandBoxBaseExceptionError", "RestrictedUnpicklingError", "RuleAttributeError",
    "sandbox_denials",
]


class SandBoxError(RuntimeError):
    """Base of every error raised because a rule refused something."""


class _RuleOSError(SandBoxError):
    """Mixin for the OSError-based rules: the message is the whole text.

    ``errno`` and ``filename`` are set as on the natural exception, but ``str()``
    stays the rule's message (``[Errno 2] ...`` would hide it)."""

    default_errno = 0

    def __init__(self, message: str, filename: str | None = None,
                 errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno if errno is not None else self.default_errno
        self.filename = filename

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()

    def __reduce__(self) -> tuple:
        return type(self)._restore, (self.args, self.errno, self.filename, dict(self.__dict__))

    @classmethod
    def _restore(cls, args: tuple, err: int | None, filename: object, state: dict) -> BaseException:
        e = new_exception(cls, args)
        e.args = args
        e.errno, e.filename = err, filename
        e.__dict__.update(state)
        return e


class RuleFileNotFoundError(_RuleOSError, FileNotFoundError):
    """A path not exposed by ``expose-ro=``/``expose-rw=``, or hidden by ``ignore=``."""

    default_errno = _errno.ENOENT


class RulePermissionError(_RuleOSError, PermissionError):
    """A write to a read-only exposure or to the active rule file."""

    default_errno = _errno.EACCES


class RuleSocketConnectionRefusedError(_RuleOSError, ConnectionRefusedError):
    """A resolution, connect, bind or sendto that no ``net=`` rule allows."""

    default_errno = _errno.ECONNREFUSED


class RuleModuleNotFoundError(ModuleNotFoundError, SandBoxError):
    """An import that ``python-import=`` does not allow."""

    def __init__(self, module: str, *args: object, **kwargs: object) -> None:
        if args or kwargs:  # rebuilt from its own args (pickle, copy)
            super().__init__(module, *args, **kwargs)
            return
        super().__init__(f"Module named '{module}' is not allowed by a rule", name=module)

    def __reduce__(self) -> tuple:
        return type(self), (self.name,)


class RuleApiPermissionError(_RuleOSError, PermissionError):
    """A registered sensitive function that ``python-api=`` does not allow."""

    default_errno = _errno.EPERM

    def __init__(self, qualname: str, category: str = "", *rest: object) -> None:
        if not category:  # rebuilt from its message alone
            super().__init__(qualname)
            self.qualname, self.category = "", ""
            return
        super().__init__(
            f"{qualname}() is denied by the API guard (category: {category}).\n"
            f"Add `python-api=ALLOW:{qualname}` for this function only, "
            f"or `python-api=ALLOW:{category}` for the whole category.")
        self.qualname = qualname
        self.category = category


class RuleEvalPermissionError(_RuleOSError, PermissionError):
    """A runtime refusal inside a guarded ``eval`` (reference §7)."""

    default_errno = _errno.EPERM


class EvalSyntaxRejected(SandBoxError, SyntaxError):
    """Source handed to eval/exec/compile outside the declared sub-language."""


class EvalInterrupted(BaseException):
    """A guarded evaluation ran out of budget or time.

    Deliberately not an ``Exception``: ``except Exception`` in the evaluated
    code must not swallow it."""

    def __init__(self, reason: str = "", *args: object) -> None:
        super().__init__(f"evaluation interrupted: {reason}" if reason and not args else reason, *args)
        self.reason = reason


class ConfigSyntaxError(SandBoxError):
    """The rule files do not parse (``Syntax error in config files.``)."""


class SandBoxProtocolError(SandBoxError):
    """The partial-mode worker did not answer: it died, the stream ended, the call was cancelled."""


class SandBoxBaseExceptionError(SandBoxError):
    """A ``@sandbox`` function raised SystemExit, KeyboardInterrupt or another BaseException."""


class RuleAttributeError(AttributeError, SandBoxError):
    """Reserved (self-protection); never raised today."""


def new_exception(cls: type, args: tuple) -> BaseException:
    """An instance of exception class cls with args, without running its
    __init__ (which may want other arguments than the ones it stored).

    The rule errors derive from two built-in exceptions; the right __new__
    is the first built-in one that accepts cls."""
    for base in cls.__mro__:
        if base.__module__ == "builtins" and "__new__" in base.__dict__:
            try:
                e = base.__new__(cls, *args)
            except TypeError:
                continue
            e.args = tuple(args)
            return e
    raise TypeError(f"cannot create {cls.__qualname__}")


def __getattr__(name: str) -> object:
    # RestrictedUnpicklingError derives from pickle's UnpicklingError; building
    # it lazily keeps `_pickle` out of every sandboxed program's start-up.
    if name == "RestrictedUnpicklingError":
        from _pickle import UnpicklingError

        cls = type("RestrictedUnpicklingError", (UnpicklingError, SandBoxError), {
            "__doc__": "The parent refused a payload returned by a @sandbox function.",
            "__module__": __name__,
        })
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _chain(exc: BaseException) -> list[BaseException]:
    """Every exception reachable from exc (causes, contexts, group members),
    innermost first, each once."""
    order: list[BaseException] = []
    seen = set()
    stack = [(exc, False)]
    while stack:
        e, expanded = stack.pop()
        if expanded:
            order.append(e)
            continue
        if id(e) in seen:
            continue
        seen.add(id(e))
        stack.append((e, True))
        inner = [e.__cause__, e.__context__] + list(getattr(e, "exceptions", None) or ())
        for sub in inner:
            if isinstance(sub, BaseException) and id(sub) not in seen:
                stack.append((sub, False))
    return order


def sandbox_denials(exc: BaseException) -> list[str]:
    """``"<ExcName>: <message>"`` for every SandBoxError in the chain of exc.

    Includes causes, contexts and ExceptionGroup members, innermost first, and
    the denials a partial-mode worker attached to an exception it sent back.
    Tells "a rule refused it" from an outage when a library rewrote the error.
    """
    out: list[str] = []
    for e in _chain(exc):
        for remote in getattr(e, "__sandbox_denials__", None) or ():
            if isinstance(remote, str) and remote not in out:
                out.append(remote)
        if isinstance(e, SandBoxError):
            line = f"{type(e).__name__}: {e}"
            if line not in out:
                out.append(line)
    return out

"""The exceptions the eval guard raises, built with the texts of reference §4.1.

The classes come from the package's ``exceptions`` module (or the module the
agent hands to :func:`pysandboxes.evalguard.install`).  The private fallback
classes below are only used when that module cannot be imported (the guard
copied on its own); they have the same bases and messages.
"""
from __future__ import annotations

import errno as _errno


def _fallbacks() -> dict:
    """Classes with the bases and messages of reference §4.1, for a guard
    running without the package's exceptions module (built on demand)."""
    class SandBoxError(RuntimeError):
        pass

    class RuleApiPermissionError(PermissionError, SandBoxError):
        def __init__(self, qualname: str, category: str = "", *rest: object) -> None:
            if not category:
                super().__init__(qualname)
                self.qualname, self.category = "", ""
                return
            super().__init__(
                f"{qualname}() is denied by the API guard (category: {category}).\n"
                f"Add `python-api=ALLOW:{qualname}` for this function only, "
                f"or `python-api=ALLOW:{category}` for the whole category.")
            self.qualname, self.category = qualname, category

        def __str__(self) -> str:
            return str(self.args[0])

    class RuleEvalPermissionError(PermissionError, SandBoxError):
        def __init__(self, message: str, *rest: object) -> None:
            super().__init__(message)
            self.errno = _errno.EPERM

        def __str__(self) -> str:
            return str(self.args[0])

    class EvalSyntaxRejected(SandBoxError, SyntaxError):
        pass

    class EvalInterrupted(BaseException):
        def __init__(self, reason: str = "", *args: object) -> None:
            super().__init__(f"evaluation interrupted: {reason}" if reason and not args else reason, *args)
            self.reason = reason

    class ConfigSyntaxError(SandBoxError):
        pass

    return {"SandBoxError": SandBoxError, "RuleApiPermissionError": RuleApiPermissionError,
            "RuleEvalPermissionError": RuleEvalPermissionError, "EvalSyntaxRejected": EvalSyntaxRejected,
            "EvalInterrupted": EvalInterrupted, "ConfigSyntaxError": ConfigSyntaxError}


class Classes:
    """The exception classes in use (swapped by install())."""

    def __init__(self, module=None) -> None:
        if module is None:
            try:
                from .. import exceptions as module  # type: ignore[no-redef]
            except ImportError:
                module = None
        names = ("SandBoxError", "RuleApiPermissionError", "RuleEvalPermissionError", "EvalSyntaxRejected",
                 "EvalInterrupted", "ConfigSyntaxError")
        found = {n: getattr(module, n, None) for n in names} if module is not None else {}
        if not all(found.get(n) for n in names):
            fallback = _fallbacks()
            found = {n: found.get(n) or fallback[n] for n in names}
        for n in names:
            setattr(self, n, found[n])


cls = Classes()


def use(module) -> None:
    """Raise the classes of `module` from now on (None: the package's own)."""
    global cls
    cls = Classes(module)


def eval_denied(target: str, key: str, hint: str | None = None) -> BaseException:
    """``'<target>' is denied by the eval guard.`` + the rule to add, or a
    hint when no rule can lift the refusal."""
    remedy = hint or f"Add `{key}={target}` to allow it."
    e = cls.RuleEvalPermissionError(f"{target!r} is denied by the eval guard.\n{remedy}")
    e.target, e.rule_key, e.hint = target, key, hint
    return e


def api_denied(qualname: str, category: str) -> BaseException:
    return cls.RuleApiPermissionError(qualname, category)


def interrupted(reason: str) -> BaseException:
    e = cls.EvalInterrupted(reason)
    e.reason = reason
    return e


def syntax_rejected(headline: str, blocks: list[str], lineno: int, offset: int, text: str,
                    filename: str | None = None) -> BaseException:
    report = headline + "\n\n" + "\n\n".join(blocks)
    e = cls.EvalSyntaxRejected(report)
    # The MRO reaches RuntimeError's initialiser, not SyntaxError's: set the
    # fields tracebacks and editors read by hand.
    e.msg = report
    e.violations = list(blocks)
    e.lineno = lineno
    e.offset = offset
    e.text = text
    e.filename = filename
    return e


def config_error(lines: list[str]) -> BaseException:
    return cls.ConfigSyntaxError("Syntax error in config files.\n" + "\n".join(lines))

"""py-sandboxes: run Python code under a whitelist (``.py-sandboxes``).

Inside ``python-sb`` this package is the in-interpreter agent (loaded before
the program by a private ``sitecustomize``).  In an ordinary program it
offers partial mode: ``with sandboxes(): tool(x)`` runs the functions
decorated with ``@sandbox`` in a worker under ``python-sb``.
"""
from __future__ import annotations

from . import _agent
from .exceptions import (ConfigSyntaxError, EvalInterrupted, EvalSyntaxRejected,
                         RuleApiPermissionError, RuleAttributeError, RuleEvalPermissionError,
                         RuleFileNotFoundError, RuleModuleNotFoundError, RulePermissionError,
                         RuleSocketConnectionRefusedError, SandBoxBaseExceptionError,
                         SandBoxError, SandBoxProtocolError, sandbox_denials)

__version__ = "0.1.0"

__all__ = [
    "sandboxes", "run", "sandbox", "is_in_sandbox", "sandbox_denials",
    "SandBoxError", "RuleFileNotFoundError", "RulePermissionError",
    "RuleSocketConnectionRefusedError", "RuleModuleNotFoundError", "RuleApiPermissionError",
    "RuleEvalPermissionError", "EvalSyntaxRejected", "EvalInterrupted", "ConfigSyntaxError",
    "SandBoxProtocolError", "SandBoxBaseExceptionError", "RestrictedUnpicklingError",
    "RuleAttributeError", "guarded_eval", "SandboxContextWarning",
]


def is_in_sandbox() -> bool:
    """True when this interpreter runs under python-sb (complete mode, or a
    partial-mode worker): ``@sandbox`` functions are then called directly."""
    return _agent.current is not None


def __getattr__(name: str) -> object:
    # Partial mode and the unpickler are not needed by the agent: loading
    # them lazily keeps every sandboxed program's start-up small.
    if name in ("sandboxes", "run", "sandbox"):
        from . import partial

        return getattr(partial, name)
    if name in ("guarded_eval", "SandboxContextWarning"):
        from . import evalguard

        return getattr(evalguard, name)
    if name == "RestrictedUnpicklingError":
        from . import exceptions

        return exceptions.RestrictedUnpicklingError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

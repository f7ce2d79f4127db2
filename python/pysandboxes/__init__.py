"""py-sandboxes: run Python code under a whitelist (``.py-sandboxes``).

Inside ``python-sb`` this package is the in-interpreter agent (loaded before
the program by a private ``sitecustomize``).  In an ordinary program it
offers partial mode: ``with sandboxes(): tool(x)`` runs the functions
decorated with ``@sandbox`` in a worker under ``python-sb``.
"""
from __future__ import annotations

from . import _agent

# The names below load on first use (__getattr__): every sandboxed program
# imports this package before its first line, and needs none of them unless
# it uses them (the guards import `exceptions` when they first refuse).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .evalguard import SandboxContextWarning, guarded_eval
    from .exceptions import (ConfigSyntaxError, EvalInterrupted, EvalSyntaxRejected,
                             RestrictedUnpicklingError, RuleApiPermissionError, RuleAttributeError,
                             RuleEvalPermissionError, RuleFileNotFoundError, RuleModuleNotFoundError,
                             RulePermissionError, RuleSocketConnectionRefusedError,
                             SandBoxBaseExceptionError, SandBoxError, SandBoxProtocolError,
                             sandbox_denials)
    from .partial import run, sandbox, sandboxes

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


_LAZY = {
    "sandboxes": "partial", "run": "partial", "sandbox": "partial",
    "guarded_eval": "evalguard", "SandboxContextWarning": "evalguard",
    "SandBoxError": "exceptions", "RuleFileNotFoundError": "exceptions",
    "RulePermissionError": "exceptions", "RuleSocketConnectionRefusedError": "exceptions",
    "RuleModuleNotFoundError": "exceptions", "RuleApiPermissionError": "exceptions",
    "RuleEvalPermissionError": "exceptions", "EvalSyntaxRejected": "exceptions",
    "EvalInterrupted": "exceptions", "ConfigSyntaxError": "exceptions",
    "SandBoxProtocolError": "exceptions", "SandBoxBaseExceptionError": "exceptions",
    "RestrictedUnpicklingError": "exceptions", "RuleAttributeError": "exceptions",
    "sandbox_denials": "exceptions",
    "exceptions": "exceptions",  # the submodule itself (it used to load with the package)
}


def __getattr__(name: str) -> object:
    # Partial mode, the eval guard, the unpickler and the exceptions are not
    # needed to start the agent: loading them lazily keeps every sandboxed
    # program's start-up small.
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = __import__(f"{__name__}.{where}", None, None, ("__name__",))
    value = module if name == where else getattr(module, name)
    globals()[name] = value
    return value

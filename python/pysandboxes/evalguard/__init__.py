"""The eval guard: strings handed to eval/exec/compile run in a declared
sub-language, under budgets (reference §2.8 and §7; doc/eval-guard.md).

Entry points:

* :func:`install` -- called by the agent with the ``"eval"`` section of the
  rules document; replaces ``builtins.eval/exec/compile``.
* :func:`guarded_eval` -- explicit evaluation in a named profile, with the
  namespace built from ``eval-call`` plus ``names``.
* :func:`configure` -- set profiles without touching the builtins (a program
  using :func:`guarded_eval` outside python-sb, tests).
"""
from __future__ import annotations

import sys

from . import _exc, hooks, rules
from .config import SandboxContextWarning, state
from .learn import Reporter
from .rules import Profile

__all__ = ["install", "uninstall", "configure", "guarded_eval", "config_error", "SandboxContextWarning",
           "Profile", "CONFLICT"]

CONFLICT = "granting dynamic-code turns the eval guard off: it cannot be combined with eval-* rules."
MODES = ("enforce", "learn", "audit")


def config_error(eval_section: dict | None, dynamic_code_allowed: bool) -> str | None:
    """The configuration error install() would raise, as text, or None."""
    section = eval_section or {}
    if section.get("present") and dynamic_code_allowed:
        return CONFLICT
    _profiles, errors, _warnings = rules.profiles_from_section(section)
    return "\n".join(errors) if errors else None


def install(eval_section: dict | None, *, mode: str, dynamic_code_allowed: bool, send=None, exc=None,
            threads: bool = False) -> None:
    """Install the eval guard for this interpreter (the agent calls it once,
    before the program runs).

    eval_section: the ``"eval"`` object of the rules document
        (``{"present": bool, "profiles": {"": {...}, "<name>": {...}}}``).
    mode: "enforce", "learn" or "audit".
    dynamic_code_allowed: ``python-api=ALLOW:dynamic-code`` (eval/exec/compile
        allowed unguarded): nothing is installed.
    send: callable taking one dict, the agent's channel to the supervisor.
    exc: the package's exceptions module (classes of reference §4.1).
    threads: the supervisor lets this interpreter start threads (the policy
        grants ``python-api`` threads): evaluations then run in a worker the
        caller can give up on at the timeout; otherwise they run inline.

    Raises the ConfigSyntaxError of `exc` for an invalid section, or for
    eval rules combined with the dynamic-code grant (:data:`CONFLICT`).
    """
    if exc is not None:
        _exc.use(exc)
    section = eval_section or {}
    present = bool(section.get("present"))
    if present and dynamic_code_allowed:
        raise _exc.config_error([CONFLICT])
    profiles, errors, _warnings = rules.profiles_from_section(section)
    if errors:
        raise _exc.config_error(errors)
    st = state
    if dynamic_code_allowed:
        st.installed = False
        return
    st.profiles = profiles
    st.present = present
    st.mode = mode if mode in MODES else "enforce"
    st.reporter = Reporter(send, st.mode)
    st.threads = bool(threads)
    # The engine (ast...) loads on the first guarded call: a program that never
    # evaluates a string does not pay for it at start-up.
    hooks.replace_builtins()
    st.installed = True


def _refuse_under_agent(what: str) -> None:
    """The rules of a program under python-sb come from its policy file: the
    program may not replace them (that would widen its own sub-language)."""
    agent = sys.modules.get("pysandboxes._agent")
    if agent is not None and getattr(agent, "current", None) is not None:
        raise _exc.cls.SandBoxError(f"evalguard.{what}() is not available under python-sb: "
                                    "the eval rules come from the policy file")


def uninstall() -> None:
    """Give the builtins back and forget the configuration (tests only: the
    agent never uninstalls)."""
    _refuse_under_agent("uninstall")
    hooks.restore_builtins()
    state.reset()
    state.dynamic = dict(hooks.WRAPPERS)
    engine = sys.modules.get(__name__ + ".engine")
    if engine is not None:
        engine._cache.clear()
        engine._graded.clear()
        engine.runner.threads_enabled = True


def configure(lines=None, *, section: dict | None = None, mode: str = "enforce", threads: bool = True,
              send=None) -> dict:
    """Set the profiles guarded_eval() uses, without replacing the builtins.

    lines: ``eval-…=…`` rule lines as written in a ``.py-sandboxes`` file
    (or section: the agent's ``"eval"`` object).  Returns the profiles by
    name; raises ConfigSyntaxError on invalid rules."""
    _refuse_under_agent("configure")
    if section is not None:
        profiles, errors, _warnings = rules.profiles_from_section(section)
    else:
        profiles, errors, _warnings = rules.profiles_from_lines(lines or ())
    if errors:
        raise _exc.config_error(errors)
    st = state
    st.profiles = profiles
    st.present = True
    st.mode = mode if mode in MODES else "enforce"
    st.reporter = Reporter(send, st.mode)
    st.threads = threads
    return profiles


def _profile(profile) -> Profile:
    if profile is None:
        return state.profiles[""]
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, str):
        found = state.profiles.get(profile)
        if found is not None:
            return found
        known = sorted(n for n in state.profiles if n)
        raise _exc.cls.ConfigSyntaxError(
            f"unknown eval profile {profile!r}{rules._suggest(profile, known) if known else ''}: "
            f"declare it with eval-<key>:{profile}=… (known profiles: {known})")
    raise TypeError("profile must be None, a profile name or a Profile")


def guarded_eval(source, profile=None, names=None):
    """Evaluate `source` in a profile's sub-language and return its value.

    The namespace is built from the profile's ``eval-call`` builtins plus
    `names` (data the caller hands over; ``eval-namespace`` does not apply).
    A source that is not an expression runs as statements; the value of its
    last expression statement, if any, is returned.  Unknown profile names
    raise ConfigSyntaxError."""
    try:
        frame = sys._getframe(1)
    except ValueError:
        frame = None
    return hooks._engine().evaluate("guarded", source, None, None, frame, profile=_profile(profile), names=names,
                                    wrapper=True)

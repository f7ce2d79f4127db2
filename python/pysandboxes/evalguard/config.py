"""The guard's configuration for this process (set by install() or
configure()), kept apart from the engine so that installing is cheap."""
from __future__ import annotations

from .learn import Reporter
from .rules import Profile, default_profile


class SandboxContextWarning(UserWarning):
    """A name in a caller-supplied eval() context widens what the evaluated
    code can reach (``eval-namespace=adaptive``)."""


class State:
    """What install() (or configure()) set: one per process."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.profiles: dict[str, Profile] = {"": default_profile()}
        self.present = True           # False: eval/exec/compile are refused as dynamic-code
        self.mode = "enforce"
        self.threads = True
        self.reporter = Reporter(None, "enforce")
        self.installed = False
        self.dynamic: dict = {}       # the guarded eval/exec/compile, for the shims

    @property
    def learning(self) -> bool:
        return self.mode != "enforce"


state = State()

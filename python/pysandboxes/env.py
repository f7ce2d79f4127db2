"""Reads of ``os.environ`` for learning (reference §3, "Env").

``env=`` is enforced by the supervisor when it starts the interpreter; the
agent only tells the learner which variables the program needed:

* a read is ``os.environ[k]``, ``.get(k)``, ``k in os.environ``,
  ``os.getenv(k)`` (and the same on ``os.environb``), present or not;
* a full scan (iteration, ``dict(os.environ)``, ``.copy()``, ``.items()``)
  reads every variable in scan order: those reads are not counted, a read
  of the same variable out of scan order is;
* a variable the program set or removed itself is reported as written, so
  the learner drops it (``load_dotenv()`` must not leak every ``.env`` name).
"""
from __future__ import annotations

import os

import _thread

from . import _agent
from .guards import APP, classify, frame_at

_tls = _thread._local()


class EnvTracker:
    def __init__(self, agent: _agent.Agent) -> None:
        self.agent = agent
        self.written: set = set()
        self.known = frozenset(n for n in agent.rules.get("env_set_by_policy") or () if isinstance(n, str))

    def read(self, key: object) -> None:
        if not self.agent.armed:
            return
        # The scan bookkeeping comes first: skipping a known name before
        # popping it would leave every later fetch of the scan looking like a
        # read out of scan order.
        scan = getattr(_tls, "scan", None)
        if scan and scan[-1] == key:
            scan.pop()  # the value fetch of a full scan, in order
            return
        name = _name(key)
        if name is None or name in self.written or name in self.known:
            return
        self.agent.report("env", name, "would-deny", _app_frame(frame_at(2)), op="read")

    def write(self, key: object) -> None:
        name = _name(key)
        if name is None or name in self.written:
            return
        self.written.add(name)
        if self.agent.armed:
            self.agent.report("env", name, "allowed", op="write")

    @staticmethod
    def scanning(keys: list) -> None:
        # Reversed: the value fetches pop from the end, in scan order.
        _tls.scan = keys[::-1]


def _app_frame(frame):
    """The innermost application frame (the read's place for `# why:`)."""
    f = frame
    while f is not None and classify(f.f_code.co_filename) != APP:
        f = f.f_back
    return f or frame


def _name(key: object) -> str | None:
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        return key.decode("utf-8", "surrogateescape")
    return None


def _tracked_class(base: type, tracker: EnvTracker) -> type:
    """A subclass of os._Environ that reports to tracker (the mapping's own
    state, `_data` and the encoders, is untouched)."""

    class TrackedEnviron(base):  # type: ignore[misc, valid-type]
        def __getitem__(self, key):
            tracker.read(key)
            return base.__getitem__(self, key)

        def __contains__(self, key):
            tracker.read(key)
            try:
                base.__getitem__(self, key)
            except KeyError:
                return False
            return True

        def __iter__(self):
            keys = list(base.__iter__(self))
            tracker.scanning(keys)
            return iter(keys)

        def __setitem__(self, key, value):
            base.__setitem__(self, key, value)
            tracker.write(key)

        def __delitem__(self, key):
            base.__delitem__(self, key)
            tracker.write(key)

        def copy(self):
            keys = list(base.__iter__(self))
            return {k: base.__getitem__(self, k) for k in keys}

    TrackedEnviron.__name__ = TrackedEnviron.__qualname__ = base.__name__
    TrackedEnviron.__module__ = base.__module__
    return TrackedEnviron


def install(agent: _agent.Agent) -> EnvTracker:
    tracker = EnvTracker(agent)
    for mapping in (os.environ, getattr(os, "environb", None)):
        if mapping is not None:
            mapping.__class__ = _tracked_class(type(mapping), tracker)
    return tracker

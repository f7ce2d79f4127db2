"""Refusals of the supervisor as ``Rule...Error`` exceptions.

When the supervisor refuses a file or network call it can leave a note on the
agent channel before it answers (doc/agent-protocol.md, "refusal"): the
thread, the errno, the object and an explanation.  A few common entry points
(``open``, ``os.open``, ``socket.connect``/``bind``) are wrapped: when they fail
with that errno, on that thread, for that very object, the OSError becomes
the matching rule exception with the supervisor's explanation.  Whatever does
not match exactly stays the plain OSError the kernel-level refusal produced.

The wrappers themselves are installed at start-up by ``_bootstrap``; this
module, the conversion, loads when one of them first fails.
"""
from __future__ import annotations

import errno
import os

import _thread

from .. import _agent

ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.EPERM, errno.ECONNREFUSED})


def _rule_error(note: dict, exc: OSError, filename: object) -> OSError:
    from ..exceptions import (RuleFileNotFoundError, RulePermissionError,
                              RuleSocketConnectionRefusedError)

    obj = note.get("object")
    text = note.get("text")
    if not isinstance(text, str) or not text:
        text = exc.strerror or str(exc)
    if obj == "net":
        return RuleSocketConnectionRefusedError(text, None, exc.errno)
    if exc.errno == errno.ENOENT:
        return RuleFileNotFoundError(text, filename, exc.errno)  # type: ignore[arg-type]
    return RulePermissionError(text, filename, exc.errno)  # type: ignore[arg-type]


class Converter:
    def __init__(self, agent: _agent.Agent) -> None:
        self.channel = agent.channel

    def for_path(self, exc: OSError, path: object) -> OSError | None:
        if exc.errno not in ERRNOS or self.channel is None:
            return None
        try:
            want = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        note = self.channel.take_refusal(
            _thread.get_native_id(), exc.errno,
            lambda n: n.get("object") in ("path", "unix", "exec") and n.get("path") == want)
        return _rule_error(note, exc, path) if note else None

    def for_address(self, exc: OSError, address: object) -> OSError | None:
        if isinstance(address, (str, bytes, os.PathLike)):
            return self.for_path(exc, address)  # AF_UNIX
        if exc.errno not in ERRNOS or self.channel is None or not isinstance(address, tuple):
            return None
        if len(address) < 2:
            return None
        host, port = address[0], address[1]
        # A host name was resolved inside connect(): which address the
        # supervisor saw is unknown, so only literal addresses are matched.
        note = self.channel.take_refusal(
            _thread.get_native_id(), exc.errno,
            lambda n: n.get("object") == "net" and n.get("host") == host and n.get("port") == port)
        return _rule_error(note, exc, None) if note else None

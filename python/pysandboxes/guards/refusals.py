"""Refusals of the supervisor as ``Rule...Error`` exceptions.

When the supervisor refuses a file or network call it can leave a note on the
agent channel before it answers (doc/agent-protocol.md, "refusal"): the
thread, the errno, the object and an explanation.  A few common entry points
(``open``, ``os.open``, ``socket.connect``/``bind``) are wrapped: when they fail
with that errno, on that thread, for that very object, the OSError becomes
the matching rule exception with the supervisor's explanation.  Whatever does
not match exactly stays the plain OSError the kernel-level refusal produced.
"""
from __future__ import annotations

import builtins
import errno
import io
import os

import _thread

from .. import _agent
from ..exceptions import (RuleFileNotFoundError, RulePermissionError,
                          RuleSocketConnectionRefusedError)
from .api import _originals
from .imports import Finder

ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.EPERM, errno.ECONNREFUSED})


def _rule_error(note: dict, exc: OSError, filename: object) -> OSError:
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


def _wrap_open(orig, conv: Converter):
    def open(file, *args, **kwargs):
        try:
            return orig(file, *args, **kwargs)
        except OSError as exc:
            if isinstance(file, int):
                raise
            new = conv.for_path(exc, file)
            if new is None:
                raise
            raise new from None
    open.__name__ = open.__qualname__ = orig.__name__
    open.__doc__ = orig.__doc__
    open.__module__ = getattr(orig, "__module__", None)
    _originals[open] = orig
    return open


def _wrap_sock(orig, conv: Converter):
    def method(self, address):
        try:
            return orig(self, address)
        except OSError as exc:
            new = conv.for_address(exc, address)
            if new is None:
                raise
            raise new from None
    method.__name__ = method.__qualname__ = orig.__name__
    method.__doc__ = orig.__doc__
    _originals[method] = orig
    return method


def install(agent: _agent.Agent, finder: Finder) -> None:
    conv = Converter(agent)
    wrapped_open = _wrap_open(builtins.open, conv)
    builtins.open = wrapped_open
    if io.open is not wrapped_open:
        io.open = wrapped_open
    os.open = _wrap_open(os.open, conv)

    def socket_loaded(module) -> None:
        cls = getattr(module, "socket", None)
        if not isinstance(cls, type):
            return
        for name in ("connect", "bind"):
            current = getattr(cls, name, None)
            if current is not None and current not in _originals:
                setattr(cls, name, _wrap_sock(current, conv))

    finder.on_loaded("socket", socket_loaded)

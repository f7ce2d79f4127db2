"""Host names the program resolves, reported with their addresses.

The supervisor sees only addresses; the learner writes ``net=`` rules with the
names the program looked up (reference §3, "Network").  The resolvers of
``_socket`` are wrapped before ``socket`` is imported, so ``socket.getaddrinfo``
(which calls ``_socket.getaddrinfo``) and the functions ``socket`` re-exports
report too.  Results are never changed.
"""
from __future__ import annotations

import _socket

from .. import _agent

_RESOLVERS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex")


def _is_address(host: str) -> bool:
    for family in (_socket.AF_INET, _socket.AF_INET6):
        try:
            _socket.inet_pton(family, host)
            return True
        except (OSError, ValueError):
            pass
    return False


def _addresses(kind: str, result: object) -> list[str]:
    if kind == "getaddrinfo":
        return sorted({ai[4][0] for ai in result if isinstance(ai[4][0], str)})  # type: ignore[union-attr]
    if kind == "gethostbyname":
        return [result] if isinstance(result, str) else []
    return sorted(result[2]) if isinstance(result, tuple) else []


def install(agent: _agent.Agent) -> None:
    seen: set = set()

    def report(kind: str, host: object, result: object) -> None:
        if isinstance(host, (bytes, bytearray)):
            host = bytes(host).decode("ascii", "replace")
        if not isinstance(host, str) or not host or _is_address(host):
            return
        try:
            addrs = _addresses(kind, result)
        except (TypeError, IndexError):
            return
        key = (host, tuple(addrs))
        if key in seen or len(seen) > 4096:
            return
        seen.add(key)
        agent.report("dns", host.lower().rstrip("."), "allowed", addrs=addrs, once=False)

    def wrap(kind: str, orig):
        def resolver(host, *args, **kwargs):
            result = orig(host, *args, **kwargs)
            report(kind, host, result)
            return result
        resolver.__name__ = resolver.__qualname__ = kind
        resolver.__doc__ = orig.__doc__
        resolver.__module__ = "_socket"
        return resolver

    for kind in _RESOLVERS:
        orig = getattr(_socket, kind, None)
        if orig is not None:
            setattr(_socket, kind, wrap(kind, orig))

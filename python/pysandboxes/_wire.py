"""JSON for the agent channel without importing :mod:`json`.

The agent runs before every sandboxed program; importing ``json`` would pull
``re``, ``enum`` and more into ``sys.modules`` (and so exempt them from
``python-import=`` judgement, which only sees modules that load after it) and
cost start-up time.  The C scanner and string encoder of ``_json`` are enough
for the small documents exchanged here.
"""
from __future__ import annotations

try:
    import _json
except ImportError:  # an interpreter built without _json
    _json = None  # type: ignore[assignment]


def _no_constant(name: str) -> object:
    raise ValueError(f"non-standard JSON constant {name}")


class _Context:
    """The attributes _json.make_scanner reads from a JSONDecoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_no_constant)
    memo: dict = {}


_scan = _json.make_scanner(_Context()) if _json is not None else None
_WS = " \t\r\n"


def loads(text: str) -> object:
    """Decode one JSON document (the whole string)."""
    if _scan is None:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(text, start)
    except StopIteration as e:
        raise ValueError(f"invalid JSON at offset {e.value}") from None
    if text[end:].strip(_WS):
        raise ValueError(f"extra data at offset {end}")
    return value


if _json is not None:
    _quote = _json.encode_basestring_ascii
else:  # pragma: no cover
    def _quote(s: str) -> str:
        import json

        return json.dumps(s)


def _encode(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_quote(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(repr(value) if value == value and value not in (float("inf"), -float("inf")) else "null")
    elif isinstance(value, dict):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(_quote(str(k)))
            out.append(":")
            _encode(v, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _encode(v, out)
        out.append("]")
    else:
        out.append(_quote(str(value)))


def dumps(value: object) -> str:
    """Encode as compact JSON (ASCII only, so any byte-safe channel carries it)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)

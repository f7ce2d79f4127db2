"""The agent's side of the channel to the supervisor (doc/agent-protocol.md).

The supervisor hands the interpreter one end of a SOCK_SEQPACKET socket pair.
It first sends the compiled rules (one JSON document, possibly over several
records, ending with a newline); then it may send "refusal" notes.  The agent
sends one JSON object per record: what it learned, what it refused.

Nothing here is a security boundary: the supervisor never trusts these
messages, and the program could forge them.  They feed the log and the learner.

The JSON codec of the channel is here too, without importing :mod:`json`:
the agent runs before every sandboxed program; importing ``json`` would pull
``re``, ``enum`` and more into ``sys.modules`` (and so exempt them from
``python-import=`` judgement, which only sees modules that load after it) and
cost start-up time.  The C scanner and string encoder of ``_json`` are enough
for the small documents exchanged here.
"""
from __future__ import annotations

# The agent has always loaded `__future__`, `_json`, `_socket` and `errno`
# before the program runs, and python-import= does not judge a module
# already loaded: programs, and the rules learned for them, import these
# freely, so they stay loaded here (`errno` although the exceptions that
# used it now load on first use).
import errno  # noqa: F401
import os

import _socket
import _thread

MSG_DONTWAIT = getattr(_socket, "MSG_DONTWAIT", 0x40)
RULES_MAX = 16 << 20        # a rules document larger than this is refused
RECORD_MAX = 256 << 10      # one record from the supervisor
REFUSALS_PER_THREAD = 16    # notes kept per thread while waiting for their OSError
DENIALS_MAX = 10000         # distinct refusal reports sent (a program looping on a refusal)

# First line of the partial-mode worker's command (see _proto.WORKER_COMMAND).
WORKER_MARK = "# pysandboxes-worker\n"


# -- JSON ------------------------------------------------------------------------

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


# -- the channel -----------------------------------------------------------------

class ChannelError(Exception):
    """The channel could not be set up or the rules could not be read."""


class Channel:
    """One end of the socket pair, safe to use from several threads."""

    def __init__(self, fd: int) -> None:
        try:
            self.sock = _socket.socket(fileno=fd)
        except OSError as e:
            raise ChannelError(f"descriptor {fd} is not the agent socket: {e}") from None
        os.set_inheritable(fd, False)  # programs the sandbox starts get no agent channel
        self.lock = _thread.allocate_lock()
        self.rlock = _thread.allocate_lock()
        self.alive = True
        self.refusals: dict[int, list[dict]] = {}

    def after_fork(self) -> None:
        self.lock = _thread.allocate_lock()
        self.rlock = _thread.allocate_lock()
        self.refusals = {}

    def read_rules(self) -> dict:
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                data = self.sock.recv(RECORD_MAX)
            except InterruptedError:
                continue
            except OSError as e:
                raise ChannelError(f"reading the rules: {e}") from None
            if not data:
                raise ChannelError("the supervisor closed the channel before sending the rules")
            chunks.append(data)
            size += len(data)
            if size > RULES_MAX:
                raise ChannelError("rules document too large")
            if data.endswith(b"\n"):
                break
        try:
            rules = loads(b"".join(chunks).decode("utf-8"))
        except ValueError as e:
            raise ChannelError(f"malformed rules: {e}") from None
        if not isinstance(rules, dict) or rules.get("version") != 1:
            raise ChannelError("unsupported rules document (version 1 expected)")
        return rules

    def send(self, msg: dict) -> None:
        if not self.alive:
            return
        data = dumps(msg).encode("ascii")
        with self.lock:
            try:
                self.sock.sendall(data)
            except OSError:
                # The supervisor went away; the program goes on (PDEATHSIG
                # ends it if the supervisor really died).
                self.alive = False

    def _drain(self) -> None:
        """Read every queued refusal note without blocking."""
        while True:
            try:
                data = self.sock.recv(RECORD_MAX, MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.alive = False
                return
            if not data:
                return
            try:
                note = loads(data.decode("utf-8", "replace"))
            except ValueError:
                continue
            if not isinstance(note, dict) or note.get("kind") != "refusal":
                continue
            tid = note.get("tid")
            if not isinstance(tid, int):
                continue
            notes = self.refusals.setdefault(tid, [])
            notes.append(note)
            del notes[:-REFUSALS_PER_THREAD]

    def take_refusal(self, tid: int, err: int, match) -> dict | None:
        """The newest note for thread tid with errno err if match(note) holds.

        The supervisor writes a note before it answers the refused call, so the
        note of the call that just failed is already queued.  Older notes of
        that thread are discarded: they belong to errors nobody converted."""
        with self.rlock:
            self._drain()
            notes = self.refusals.pop(tid, None)
        if not notes:
            return None
        note = notes[-1]
        if note.get("errno") != err or not match(note):
            return None
        return note


class Agent:
    """The running agent: rules, mode, channel, what was already reported."""

    def __init__(self, rules: dict, channel: Channel | None) -> None:
        self.rules = rules
        self.mode = rules.get("mode", "enforce")
        if self.mode not in ("enforce", "learn", "audit"):
            self.mode = "enforce"
        self.channel = channel
        self.armed = False
        self.main_module = ""  # the module of `-m`, once armed
        self.pid = os.getpid()
        self.cwd = os.getcwd() + "/"
        self._reported: set = set()
        self._denials = 0

    @property
    def enforcing(self) -> bool:
        return self.mode == "enforce"

    def arm(self) -> None:
        """Guards judge from now on: the program's own code is about to run."""
        self.armed = True

    def after_fork(self) -> None:
        self.pid = os.getpid()
        if self.channel is not None:
            self.channel.after_fork()

    def location(self, frame) -> str:
        """``file:line in func()`` for a frame, relative to the start directory."""
        if frame is None:
            return ""
        code = frame.f_code
        name = code.co_filename
        if name.startswith(self.cwd):
            name = name[len(self.cwd):]
        return f"{name}:{frame.f_lineno} in {code.co_name}()"

    def report(self, kind: str, name: str, verdict: str, frame=None, once: bool = True, **extra) -> None:
        """Tell the supervisor.  Learned and would-deny facts are sent once per
        name; refusals once per name and place, up to DENIALS_MAX."""
        if self.channel is None:
            return
        where = self.location(frame) if frame is not None and verdict == "denied" else ""
        key = (kind, name, extra.get("op", ""), where)
        if once:
            if key in self._reported:
                return
            if verdict == "denied":
                if self._denials >= DENIALS_MAX:
                    return
                self._denials += 1
            self._reported.add(key)
        if frame is not None and not where:
            where = self.location(frame)
        msg = {"kind": kind, "name": name, "verdict": verdict, "pid": self.pid,
               "tid": _thread.get_native_id()}
        if where:
            msg["pyloc"] = where
        msg.update(extra)
        self.channel.send(msg)


# The agent of this interpreter, or None outside python-sb.
current: Agent | None = None

"""The agent's side of the channel to the supervisor (doc/agent-protocol.md).

The supervisor hands the interpreter one end of a SOCK_SEQPACKET socket pair.
It first sends the compiled rules (one JSON document, possibly over several
records, ending with a newline); then it may send "refusal" notes.  The agent
sends one JSON object per record: what it learned, what it refused.

Nothing here is a security boundary: the supervisor never trusts these
messages, and the program could forge them.  They feed the log and the learner.
"""
from __future__ import annotations

import os

import _socket
import _thread

from . import _wire

MSG_DONTWAIT = getattr(_socket, "MSG_DONTWAIT", 0x40)
RULES_MAX = 16 << 20        # a rules document larger than this is refused
RECORD_MAX = 256 << 10      # one record from the supervisor
REFUSALS_PER_THREAD = 16    # notes kept per thread while waiting for their OSError
DENIALS_MAX = 10000         # distinct refusal reports sent (a program looping on a refusal)

# First line of the partial-mode worker's command (see _proto.WORKER_COMMAND).
WORKER_MARK = "# pysandboxes-worker\n"


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
            rules = _wire.loads(b"".join(chunks).decode("utf-8"))
        except ValueError as e:
            raise ChannelError(f"malformed rules: {e}") from None
        if not isinstance(rules, dict) or rules.get("version") != 1:
            raise ChannelError("unsupported rules document (version 1 expected)")
        return rules

    def send(self, msg: dict) -> None:
        if not self.alive:
            return
        data = _wire.dumps(msg).encode("ascii")
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
                note = _wire.loads(data.decode("utf-8", "replace"))
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

"""Frames exchanged between a partial-mode caller and its worker.

The worker's stdout is one end of a socket pair: no port, no token, nothing
another local process can reach.  A frame is a 13-byte header (payload
length, type, call id; big-endian) and the payload.  The worker opens the
conversation with MAGIC so that anything written on that stream before it
(it should be nothing) is not taken for a frame.
"""
from __future__ import annotations

import struct

from . import _agent

MAGIC = b"\x00pysandboxes-worker-1\x00"

# The worker's command (python-sb ... -c COMMAND).  It imports the package
# the agent loaded (the copy python-sb exposes); without an agent
# (py-sandbox=false) it finds the caller's copy.  The agent does not arm the
# guards for this command: the worker arms them when it is ready.
WORKER_COMMAND = _agent.WORKER_MARK + """import sys
sys.dont_write_bytecode = True
if "pysandboxes" not in sys.modules:
    sys.path.insert(0, %r)
from pysandboxes._worker import main
main()
"""
HEADER = struct.Struct(">IBQ")
MAX_FRAME = 64 << 20

# caller -> worker
CALL, INIT, CANCEL, SHUTDOWN = 1, 2, 3, 4
# worker -> caller
HELLO, OUT, ERR, RESULT, EXC, READY = 10, 11, 12, 13, 14, 15

TYPES = frozenset({CALL, INIT, CANCEL, SHUTDOWN, HELLO, OUT, ERR, RESULT, EXC, READY})


class ProtocolError(Exception):
    pass


def frame(kind: int, call_id: int, payload: bytes = b"") -> bytes:
    if len(payload) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(payload)} bytes exceeds {MAX_FRAME}")
    return HEADER.pack(len(payload), kind, call_id) + payload


class Reader:
    """Incremental frame decoder over the bytes of a stream."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, int, bytes]]:
        self.buf += data
        out = []
        while len(self.buf) >= HEADER.size:
            size, kind, call_id = HEADER.unpack_from(self.buf)
            if kind not in TYPES or size > MAX_FRAME:
                raise ProtocolError(f"malformed frame (type {kind}, {size} bytes)")
            end = HEADER.size + size
            if len(self.buf) < end:
                break
            out.append((kind, call_id, bytes(self.buf[HEADER.size:end])))
            del self.buf[:end]
        return out

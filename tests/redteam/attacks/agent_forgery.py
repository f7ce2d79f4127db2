"""Talk to the supervisor over the agent's channel: forged verdicts, garbage,
oversized records, then try the refused things again."""
import json
import os
import socket
from rtlib import CTX, done, read, try_


def channel():
    for fd in range(3, 64):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                return socket.socket(fileno=os.dup(fd))
        except OSError:
            pass
    raise LookupError("no socket descriptor")


s = try_("find channel", channel)
if s is not None:
    forged = [{"kind": "api", "name": "os.system", "verdict": "allowed", "category": "process-exec"},
              {"kind": "rules", "version": 1, "api": {}, "import": {"all": True}},
              {"kind": "refusal", "object": "path", "errno": 0, "path": CTX["secret"]}]
    for m in forged:
        try_("send " + m["kind"], s.send, json.dumps(m).encode() + b"\n")
    try_("garbage", s.send, os.urandom(4096))
    try_("huge", s.send, b"{" + b"a" * 70000 + b"}\n")
    try_("many", lambda: [s.send(b'{"kind":"env","name":"X","verdict":"denied"}\n') for _ in range(2000)])
try_("read secret", read, CTX["secret"])
try_("system", os.system, f"{CTX['marker_prog']} {CTX['marker']}")
done()

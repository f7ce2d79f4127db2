"""Helpers of the pysandboxes unit tests.

`run_agent` starts a real interpreter with the real bootstrap, playing the
supervisor's end of the agent channel (doc/agent-protocol.md): it sends the
rules and collects what the agent reports.  It tests the agent's side of the
protocol; the supervisor's side has its own tests (tests/unit/check_agent.c)
and the two meet in tests/integration/agent-*.py.
"""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYDIR = HERE.parent                       # python/ (the package and the bootstrap)
TOP = Path(os.environ.get("SB_TOP_SRCDIR", PYDIR.parent))
REGISTRY_FILE = TOP / "rules" / "python-api.in"
PYTHON = sys.executable

sys.path.insert(0, str(PYDIR))


def registry() -> dict[str, str]:
    """qualified name -> category, from rules/python-api.in."""
    out = {}
    for line in REGISTRY_FILE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("category "):
            continue
        cat, qual = line.split()
        out[qual] = cat
    return out


def rules(mode: str = "enforce", imports: str = "*", allow: tuple = (), deny_rule: tuple = (),
          env_set: tuple = (), **extra: object) -> dict:
    """A rules document as sb_policy_agent_json() writes it (plus "mode").

    `allow` names categories or functions granted; `deny_rule` functions
    refused by an explicit rule."""
    api = {}
    for qual, cat in registry().items():
        granted = qual in allow or cat in allow or "*" in allow
        if qual in deny_rule:
            granted = False
        api[qual] = {"category": cat, "allow": granted,
                     "rule": ".py-sandboxes(1)" if granted or qual in deny_rule else None}
    names = [n for n in imports.split(",") if n and n != "*"]
    doc = {"mode": mode, "version": 1, "config": "/nonexistent/.py-sandboxes", "py_sandbox": True,
           "learn": mode == "learn", "import": {"all": imports == "*", "names": names}, "api": api,
           "categories": {}, "eval": {"present": False, "profiles": {}}, "hosts": {},
           "env_set_by_policy": list(env_set)}
    doc.update(extra)
    return doc


class AgentRun:
    """A finished run: status, output, the agent's messages."""

    def __init__(self, returncode: int, stdout: str, stderr: str, messages: list[dict]) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.messages = messages

    def of(self, kind: str) -> list[dict]:
        return [m for m in self.messages if m.get("kind") == kind]

    def names(self, kind: str) -> set[str]:
        return {m["name"] for m in self.of(kind)}


def spawn_agent(args: list[str], doc: dict | None, env: dict | None = None, cwd: str | None = None,
                python: str = PYTHON, stdin=subprocess.DEVNULL):
    """Start python with the bootstrap; returns (process, supervisor's socket end)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    e = dict(os.environ if env is None else env)
    e["PYSANDBOXES_AGENT_FD"] = str(theirs.fileno())
    e["PYSANDBOXES_AGENT_PKGDIR"] = str(PYDIR)
    boot = str(PYDIR / "bootstrap")
    e["PYTHONPATH"] = boot + (os.pathsep + e["PYTHONPATH"] if "PYTHONPATH" in e else "")
    if doc is not None:
        ours.sendall((json.dumps(doc) + "\n").encode())
    proc = subprocess.Popen([python, *args], env=e, cwd=cwd, pass_fds=[theirs.fileno()], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    theirs.close()
    return proc, ours


def collect(sock: socket.socket, timeout: float = 0.0) -> list[dict]:
    out = []
    while True:
        r, _, _ = select.select([sock], [], [], timeout)
        if not r:
            return out
        data = sock.recv(1 << 16)
        if not data:
            return out
        out.append(json.loads(data))


def run_agent(args: list[str], doc: dict | None, env: dict | None = None, cwd: str | None = None,
              python: str = PYTHON, timeout: float = 60) -> AgentRun:
    proc, sock = spawn_agent(args, doc, env, cwd, python)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    msgs = collect(sock)
    sock.close()
    return AgentRun(proc.returncode, out, err, msgs)


def program(text: str) -> str:
    """Write a program to a temporary file (removed at exit) and return its path."""
    fd, path = tempfile.mkstemp(suffix=".py", prefix="sbprog-", dir=os.environ.get("SB_TEST_TMP"))
    with os.fdopen(fd, "w") as f:
        f.write(textwrap.dedent(text))
    import atexit

    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path

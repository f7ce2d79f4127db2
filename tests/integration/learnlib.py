"""Helpers shared by the learning integration tests (tests/integration/learn-*.py).

A loopback TCP server the programs connect to, the standard program of the
E1/E2 cases, and readers for the learned file.
"""
from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

RULES = ".py-sandboxes"


class LoopbackServer:
    """Accepts connections on 127.0.0.1, answers b"pong", until closed."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.accepted += 1
                try:
                    conn.recv(64)
                    conn.sendall(b"pong")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def __enter__(self) -> "LoopbackServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# The E1 program: reads a data directory, an environment variable, writes a
# report into out/, talks to a loopback server.  Extra data directories given
# on the command line are read too (the E2 "new context").
PROGRAM = """
import os, socket, sys
port = int(sys.argv[1])
dirs = ["data"] + sys.argv[2:]
words = 0
for d in dirs:
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name)) as f:
            words += len(f.read().split())
greeting = os.environ.get("LEARN_TEST_GREETING", "unset")
with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
    s.sendall(b"ping")
    answer = s.recv(16).decode()
os.makedirs("out", exist_ok=True)
with open(os.path.join("out", "report.txt"), "w") as f:
    f.write(f"{words} {greeting} {answer}\\n")
print(f"words={words} greeting={greeting} answer={answer}")
"""


def make_project(scratch: sbtest.Scratch, extra_dirs: tuple[str, ...] = ()) -> None:
    scratch.write("app/prog.py", PROGRAM)
    scratch.write("data/notes.txt", "one two three\n")
    scratch.write("data/todo.txt", "four five\n")
    for d in extra_dirs:
        scratch.write(f"{d}/more.txt", "six seven\n")


def rule_lines(path: Path) -> list[str]:
    """The rules of a file: no comments, no blank lines."""
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def program_denials(stderr: str, scratch: Path) -> list[str]:
    """Refusal lines about what the program itself touched (its project
    directory, the network); the interpreter's start-up is not learning's."""
    return [l for l in stderr.splitlines()
            if "DENIED" in l and (str(scratch) in l or " connect " in l or "'./" in l)]


def check_common(test, text: str) -> None:  # type: ignore[no-untyped-def]
    """What a learned file must never contain."""
    for line in text.splitlines():
        if line.startswith("expose-"):
            value = line.split("=", 1)[1]
            test.assertFalse(value.startswith(("/proc", "/sys", "/dev")), line)
            test.assertNotEqual(value, "/", line)

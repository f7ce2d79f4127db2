"""Helpers shared by the network integration tests (tests/integration/net-*.py).

The servers run in the test harness, outside the sandbox, on loopback only.
"Never accepted" and "never received" are checked after the sandboxed
program has exited, with a non-blocking accept()/recv(): on loopback a
connection is queued before connect() returns and a datagram before
sendto() returns, so an empty queue means nothing ever arrived (no timing).
"""
from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

PROGS = sbtest.TOP_BUILDDIR / "tests" / "progs"


def have_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class TcpServer:
    """A listening socket on loopback.  With serve=True a thread accepts
    connections and answers b"ping" with b"pong"; with serve=False nothing
    accepts, and pending() tells whether any connection ever arrived."""

    def __init__(self, host: str = "127.0.0.1", serve: bool = True, backlog: int = 16) -> None:
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(backlog)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread: threading.Thread | None = None
        if serve:
            self.sock.settimeout(0.2)
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            with conn:
                conn.settimeout(10)
                try:
                    if conn.recv(4) == b"ping":
                        conn.sendall(b"pong")
                except OSError:
                    pass

    def pending(self) -> int:
        """Connections waiting in the accept queue (for serve=False)."""
        self.sock.setblocking(False)
        n = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return n
            conn.close()
            n += 1

    def close(self) -> None:
        self._stop = True
        if self._thread:
            self._thread.join(5)
        self.sock.close()

    def __enter__(self) -> "TcpServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class UdpSink:
    """A UDP socket on loopback; received() drains what has arrived."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def received(self) -> list[bytes]:
        out = []
        while True:
            try:
                out.append(self.sock.recv(65536))
            except BlockingIOError:
                return out

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "UdpSink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class UnixServer:
    """A listening AF_UNIX stream socket (path or abstract name "\\0...")."""

    def __init__(self, path: str, serve: bool = True) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(16)
        self.path = path
        self.accepted = 0
        self._stop = False
        self._thread: threading.Thread | None = None
        if serve:
            self.sock.settimeout(0.2)
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    _loop = TcpServer._loop
    pending = TcpServer.pending
    close = TcpServer.close

    def __enter__(self) -> "UnixServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


BASE_POLICY = [
    # The supervisor is under test: no in-interpreter agent refusing first,
    # no kernel layer (Landlock TCP rules) refusing on its behalf.
    "py-sandbox=false",
    "os-sandbox=none",
]


def policy_text(scratch: sbtest.Scratch, lines: Iterable[str]) -> str:
    return "\n".join([*BASE_POLICY, f"expose-ro={scratch.dir}", *lines]) + "\n"


def run(scratch: sbtest.Scratch, program: str, rules: Iterable[str], args: Iterable[str] = (),
        sb_args: Iterable[str] = (), timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `program` (Python source) under python-sb with the rules."""
    pol = scratch.policy(policy_text(scratch, rules), name="net.py-sandboxes")
    script = scratch.write("prog.py", program)
    return sbtest.run_sb([f"--pysandboxes-config={pol}", *sb_args, str(script), *map(str, args)],
                         cwd=scratch.dir, timeout=timeout)


def errno_name(e: int) -> str:
    return errno.errorcode.get(e, str(e))


# A program prints one line per attempt: "<label> OK" or "<label> <ERRNO>".
PRELUDE = '''
import errno, os, socket, sys
def attempt(label, fn):
    try:
        fn()
        print(label, "OK", flush=True)
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, e.errno), flush=True)
'''


def outcomes(cp: subprocess.CompletedProcess[str]) -> dict[str, str]:
    res = {}
    for line in cp.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            res[parts[0]] = parts[1]
    return res


def check_run(test, cp: subprocess.CompletedProcess[str]) -> dict[str, str]:
    test.assertEqual(cp.returncode, 0, f"exit {cp.returncode}\nstdout:\n{cp.stdout}\nstderr:\n{cp.stderr}")
    return outcomes(cp)


def seccomp_skip() -> None:
    if not sbtest.seccomp_unotify_available():
        sbtest.skip("no seccomp in this kernel")
    if not os.access(sbtest.PYTHON, os.X_OK):
        sbtest.skip(f"{sbtest.PYTHON} missing")

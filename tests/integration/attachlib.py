"""Shared helpers of the attach-*.py tests (python-sb --attach, issue 6).

The tests start tests/targets/attach_loop.py (files and loopback connects in
a loop until a stop file appears), attach to it, read the trace, detach and
check that the program finishes with its own output and exit status.  They
drive `python-sb --attach` once main.c wires it, and the test driver
tests/unit/attach_driver (sb_attach_run() from argv) until then.  Every wait
is bounded; nothing is asserted about timing.
"""
from __future__ import annotations

import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

SKIP, HARD_ERROR = sbtest.SKIP, sbtest.HARD_ERROR
TOP_SRCDIR = Path(os.path.abspath(sbtest.TOP_SRCDIR))
TOP_BUILDDIR = Path(os.path.abspath(sbtest.TOP_BUILDDIR))
TARGET = TOP_SRCDIR / "tests" / "targets" / "attach_loop.py"
DRIVER = TOP_BUILDDIR / "tests" / "unit" / "attach_driver"
# The Debian interpreter is always the target; the suite's SB_PYTHON too when it differs.
DEBIAN_PYTHON = "/usr/bin/python3"
WAIT = 60.0		# upper bound of every wait (a hung test fails, never hangs)

# "[pid 12] openat(AT_FDCWD, "/x", O_RDONLY|O_CLOEXEC) = 3" and its "  at file:line in f()" line
CALL_RE = re.compile(r"^\[pid (\d+)\] (\w+)\((.*)\) = (.*)$")
AT_RE = re.compile(r"^  at (.*):(\d+) in (.*)\(\)( \[eval\])?$")


def marker_line(name: str) -> int:
    """Line number of '# LINE:<name>' in the target."""
    for i, line in enumerate(TARGET.read_text().splitlines(), 1):
        if line.rstrip().endswith(f"# LINE:{name}"):
            return i
    raise AssertionError(f"no LINE:{name} marker in {TARGET}")


def interpreters() -> list[str]:
    """The Debian interpreter, the suite's, and pyenv's 3.10-3.13 when present."""
    found: list[str] = []
    for p in [DEBIAN_PYTHON, sbtest.PYTHON, *sbtest.pyenv_pythons()]:
        if os.access(p, os.X_OK) and os.path.realpath(p) not in (os.path.realpath(f) for f in found):
            found.append(p)
    return found


def py_version(python: str) -> tuple[int, int]:
    r = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                       text=True, timeout=WAIT)
    major, minor = r.stdout.split()
    return int(major), int(minor)


def has_locations(python: str) -> bool:
    """The attribution reads CPython 3.11 and later (doc/attribution.md)."""
    return py_version(python) >= (3, 11)


_wired: bool | None = None


def wired() -> bool:
    """True once python-sb itself runs --attach (no longer "reserved")."""
    global _wired
    if _wired is None:
        if not sbtest.PYTHON_SB or not os.access(sbtest.PYTHON_SB, os.X_OK):
            _wired = False
        else:
            r = subprocess.run([sbtest.PYTHON_SB, "--attach", "2147483647"], capture_output=True,
                               text=True, timeout=WAIT)
            _wired = "reserved" not in r.stderr
    return _wired


def attach_argv(pids: str, policy: str | None = None, enforce: bool = False, learn: str | None = None,
                log: str | None = None, duration: float | None = None, trace: bool | None = None) -> list[str]:
    """The attach command line.  python-sb prints the trace unless --policy is
    given (then only the notices), --sb-verbose brings it back."""
    if trace is None:
        trace = policy is None
    if wired():
        argv = [sbtest.PYTHON_SB, "--attach", pids]
        if trace and policy:
            argv.append("--sb-verbose")
    else:
        if not os.access(DRIVER, os.X_OK):
            print(f"attach_driver not built: {DRIVER}")
            sys.exit(HARD_ERROR)
        argv = [str(DRIVER), pids]
        if not trace:
            argv.append("--no-trace")
    if policy:
        argv.append(f"--policy={policy}")
    if enforce:
        argv.append("--enforce")
    if learn:
        argv.append(f"--learn={learn}")
    if log:
        argv.append(f"--log={log}")
    if duration:
        argv.append(f"--duration={duration}")
    return argv


class LoopbackServer:
    """Accepts and closes TCP connections on 127.0.0.1 (never anything else)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            c.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join(WAIT)
        self.sock.close()

    def __enter__(self) -> "LoopbackServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Lines:
    """Lines of a pipe, read by a thread, waited for with a bound."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self.thread.start()

    def _run(self, stream) -> None:
        for line in stream:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wait_for(self, pred, timeout: float = WAIT):
        """The first line satisfying pred (a regex string or a callable), or None."""
        if isinstance(pred, str):
            rx = re.compile(pred)
            pred = lambda s: rx.search(s) is not None  # noqa: E731
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if pred(line):
                        return line
                left = end - time.monotonic()
                if self.closed or left <= 0:
                    return None
                self.cond.wait(left)

    def text(self) -> str:
        with self.cond:
            return "\n".join(self.lines) + ("\n" if self.lines else "")


class Target:
    """tests/targets/attach_loop.py running in its own data directory."""

    def __init__(self, python: str, port: int, *extra: str, nfiles: int = 8,
                 files: dict[str, str] | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="sbattach-"))
        self.data = self.dir / "data"
        self.data.mkdir()
        for name, text in (files or {}).items():
            (self.dir / name).parent.mkdir(parents=True, exist_ok=True)
            (self.dir / name).write_text(text)
        for k in range(nfiles):
            (self.data / f"f{k}").write_text(f"file {k}\n")
        self.proc = subprocess.Popen([python, str(TARGET), str(self.data), str(port), *extra],
                                     cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.out = Lines(self.proc.stdout)
        self.err = Lines(self.proc.stderr)
        ready = self.out.wait_for(r"^READY ")
        if not ready:
            self.kill()
            raise AssertionError(f"target did not start: {self.err.text()}")
        m = re.match(r"READY pid=(\d+) tids=([\d,]+)", ready)
        self.pid = int(m.group(1))
        self.tids = [int(t) for t in m.group(2).split(",")]

    def touch(self, name: str) -> None:
        (self.data / name).write_text("")

    def finish(self) -> tuple[int, str]:
        """Ask it to stop; its exit status and stdout."""
        self.touch("stop")
        try:
            rc = self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("target did not finish after the stop file")
        self.out.thread.join(WAIT)
        return rc, self.out.text()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Tracer:
    """The attach command running; its stderr (trace and notices) collected."""

    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.err = Lines(self.proc.stderr)
        self.out = Lines(self.proc.stdout)

    def wait_for(self, pred, timeout: float = WAIT):
        return self.err.wait_for(pred, timeout)

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def finish(self, timeout: float = WAIT) -> tuple[int, str]:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(WAIT)
            raise AssertionError(f"{self.argv[0]} did not end: {self.err.text()}")
        self.err.thread.join(WAIT)
        self.out.thread.join(WAIT)
        return rc, self.err.text()


def calls(text: str) -> list[dict]:
    """The trace lines of text, each with the location line that follows it."""
    out: list[dict] = []
    for line in text.splitlines():
        m = CALL_RE.match(line)
        if m:
            out.append({"tid": int(m.group(1)), "name": m.group(2), "args": m.group(3),
                        "result": m.group(4), "file": None, "line": None, "func": None})
            continue
        m = AT_RE.match(line)
        if m and out:
            out[-1].update(file=m.group(1), line=int(m.group(2)), func=m.group(3))
    return out


def require_ptrace() -> None:
    """Skip when this environment cannot ptrace (no CAP_SYS_PTRACE, Yama 3)."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        r = subprocess.run(attach_argv(str(sleeper.pid), duration=0.2), capture_output=True, text=True,
                           timeout=WAIT)
    finally:
        sleeper.kill()
        sleeper.wait(WAIT)
    if r.returncode != 0 and "not allowed" in r.stderr:
        sbtest.skip(f"ptrace not permitted here: {r.stderr.strip()}")
    if r.returncode != 0:
        print(f"attach probe failed ({r.returncode}): {r.stderr}")
        sys.exit(HARD_ERROR)


def main(test_case) -> None:
    require_ptrace()
    sbtest.main(test_case)

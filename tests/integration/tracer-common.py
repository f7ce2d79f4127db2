"""Shared helpers of the tracer-*.py integration tests (loaded by path).

They start the programs under tests/targets/ with each available
interpreter, wait until every thread is blocked in a system call, and read
the stacks with tests/unit/pystack_dump (a thin JSON front end of the
tracer library).  Expected lines come from "# LINE:<name>" markers in the
targets, so editing a target keeps the tests right."""
from __future__ import annotations

import json
import os
import platform
import re
import select
import subprocess
import sys
import time
import unittest
from pathlib import Path

SKIP, HARD_ERROR = 77, 99
# Normalised (a VPATH build passes ".../obj/../src"): the targets compute
# their own paths with abspath(), and the frames must compare equal.
TOP_SRCDIR = Path(os.path.abspath(os.environ.get("SB_TOP_SRCDIR", Path(__file__).resolve().parents[2])))
TOP_BUILDDIR = Path(os.path.abspath(os.environ.get("SB_TOP_BUILDDIR", TOP_SRCDIR)))
TARGETS = TOP_SRCDIR / "tests" / "targets"
PYSTACK_DUMP = Path(os.environ.get("SB_PYSTACK_DUMP", TOP_BUILDDIR / "tests" / "unit" / "pystack_dump"))
DEBIAN_PYTHON = "/usr/bin/python3"

# Blocking system calls a target waits in (clock_nanosleep, futex, select,
# pselect6, poll, ppoll, nanosleep, wait4, epoll_wait, epoll_pwait, read).
_BLOCKING = {
    "x86_64": {230, 202, 23, 270, 7, 271, 35, 61, 232, 281, 0},
    "aarch64": {115, 98, 72, 73, 101, 260, 22, 63},
}[platform.machine()]


def require_tools() -> None:
    if not os.access(PYSTACK_DUMP, os.X_OK):
        print(f"pystack_dump not built: {PYSTACK_DUMP}")
        sys.exit(HARD_ERROR)
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        print(f"{DEBIAN_PYTHON} missing")
        sys.exit(HARD_ERROR)


def pyenv_python(minor: str) -> str | None:
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    for d in sorted(Path(root, "versions").glob(minor + ".*")):
        exe = d / "bin" / "python3"
        if exe.exists():
            return str(exe)
    return None


def interpreters() -> list[tuple[str, str]]:
    """The Debian interpreter, always, then pyenv 3.11-3.13 when present."""
    found = [("debian", DEBIAN_PYTHON)]
    for minor in ("3.11", "3.12", "3.13"):
        exe = pyenv_python(minor)
        if exe:
            found.append((minor, exe))
    return found


def marker_lines(path: Path) -> dict[str, int]:
    lines = {}
    for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for m in re.finditer(r"# LINE:(\w+)", text):
            lines[m.group(1)] = i
    return lines


def _syscall_of(pid: int, tid: int) -> int | None:
    try:
        first = Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(first) if first.lstrip("-").isdigit() else None


def wait_blocked(pid: int, timeout: float = 20) -> None:
    """Until every thread of pid waits in a blocking system call: then its
    Python frames stay put while they are read."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            raise AssertionError(f"process {pid} is gone")
        if tids and all(_syscall_of(pid, t) in _BLOCKING for t in tids):
            time.sleep(0.02)  # and still so a moment later
            if all(_syscall_of(pid, t) in _BLOCKING for t in tids):
                return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never settled")


def read_line(stream, timeout: float = 30) -> str:
    """One line from a child's pipe, or "" if none comes in time (a target
    that hangs must fail the test, not the whole run)."""
    if not select.select([stream], [], [], timeout)[0]:
        return ""
    return stream.readline()


class Target:
    """A target program, started and waited for ("READY" on stdout)."""

    def __init__(self, python: str, script: str | Path, *args: str, prefix: list[str] | None = None,
                 cwd: Path | None = None) -> None:
        self.cmd = [*(prefix or []), python, str(script), *args]
        self.cwd = cwd
        self.ready = ""

    def __enter__(self) -> "Target":
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # the source tree may be read-only
        env.pop("PYTHONPATH", None)
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=self.cwd, encoding="utf-8", env=env)
        line = read_line(self.proc.stdout)
        if not line.startswith("READY"):
            self.proc.kill()
            err = self.proc.stderr.read()  # type: ignore[union-attr]
            raise AssertionError(f"{self.cmd} did not get ready: {line!r} {err}")
        self.ready = line.strip()
        self.fields = dict(f.split("=", 1) for f in self.ready.split()[1:])
        self.pid = self.proc.pid
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f:
                f.close()


def dump(pid: int, *tids: int) -> dict:
    out = subprocess.run([str(PYSTACK_DUMP), str(pid), *map(str, tids)], capture_output=True, text=True,
                         timeout=60)
    if out.returncode != 0:
        raise AssertionError(f"pystack_dump {pid} {tids}: {out.returncode} {out.stderr}")
    return json.loads(out.stdout)


def run_dump_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(PYSTACK_DUMP), *args], capture_output=True, text=True, timeout=60)


def frames(thread: dict) -> list[tuple[str, str, int]]:
    return [(f["file"], f["func"], f["line"]) for f in thread["frames"]]


def main(case: type[unittest.TestCase]) -> None:
    """0 when all pass, 1 on a failure, 77 when everything skipped."""
    require_tools()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun and len(result.skipped) == result.testsRun:
        sys.exit(SKIP)
    sys.exit(0)

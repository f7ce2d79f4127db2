"""Shared helpers for integration tests written in Python.

Each test is a standalone script run by automake's test driver: exit 0 = pass,
77 = skip (missing kernel feature or interpreter), 99 = harness error, other =
failure.  Tests drive the real python-sb binary on real Python programs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from typing import Mapping, Sequence

PYTHON_SB = os.environ.get("PYTHON_SB", "")
TOP_SRCDIR = Path(os.environ.get("SB_TOP_SRCDIR", Path(__file__).resolve().parents[2]))
TOP_BUILDDIR = Path(os.environ.get("SB_TOP_BUILDDIR", TOP_SRCDIR))
# The Debian interpreter is always tested; others come from pyenv when present.
PYTHON = os.environ.get("SB_PYTHON", "/usr/bin/python3")

SKIP = 77
HARD_ERROR = 99


def skip(reason: str) -> "NoReturn":  # type: ignore[name-defined]
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def require_binary() -> None:
    if not PYTHON_SB or not os.access(PYTHON_SB, os.X_OK):
        print(f"python-sb not built: {PYTHON_SB!r}")
        sys.exit(HARD_ERROR)


def pyenv_pythons() -> list[str]:
    """Interpreters 3.10-3.13 installed through pyenv, if any."""
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return []
    found = []
    for minor in ("3.10", "3.11", "3.12", "3.13"):
        for d in sorted(Path(root, "versions").glob(minor + ".*")):
            exe = d / "bin" / "python3"
            if exe.exists():
                found.append(str(exe))
                break
    return found


class Scratch:
    """A scratch directory with a policy file and program files."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="sbtest-"))

    def __enter__(self) -> "Scratch":
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name: str, text: str, mode: int | None = None) -> Path:
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
        if mode is not None:
            p.chmod(mode)
        return p

    def policy(self, text: str, name: str = ".py-sandboxes") -> Path:
        return self.write(name, text)


def run_sb(args: Sequence[str], cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
           input: str | None = None, timeout: float = 60, python: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run python-sb with --python=<python> and return the completed process."""
    require_binary()
    full_env = dict(os.environ)
    if env is not None:
        full_env.update(env)
    binary = PYTHON_SB
    if (env or {}).get("SB_TEST_WIDEN") == "1" and os.environ.get("PYTHON_SB_WIDEN"):
        # The test-only build whose supervisor widens every decision.
        binary = os.environ["PYTHON_SB_WIDEN"]
    cmd = [binary, f"--python={python or PYTHON}", *args]
    return subprocess.run(cmd, cwd=cwd, env=full_env, input=input, capture_output=True,
                          text=True, timeout=timeout)


def run_bare(args: Sequence[str], cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
             input: str | None = None, timeout: float = 60, python: str | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    if env is not None:
        full_env.update(env)
    return subprocess.run([python or PYTHON, *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, text=True, timeout=timeout)


def seccomp_unotify_available() -> bool:
    """True when this kernel lets us install a user-notification filter."""
    status = Path("/proc/self/status").read_text()
    return "Seccomp:" in status


def main(test_case: type[unittest.TestCase]) -> None:
    """Run a unittest.TestCase as one automake test: all pass -> 0, a failure -> 1,
    every test skipped -> 77."""
    require_binary()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(test_case)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun and len(result.skipped) == result.testsRun:
        sys.exit(SKIP)
    sys.exit(0)

"""Helpers for the kernel-layer tests (tests/integration/os-*.py).

These tests run real Python programs under a kernel layer *without* the
supervisor, through tests/unit/oslayer_run (policy -> layer -> self-test ->
fork -> apply -> exec), so what the program is refused is refused by the
kernel layer alone.
"""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

DRIVER = Path(os.environ.get("SB_TOP_BUILDDIR", sbtest.TOP_BUILDDIR)) / "tests" / "unit" / "oslayer_run"
EXIT_LAYER = 200

# The Debian interpreter always; pyenv's 3.10-3.13 when present.
PYTHONS = ["/usr/bin/python3"] + [p for p in sbtest.pyenv_pythons() if os.path.realpath(p) != os.path.realpath("/usr/bin/python3")]


def require_driver() -> None:
    if not os.access(DRIVER, os.X_OK):
        print(f"driver not built: {DRIVER}")
        sys.exit(sbtest.HARD_ERROR)


def landlock_abi() -> int:
    require_driver()
    out = subprocess.run([str(DRIVER), "--probe-abi"], capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def require_landlock(min_abi: int = 1) -> int:
    abi = landlock_abi()
    if abi < 1:
        sbtest.skip(f"Landlock is not available on this kernel (probe: {os.strerror(-abi)})")
    if abi < min_abi:
        sbtest.skip(f"Landlock ABI {abi} < {min_abi}")
    return abi


def interpreter_exposures(python: str) -> list[str]:
    """What an interpreter needs to start: its prefix and the system libraries."""
    prefixes = subprocess.run(
        [python, "-c", "import sys; print(sys.base_prefix); print(sys.prefix)"],
        capture_output=True, text=True, check=True).stdout.split()
    return sorted({"/usr", *(os.path.realpath(p) for p in prefixes)})


class Layer:
    """A scratch directory, a policy and runs of programs under a layer."""

    def __init__(self, scratch: sbtest.Scratch, python: str, os_sandbox: str, rules: str = "",
                 top_rw: bool = False) -> None:
        self.scratch = scratch
        self.python = python
        self.dir = scratch.dir.resolve()
        (self.dir / "ro").mkdir()
        (self.dir / "rw").mkdir()
        (self.dir / "ro" / "data.txt").write_text("read-only data\n")
        exposures = "\n".join(f"expose-ro={p}" for p in interpreter_exposures(python))
        self.policy = scratch.policy(
            f"os-sandbox={os_sandbox}\n{exposures}\n"
            + (f"expose-rw={self.dir}\n" if top_rw else f"expose-ro={self.dir}\nexpose-rw={self.dir / 'rw'}\n")
            + textwrap.dedent(rules))

    def run(self, program: str, *driver_args: str, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        prog = self.scratch.write("prog.py", program)
        require_driver()
        return subprocess.run([str(DRIVER), "--config", str(self.policy), *driver_args, "--",
                               self.python, str(prog)],
                              cwd=self.dir, capture_output=True, text=True, timeout=timeout,
                              env=None if env is None else {**os.environ, **env})

    def describe(self, *driver_args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DRIVER), "--config", str(self.policy), "--describe", *driver_args, "--",
                               self.python], cwd=self.dir, capture_output=True, text=True, timeout=60)


# A Python snippet that reports one attempt per line: "<name> OK" or "<name> <ERRNO>".
PROBE_PRELUDE = '''
import errno, os, socket, sys
def attempt(name, fn):
    try:
        fn()
        print(name, "OK", flush=True)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno), flush=True)
def read(p):
    with open(p) as f:
        f.read()
def write(p, mode="w"):
    with open(p, mode) as f:
        f.write("x")
def tcp(port, bind=False):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        if bind:
            s.bind(("127.0.0.1", port))
        else:
            s.connect(("127.0.0.1", port))
    finally:
        s.close()
'''


def outcomes(cp: subprocess.CompletedProcess[str]) -> dict[str, str]:
    res = {}
    for line in cp.stdout.splitlines():
        name, _, what = line.rpartition(" ")
        if name:
            res[name] = what
    return res

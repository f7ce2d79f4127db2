"""Helpers for the agent's integration tests (tests/integration/agent-*.py).

Each case runs the real python-sb on a program in a scratch directory with a
rule file written there ("base" of reference §9.2: py-sandbox=true, the
scratch directory exposed read-only; the interpreter and the agent are
exposed by python-sb itself).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"


def pythons() -> list[str]:
    """The Debian interpreter always; the newest pyenv one too when present
    (its frames and audit events differ most)."""
    found = [DEBIAN_PYTHON] if os.access(DEBIAN_PYTHON, os.X_OK) else []
    extra = sbtest.pyenv_pythons()
    if extra and extra[-1] not in found:
        found.append(extra[-1])
    if not found:
        sbtest.skip("no Python interpreter to test")
    return found


class Case:
    """A scratch directory, its rule file and its programs."""

    def __init__(self, scratch: sbtest.Scratch, rules: Sequence[str], base: bool = True) -> None:
        self.dir = scratch.dir.resolve()
        lines = ["py-sandbox=true", "os-sandbox=none", f"expose-ro={self.dir}"] if base else []
        self.policy = self.dir / ".py-sandboxes"
        self.policy.write_text("\n".join([*lines, *rules]) + "\n")

    def script(self, text: str, name: str = "prog.py") -> Path:
        p = self.dir / name
        p.write_text(textwrap.dedent(text))
        return p

    def run(self, args: Sequence[str], python: str = DEBIAN_PYTHON, env: dict | None = None,
            input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return sbtest.run_sb([f"--pysandboxes-config={self.policy}", *args], cwd=self.dir, env=env,
                             input=input, timeout=timeout, python=python)


def program_stderr(cp: subprocess.CompletedProcess[str]) -> str:
    """stderr without python-sb's own notice lines."""
    return "".join(line for line in cp.stderr.splitlines(keepends=True) if not line.startswith("python-sb:"))

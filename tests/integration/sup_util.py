"""Helpers for the supervisor's integration tests (tests/integration/sup-*.py).

Each test builds a small tree in a scratch directory:

    prog/    the program (exposed read-only)
    data/    data the program may read (read-only), with link -> ../secret/key
    out/     where it may write (read-write)
    secret/  never exposed; key holds SECRET_TEXT
    .py-sandboxes   the rule file (outside every exposure: protected anyway)

and runs the real python-sb on it.  py-sandbox=false keeps the in-interpreter
agent out, so what is tested is the supervisor alone (the agent is advisory).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

SECRET_TEXT = "SECRET-4f1c9e"
PROGS = sbtest.TOP_BUILDDIR / "tests" / "progs"
ATTACK = PROGS / "sup_attack"
RACE = PROGS / "sup_race"


_real: dict[str, str] = {}


def real_python(python: str | None = None) -> str:
    """The interpreter's real executable (a pyenv shim is a script)."""
    python = python or sbtest.PYTHON
    if python not in _real:
        _real[python] = subprocess.run(
            [python, "-c", "import os, sys; print(os.path.realpath(sys.executable))"],
            capture_output=True, text=True, check=True).stdout.strip()
    return _real[python]


def pythons() -> list[str]:
    """The test interpreter and the Debian one (always tested), then pyenv's."""
    found: list[str] = []
    for p in [sbtest.PYTHON, "/usr/bin/python3", *sbtest.pyenv_pythons()]:
        if os.access(p, os.X_OK) and real_python(p) not in [real_python(q) for q in found]:
            found.append(p)
    return found


class Tree:
    """The scratch tree and its rule file."""

    def __init__(self, scratch: sbtest.Scratch) -> None:
        self.root = scratch.dir.resolve()
        self.prog = self.root / "prog"
        self.data = self.root / "data"
        self.out = self.root / "out"
        self.secret = self.root / "secret"
        for d in (self.prog, self.data, self.out, self.secret):
            d.mkdir()
        (self.secret / "key").write_text(SECRET_TEXT + "\n")
        (self.data / "public.txt").write_text("public data\n")
        (self.data / "link").symlink_to("../secret/key")
        self.policy = self.root / ".py-sandboxes"
        self.rules: list[str] = []

    def write_policy(self, extra: Sequence[str] = ()) -> Path:
        lines = [
            "py-sandbox=false",
            f"expose-ro={self.prog}",
            f"expose-ro={self.data}",
            f"expose-rw={self.out}",
            *self.rules,
            *extra,
        ]
        self.policy.write_text("\n".join(lines) + "\n")
        return self.policy

    def script(self, text: str, name: str = "main.py") -> Path:
        p = self.prog / name
        p.write_text(textwrap.dedent(text))
        return p


def run(tree: Tree, args: Sequence[str], extra: Sequence[str] = (), **kw) -> subprocess.CompletedProcess[str]:
    tree.write_policy(extra)
    kw.setdefault("cwd", tree.root)
    return sbtest.run_sb([f"--pysandboxes-config={tree.policy}", *args], **kw)


def run_bare(tree: Tree, args: Sequence[str], **kw) -> subprocess.CompletedProcess[str]:
    kw.setdefault("cwd", tree.root)
    return sbtest.run_bare(args, **kw)


def need_progs(case: unittest.TestCase) -> None:
    for p in (ATTACK, RACE):
        if not os.access(p, os.X_OK):
            print(f"{p} not built", file=sys.stderr)
            sys.exit(sbtest.HARD_ERROR)


def lines_of(cp: subprocess.CompletedProcess[str], prefix: str) -> list[str]:
    return [l for l in cp.stdout.splitlines() if l.startswith(prefix)]


# Python snippet shared by the attack programs: try(name, fn) prints one line.
TRY = '''
import errno, os, sys
def attempt(name, fn):
    try:
        r = fn()
    except OSError as e:
        print(name, "ERR", errno.errorcode.get(e.errno, e.errno), flush=True)
    except Exception as e:
        print(name, "EXC", type(e).__name__, flush=True)
    else:
        print(name, "OK", repr(r), flush=True)
'''

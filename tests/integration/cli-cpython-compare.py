#!/usr/bin/env python3
"""python-sb splits its command line as CPython does.

For every case of tests/unit/cli-cases.txt that is not a usage error, ask
tests/unit/cli_split (sb_cli_parse + sb_cli_python_argv, no supervisor) for
the interpreter argv python-sb would exec, and run it.  Run the interpreter
directly on the user's original argv with python-sb's own tokens (sandbox
rules, --pysandboxes-config, --log, ...) removed.  Both runs must agree on
sys.argv, sys.flags, sys.warnoptions and sys._xoptions (printed by a probe
that stands in for the program), on stdout, stderr and the exit status.

The removal of python-sb's tokens is done here by a small walker written
independently of src/cli.c, so a split that loses, adds or reorders a CPython
option shows up as a difference.  /usr/bin/python3 (SB_PYTHON) is always
tested; pyenv's 3.10-3.13 too when installed.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sbtest  # noqa: E402

CASES = sbtest.TOP_SRCDIR / "tests" / "unit" / "cli-cases.txt"
SPLIT = sbtest.TOP_BUILDDIR / "tests" / "unit" / "cli_split"

# The first line is a comment because -x skips it.
PROBE = (
    "# python-sb cli probe\n"
    "import sys\n"
    "print(repr((sys.argv, repr(sys.flags), sys.warnoptions, sys._xoptions)))\n"
)

CPYTHON_LONG = {"--help", "--version", "--help-env", "--help-xoptions", "--help-all"}
OUR_VALUED = {"--pysandboxes-config", "--log", "--report", "--python", "--attach", "--stack",
              "--policy", "--duration"}
# Actions for which python-sb runs the interpreter with the split argv.
COMPARED_ACTIONS = {"run", "version", "py-help"}


def load_cases() -> list[dict[str, list[str]]]:
    cases: list[dict[str, list[str]]] = []
    cur: dict[str, list[str]] | None = None
    for line in CASES.read_text().splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            cur = None
        elif line.startswith("["):
            cur = {"name": [line[1:line.index("]")]]}
            cases.append(cur)
        else:
            assert cur is not None, line
            key, _, value = line.partition("=")
            cur[key.strip()] = shlex.split(value)
    return cases


class Command:
    """Where the command part starts in an argv without python-sb's tokens."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.kind = "none"
        self.index = len(argv)      # token holding the command's argument
        self.prefix = ""            # cluster text glued before the argument ("-Ic")


def strip_sandbox_tokens(argv: list[str]) -> Command:
    """Remove python-sb's own tokens before the command part, as a user would
    have typed the line for plain python."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--" or a == "-" or not a.startswith("-"):
            break
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            if a == "--check-hash-based-pycs":
                out += argv[i:i + 2]
                i += 2
            elif a in CPYTHON_LONG:
                out.append(a)
                i += 1
            elif name == "--diff" and "=" not in a:
                i += 3
            else:
                i += 2 if (name in OUR_VALUED and "=" not in a) else 1
            continue
        j, takes_next = 1, False
        while j < len(a):
            if a[j] in "cm":
                cmd = Command(out + argv[i:])
                cmd.kind = "code" if a[j] == "c" else "module"
                if j + 1 < len(a):
                    cmd.index, cmd.prefix = len(out), a[:j + 1]
                else:
                    cmd.index = len(out) + 1
                return cmd
            if a[j] in "WX":
                takes_next = j + 1 == len(a)
                break
            j += 1
        out += argv[i:i + 2] if takes_next else [a]
        i += 2 if takes_next else 1
    cmd = Command(out + argv[i:])
    rest = argv[i:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    if rest:
        cmd.kind = "stdin" if rest[0] == "-" else "script"
        cmd.index = len(cmd.argv) - len(rest)
    return cmd


def split(argv: list[str]) -> dict:
    res = subprocess.run([str(SPLIT), *argv], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        raise RuntimeError(f"cli_split {argv}: {res.returncode} {res.stderr}")
    return json.loads(res.stdout)


def put_probe(scratch: sbtest.Scratch, script: str) -> None:
    """The program file, when it can live in the scratch directory."""
    if script.startswith("/") or ".." in script.split("/"):
        return
    p = scratch.dir / script
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(PROBE)


def put_module(scratch: sbtest.Scratch, module: str) -> None:
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return
    d = scratch.dir
    for p in parts[:-1]:
        d = d / p
        d.mkdir(exist_ok=True)
        (d / "__init__.py").write_text("")
    (d / (parts[-1] + ".py")).write_text(PROBE)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


class CliCPythonCompare(unittest.TestCase):
    cases = load_cases()

    def run_python(self, python: str, argv: list[str], cwd: Path) -> tuple[int, str, str]:
        res = subprocess.run([python, *argv], cwd=cwd, input=PROBE, capture_output=True,
                             text=True, timeout=60, env=clean_env())
        # -v prints object addresses, which ASLR changes from run to run.
        def norm(text: str) -> str:
            return re.sub(r"0x[0-9a-f]+", "0x?", text)
        return res.returncode, norm(res.stdout), norm(res.stderr)

    def compare_case(self, python: str, case: dict[str, list[str]]) -> None:
        argv = case["argv"]
        got = split(argv)
        self.assertNotIn("error", got, f"cli_split refused {argv}: {got.get('error')}")
        if got["action"] not in COMPARED_ACTIONS:
            return
        direct = strip_sandbox_tokens(argv)
        sb_argv = got["exec"][1:]
        with sbtest.Scratch() as scratch:
            if got["cmd"] == "script":
                put_probe(scratch, got["cmd_arg"])
            elif got["cmd"] == "module":
                put_module(scratch, got["cmd_arg"])
            elif got["cmd"] == "code" and got["action"] == "run":
                # The program itself is replaced by the probe on both sides.
                at = len(got["py"])
                self.assertEqual(sb_argv[at], "-c")
                sb_argv[at + 1] = PROBE
                self.assertEqual(direct.kind, "code")
                direct.argv[direct.index] = direct.prefix + PROBE
            want = self.run_python(python, direct.argv, scratch.dir)
            have = self.run_python(python, sb_argv, scratch.dir)
        self.assertEqual(have, want, f"python {direct.argv!r} vs python-sb's {sb_argv!r}")

    def check_interpreter(self, python: str) -> None:
        compared = 0
        for case in self.cases:
            if "error" in case:
                continue
            with self.subTest(python=python, case=case["name"][0]):
                self.compare_case(python, case)
                compared += 1
        self.assertGreaterEqual(compared, 40)

    def test_debian_python(self) -> None:
        if not os.access(sbtest.PYTHON, os.X_OK):
            print(f"interpreter {sbtest.PYTHON} missing")
            sys.exit(sbtest.HARD_ERROR)
        self.check_interpreter(sbtest.PYTHON)

    def test_pyenv_pythons(self) -> None:
        found = sbtest.pyenv_pythons()
        if not found:
            self.skipTest("no pyenv interpreter 3.10-3.13")
        for python in found:
            self.check_interpreter(python)

    def test_errors_are_reported(self) -> None:
        """Usage errors come back with the table's message and the usage line."""
        for case in self.cases:
            if "error" not in case:
                continue
            with self.subTest(case=case["name"][0]):
                got = split(case["argv"])
                self.assertEqual(got.get("error", [None])[0], case["error"][0])
                self.assertTrue(got["error"][1].startswith("usage: python-sb "))

    def test_oracle_sees_cpython_errors_too(self) -> None:
        """Where python-sb refuses a CPython option, python refuses it too."""
        names = {"error-module-missing", "error-code-missing", "error-warning-missing",
                 "error-xoption-missing", "error-unknown-short", "error-jython",
                 "error-hash-pycs-mode", "error-hash-pycs-missing", "error-hash-pycs-equals",
                 "error-help-with-value"}
        seen = 0
        for case in self.cases:
            if case["name"][0] not in names:
                continue
            seen += 1
            with self.subTest(case=case["name"][0]), sbtest.Scratch() as scratch:
                rc, _, err = self.run_python(sbtest.PYTHON, case["argv"], scratch.dir)
                self.assertEqual(rc, 2, err)
                first = case["error"][0].replace("for -m option", "for the -m option")
                first = first.replace("for -c option", "for the -c option")
                self.assertEqual(err.splitlines()[0], first)
        self.assertEqual(seen, len(names))


def main() -> None:
    if not os.access(SPLIT, os.X_OK):
        print(f"{SPLIT} not built (make check builds it)")
        sys.exit(sbtest.HARD_ERROR)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(CliCPythonCompare)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()

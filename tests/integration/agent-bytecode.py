#!/usr/bin/env python3
"""The agent's bytecode (src/agent_bytecode.c) on the real python-sb.

The sandbox never lets the program write the agent's __pycache__, so
python-sb compiles the agent once, before the program, for an interpreter
that lacks it: for every interpreter here (Debian's, pyenv's 3.10-3.13 when
present) the first run leaves current bytecode of every module a start
loads, and the next run loads all of them from it.  The C list of those
modules is checked against what the interpreter really loads.  Nothing is
written when the user asked for no bytecode (-B, PYTHONDONTWRITEBYTECODE)
or may not write the tree, nor into a directory of another user's, and the
program runs all the same.  A hostile
interpreter in that compile run gets an empty environment and
no_new_privs, and (Landlock) cannot write outside the agent, connect over
TCP or signal python-sb.

The test works on the source tree's agent (the one python-sb uses): it only
deletes bytecode, which python-sb recreates.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import unittest
from pathlib import Path

import sbtest
from agentlib import DEBIAN_PYTHON, Case

AGENT_DIRS = ((sbtest.TOP_SRCDIR / "python" / "pysandboxes").resolve(),
              (sbtest.TOP_SRCDIR / "python" / "bootstrap").resolve())


def interpreters() -> list[str]:
    found = [DEBIAN_PYTHON] if os.access(DEBIAN_PYTHON, os.X_OK) else []
    return found + [p for p in sbtest.pyenv_pythons() if p not in found]


def cache_tag(python: str) -> str:
    return subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def pyc_of(source: Path, tag: str) -> Path:
    return source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"


def landlock_abi() -> int:
    """The kernel's Landlock ABI, 0 when there is none (asked through ctypes)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # landlock_create_ruleset
    return max(int(abi), 0)


class AgentBytecode(unittest.TestCase):
    def setUp(self) -> None:
        # The cases that expect bytecode run as a user who did not ask for none.
        for var in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
            os.environ.pop(var, None)
        if not sbtest.seccomp_unotify_available():
            self.skipTest("no seccomp")
        if not all(os.access(d, os.W_OK) for d in AGENT_DIRS):
            self.skipTest("the agent's source tree is read-only here")
        self.scratch = sbtest.Scratch()
        self.case = Case(self.scratch, [])

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def run_sb(self, python: str, *args: str, env: dict[str, str] | None = None) -> str:
        cp = self.case.run([*args, "-c", "print('ran')"], python=python, env=env)
        self.assertEqual((cp.returncode, cp.stdout), (0, "ran\n"), cp.stderr)
        return cp.stderr

    def loaded(self, python: str) -> dict[Path, str]:
        """Every agent module a start loads: its source and where its code
        came from (the .pyc, or the .py compiled in memory), from -v."""
        err = self.run_sb(python, "-v")
        found: dict[Path, str] = {}
        for m in re.finditer(r"^# code object from '?([^'\n]+)'?$", err, re.M):
            path = Path(m.group(1))
            if not any(d in path.parents for d in AGENT_DIRS):
                continue
            if path.suffix == ".pyc":
                source = path.parent.parent / (path.name.split(".")[0] + ".py")
                found[source] = "pyc"
            else:
                found[path] = "source"
        self.assertIn(AGENT_DIRS[1] / "sitecustomize.py", found, err[-2000:])
        return found

    def test_first_run_compiles_what_every_start_loads(self) -> None:
        pythons = interpreters()
        if not pythons:
            self.skipTest("no interpreter")
        for python in pythons:
            with self.subTest(python=python):
                tag = cache_tag(python)
                for d in AGENT_DIRS:
                    for pyc in d.rglob(f"*.{tag}.pyc"):
                        pyc.unlink()
                self.run_sb(python)
                loads = self.loaded(python)
                self.assertGreaterEqual(len(loads), 8, loads)
                self.assertEqual({s for s, how in loads.items() if how != "pyc"}, set(), loads)
                for source in loads:
                    self.assertTrue(pyc_of(source, tag).exists(), source)

    def test_each_startup_module_is_in_the_list(self) -> None:
        # Any module the agent starts with, its bytecode alone missing, is
        # compiled again: the C list knows it.
        tag = cache_tag(DEBIAN_PYTHON)
        self.run_sb(DEBIAN_PYTHON)
        for source in self.loaded(DEBIAN_PYTHON):
            with self.subTest(module=str(source)):
                pyc = pyc_of(source, tag)
                pyc.unlink()
                self.run_sb(DEBIAN_PYTHON)
                self.assertTrue(pyc.exists(), f"{source} is loaded at start but not in startup_modules")

    def test_stale_bytecode_is_replaced(self) -> None:
        tag = cache_tag(DEBIAN_PYTHON)
        self.run_sb(DEBIAN_PYTHON)
        pyc = pyc_of(AGENT_DIRS[0] / "_agent.py", tag)
        header = bytearray(pyc.read_bytes())
        header[8:12] = b"\0\0\0\0"  # a source mtime of 1970: stale
        pyc.write_bytes(bytes(header))
        self.run_sb(DEBIAN_PYTHON)
        self.assertNotEqual(pyc.read_bytes()[8:12], b"\0\0\0\0")

    def test_bytecode_of_a_source_changed_within_the_second_is_replaced(self) -> None:
        # A source rewritten in the second its bytecode was compiled keeps
        # the header's mtime; only the size tells.  compileall without -f
        # compares the mtime alone, so the interpreter compiled that module
        # in memory at every start.
        tag = cache_tag(DEBIAN_PYTHON)
        self.run_sb(DEBIAN_PYTHON)
        source = AGENT_DIRS[0] / "_agent.py"
        pyc = pyc_of(source, tag)
        header = bytearray(pyc.read_bytes())
        header[12:16] = (source.stat().st_size + 1).to_bytes(4, "little")
        pyc.write_bytes(bytes(header))
        self.run_sb(DEBIAN_PYTHON)
        self.assertEqual(int.from_bytes(pyc.read_bytes()[12:16], "little"), source.stat().st_size)

    # The cases where python-sb must not compile watch a fake interpreter
    # (cache tag cpython-399, which no other test uses) report that it was
    # run: the real interpreter's bytecode may be written meanwhile by the
    # python-sb of a test running in parallel.

    def fake_python(self, report_dir: Path) -> tuple[Path, Path]:
        """The fake interpreter installed as <scratch>/bin/python3.99, and
        the file it writes when python-sb runs it to compile."""
        fake = sbtest.TOP_BUILDDIR / "tests" / "progs" / "fake_python"
        if not fake.exists():
            self.skipTest("tests/progs/fake_python not built")
        bindir = self.case.dir / "bin"
        bindir.mkdir(exist_ok=True)
        python = bindir / "python3.99"
        shutil.copy(fake, python)
        report = report_dir / f"sbtest-fake-python.{os.getpid()}"
        report_dir.mkdir(exist_ok=True)
        (self.case.dir / "attack.conf").write_text(
            f"marker={self.case.dir / 'escaped'}\nport=9\nreport={report}\n")
        self.addCleanup(report.unlink, missing_ok=True)
        return python, report

    def compiled(self, python: Path, report: Path, *args: str, env: dict[str, str] | None = None,
                 user: bool = False) -> bool:
        report.unlink(missing_ok=True)
        if user:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sbtest.PYTHON_SB,
                   f"--python={python}", f"--pysandboxes-config={self.case.policy}", *args, "-c", "pass"]
            cp = subprocess.run(cmd, cwd=self.case.dir, capture_output=True, text=True, timeout=120)
        else:
            cp = self.case.run([*args, "-c", "pass"], python=str(python), env=env)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        return report.exists()

    def test_no_bytecode_when_the_user_says_so(self) -> None:
        python, report = self.fake_python(AGENT_DIRS[1])
        self.assertTrue(self.compiled(python, report), "python-sb did not compile for a new interpreter")
        prefix = str(self.case.dir / "prefix")
        for how, args, env in (("-B", ["-B"], None),
                               ("-X pycache_prefix", ["-X", f"pycache_prefix={prefix}"], None),
                               ("PYTHONDONTWRITEBYTECODE", [], {"PYTHONDONTWRITEBYTECODE": "1"}),
                               ("PYTHONPYCACHEPREFIX", [], {"PYTHONPYCACHEPREFIX": prefix})):
            with self.subTest(how=how):
                self.assertFalse(self.compiled(python, report, *args, env=env))

    def test_a_user_who_cannot_write_the_tree_runs_as_before(self) -> None:
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            self.skipTest("needs root and setpriv to run python-sb as another user")
        # The fake may write its report (Landlock lets it, beneath the
        # bootstrap), the user may not write the agent's bytecode there.
        inbox = AGENT_DIRS[1] / "__pycache__" / f"sbtest-inbox.{os.getpid()}"
        inbox.mkdir(parents=True)
        self.addCleanup(shutil.rmtree, inbox, ignore_errors=True)
        os.chown(inbox, 65534, 65534)
        python, report = self.fake_python(inbox)
        for path in (self.case.dir, self.case.dir / "bin", python):
            os.chmod(path, 0o755)
        for path in (self.case.policy, self.case.dir / "attack.conf"):
            os.chmod(path, 0o644)
        self.assertTrue(self.compiled(python, report), "python-sb did not compile for a new interpreter")
        self.assertFalse(self.compiled(python, report, user=True), "python-sb compiled as a user who may not")
        cp = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sbtest.PYTHON_SB,
                             f"--python={DEBIAN_PYTHON}", f"--pysandboxes-config={self.case.policy}",
                             "-c", "print('ran')"], cwd=self.case.dir, capture_output=True, text=True,
                            timeout=120)
        self.assertEqual((cp.returncode, cp.stdout), (0, "ran\n"), cp.stderr)

    def test_never_writes_into_another_users_directory(self) -> None:
        # Root running python-sb from a user's tree would leave files there
        # that user could not remove.
        if os.geteuid() != 0:
            self.skipTest("needs root to give the agent's __pycache__ to another user")
        python, report = self.fake_python(AGENT_DIRS[1])
        caches = [AGENT_DIRS[1] / "__pycache__", AGENT_DIRS[0] / "__pycache__", AGENT_DIRS[0] / "guards" / "__pycache__"]
        for cache in caches:
            cache.mkdir(exist_ok=True)
            owner = cache.stat()
            self.addCleanup(os.chown, cache, owner.st_uid, owner.st_gid)
            os.chown(cache, 65534, 65534)
        self.assertFalse(self.compiled(python, report), "python-sb compiled into another user's directory")
        self.doCleanups()
        python, report = self.fake_python(AGENT_DIRS[1])
        self.assertTrue(self.compiled(python, report), "python-sb did not compile for a new interpreter")

    def test_the_compile_run_is_confined(self) -> None:
        abi = landlock_abi()
        python, report = self.fake_python(AGENT_DIRS[1] / "__pycache__")
        marker = self.case.dir / "escaped"
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            listener.setblocking(False)
            (self.case.dir / "attack.conf").write_text(
                f"marker={marker}\nport={listener.getsockname()[1]}\nreport={report}\n")
            self.assertTrue(self.compiled(python, report), "python-sb did not run the compiler")
            got = dict(line.split("=", 1) for line in report.read_text().split())
            if abi >= 4:
                with self.assertRaises(BlockingIOError, msg="the compiler's connection was accepted"):
                    listener.accept()
        self.assertEqual(got["env"], "0")
        self.assertEqual(got["nnp"], "1")
        if abi < 1:
            self.skipTest("no Landlock: writes, TCP and signals are not confined here")
        self.assertFalse(marker.exists(), "the compiler wrote outside the agent")
        self.assertNotEqual(got["marker"], "0")
        if abi >= 4:
            self.assertNotEqual(got["connect"], "0")
        if abi >= 6:
            self.assertNotEqual(got["kill"], "0")


if __name__ == "__main__":
    sbtest.main(AgentBytecode)

#!/usr/bin/env python3
"""python-import= at the system-call level (issue 5): an import of a module
the list does not name cannot open or even find its files, whoever asks and
however (the agent disabled, a C extension, a loader called directly); the
modules the list names, and what the standard library imports for them,
load as usual."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import unittest
from pathlib import Path

import sbtest

EXT_C = textwrap.dedent('''\
    #include <Python.h>
    static struct PyModuleDef def = { PyModuleDef_HEAD_INIT, "sbext", NULL, -1, NULL };
    PyMODINIT_FUNC PyInit_sbext(void) { return PyModule_Create(&def); }
    ''')

PROG = textwrap.dedent('''\
    import sys


    def attempt(name, fn):
        try:
            fn()
        except ModuleNotFoundError:
            print(name, "ModuleNotFoundError", flush=True)  # or the agent's RuleModuleNotFoundError
        except Exception as e:
            print(name, type(e).__name__, flush=True)
        else:
            print(name, "OK", flush=True)


    def ext():
        import sbext


    def std():
        import colorsys


    def package():
        import pkgx


    def loader():
        import importlib.util
        spec = importlib.util.spec_from_file_location("plugin", "lib/plugin.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)


    def allowed():
        import json
        json.dumps([1])
        import email.parser


    for name, fn in [("ext", ext), ("std", std), ("package", package), ("loader", loader),
                     ("allowed", allowed)]:
        attempt(name, fn)
    ''')


def need_attribution() -> None:
    try:
        scope = int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        scope = 0
    if scope >= 2:
        sbtest.skip(f"kernel.yama.ptrace_scope={scope}: the supervisor may not read the program's frames")


def python_info(python: str) -> tuple[str, str, tuple[int, int]]:
    out = subprocess.run([python, "-c", "import sys, sysconfig; print(sysconfig.get_paths()['include']); "
                          "print(sysconfig.get_config_var('EXT_SUFFIX')); print(*sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return out[0], out[1], (int(out[2].split()[0]), int(out[2].split()[1]))


class Imports(unittest.TestCase):
    def setUp(self) -> None:
        need_attribution()
        self.s = sbtest.Scratch()
        self.root = self.s.dir.resolve()
        self.s.write("prog.py", PROG)
        self.s.write("lib/plugin.py", "print('PLUGIN BODY RAN', flush=True)\n")
        self.s.write("pkgx/__init__.py", "print('PACKAGE BODY RAN', flush=True)\n")

    def tearDown(self) -> None:
        self.s.__exit__()

    def build_ext(self, python: str) -> Path | None:
        include, suffix, _ = python_info(python)
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc or not Path(include, "Python.h").exists():
            return None
        for old in self.root.glob("sbext*.so"):
            old.unlink()
        src = self.s.write("sbext.c", EXT_C)
        so = self.root / f"sbext{suffix}"
        subprocess.run([cc, "-shared", "-fPIC", f"-I{include}", "-o", str(so), str(src)], check=True)
        return so

    def run_sb(self, rules: list[str], args: list[str], python: str):
        policy = self.s.policy("\n".join(rules) + "\n")
        (self.root / "log.json").unlink(missing_ok=True)
        return sbtest.run_sb([f"--pysandboxes-config={policy}", f"--log={self.root / 'log.json'}", *args],
                             cwd=self.root, python=python)

    def events(self) -> list[dict]:
        return [json.loads(l) for l in (self.root / "log.json").read_text().splitlines() if l.strip()]

    def check_refused(self, python: str, agent: bool) -> None:
        so = self.build_ext(python)
        if so is None and python == sbtest.PYTHON:
            sbtest.skip("no C compiler or no Python.h (python3-dev) for the test extension")
        cp = self.run_sb([f"expose-ro={self.root}", f"py-sandbox={'true' if agent else 'false'}",
                          "python-import=json, email, importlib"], ["prog.py"], python)
        results = dict(line.split(" ", 1) for line in cp.stdout.splitlines() if " " in line)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        if so is not None:
            self.assertEqual(results.get("ext"), "ModuleNotFoundError", cp.stdout + cp.stderr)
        self.assertEqual(results.get("std"), "ModuleNotFoundError", cp.stdout + cp.stderr)
        self.assertEqual(results.get("package"), "ModuleNotFoundError", cp.stdout + cp.stderr)
        # The loader, called directly, gets past the agent: not past the supervisor.
        self.assertNotEqual(results.get("loader"), "OK", cp.stdout + cp.stderr)
        self.assertEqual(results.get("allowed"), "OK", cp.stdout + cp.stderr)
        self.assertNotIn("BODY RAN", cp.stdout)
        evs = self.events()
        never_read = [str(self.root / "lib" / "plugin.py"), str(self.root / "pkgx" / "__init__.py")]
        if so is not None:
            never_read.append(str(so))
        for e in evs:
            if e["object"] in never_read or "/__pycache__/plugin." in e["object"]:
                self.assertNotEqual(e["verdict"], "allowed", e)
        if not agent:
            refused = {e["object"]: e for e in evs if e.get("cause") == "import"}
            self.assertIn(str(self.root / "lib" / "plugin.py"), refused)
            self.assertEqual(refused[str(self.root / "lib" / "plugin.py")]["tip"], "python-import=plugin")
            if so is not None:
                self.assertIn(str(so), refused)
            # One notice per process and module, with the program's line.
            notices = [l for l in cp.stderr.splitlines() if "is not allowed by a python-import rule" in l]
            self.assertEqual(len([l for l in notices if "'colorsys'" in l]), 1, cp.stderr)
            self.assertTrue(any(l.endswith("in std(): the import of 'colorsys' is not allowed by a "
                                           "python-import rule; add python-import=colorsys") and
                                f"at prog.py:{PROG.splitlines().index('    import colorsys') + 1} " in l
                                for l in notices), cp.stderr)

    def test_without_agent(self) -> None:
        self.check_refused(sbtest.PYTHON, agent=False)

    def test_with_agent(self) -> None:
        self.check_refused(sbtest.PYTHON, agent=True)

    def test_other_interpreters(self) -> None:
        """pyenv 3.11-3.13 when present; 3.10 has no attribution: nothing is
        refused because of it."""
        found = False
        for python in sbtest.pyenv_pythons():
            _, _, version = python_info(python)
            with self.subTest(python=python):
                found = True
                if version >= (3, 11):
                    self.check_refused(python, agent=False)
                    continue
                cp = self.run_sb([f"expose-ro={self.root}", "py-sandbox=false", "python-import=json"],
                                 ["-c", "import colorsys; print('imported')"], python)
                self.assertEqual(cp.stdout, "imported\n", cp.stderr)
        if not found:
            self.skipTest("no pyenv interpreters")

    def test_no_list_no_judging(self) -> None:
        """Without any python-import= line the supervisor judges no import
        (the agent, when present, applies its own empty list)."""
        cp = self.run_sb([f"expose-ro={self.root}", "py-sandbox=false"],
                         ["-c", "import colorsys, json; print('imported')"], sbtest.PYTHON)
        self.assertEqual(cp.stdout, "imported\n", cp.stderr)
        self.assertFalse([e for e in self.events() if e.get("cause")])

    def test_startup_and_c_option(self) -> None:
        """-c code is the program's own: judged.  The interpreter's start-up
        imports are not (no program frame yet)."""
        cp = self.run_sb([f"expose-ro={self.root}", "py-sandbox=false", "python-import=json"],
                         ["-c", "import json\ntry:\n import colorsys\nexcept ImportError as e:\n print(type(e).__name__)"],
                         sbtest.PYTHON)
        self.assertEqual((cp.returncode, cp.stdout), (0, "ModuleNotFoundError\n"), cp.stderr)
        self.assertIn("at <string>:3 in <module>(): the import of 'colorsys'", cp.stderr)


if __name__ == "__main__":
    sbtest.main(Imports)

#!/usr/bin/env python3
"""python-sb --attach PID --learn FILE alone is enough for a fresh enforced
run (issue 6, "Done when"): the learner also gets what the program did
before the attach, read from the target's sys.modules: its imports
(python-import=) and the files they came from (the main script and a module
of its own directory, so its directory is exposed).

tests/targets/attach_imports/main.py imports json, csv, decimal, colorsys and
a local module at start-up, then only reads data/tick every 50 ms: nothing
seen while attached names a module.  The learned file must list those
imports (with the "# why:" of the sys.modules read) and run the same program
fresh under python-sb with the agent on (py-sandbox=true, imports enforced);
the same file without its python-import= lines must make that run fail, so
the check has teeth.  On the Debian interpreter always, on pyenv's 3.12 and
3.13 when installed (else those variants are skipped)."""
import json
import re
import shutil
import signal
import subprocess
import tempfile
import unittest
from pathlib import Path

import attachlib as al
import sbtest

SRC = al.TOP_SRCDIR / "tests" / "targets" / "attach_imports"
IMPORTS = {"json", "csv", "decimal", "colorsys", "attach_imports_local"}
TICK_RE = r'\] openat\(AT_FDCWD, "data/tick", O_RDONLY\|O_CLOEXEC\) = \d+'


def pyenv(minor: str) -> str | None:
    for exe in sbtest.pyenv_pythons():
        if f"/{minor}." in exe:
            return exe
    return None


def imports_of(text: str) -> set[str]:
    names: set[str] = set()
    for m in re.finditer(r"(?m)^python-import=(.*)$", text):
        names.update(n.strip() for n in m.group(1).split(",") if n.strip())
    return names


class AttachLearnImports(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="sbattach-imp-"))
        for f in ("main.py", "attach_imports_local.py"):
            shutil.copy(SRC / f, self.dir / f)
        (self.dir / "data").mkdir()
        (self.dir / "data" / "tick").write_text("tick\n")
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(al.WAIT)
        shutil.rmtree(self.dir, ignore_errors=True)

    def fresh(self, python: str, rules: Path) -> subprocess.CompletedProcess:
        """The program run fresh under python-sb, enforced by `rules`."""
        return sbtest.run_sb([f"--pysandboxes-config={rules}", "main.py", "data", "--exit", "3"],
                             cwd=self.dir, python=python, timeout=al.WAIT)

    def learn_by_attaching(self, python: str) -> str:
        """Start the program, attach with --learn, detach, stop it: the rules."""
        rules = self.dir / ".py-sandboxes"
        self.proc = subprocess.Popen([python, "main.py", "data", "--exit", "3"], cwd=self.dir,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = al.Lines(self.proc.stdout), al.Lines(self.proc.stderr)
        ready = out.wait_for(r"^READY pid=\d+$")
        self.assertTrue(ready, err.text())
        pid = int(ready.split("=")[1])
        log = self.dir / "attach.jsonl"
        tr = al.Tracer(al.attach_argv(str(pid), learn=str(rules), log=str(log), trace=True), cwd=self.dir)
        # Attached once a call of the loop shows: every import is long done.
        self.assertTrue(tr.wait_for(TICK_RE), tr.err.text())
        tr.signal(signal.SIGINT)
        rc, text = tr.finish()
        self.assertEqual(rc, 0, text)
        self.assertIn("Write all learning rules in", text)
        self.assertNotRegex(text, r"\] openat\([^\n]*\.py\"", "an import seen while attached")
        # The program carried on and ends normally.
        (self.dir / "data" / "stop").write_text("")
        self.assertEqual(self.proc.wait(al.WAIT), 3, err.text())
        out.thread.join(al.WAIT)
        self.assertRegex(out.text(), r"DONE .*local-module")
        # The JSON log has the events the learner was given.
        events = [json.loads(line) for line in log.read_text().splitlines()]
        self.assertTrue([e for e in events if e["kind"] == "import" and e["object"] == "decimal"], events[:5])
        main = str((self.dir / "main.py").resolve())
        self.assertTrue([e for e in events if e["kind"] == "path" and e["object"] == main], events[:5])
        return rules.read_text()

    def check(self, python: str) -> None:
        learned = self.learn_by_attaching(python)
        rules = self.dir / ".py-sandboxes"
        # The imports made before the attach, from sys.modules, said so.
        self.assertTrue(IMPORTS <= imports_of(learned), learned)
        self.assertIn("# why: in sys.modules when attached", learned)
        self.assertNotIn("python-import=*", learned)
        self.assertNotRegex(learned, r"(?m)^python-import=.*\b(sys|builtins|__main__)\b")
        # The program's directory, from the modules' files (main.py and the local module).
        self.assertRegex(learned, r"(?m)^expose-ro=(\.|%s)$" % re.escape(str(self.dir)))
        self.assertRegex(learned, r"(?m)^py-sandbox=true$")

        # A fresh enforced run works under what was learned by attaching alone.
        r = self.fresh(python, rules)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"DONE .*local-module")
        self.assertNotIn("DENIED", r.stderr)

        # The imports are what made it work: without them the agent refuses.
        bare = self.dir / "no-imports.py-sandboxes"
        bare.write_text("".join(line for line in learned.splitlines(keepends=True)
                                if not line.startswith("python-import=")))
        r = self.fresh(python, bare)
        self.assertNotEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("is not allowed by a rule", r.stderr)
        self.assertNotIn("DONE", r.stdout)

    def test_debian(self):
        self.check(al.DEBIAN_PYTHON)

    def test_pyenv_312(self):
        py = pyenv("3.12")
        if not py:
            self.skipTest("no pyenv 3.12")
        self.check(py)

    def test_pyenv_313(self):
        py = pyenv("3.13")
        if not py:
            self.skipTest("no pyenv 3.13")
        self.check(py)


if __name__ == "__main__":
    al.main(AttachLearnImports)

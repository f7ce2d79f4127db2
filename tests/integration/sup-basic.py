#!/usr/bin/env python3
"""An allowed program behaves exactly as under bare python: same stdout,
stderr and exit status, for a script, -c, -m, a script on stdin and its
arguments; a refusal prints one notice naming the rule to add."""
from __future__ import annotations

import json
import subprocess
import unittest

import sbtest
from sup_util import PROGS, SECRET_TEXT, Tree, pythons, run, run_bare

PROGRAM = '''
import os, sys
root = sys.argv[1]
with open(os.path.join(root, "data", "public.txt")) as f:
    text = f.read()
os.makedirs(os.path.join(root, "out", "sub"), exist_ok=True)
with open(os.path.join(root, "out", "sub", "result.txt"), "w") as f:
    f.write(text.upper())
os.rename(os.path.join(root, "out", "sub", "result.txt"), os.path.join(root, "out", "result.txt"))
print("args:", sys.argv[2:])
print("read:", text.strip(), "| listed:", sorted(os.listdir(os.path.join(root, "data"))))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
'''


class Basic(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_script_same_as_bare(self) -> None:
        """Every interpreter at hand: Debian's, the configured one, pyenv's."""
        s = self.t.script(PROGRAM)
        args = [str(s), str(self.t.root), "7", "x y", "--flag"]
        for py in pythons():
            with self.subTest(python=py):
                cp = run(self.t, args, python=py)
                bare = run_bare(self.t, args, python=py)
                self.assertEqual((cp.stdout, cp.stderr, cp.returncode), (bare.stdout, bare.stderr, bare.returncode))
                self.assertEqual(cp.returncode, 7)
                self.assertEqual((self.t.out / "result.txt").read_text(), "PUBLIC DATA\n")
                (self.t.out / "result.txt").unlink()

    def test_dash_c(self) -> None:
        cp = run(self.t, ["-c", "import sys; print(sum(range(10)), sys.argv[1:]); sys.exit(3)", "a", "b"])
        self.assertEqual((cp.stdout, cp.returncode), ("45 ['a', 'b']\n", 3), cp.stderr)

    def test_dash_m(self) -> None:
        doc = '{"b": [1, 2], "a": null}'
        cp = run(self.t, ["-m", "json.tool", "--sort-keys"], input=doc)
        bare = sbtest.run_bare(["-m", "json.tool", "--sort-keys"], input=doc, cwd=self.t.root)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(cp.stdout, bare.stdout)
        self.assertEqual(json.loads(cp.stdout), json.loads(doc))

    def test_stdin_script(self) -> None:
        cp = run(self.t, ["-", "one", "two"], input="import sys\nprint('stdin', sys.argv)\n")
        self.assertEqual(cp.stdout, "stdin ['-', 'one', 'two']\n", cp.stderr)
        self.assertEqual(cp.returncode, 0)

    def test_exceptions_and_signals(self) -> None:
        cp = run(self.t, ["-c", "raise SystemExit('bye')"])
        self.assertEqual((cp.returncode, cp.stderr.strip()), (1, "bye"))
        cp = run(self.t, ["-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
        self.assertIn(cp.returncode, (128 + 15, -15))

    def test_outer_supervisor(self) -> None:
        """Under another seccomp supervisor (tests/progs/sup_nest), the listener
        cannot be ours: EBUSY, said clearly, status 255, the program not run."""
        nest = PROGS / "sup_nest"
        if not nest.exists():
            self.fail(f"{nest} not built")
        self.t.write_policy()
        marker = self.t.out / "ran"
        cp = subprocess.run([str(nest), sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}",
                             f"--pysandboxes-config={self.t.policy}", "-c",
                             f"open({str(marker)!r}, 'w')"], capture_output=True, text=True, timeout=60)
        if cp.returncode == 77:
            self.skipTest("no seccomp listener here")
        self.assertEqual(cp.returncode, 255, cp.stderr)
        self.assertIn("EBUSY", cp.stderr)
        self.assertFalse(marker.exists())

    def test_refusal_notice(self) -> None:
        s = self.t.script('''
import sys
try:
    open(sys.argv[1])
except FileNotFoundError:
    print("hidden")
''')
        cp = run(self.t, [str(s), str(self.t.secret / "key")])
        self.assertEqual(cp.stdout, "hidden\n")
        notices = [l for l in cp.stderr.splitlines() if l.startswith("python-sb: DENIED")]
        self.assertEqual(len(notices), 1, cp.stderr)
        self.assertIn(f"open '{self.t.secret}/key' (read)", notices[0])
        self.assertIn("add expose-ro=", notices[0])
        self.assertNotIn(SECRET_TEXT, cp.stdout + cp.stderr)

    def test_own_proc_entries_as_bare(self) -> None:
        """The program's own /proc entries, which the supervisor reads through
        its own /proc/self at first: a descriptor it does not have (300), a
        thread's task directory, /dev/fd (a symlink to /proc/self/fd), from
        the main thread and from another: all as under bare python."""
        s = self.t.script('''
import os, sys, threading
hi = os.dup2(os.open(os.path.join(sys.argv[1], "data", "public.txt"), os.O_RDONLY), 300)
def probe(label):
    tid = threading.get_native_id()
    for name, fn in (
        ("task-stat", lambda: len(open(f"/proc/self/task/{tid}/stat").read()) > 0),
        ("thread-self", lambda: len(open("/proc/thread-self/stat").read()) > 0),
        ("fd-link", lambda: os.readlink(f"/proc/self/fd/{hi}").endswith("/public.txt")),
        ("fd-reopen", lambda: open(f"/proc/self/fd/{hi}").read()),
        ("dev-fd", lambda: open(f"/dev/fd/{hi}").read()),
        ("fdinfo", lambda: open(f"/proc/self/fdinfo/{hi}").read().startswith("pos:")),
        ("task-fd", lambda: os.readlink(f"/proc/self/task/{tid}/fd/{hi}").endswith("/public.txt")),
    ):
        try:
            print(label, name, "OK", repr(fn()))
        except OSError as e:
            print(label, name, "ERR", e.errno)
probe("main")
t = threading.Thread(target=probe, args=("thread",))
t.start()
t.join()
''')
        args = [str(s), str(self.t.root)]
        bare = run_bare(self.t, args)
        self.assertEqual(bare.returncode, 0, bare.stderr)
        self.assertNotIn("ERR", bare.stdout)
        for layer in ("none", "auto"):
            with self.subTest(os_sandbox=layer):
                cp = run(self.t, args, ["python-api=ALLOW:threads", f"os-sandbox={layer}"])
                self.assertEqual((cp.stdout, cp.returncode), (bare.stdout, 0), cp.stderr)


if __name__ == "__main__":
    sbtest.main(Basic)

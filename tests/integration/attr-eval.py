#!/usr/bin/env python3
"""Eval-origin refusals (issue 5): what code from eval/exec/compile opens,
connects or imports is refused at the system-call level unless an eval-*
rule grants it, even where the agent lets eval run unguarded
(python-api=ALLOW:dynamic-code) or is not there at all; the same calls made
by the program's own code are judged by the policy alone."""
from __future__ import annotations

import errno
import socket
import textwrap
import unittest
from pathlib import Path

import sbtest

PROG = textwrap.dedent('''\
    import os, socket, sys


    def attempt(name, fn):
        try:
            r = fn()
        except OSError as e:
            print(name, "ERR", e.errno, type(e).__name__, str(e), flush=True)
        except ImportError as e:
            print(name, "IMPORT", type(e).__name__, flush=True)
        else:
            print(name, "OK", r, flush=True)


    def connect():
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5):
            return "connected"


    attempt("plain", lambda: open("data.txt").read().strip())
    attempt("eval", lambda: eval("open('data.txt').read().strip()"))
    attempt("exec", lambda: exec("import colorsys"))
    attempt("net", connect)
    attempt("evalnet", lambda: eval("connect()"))
    ''')


def need_attribution() -> None:
    try:
        scope = int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        scope = 0
    if scope >= 2:
        sbtest.skip(f"kernel.yama.ptrace_scope={scope}: the supervisor may not read the program's frames")


class Eval(unittest.TestCase):
    def setUp(self) -> None:
        need_attribution()
        self.s = sbtest.Scratch()
        self.root = self.s.dir.resolve()
        self.s.write("prog.py", PROG)
        (self.root / "data.txt").write_text("hello\n")
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]

    def tearDown(self) -> None:
        self.srv.close()
        self.s.__exit__()

    def accepted(self) -> int:
        """Connections that reached the server (queued before connect()
        returned: an empty queue after the run means none arrived)."""
        self.srv.setblocking(False)
        n = 0
        while True:
            try:
                c, _ = self.srv.accept()
            except BlockingIOError:
                return n
            c.close()
            n += 1

    def run_sb(self, rules: list[str]):
        base = [f"expose-ro={self.root}", f"net=ALLOW|TCP|127.0.0.1/32|{self.port}|OUT",
                "python-import=socket, colorsys"]
        policy = self.s.policy("\n".join(base + rules) + "\n")
        cp = sbtest.run_sb([f"--pysandboxes-config={policy}", "prog.py", str(self.port)], cwd=self.root)
        return cp, dict(l.split(" ", 1) for l in cp.stdout.splitlines() if " " in l)

    def test_unguarded_eval_is_held_by_the_supervisor(self) -> None:
        cp, r = self.run_sb(["python-api=ALLOW:dynamic-code"])
        self.assertEqual(r.get("plain"), "OK hello", cp.stdout + cp.stderr)
        self.assertEqual(r.get("net"), "OK connected", cp.stdout + cp.stderr)
        data = self.root / "data.txt"
        self.assertEqual(r.get("eval"), f"ERR {errno.EACCES} RulePermissionError Access to '{data}' from code "
                         "run by eval/exec must be granted by eval-call=open.", cp.stdout + cp.stderr)
        self.assertEqual(r.get("exec"), "IMPORT ModuleNotFoundError", cp.stdout + cp.stderr)
        self.assertTrue(r.get("evalnet", "").startswith(f"ERR {errno.ECONNREFUSED} "), cp.stdout + cp.stderr)
        self.assertEqual(self.accepted(), 1, "only the program's own connect got through")
        line = next(i for i, l in enumerate(PROG.splitlines(), 1) if l.startswith('attempt("eval"'))
        self.assertIn(f"python-sb: DENIED open '{data}' (read) at prog.py:{line} in <lambda>() from eval: "
                      "code from eval/exec may not open files; add eval-call=open", cp.stderr)
        self.assertIn("from eval: code from eval/exec may not import 'colorsys'; add eval-import=colorsys",
                      cp.stderr)
        self.assertIn("from eval: code from eval/exec may not use the network; add eval-call=socket", cp.stderr)

    def test_eval_rules_grant(self) -> None:
        """Without the agent nothing guards eval: eval-call=open and
        eval-import=colorsys let the supervisor allow exactly that."""
        cp, r = self.run_sb(["py-sandbox=false", "eval-call=open", "eval-import=colorsys"])
        self.assertEqual(r.get("eval"), "OK hello", cp.stdout + cp.stderr)
        self.assertEqual(r.get("exec"), "OK None", cp.stdout + cp.stderr)
        self.assertTrue(r.get("evalnet", "").startswith(f"ERR {errno.ECONNREFUSED} "), cp.stdout + cp.stderr)
        self.assertEqual(self.accepted(), 1)
        cp, r = self.run_sb(["py-sandbox=false", "eval-call=open", "eval-import=DENY:colorsys",
                             "eval-import=*"])
        self.assertEqual(r.get("exec"), "IMPORT ModuleNotFoundError", cp.stdout + cp.stderr)

    def test_library_exec_is_not_eval(self) -> None:
        """exec() run by the standard library (dataclasses, namedtuple) on
        the program's behalf is not the program's eval."""
        self.s.write("lib.py", textwrap.dedent('''\
            import collections, dataclasses

            @dataclasses.dataclass
            class P:
                x: int

            T = collections.namedtuple("T", "a b")
            print(open("data.txt").read().strip(), P(1), T(1, 2))
            '''))
        policy = self.s.policy(f"expose-ro={self.root}\npy-sandbox=false\npython-import=collections, dataclasses\n")
        cp = sbtest.run_sb([f"--pysandboxes-config={policy}", "lib.py"], cwd=self.root)
        self.assertEqual((cp.returncode, cp.stdout), (0, "hello P(x=1) T(a=1, b=2)\n"), cp.stderr)


if __name__ == "__main__":
    sbtest.main(Eval)

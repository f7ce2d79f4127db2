#!/usr/bin/env python3
"""Refusal notes (issue 8): before it answers a refused open or connect, the
supervisor tells the agent why, and the program gets the upstream exception
(RuleFileNotFoundError, RulePermissionError, RuleSocketConnectionRefusedError,
each also the natural built-in one) with the supervisor's explanation."""
from __future__ import annotations

import socket
import textwrap
import unittest

import sbtest

PROG = textwrap.dedent('''\
    import os, socket, sys


    def show(name, fn):
        try:
            fn()
        except OSError as e:
            kinds = [c.__name__ for c in type(e).__mro__
                     if c.__name__ in ("RuleFileNotFoundError", "RulePermissionError",
                                       "RuleSocketConnectionRefusedError", "FileNotFoundError",
                                       "PermissionError", "ConnectionRefusedError")]
            print(name, e.errno, ",".join(kinds), str(e), sep="|", flush=True)
        else:
            print(name, "OK", sep="|", flush=True)


    def connect():
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5):
            pass


    show("read", lambda: open(sys.argv[2]).read())
    show("os.open", lambda: os.open(sys.argv[2], os.O_RDONLY))
    show("os.open-kw", lambda: os.open(path=sys.argv[2], flags=os.O_RDONLY, mode=0o777, dir_fd=None))
    show("write", lambda: open("app/new.txt", "w"))
    show("write-kw", lambda: open(file="app/new.txt", mode="w", encoding="utf-8"))
    show("allowed-kw", lambda: os.close(os.open(path="app/prog.py", flags=os.O_RDONLY)))


    class Kept:
        # Built-ins kept by a class stay plain functions, not methods.
        opener = open
        os_opener = os.open


    show("class-open", lambda: Kept().opener(sys.argv[2]))
    show("class-os.open", lambda: Kept().os_opener(sys.argv[2], os.O_RDONLY))
    show("class-allowed", lambda: Kept().opener("app/prog.py").close())
    show("connect", connect)
    ''')


class Notes(unittest.TestCase):
    def setUp(self) -> None:
        self.s = sbtest.Scratch()
        self.root = self.s.dir.resolve()
        self.s.write("app/prog.py", PROG)
        self.s.write("secret/key", "k\n")

    def tearDown(self) -> None:
        self.s.__exit__()

    def test_rule_exceptions(self) -> None:
        with socket.socket() as srv:
            srv.bind(("127.0.0.1", 0))
            srv.listen(1)
            port = srv.getsockname()[1]
            policy = self.s.policy(f"expose-ro={self.root / 'app'}\npython-import=socket\n")
            key = self.root / "secret" / "key"
            cp = sbtest.run_sb([f"--pysandboxes-config={policy}", "app/prog.py", str(port), str(key)],
                               cwd=self.root)
        got = {l.split("|")[0]: l.split("|")[1:] for l in cp.stdout.splitlines()}
        self.assertEqual(got.get("read"), ["2", "RuleFileNotFoundError,FileNotFoundError",
                                           f"Access to '{key}' must be accepted by a rule."], cp.stderr)
        self.assertEqual(got.get("os.open"), ["2", "RuleFileNotFoundError,FileNotFoundError",
                                              f"Access to '{key}' must be accepted by a rule."], cp.stderr)
        self.assertEqual(got.get("write"), ["13", "RulePermissionError,PermissionError",
                                            f"Cannot write to '{self.root / 'app'}/'. Rule "
                                            f"'expose-ro={self.root / 'app'}' from .py-sandboxes(1)"], cp.stderr)
        # Keyword arguments reach the originals as given (os.open names its
        # path `path`, open `file`), refused or not.
        self.assertEqual(got.get("os.open-kw"), got.get("os.open"), cp.stdout + cp.stderr)
        self.assertEqual(got.get("write-kw"), got.get("write"), cp.stdout + cp.stderr)
        self.assertEqual(got.get("allowed-kw"), ["OK"], cp.stdout + cp.stderr)
        self.assertEqual(got.get("class-open"), got.get("read"), cp.stdout + cp.stderr)
        self.assertEqual(got.get("class-os.open"), got.get("os.open"), cp.stdout + cp.stderr)
        self.assertEqual(got.get("class-allowed"), ["OK"], cp.stdout + cp.stderr)
        self.assertEqual(got.get("connect"), ["111", "RuleSocketConnectionRefusedError,ConnectionRefusedError",
                                              f"Guard network connection to '[127.0.0.1]:{port}' DENIED by "
                                              f"implicit default policy."], cp.stderr)

    def test_without_agent_plain_errors(self) -> None:
        policy = self.s.policy(f"expose-ro={self.root / 'app'}\npy-sandbox=false\n")
        key = self.root / "secret" / "key"
        cp = sbtest.run_sb([f"--pysandboxes-config={policy}", "app/prog.py", "9", str(key)], cwd=self.root)
        got = {l.split("|")[0]: l.split("|")[1:] for l in cp.stdout.splitlines()}
        self.assertEqual(got.get("read", [None, None])[:2], ["2", "FileNotFoundError"], cp.stderr)


if __name__ == "__main__":
    sbtest.main(Notes)

#!/usr/bin/env python3
"""Attribution in learning (issue 5): each learned line is followed by a
`# why:` comment naming the program's line that first needed it; variables
the program sets itself (load_dotenv) are not learned, nor a raw socket no
net= rule could describe."""
from __future__ import annotations

import textwrap
import unittest
from pathlib import Path

import sbtest

PROG = textwrap.dedent('''\
    import os, socket


    def load():
        return open("data/f.txt").read().strip()


    def dotenv():
        os.environ.get("FROM_DOTENV")          # read first, as load_dotenv() does
        os.environ["FROM_DOTENV"] = "x"        # then set


    def raw():
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
            s.sendto(b"x", ("127.0.0.1", 9))
        except OSError:
            pass


    dotenv()
    print(load(), os.environ.get("WANTED_VAR"))
    raw()
    ''')


def need_attribution() -> None:
    try:
        scope = int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        scope = 0
    if scope >= 2:
        sbtest.skip(f"kernel.yama.ptrace_scope={scope}: the supervisor may not read the program's frames")


class Learn(unittest.TestCase):
    def setUp(self) -> None:
        need_attribution()
        self.s = sbtest.Scratch()
        self.root = self.s.dir.resolve()
        self.s.write("app/prog.py", PROG)
        self.s.write("data/f.txt", "content\n")

    def tearDown(self) -> None:
        self.s.__exit__()

    def test_why_comments(self) -> None:
        env = {"WANTED_VAR": "w", "FROM_DOTENV": "launching value"}
        cp = sbtest.run_sb(["--learn", "app/prog.py"], cwd=self.root, env=env)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(cp.stdout, "content w\n")
        lines = (self.root / ".py-sandboxes").read_text().splitlines()
        at = lines.index("expose-ro=./data")
        load_line = PROG.splitlines().index('    return open("data/f.txt").read().strip()') + 1
        self.assertEqual(lines[at + 1], f"# why: app/prog.py:{load_line} in load()")
        self.assertIn("env=WANTED_VAR=${WANTED_VAR}", lines)
        self.assertFalse([l for l in lines if "FROM_DOTENV" in l], "a variable the program set is not learned")
        self.assertFalse([l for l in lines if l.startswith("net=")], "a raw socket gives no net= rule")
        # The learned file runs the program.
        cp = sbtest.run_sb(["app/prog.py"], cwd=self.root, env=env)
        self.assertEqual((cp.returncode, cp.stdout), (0, "content w\n"), cp.stderr)


if __name__ == "__main__":
    sbtest.main(Learn)

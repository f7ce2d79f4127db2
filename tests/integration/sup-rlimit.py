#!/usr/bin/env python3
"""RLIMIT_NOFILE exhaustion fails closed: the supervisor opened the file but
cannot inject it, and the program gets EMFILE (never a CONTINUE that would
open it unmediated); afterwards everything works again.  limit-nofile= sets
the limit in the child."""
from __future__ import annotations

import unittest

import sbtest
from sup_util import Tree, run

EXHAUST = '''
import errno, os, resource, sys
data, secret = sys.argv[1], sys.argv[2]
resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
fds, err = [], None
while True:
    try:
        fds.append(os.open(data, os.O_RDONLY))
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
try:
    os.open(secret, os.O_RDONLY)
except OSError as e:
    print("secret at the limit:", errno.errorcode[e.errno])
os.close(fds.pop())
print("exhausted:", err, "open:", len(os.listdir("/proc/self/fd")) <= 32)
for fd in fds:
    os.close(fd)
with open(data) as f:
    print("after:", f.read().strip())
'''


class Rlimit(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_exhaustion(self) -> None:
        s = self.t.script(EXHAUST)
        cp = run(self.t, [str(s), str(self.t.data / "public.txt"), str(self.t.secret / "key")])
        self.assertEqual(cp.stdout, "secret at the limit: ENOENT\n"
                                    "exhausted: EMFILE open: True\n"
                                    "after: public data\n", cp.stderr)
        self.assertEqual(cp.returncode, 0)

    def test_limit_key(self) -> None:
        cp = run(self.t, ["-c", "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE))"],
                 ["limit-nofile=77"])
        self.assertEqual(cp.stdout, "(77, 77)\n", cp.stderr)


if __name__ == "__main__":
    sbtest.main(Rlimit)

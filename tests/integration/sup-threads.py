#!/usr/bin/env python3
"""32 threads x 2000 opens: every decision is right (the exposed file's
content every time, ENOENT for the secret every time); under learning, no
event is lost (one per open in the log)."""
from __future__ import annotations

import json
import unittest

import sbtest
from sup_util import SECRET_TEXT, Tree, run

THREADS, OPENS = 32, 2000

HAMMER = '''
import os, sys, threading
data, secret, threads, opens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = {}
for k in range(threads):
    p = os.path.join(data, f"f{k}")
    want[p] = open(p).read()
bad = []
counts = [0] * threads
def work(k):
    p = os.path.join(data, f"f{k}")
    for i in range(opens):
        if i % 10 == 9:
            try:
                open(secret).read()
                bad.append(("secret read", k, i))
            except FileNotFoundError:
                counts[k] += 1
        else:
            with open(p) as f:
                if f.read() == want[p]:
                    counts[k] += 1
                else:
                    bad.append(("wrong content", k, i))
ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
print("correct", sum(counts), "bad", len(bad), bad[:3])
'''


class Threads(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)
        for k in range(THREADS):
            (self.t.data / f"f{k}").write_text(f"content of file {k}\n" * (k + 1))
        self.s = self.t.script(HAMMER)
        self.args = [str(self.s), str(self.t.data), str(self.t.secret / "key"), str(THREADS), str(OPENS)]

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_enforce(self) -> None:
        cp = run(self.t, self.args, ["python-api=ALLOW:threads"], timeout=300)
        self.assertEqual(cp.stdout, f"correct {THREADS * OPENS} bad 0 []\n", cp.stderr[-2000:])
        self.assertEqual(cp.returncode, 0)
        self.assertNotIn(SECRET_TEXT, cp.stdout)

    def test_learn_loses_nothing(self) -> None:
        log = self.t.root / "events.jsonl"
        opens = 200
        args = self.args[:-1] + [str(opens)]
        cp = run(self.t, ["--learn", f"--log={log}", *args], timeout=300)
        self.assertEqual(cp.returncode, 0, cp.stderr[-2000:])
        n = 0
        for line in log.read_text().splitlines():
            ev = json.loads(line)
            if str(self.t.data) in json.dumps(ev) and ev.get("syscall", "").startswith("open"):
                n += 1
        # each thread: opens * 9/10 of its file, plus the reads of `want`.
        self.assertGreaterEqual(n, THREADS * opens * 9 // 10 + THREADS)


if __name__ == "__main__":
    sbtest.main(Threads)

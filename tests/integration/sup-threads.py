#!/usr/bin/env python3
"""32 threads x 2000 opens: every decision is right (the exposed file's
content every time, ENOENT for the secret every time); under learning, no
event is lost (one per open in the log).  The same with 8 processes of 4
threads each (SPEC §9: 32 threads and 8 processes): right decisions in
each, and exactly one event per open in the log."""
from __future__ import annotations

import json
import os
import subprocess
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


# 8 processes of HAMMER started by one parent, which prints each one's
# output line and exit status.
PROCESSES, PER_PROCESS, PROC_OPENS = 8, 4, 1000
MULTI = '''
import subprocess, sys
hammer, *args, n = sys.argv[1:]
kids = [subprocess.Popen([sys.executable, hammer, *args], stdout=subprocess.PIPE, text=True) for _ in range(int(n))]
for p in kids:
    print(p.communicate()[0].strip(), p.returncode)
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


    def multi(self, *sb_args: str) -> subprocess.CompletedProcess[str]:
        script = self.t.script(MULTI, name="multi.py")
        return run(self.t, [*sb_args, str(script), str(self.s), str(self.t.data), str(self.t.secret / "key"),
                            str(PER_PROCESS), str(PROC_OPENS), str(PROCESSES)],
                   ["python-api=ALLOW:process-exec, threads"], timeout=300)

    def test_eight_processes_enforce(self) -> None:
        cp = self.multi()
        self.assertEqual(cp.returncode, 0, cp.stderr[-2000:])
        self.assertEqual(cp.stdout, f"correct {PER_PROCESS * PROC_OPENS} bad 0 [] 0\n" * PROCESSES,
                         cp.stderr[-2000:])
        self.assertNotIn(SECRET_TEXT, cp.stdout)

    def test_eight_processes_learn_loses_nothing(self) -> None:
        # Every process opens f0..f3: 900 times from its thread, once to
        # know the content.  Learning refuses nothing (the secret is read).
        log = self.t.root / "events.jsonl"
        cp = self.multi("--learn", f"--log={log}")
        self.assertEqual(cp.returncode, 0, cp.stderr[-2000:])
        self.assertEqual(len(cp.stdout.splitlines()), PROCESSES, cp.stdout)
        counts: dict[str, int] = {}
        for line in log.read_text().splitlines():
            ev = json.loads(line)
            path = str(ev.get("object", ""))
            if os.path.dirname(path) == str(self.t.data) and ev.get("syscall") == "openat":
                counts[os.path.basename(path)] = counts.get(os.path.basename(path), 0) + 1
        per_file = PROCESSES * (PROC_OPENS - PROC_OPENS // 10 + 1)
        self.assertEqual({n: c for n, c in counts.items() if n.startswith("f")},
                         {f"f{k}": per_file for k in range(PER_PROCESS)})

if __name__ == "__main__":
    sbtest.main(Threads)

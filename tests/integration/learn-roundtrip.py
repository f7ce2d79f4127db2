#!/usr/bin/env python3
"""Learning a multi-threaded, multi-process program misses nothing.

Four threads and two forked processes each read and write their own
directories; the program prints what it touched.  Learned with --log, every
one of those directories is in the rule file (rw where it wrote), the log has
one JSON object per line with every file the program wrote, the threads and
the forks are learned as their python-api categories, and the run enforced by
the learned file gives the same output without a single refusal.
"""
from __future__ import annotations

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import learnlib  # noqa: E402
import sbtest  # noqa: E402

THREADS, PROCS, FILES = 4, 2, 40

PROGRAM = f"""
import os, sys, threading
THREADS, PROCS, FILES = {THREADS}, {PROCS}, {FILES}
touched = set()
lock = threading.Lock()

def work(kind, i):
    for j in range(FILES):
        with open(f"rd/{{kind}}{{i}}/in.txt") as f:
            f.read()
        with open(f"work/{{kind}}{{i}}/f{{j}}", "w") as f:
            f.write(str(j))
    with lock:
        touched.add(f"{{kind}}{{i}}")

threads = [threading.Thread(target=work, args=("t", i)) for i in range(THREADS)]
for t in threads:
    t.start()
pids = []
for k in range(PROCS):
    pid = os.fork()
    if pid == 0:
        work("p", k)
        os._exit(0)
    pids.append(pid)
for t in threads:
    t.join()
for pid in pids:
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    touched.add(f"p{{pids.index(pid)}}")
print("touched", " ".join(sorted(touched)))
"""


class Roundtrip(unittest.TestCase):
    def test_threads_and_processes(self) -> None:
        with sbtest.Scratch() as s:
            s.write("app/prog.py", PROGRAM)
            names = [f"t{i}" for i in range(THREADS)] + [f"p{k}" for k in range(PROCS)]
            for n in names:
                s.write(f"rd/{n}/in.txt", "x\n")
                (s.dir / "work" / n).mkdir(parents=True)
            log = s.dir.parent / (s.dir.name + ".log")
            try:
                r = sbtest.run_sb([f"--log={log}", "app/prog.py"], cwd=s.dir, timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout, "touched " + " ".join(sorted(names)) + "\n")
                lines = learnlib.rule_lines(s.dir / learnlib.RULES)
                for n in names:
                    self.assertIn(f"expose-ro=./rd/{n}", lines)
                    self.assertIn(f"expose-rw=./work/{n}", lines)
                self.assertIn("python-api=ALLOW:threads", lines)
                self.assertIn("python-api=ALLOW:process-exec", lines)

                written, comms = set(), set()
                for raw in log.read_text().splitlines():
                    ev = json.loads(raw)   # one object per line, always
                    self.assertEqual(ev["version"], 1)
                    if "comm" in ev:
                        self.assertLessEqual(len(ev["comm"]), 15, ev)
                        comms.add(ev["comm"])
                    if ev["kind"] == "path" and "write" in ev["intent"]:
                        written.add(ev["object"])
                want = {str(s.dir / "work" / n / f"f{j}") for n in names for j in range(FILES)}
                self.assertFalse(want - written, f"missing from the log: {sorted(want - written)[:5]}")
                # The thread's name, read from /proc while the thread lives.
                self.assertTrue(any(c.startswith("python") for c in comms), comms)
            finally:
                if log.exists():
                    log.unlink()

            r2 = sbtest.run_sb(["app/prog.py"], cwd=s.dir, timeout=120)
            self.assertEqual(r2.returncode, 0, r2.stderr)
            self.assertEqual(r2.stdout, r.stdout)
            self.assertEqual(learnlib.program_denials(r2.stderr, s.dir), [], r2.stderr)


if __name__ == "__main__":
    sbtest.main(Roundtrip)

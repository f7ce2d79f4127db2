#!/usr/bin/env python3
"""A FIFO open that blocks waits in the supervisor without stalling the
other threads of the program (nor does a decision that hangs unexpectedly), completes when a writer comes, and is ended by
a signal to the program (Ctrl-C reaches it: KeyboardInterrupt)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
import unittest

import sbtest
from sup_util import Tree

NOT_STALLED = '''
import os, sys, threading
fifo, data = sys.argv[1], sys.argv[2]
got = []
def reader():
    with open(fifo) as f:          # blocks until the writer below
        got.append(f.read())
t = threading.Thread(target=reader)
t.start()
ok = 0
for i in range(300):               # served while the reader waits
    with open(data) as f:
        ok += f.read() == "public data\\n"
print("opens while blocked:", ok, "reader alive:", t.is_alive(), flush=True)
with open(fifo, "w") as f:
    f.write("through the fifo")
t.join()
print("reader got:", got[0])
'''

# Eight opens blocked at once in the supervisor (os-sandbox=none: with
# Landlock a read-only open is CONTINUEd and blocks in the program): the
# receiving worker hands its role on each time (to a parked worker, or a
# new one), and the main thread is still served; each open completes when
# its writer comes.
MANY_BLOCKED = '''
import os, sys, threading, time
fifos, data = sys.argv[1:9], sys.argv[9]
got = {}
def reader(i):
    with open(fifos[i]) as f:
        got[i] = f.read()
ts = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
for t in ts:
    t.start()
time.sleep(0.3)                    # let all eight block in the supervisor
ok = sum(open(data).read() == "public data\\n" for _ in range(300))
print("opens while blocked:", ok, "readers alive:", sum(t.is_alive() for t in ts), flush=True)
for i in reversed(range(8)):
    with open(fifos[i], "w") as f:
        f.write(str(i))
    ts[i].join()
print("got:", "".join(got[i] for i in range(8)))
'''

# A decision that hangs where nothing said it would block (the test-only
# build sleeps 2 s on SB_TEST_STALL_PATH, as an open on a hung network file
# system would): the watchdog hands the receiving role on after 50 ms and
# the main thread is served meanwhile.
STALLED = '''
import sys, threading, time
stall, data = sys.argv[1], sys.argv[2]
t = threading.Thread(target=lambda: open(stall).read())
t.start()
time.sleep(0.2)                    # let it reach the supervisor
ok = sum(open(data).read() == "public data\\n" for _ in range(300))
print("opens while stalled:", ok, "stalled thread alive:", t.is_alive(), flush=True)
t.join()
'''

INTERRUPTED = '''
import os, sys
print(os.getpid(), flush=True)
try:
    open(sys.argv[1]).read()        # no writer ever comes
    print("read returned")
except KeyboardInterrupt:
    print("interrupted", flush=True)
'''


class Fifo(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)
        self.fifo = self.t.out / "pipe"
        os.mkfifo(self.fifo)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_not_stalled(self) -> None:
        s = self.t.script(NOT_STALLED)
        self.t.write_policy(["python-api=ALLOW:threads"])
        cp = sbtest.run_sb([f"--pysandboxes-config={self.t.policy}", str(s), str(self.fifo),
                            str(self.t.data / "public.txt")], timeout=60)
        self.assertEqual(cp.stdout, "opens while blocked: 300 reader alive: True\n"
                                    "reader got: through the fifo\n", cp.stderr)
        self.assertEqual(cp.returncode, 0)

    def test_many_blocked(self) -> None:
        fifos = [self.t.out / f"pipe{i}" for i in range(8)]
        for f in fifos:
            os.mkfifo(f)
        s = self.t.script(MANY_BLOCKED)
        self.t.write_policy(["python-api=ALLOW:threads", "os-sandbox=none"])
        cp = sbtest.run_sb([f"--pysandboxes-config={self.t.policy}", str(s), *map(str, fifos),
                            str(self.t.data / "public.txt")], timeout=60)
        self.assertEqual(cp.stdout, "opens while blocked: 300 readers alive: 8\n"
                                    "got: 01234567\n", cp.stderr)
        self.assertEqual(cp.returncode, 0)

    def test_stalled_decision(self) -> None:
        widen = os.environ.get("PYTHON_SB_WIDEN", "")
        if not os.access(widen, os.X_OK):
            self.skipTest("tests/progs/python-sb-widen not built")
        stall = self.t.data / "stall.txt"
        stall.write_text("slow\n")
        s = self.t.script(STALLED)
        self.t.write_policy(["python-api=ALLOW:threads"])
        env = dict(os.environ, SB_TEST_STALL_PATH=str(stall.resolve()))
        cp = subprocess.run([widen, f"--python={sbtest.PYTHON}", f"--pysandboxes-config={self.t.policy}",
                             str(s), str(stall), str(self.t.data / "public.txt")],
                            env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(cp.stdout, "opens while stalled: 300 stalled thread alive: True\n", cp.stderr)
        self.assertEqual(cp.returncode, 0)

    def test_ctrl_c(self) -> None:
        s = self.t.script(INTERRUPTED)
        self.t.write_policy()
        sbtest.require_binary()
        p = subprocess.Popen([sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}",
                              f"--pysandboxes-config={self.t.policy}", str(s), str(self.fifo)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        try:
            pid = int(p.stdout.readline())
            # The program is (or is about to be) blocked in the open: a
            # SIGINT to it alone, as a terminal's Ctrl-C delivers to it.
            time.sleep(0.3)
            os.kill(pid, signal.SIGINT)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.assertEqual(out, "interrupted\n", err)
        self.assertEqual(p.returncode, 0)


if __name__ == "__main__":
    sbtest.main(Fifo)

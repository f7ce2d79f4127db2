#!/usr/bin/env python3
"""If the supervisor dies (SIGKILL), the program dies with it (PDEATHSIG) and
got nothing: a grandchild left behind cannot open anything (its notified
calls fail with ENOSYS), so the secret is never read and no marker written."""
from __future__ import annotations

import os
import signal
import subprocess
import time
import unittest

import sbtest
from sup_util import SECRET_TEXT, Tree, real_python

PROGRAM = '''
import os, subprocess, sys, time
secret, out = sys.argv[1], sys.argv[2]
gc = subprocess.Popen([sys.executable, "-c", """
import errno, os, sys, time
secret, out = sys.argv[1], sys.argv[2]
print("grandchild", os.getpid(), flush=True)
while True:
    try:
        print("LEAK", open(secret).read(), flush=True)
        open(out + "/leak", "w").write("x")
    except OSError as e:
        print("grandchild errno", errno.errorcode[e.errno], flush=True)
    time.sleep(0.05)
""", secret, out])
print("program", os.getpid(), flush=True)
while True:
    try:
        print("LEAK", open(secret).read(), flush=True)
    except OSError:
        pass
    time.sleep(0.05)
'''


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, seconds: float = 20) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


class Kill(unittest.TestCase):
    def test_supervisor_sigkill(self) -> None:
        sbtest.require_binary()
        with sbtest.Scratch() as scratch:
            t = Tree(scratch)
            s = t.script(PROGRAM)
            t.write_policy(["python-api=ALLOW:process-exec", f"exec={real_python()}"])
            p = subprocess.Popen([sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}", f"--pysandboxes-config={t.policy}",
                                  str(s), str(t.secret / "key"), str(t.out)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 start_new_session=True)
            pids = {}
            gc = None
            try:
                while len(pids) < 2:
                    line = p.stdout.readline()
                    if not line:
                        break
                    word, _, num = line.partition(" ")
                    if word in ("program", "grandchild"):
                        pids[word] = int(num)
                self.assertEqual(set(pids), {"program", "grandchild"})
                gc = pids["grandchild"]
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
                self.assertTrue(wait_gone(pids["program"]), "the program outlived its supervisor")
                # The orphan grandchild: every open now fails with ENOSYS.
                seen = []
                for line in p.stdout:
                    seen.append(line.strip())
                    if line.startswith("grandchild errno ENOSYS"):
                        break
                self.assertIn("grandchild errno ENOSYS", seen)
                self.assertFalse(any(SECRET_TEXT in l for l in seen))
                self.assertFalse((t.out / "leak").exists())
            finally:
                for pid in ([gc] if gc else []) + [p.pid]:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                if p.poll() is None:
                    p.wait()


if __name__ == "__main__":
    sbtest.main(Kill)

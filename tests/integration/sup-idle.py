#!/usr/bin/env python3
"""A program that waits (a server between two requests) costs the
supervisor no wake-ups: its event thread and its interrupter sleep after a
quiet spell (~100 ms) until a call wakes them, instead of polling every 5
and 20 ms.  Counted, not timed: the voluntary context switches of
python-sb's own threads while the program sleeps.  The calls after the
spell are still decided and logged (the sleeping threads were woken)."""
from __future__ import annotations

import json
import subprocess
import time
import unittest
from pathlib import Path

import sbtest

PROG = """
import sys, time
print("up", flush=True)
sys.stdin.readline()              # the test counts while we wait here
open(sys.argv[1]).read()          # after the spell: decided and logged
try:
    open(sys.argv[2])
except OSError as e:
    print("refused", e.errno, flush=True)
"""


def switches(pid: int) -> int:
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue  # a thread that just ended
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


class Idle(unittest.TestCase):
    def test_no_wake_ups_while_the_program_waits(self) -> None:
        with sbtest.Scratch() as s:
            data = s.write("data/public.txt", "public\n")
            secret = s.write("secret.txt", "secret\n")
            prog = s.write("app/prog.py", PROG)
            policy = s.policy(f"expose-ro={s.dir / 'data'}\nexpose-ro={prog.parent}\n")
            log = s.dir / "log.jsonl"
            proc = subprocess.Popen([sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}",
                                     f"--pysandboxes-config={policy}", f"--log={log}",
                                     str(prog), str(data), str(secret)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, cwd=s.dir)
            try:
                if proc.stdout.readline() != "up\n":
                    proc.kill()
                    self.fail(proc.communicate()[1])
                time.sleep(0.5)   # past the quiet spell
                before = switches(proc.pid)
                time.sleep(2)
                idle = switches(proc.pid) - before
                out, err = proc.communicate("go\n", timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.assertEqual(proc.returncode, 0, err)
            # Polling made ~500 in these 2 s (every 5 ms and every 20 ms).
            self.assertLess(idle, 40, "python-sb's threads kept waking while the program waited")
            self.assertEqual(out, "refused 2\n", err)
            self.assertIn(f"DENIED open '{secret}'", err)
            events = [json.loads(line) for line in log.read_text().splitlines()]
            objects = {(e.get("object"), e.get("verdict")) for e in events}
            self.assertIn((str(data), "allowed"), objects)
            self.assertIn((str(secret), "denied"), objects)


if __name__ == "__main__":
    sbtest.main(Idle)

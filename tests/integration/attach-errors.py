#!/usr/bin/env python3
"""python-sb --attach: clear errors (no such process, already traced, not
allowed) with status 255 and the target untouched; a process that is not
Python is traced without locations; job control keeps working while
attached and a stop survives the detach."""
import os
import signal
import subprocess
import time
import unittest

import attachlib as al


def state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def wait_until(cond, timeout=al.WAIT):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def tracer_of(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return 0


class AttachErrors(unittest.TestCase):
    def sleeper(self):
        p = subprocess.Popen(["sleep", "60"])
        self.addCleanup(lambda: (p.kill(), p.wait(al.WAIT)))
        return p

    def test_no_such_process(self):
        p = subprocess.Popen(["true"])
        p.wait(al.WAIT)
        r = subprocess.run(al.attach_argv(str(p.pid), duration=1), capture_output=True, text=True, timeout=al.WAIT)
        self.assertEqual(r.returncode, 255, r.stderr)
        self.assertIn(f"no process {p.pid}", r.stderr)

    def test_already_traced(self):
        s = self.sleeper()
        first = al.Tracer(al.attach_argv(str(s.pid)))
        self.assertTrue(wait_until(lambda: tracer_of(s.pid) != 0), first.err.text())
        r = subprocess.run(al.attach_argv(str(s.pid), duration=1), capture_output=True, text=True, timeout=al.WAIT)
        self.assertEqual(r.returncode, 255, r.stderr)
        self.assertIn(f"process {s.pid} is already traced by process {first.proc.pid}", r.stderr)
        first.signal(signal.SIGINT)
        rc, text = first.finish()
        self.assertEqual(rc, 0, text)
        self.assertEqual(tracer_of(s.pid), 0)
        self.assertIsNone(s.poll())

    def test_not_allowed(self):
        s = self.sleeper()
        try:
            r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                *al.attach_argv(str(s.pid), duration=1)],
                               capture_output=True, text=True, timeout=al.WAIT)
        except FileNotFoundError:
            self.skipTest("setpriv is not installed")
        if "setpriv:" in r.stderr:
            self.skipTest(f"cannot change user here: {r.stderr.strip()}")
        self.assertEqual(r.returncode, 255, r.stderr)
        self.assertIn(f"not allowed to trace process {s.pid}", r.stderr)
        self.assertIn("Hint:", r.stderr)
        self.assertEqual(tracer_of(s.pid), 0)

    def test_not_python(self):
        """sleep(1) is traced (nothing to show) and detached cleanly."""
        s = self.sleeper()
        r = subprocess.run(al.attach_argv(str(s.pid), duration=0.5), capture_output=True, text=True,
                           timeout=al.WAIT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"detached from process {s.pid}", r.stderr)
        self.assertNotIn("  at ", r.stderr)
        self.assertIsNone(s.poll())
        self.assertEqual(tracer_of(s.pid), 0)

    def test_job_control(self):
        """SIGSTOP/SIGCONT while attached work; a stop outlives the detach."""
        with al.LoopbackServer() as server:
            t = al.Target(al.DEBIAN_PYTHON, server.port, "--threads", "2", "--exit", "2")
            try:
                tr = al.Tracer(al.attach_argv(str(t.pid)))
                self.assertTrue(tr.wait_for(r'\] openat\(AT_FDCWD, "%s/f1"' % t.data), tr.err.text())
                os.kill(t.pid, signal.SIGSTOP)
                os.kill(t.pid, signal.SIGCONT)
                n = len(tr.err.lines)
                # Still running and traced after the stop and the continue.
                self.assertTrue(wait_until(lambda: len(tr.err.lines) > n + 4), tr.err.text())
                os.kill(t.pid, signal.SIGSTOP)
                tr.signal(signal.SIGINT)
                rc, text = tr.finish()
                self.assertEqual(rc, 0, text)
                self.assertTrue(wait_until(lambda: state(t.pid) == "T"), state(t.pid))
                self.assertEqual(tracer_of(t.pid), 0)
                os.kill(t.pid, signal.SIGCONT)
                rc, out = t.finish()
                self.assertEqual(rc, 2, out + t.err.text())
                self.assertRegex(out, r"DONE n=\d+\n$")
            finally:
                t.cleanup()


if __name__ == "__main__":
    al.main(AttachErrors)

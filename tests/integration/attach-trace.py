#!/usr/bin/env python3
"""python-sb --attach PID: the trace of a running program, its Python
locations, and a clean detach on --duration, SIGINT, SIGTERM or the
program's own exit; the program carries on and ends as it would have."""
import json
import os
import signal
import tempfile
import unittest
from pathlib import Path

import attachlib as al


class AttachTrace(unittest.TestCase):
    def setUp(self):
        self.server = al.LoopbackServer()
        self.targets = []

    def tearDown(self):
        for t in self.targets:
            t.cleanup()
        self.server.close()

    def start(self, python, *extra):
        t = al.Target(python, self.server.port, "--exit", "5", *extra)
        self.targets.append(t)
        return t

    def check_trace(self, t, text, tid=None, located=True):
        """The open of f0 and the connect, made by the worker thread, each
        with the target's own line (none for an interpreter the attribution
        cannot read)."""
        tid = tid or t.tids[0]
        cs = [c for c in al.calls(text) if c["tid"] == tid]
        opens = [c for c in cs if c["name"] == "openat" and f'"{t.data}/f0"' in c["args"]]
        conns = [c for c in cs if c["name"] == "connect" and c["result"] == "0"]
        self.assertTrue(opens and conns, text)
        o, c = opens[0], conns[0]
        self.assertEqual(o["args"], f'AT_FDCWD, "{t.data}/f0", O_RDONLY|O_CLOEXEC')
        self.assertRegex(o["result"], r"^\d+$")
        self.assertRegex(c["args"], r"^\d+, \{sa_family=AF_INET, sin_port=htons\(%d\), "
                         r'sin_addr=inet_addr\("127\.0\.0\.1"\)\}, 16$' % self.server.port)
        if not located:
            self.assertNotIn("  at ", text)
            return
        self.assertEqual((o["file"], o["line"], o["func"]), (str(al.TARGET), al.marker_line("open"), "one_round"))
        self.assertEqual((c["file"], c["line"], c["func"]),
                         (str(al.TARGET), al.marker_line("connect"), "one_round"))

    def wait_round(self, t, tr):
        """Until the trace holds an open of f0 and a connect."""
        self.assertTrue(tr.wait_for(r'\] openat\(AT_FDCWD, "%s/f0"' % t.data), tr.err.text())
        self.assertTrue(tr.wait_for(r"\] connect\(.* = 0$"), tr.err.text())

    def check_survives(self, t):
        rc, out = t.finish()
        self.assertEqual(rc, 5, out + t.err.text())
        self.assertRegex(out, r"DONE n=\d+\n$")
        self.assertNotIn("Traceback", t.err.text())

    def test_duration(self):
        for py in al.interpreters():
            with self.subTest(python=py):
                t = self.start(py)
                tr = al.Tracer(al.attach_argv(str(t.pid), duration=1.0))
                rc, text = tr.finish()
                self.assertEqual(rc, 0, text)
                self.check_trace(t, text, located=al.has_locations(py))
                self.assertIn(f"detached from process {t.pid}", text)
                # Still ours to stop: the program runs on, untraced.
                self.assertEqual(al.subprocess.run(["grep", "TracerPid", f"/proc/{t.pid}/status"],
                                                   capture_output=True, text=True).stdout.split()[1], "0")
                self.check_survives(t)

    def test_signals_detach(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(signal=sig):
                t = self.start(al.DEBIAN_PYTHON)
                tr = al.Tracer(al.attach_argv(str(t.pid)))
                self.wait_round(t, tr)
                tr.signal(sig)
                rc, text = tr.finish()
                self.assertEqual(rc, 0, text)
                self.check_trace(t, text)
                self.check_survives(t)

    def test_target_exit(self):
        """The program ends while attached: we see it end, its parent gets its status."""
        t = self.start(al.DEBIAN_PYTHON)
        tr = al.Tracer(al.attach_argv(str(t.pid)))
        self.assertTrue(tr.wait_for(r"\] openat\("), tr.err.text())
        self.check_survives(t)
        rc, text = tr.finish()
        self.assertEqual(rc, 0, text)
        self.assertIn(f"[pid {t.pid}] +++ exited with 5 +++", text)
        # The stop file was looked at (a stat family call) with its location.
        self.assertRegex(text, r'\[pid %d\] \w*stat\w*\((AT_FDCWD, )?"%s/stop", .* = 0\n  at %s:%d in stopped\(\)'
                         % (t.tids[0], t.data, al.TARGET, al.marker_line("stop")))

    def test_json_log(self):
        t = self.start(al.DEBIAN_PYTHON)
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "log.json"
            tr = al.Tracer(al.attach_argv(str(t.pid), log=str(log)))
            self.wait_round(t, tr)
            tr.signal(signal.SIGINT)
            rc, text = tr.finish()
            self.assertEqual(rc, 0, text)
            events = [json.loads(line) for line in log.read_text().splitlines()]
        opens = [e for e in events if e["syscall"] == "openat" and e["object"] == f"{t.data}/f0"]
        self.assertTrue(opens, events[:5])
        e = opens[0]
        self.assertEqual((e["pid"], e["tid"], e["kind"], e["intent"], e["verdict"]),
                         (t.pid, t.tids[0], "path", "read", "allowed"))
        self.assertEqual(e["python"], f"{al.TARGET}:{al.marker_line('open')} in one_round()")
        # The whole stack, innermost first: one_round() called by worker().
        frames = [(f["file"], f["func"]) for f in e["stack"]]
        self.assertEqual(frames[:2], [(str(al.TARGET), "one_round"), (str(al.TARGET), "worker")])
        nets = [e for e in events if e["syscall"] == "connect"]
        self.assertTrue(nets)
        self.assertEqual((nets[0]["addr"], nets[0]["port"], nets[0]["proto"], nets[0]["direction"]),
                         ("127.0.0.1", self.server.port, "tcp", "out"))
        self.check_survives(t)

    def test_not_python(self):
        """A process that is not Python is traced, without locations."""
        with tempfile.TemporaryDirectory() as d:
            script = Path(d) / "loop.sh"
            script.write_text(f'while [ ! -e {d}/stop ]; do cat {d}/stop.not 2>/dev/null; '
                              f'/bin/sleep 0.05; done; exit 3\n')
            p = al.subprocess.Popen(["/bin/sh", str(script)])
            try:
                tr = al.Tracer(al.attach_argv(str(p.pid)))
                line = tr.wait_for(r"\] (clone|clone3|fork|vfork)\(")
                self.assertTrue(line, tr.err.text())
                self.assertTrue(tr.wait_for(r'\] execve\("/bin/sleep", \["/bin/sleep", "0\.05"\], 0x[0-9a-f]+ '
                                            r'/\* \d+ vars? \*/\) = 0'), tr.err.text())
                tr.signal(signal.SIGINT)
                rc, text = tr.finish()
                self.assertEqual(rc, 0, text)
                self.assertNotIn("  at ", text)
                (Path(d) / "stop").write_text("")
                self.assertEqual(p.wait(al.WAIT), 3)
            finally:
                p.kill()
                p.wait(al.WAIT)


if __name__ == "__main__":
    al.main(AttachTrace)

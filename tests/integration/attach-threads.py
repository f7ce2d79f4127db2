#!/usr/bin/env python3
"""python-sb --attach on a program with four threads: every thread is seized,
each call is shown with the thread that made it and that thread's Python
location; threads started while attached are followed too; after the
detach the program finishes normally."""
import re
import signal
import unittest

import attachlib as al


class AttachThreads(unittest.TestCase):
    def test_four_threads(self):
        with al.LoopbackServer() as server:
            for py in [p for p in al.interpreters() if al.has_locations(p)]:
                with self.subTest(python=py):
                    t = al.Target(py, server.port, "--threads", "4", "--spawn", "--exit", "4")
                    try:
                        self.run_one(t)
                    finally:
                        t.cleanup()

    def run_one(self, t):
        self.assertEqual(len(t.tids), 4)
        tr = al.Tracer(al.attach_argv(str(t.pid)))
        for k, tid in enumerate(t.tids):
            self.assertTrue(tr.wait_for(r'^\[pid %d\] openat\(AT_FDCWD, "%s/f%d"' % (tid, t.data, k)),
                            tr.err.text())
        # Two more threads, started while attached.
        t.touch("spawn")
        spawned = t.out.wait_for(r"^SPAWNED ")
        self.assertTrue(spawned, t.err.text())
        new = [int(x) for x in re.match(r"SPAWNED tids=([\d,]+)", spawned).group(1).split(",")]
        for k, tid in zip((4, 5), new):
            self.assertTrue(tr.wait_for(r'^\[pid %d\] openat\(AT_FDCWD, "%s/f%d"' % (tid, t.data, k)),
                            tr.err.text())
        tr.signal(signal.SIGINT)
        rc, text = tr.finish()
        self.assertEqual(rc, 0, text)
        cs = al.calls(text)
        for k, tid in enumerate(t.tids + new):
            mine = [c for c in cs if c["tid"] == tid and c["name"] == "openat" and
                    c["args"].startswith(f'AT_FDCWD, "{t.data}/f{k}"')]
            self.assertTrue(mine, text)
            for c in mine:
                self.assertEqual((c["file"], c["line"], c["func"]),
                                 (str(al.TARGET), al.marker_line("open"), "one_round"), c)
        # The thread creation itself, by the main thread, from Thread.start().
        clones = [c for c in cs if c["tid"] == t.pid and c["name"] in ("clone", "clone3")]
        self.assertTrue(clones, text)
        self.assertIn("CLONE_THREAD", clones[0]["args"])
        self.assertIn(int(clones[0]["result"]), new)
        self.assertEqual(clones[0]["file"], str(al.TARGET))
        self.assertEqual(clones[0]["line"], al.marker_line("start"))
        rc, out = t.finish()
        self.assertEqual(rc, 4, out + t.err.text())
        self.assertRegex(out, r"DONE n=\d+\n$")


if __name__ == "__main__":
    al.main(AttachThreads)

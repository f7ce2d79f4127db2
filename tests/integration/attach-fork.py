#!/usr/bin/env python3
"""python-sb --attach follows a child forked while attached: the fork is
shown with its Python location, the child's calls with the child's own
pid and locations; after the detach parent and child both finish."""
import re
import signal
import unittest

import attachlib as al


class AttachFork(unittest.TestCase):
    def test_forked_child(self):
        with al.LoopbackServer() as server:
            for py in [p for p in al.interpreters() if al.has_locations(p)]:
                with self.subTest(python=py):
                    t = al.Target(py, server.port, "--fork", "--exit", "6")
                    try:
                        self.run_one(t)
                    finally:
                        t.cleanup()

    def run_one(self, t):
        tr = al.Tracer(al.attach_argv(str(t.pid)))
        self.assertTrue(tr.wait_for(r'^\[pid %d\] openat\(AT_FDCWD, "%s/f0"' % (t.tids[0], t.data)),
                        tr.err.text())
        t.touch("fork")
        line = t.out.wait_for(r"^CHILD pid=")
        self.assertTrue(line, t.err.text())
        child = int(re.match(r"CHILD pid=(\d+)", line).group(1))
        # The child's own round: its file, created by it, and its connect.
        self.assertTrue(tr.wait_for(r'^\[pid %d\] openat\(AT_FDCWD, "%s/fchild%d", O_RDONLY\|O_CLOEXEC\) = \d+'
                                    % (child, t.data, child)), tr.err.text())
        self.assertTrue(tr.wait_for(r"^\[pid %d\] connect\(.* = 0$" % child), tr.err.text())
        tr.signal(signal.SIGINT)
        rc, text = tr.finish()
        self.assertEqual(rc, 0, text)
        cs = al.calls(text)
        forks = [c for c in cs if c["tid"] == t.pid and c["name"] in ("clone", "fork", "clone3")
                 and c["result"] == str(child)]
        self.assertTrue(forks, text)
        self.assertNotIn("CLONE_THREAD", forks[0]["args"])
        self.assertEqual((forks[0]["file"], forks[0]["line"], forks[0]["func"]),
                         (str(al.TARGET), al.marker_line("fork"), "main"))
        create = [c for c in cs if c["tid"] == child and c["name"] == "openat" and f"fchild{child}" in c["args"]
                  and "O_CREAT" in c["args"]]
        self.assertTrue(create, text)
        self.assertEqual(create[0]["func"], "child_main")
        rounds = [c for c in cs if c["tid"] == child and c["name"] == "openat" and
                  c["args"] == f'AT_FDCWD, "{t.data}/fchild{child}", O_RDONLY|O_CLOEXEC']
        self.assertTrue(rounds, text)
        self.assertEqual((rounds[0]["file"], rounds[0]["line"], rounds[0]["func"]),
                         (str(al.TARGET), al.marker_line("open"), "one_round"))
        rc, out = t.finish()
        self.assertEqual(rc, 6, out + t.err.text())
        self.assertIn("CHILD-EXIT 0\n", out)
        self.assertRegex(out, r"DONE n=\d+\n$")


if __name__ == "__main__":
    al.main(AttachFork)

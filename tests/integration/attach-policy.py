#!/usr/bin/env python3
"""python-sb --attach PID --policy FILE reports exactly the accesses the
policy would refuse (and nothing else), without touching the program;
with --enforce the live program gets the refusals (ENOENT, EACCES,
ECONNREFUSED) until the detach, and then carries on."""
import json
import re
import shutil
import signal
import tempfile
import time
import unittest
from pathlib import Path

import attachlib as al

NOTICE_RE = re.compile(r"^python-sb: (WOULD DENY|DENIED) ")


def logged_allowed(log: Path) -> set:
    """(syscall, object) of the allowed events of a log being written."""
    seen = set()
    for line in log.read_text().splitlines() if log.exists() else ():
        try:
            e = json.loads(line)
        except ValueError:
            continue  # the line being written
        if e.get("verdict") == "allowed":
            seen.add((e.get("syscall"), e.get("object")))
    return seen


class AttachPolicy(unittest.TestCase):
    def setUp(self):
        self.server = al.LoopbackServer()
        self.secret_dir = Path(tempfile.mkdtemp(prefix="sbattach-secret-"))
        self.key = self.secret_dir / "key"
        self.key.write_text("k\n")
        self.t = None

    def tearDown(self):
        if self.t:
            self.t.cleanup()
        shutil.rmtree(self.secret_dir, ignore_errors=True)
        self.server.close()

    def start(self):
        self.t = al.Target(al.DEBIAN_PYTHON, self.server.port, "--exit", "3", "--write", "--deny", str(self.key))
        return self.t

    def policy(self, net=True):
        t = self.t
        lines = [f"expose-ro={t.data}"]
        if net:
            lines.append(f"net=ALLOW|tcp|127.0.0.1|{self.server.port}|OUT")
        pol = t.dir / "attach.py-sandboxes"
        pol.write_text("\n".join(lines) + "\n")
        return pol

    def attach_until(self, argv, patterns, log=None, logged=()):
        """Attach until every pattern is on stderr and, with a log, until it
        holds every (syscall, object) of `logged`: an attach that lands in
        the middle of a round (slow under valgrind) has seen only its end."""
        tr = al.Tracer(argv, cwd=self.t.dir)
        for p in patterns:
            self.assertTrue(tr.wait_for(p), tr.err.text())
        end = time.monotonic() + al.WAIT
        while logged and time.monotonic() < end:
            if set(logged) <= logged_allowed(log):
                break
            time.sleep(0.05)
        tr.signal(signal.SIGINT)
        rc, text = tr.finish()
        self.assertEqual(rc, 0, text)
        return text

    def notices(self, text):
        lines = text.splitlines()
        self.assertFalse([line for line in lines if al.CALL_RE.match(line)], "no trace lines with --policy")
        return [line for line in lines if NOTICE_RE.match(line)]

    def expected(self, verdict, pol):
        """The two accesses outside the policy, as the notice says them."""
        t = self.t
        at = f"at {al.TARGET}:%d in one_round()"
        key = re.escape(f"python-sb: {verdict} open '{self.key}' (read) {at % al.marker_line('deny')}: "
                        "no expose rule; add expose-ro=") + r"\S*secret\S*$"
        out = (re.escape(f"python-sb: {verdict} open '{t.data}/out0' (write) {at % al.marker_line('write')}: "
                         f"read-only: rule 'expose-ro={t.data}' from ") +
               re.escape(pol.name) + r"\(1\); add expose-rw=\S*data$")
        return re.compile(key), re.compile(out)

    def test_report_exactly_outside(self):
        t = self.start()
        pol = self.policy()
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "log.json"
            key_rx, out_rx = self.expected("WOULD DENY", pol)
            text = self.attach_until(al.attach_argv(str(t.pid), policy=str(pol), log=str(log)),
                                     [key_rx.pattern, out_rx.pattern], log,
                                     [("openat", f"{t.data}/f0"), ("openat", str(t.data)),
                                      ("connect", f"127.0.0.1:{self.server.port}")])
            events = [json.loads(line) for line in log.read_text().splitlines()]
        notes = self.notices(text)
        self.assertTrue(notes)
        for n in notes:
            self.assertTrue(key_rx.match(n) or out_rx.match(n), n)
        # The log holds the same verdicts, and the rest as allowed.
        outside = {e["object"] for e in events if e["verdict"] != "allowed"}
        self.assertEqual(outside, {str(self.key), f"{t.data}/out0"}, events)
        self.assertEqual({e["verdict"] for e in events if e["verdict"] != "allowed"}, {"would-deny"})
        allowed = {(e["syscall"], e["object"]) for e in events if e["verdict"] == "allowed"}
        self.assertIn(("openat", f"{t.data}/f0"), allowed)
        self.assertIn(("openat", str(t.data)), allowed)	# the listing
        self.assertIn(("connect", f"127.0.0.1:{self.server.port}"), allowed)
        self.assertEqual(len(notes), len([e for e in events if e["verdict"] == "would-deny"]))
        # Reporting changed nothing for the program.
        rc, out = t.finish()
        self.assertEqual(rc, 3, out + t.err.text())
        self.assertNotIn("DENY errno=", out)
        self.assertRegex(out, r"DONE n=\d+\n$")

    def test_enforce_refuses_live(self):
        t = self.start()
        pol = self.policy()
        key_rx, out_rx = self.expected("DENIED", pol)
        text = self.attach_until(al.attach_argv(str(t.pid), policy=str(pol), enforce=True),
                                 [key_rx.pattern, out_rx.pattern])
        for n in self.notices(text):
            self.assertTrue(key_rx.match(n) or out_rx.match(n), n)
        rc, out = t.finish()
        self.assertEqual(rc, 3, out + t.err.text())
        # The program saw the refusals, as errors it handles, and nothing else failed.
        self.assertRegex(out, r"DENY errno=ENOENT n=[1-9]")
        self.assertRegex(out, r"DENY errno=EACCES n=[1-9]")
        self.assertNotIn("ECONNREFUSED", out)
        self.assertNotIn("Traceback", t.err.text())
        self.assertRegex(out, r"DONE n=\d+\n$")

    def test_enforce_network(self):
        t = self.start()
        pol = self.policy(net=False)
        note = (r"^python-sb: DENIED connect 127\.0\.0\.1:%d \(tcp\) at %s:%d in one_round\(\): .*"
                r"add net=ALLOW\|TCP\|127\.0\.0\.1/32\|%d\|OUT$"
                % (self.server.port, re.escape(str(al.TARGET)), al.marker_line("connect"), self.server.port))
        text = self.attach_until(al.attach_argv(str(t.pid), policy=str(pol), enforce=True), [note])
        self.assertTrue(any(re.match(note, n) for n in self.notices(text)), text)
        rc, out = t.finish()
        self.assertEqual(rc, 3, out + t.err.text())
        self.assertRegex(out, r"DENY errno=ECONNREFUSED n=[1-9]")
        self.assertNotIn("Traceback", t.err.text())


if __name__ == "__main__":
    al.main(AttachPolicy)

#!/usr/bin/env python3
"""Blocking calls performed by the supervisor: a connect that cannot complete
waits without holding up the program's other calls, and a signal for the
program (here SIGALRM from setitimer, as Ctrl-C would be) interrupts it.

A connect that blocks on loopback: the test's server listens with backlog 0
and the harness fills its accept queue first, so the kernel drops the
program's SYN and its connect() waits for retransmissions.
"""
from __future__ import annotations

import select
import socket
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import netlib  # noqa: E402
import sbtest  # noqa: E402
from netlib import PRELUDE  # noqa: E402


class FullBacklog:
    """A listener whose accept queue is full: further SYNs are dropped."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.filler = socket.socket()
        self.filler.connect(("127.0.0.1", self.port))
        probe = socket.socket()
        probe.setblocking(False)
        try:
            probe.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        # A second connection must stay pending, else the trick does not work
        # here (this wait only decides whether to skip; nothing is asserted).
        _, writable, _ = select.select([], [probe], [], 0.5)
        self.works = not writable
        probe.close()

    def close(self) -> None:
        self.filler.close()
        self.sock.close()

    def __enter__(self) -> "FullBacklog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NetBlocking(unittest.TestCase):
    def setUp(self) -> None:
        netlib.seccomp_skip()
        self.scratch = sbtest.Scratch()

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def backlog(self) -> FullBacklog:
        fb = FullBacklog()
        if not fb.works:
            fb.close()
            self.skipTest("a full accept queue does not make connect() wait on this kernel")
        return fb

    def test_signal_interrupts_blocking_connect(self) -> None:
        prog = PRELUDE + '''
import signal
class Alarm(Exception):
    pass
def on_alarm(sig, frame):
    raise Alarm()
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.5)
s = socket.socket()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    print("connect returned", flush=True)
except Alarm:
    print("connect interrupted", flush=True)
'''
        with self.backlog() as fb:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{fb.port}|OUT"], args=[fb.port])
            self.assertEqual(netlib.check_run(self, cp), {"connect": "interrupted"})

    def test_blocked_connect_does_not_hold_up_others(self) -> None:
        """While one thread waits in connect(), the others' calls (opens,
        allowed connects) are answered; then SIGALRM ends the wait."""
        prog = PRELUDE + '''
import signal, threading
class Alarm(Exception):
    pass
blocked_port, ok_port = int(sys.argv[1]), int(sys.argv[2])
done = threading.Event()
def others():
    for i in range(20):
        with open(__file__) as f:
            f.read(1)
        with socket.create_connection(("127.0.0.1", ok_port)) as c:
            c.sendall(b"ping"); assert c.recv(4) == b"pong"
    print("others done", flush=True)
    done.set()
    os.kill(os.getpid(), signal.SIGALRM)
def on_alarm(sig, frame):
    raise Alarm()
signal.signal(signal.SIGALRM, on_alarm)
t = threading.Thread(target=others)
t.start()
s = socket.socket()
try:
    s.connect(("127.0.0.1", blocked_port))
    print("connect returned", flush=True)
except Alarm:
    print("connect interrupted", flush=True)
t.join()
print("flag", "set" if done.is_set() else "unset", flush=True)
'''
        with self.backlog() as fb, netlib.TcpServer() as ok:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{fb.port}|OUT",
                                                 f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT",
                                                 "python-api=ALLOW:threads"], args=[fb.port, ok.port])
            self.assertEqual(netlib.check_run(self, cp), {"others": "done", "connect": "interrupted", "flag": "set"})
            self.assertEqual(ok.accepted, 20)

    def test_sndtimeo_bounds_blocking_connect(self) -> None:
        """SO_SNDTIMEO on a blocking socket: connect() gives up with EINPROGRESS."""
        prog = PRELUDE + '''
import struct
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 300000))
attempt("connect", lambda: s.connect(("127.0.0.1", int(sys.argv[1]))))
'''
        with self.backlog() as fb:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{fb.port}|OUT"], args=[fb.port])
            self.assertEqual(netlib.check_run(self, cp), {"connect": "EINPROGRESS"})

    def test_nonblocking_connect_in_progress(self) -> None:
        prog = PRELUDE + '''
s = socket.socket()
s.setblocking(False)
attempt("connect", lambda: s.connect(("127.0.0.1", int(sys.argv[1]))))
'''
        with self.backlog() as fb:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{fb.port}|OUT"], args=[fb.port])
            self.assertEqual(netlib.check_run(self, cp), {"connect": "EINPROGRESS"})

    def test_signal_interrupts_blocking_send(self) -> None:
        """A sendmsg() on a full stream socketpair waits; SIGALRM ends it."""
        prog = PRELUDE + '''
import signal
class Alarm(Exception):
    pass
def on_alarm(sig, frame):
    raise Alarm()
a, b = socket.socketpair()
a.setblocking(False)
try:
    while True:
        a.send(b"x" * 65536)
except BlockingIOError:
    pass
a.setblocking(True)
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.5)
try:
    a.sendmsg([b"y" * 65536])
    print("send returned", flush=True)
except Alarm:
    print("send interrupted", flush=True)
'''
        cp = netlib.run(self.scratch, prog, [])
        self.assertEqual(netlib.check_run(self, cp), {"send": "interrupted"})


if __name__ == "__main__":
    sbtest.main(NetBlocking)

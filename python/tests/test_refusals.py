"""Refusal notes of the supervisor turned into Rule...Error exceptions.

The test plays the supervisor's part of doc/agent-protocol.md ("refusal"):
it writes the note, then lets the program make the call that fails."""
from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import unittest

import support

PROGRAM = textwrap.dedent("""
    import os, socket, sys, threading
    print(threading.get_native_id(), flush=True)
    sys.stdin.readline()
    def t(label, fn):
        try:
            fn(); print(label, 'OK')
        except OSError as e:
            print(label, type(e).__name__, e.errno, str(e).replace(chr(10), ' '))
    t('open', lambda: open('/nonexistent-sb/secret'))
    t('open-again', lambda: open('/nonexistent-sb/secret'))
    t('os.open', lambda: os.open('/nonexistent-sb/other', os.O_RDONLY))
    t('unmatched', lambda: open('/nonexistent-sb/third'))
    s = socket.socket(); port = int(sys.argv[1])
    sys.stdout.flush(); sys.stdin.readline()
    t('connect', lambda: s.connect(('127.0.0.1', port)))
""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Refusals(unittest.TestCase):
    def test_notes_become_rule_errors(self) -> None:
        port = free_port()  # nothing listens there: the kernel refuses the connect
        prog = support.program(PROGRAM)
        proc, sock = support.spawn_agent([prog, str(port)], support.rules(), stdin=subprocess.PIPE)
        tid = int(proc.stdout.readline())
        notes = [
            {"kind": "refusal", "object": "path", "tid": tid, "errno": 2,
             "path": "/nonexistent-sb/secret", "text": "Access to '/nonexistent-sb/secret' must be accepted by a rule."},
            {"kind": "refusal", "object": "path", "tid": tid + 1, "errno": 2,  # another thread's
             "path": "/nonexistent-sb/other", "text": "not mine"},
            {"kind": "refusal", "object": "net", "tid": tid, "errno": 111, "host": "127.0.0.1", "port": port,
             "text": f"Connection to '[127.0.0.1]:{port}' DENIED by implicit default policy."},
        ]
        # Notes arrive before the refused call returns; the program reads them then.
        sock.sendall(json.dumps(notes[0]).encode())
        sock.sendall(json.dumps(notes[1]).encode())
        proc.stdin.write("go\n")
        proc.stdin.flush()
        lines = [proc.stdout.readline() for _ in range(4)]  # the four file calls
        sock.sendall(json.dumps(notes[2]).encode())
        out = "".join(lines) + proc.communicate("go\n", timeout=60)[0]
        sock.close()
        got = dict(x.split(" ", 1) for x in out.splitlines())
        self.assertEqual(got["open"], "RuleFileNotFoundError 2 Access to '/nonexistent-sb/secret' "
                                      "must be accepted by a rule.")
        self.assertEqual(got["open-again"], "FileNotFoundError 2 [Errno 2] No such file or directory: "
                                            "'/nonexistent-sb/secret'")  # a note is used once
        self.assertTrue(got["os.open"].startswith("FileNotFoundError"))    # the note was another thread's
        self.assertTrue(got["unmatched"].startswith("FileNotFoundError"))
        self.assertEqual(got["connect"], f"RuleSocketConnectionRefusedError 111 Connection to "
                                         f"'[127.0.0.1]:{port}' DENIED by implicit default policy.")

    def test_learning_does_not_convert(self) -> None:
        run = support.run_agent(["-c", "open('/nonexistent-sb/x')"], support.rules(mode="learn"))
        self.assertIn("FileNotFoundError: [Errno 2]", run.stderr)


if __name__ == "__main__":
    unittest.main()

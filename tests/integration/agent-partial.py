#!/usr/bin/env python3
"""Partial mode on the real python-sb (reference §9.2 H1-H3 and issue 8):
an application keeps a secret in its environment and its files; its @sandbox
tools run in a worker under python-sb that cannot read them nor connect
outside its rules, return values, print into the caller's output, and raise
exceptions that arrive with their class, their traceback and their denials.
1 000 calls in a row and 8 concurrent async calls work."""
from __future__ import annotations

import json
import os
import socket
import unittest

import sbtest
from agentlib import DEBIAN_PYTHON

TOOLS = '''
import asyncio, os, socket
from pysandboxes import sandbox

@sandbox
def answer():
    print("tool output line")
    return 42

@sandbox
def read_secret(path):
    with open(path) as f:
        return f.read()

@sandbox
def token():
    return os.environ.get("LLM_TOKEN")

@sandbox
def connect(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10):
        return "connected"

@sandbox
def boom():
    raise ValueError("remote boom")

@sandbox
def run_shell():
    return os.system("true")

@sandbox
def pid():
    return os.getpid()

@sandbox
def die():
    os._exit(3)

@sandbox
async def double(i):
    await asyncio.sleep(0.05)
    print("async", i)
    return i * 2

def init():
    print("init ran")
'''

MAIN = '''
import asyncio, json, os, sys, traceback
sys.path.append(sys.argv[1])
from pysandboxes import sandboxes, sandbox_denials, is_in_sandbox
import tools

def report(name, fn):
    try:
        value = fn()
        print(json.dumps([name, "ok", value]), flush=True)
    except BaseException as e:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        print(json.dumps([name, type(e).__name__, str(e), sandbox_denials(e), tb]), flush=True)

secret, ok_port, bad_port = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(secret) as f:
    print(json.dumps(["parent-reads-secret", "ok", f.read().strip()]))
print(json.dumps(["parent-token", "ok", os.environ.get("LLM_TOKEN")]))
with sandboxes(init_fn=tools.init):
    report("answer", tools.answer)
    report("pid-differs", lambda: tools.pid() != os.getpid())
    report("read_secret", lambda: tools.read_secret(secret))
    report("token", tools.token)
    report("connect-allowed", lambda: tools.connect(ok_port))
    report("connect-refused", lambda: tools.connect(bad_port))
    report("boom", tools.boom)
    report("run_shell", tools.run_shell)
    report("thousand", lambda: sum(1 for _ in range(1000) if tools.pid() > 0))
    async def eight():
        return await asyncio.gather(*[tools.double(i) for i in range(8)])
    report("eight", lambda: asyncio.run(eight()))
    report("in-sandbox", is_in_sandbox)
    report("die", tools.die)
    report("restarted", tools.answer)
report("after", tools.answer)
import pysandboxes
async def via_run():
    async with sandboxes():  # nested in run()'s own: the same worker
        return [await tools.double(21), tools.pid() != os.getpid()]
report("run", lambda: pysandboxes.run(via_run()))
try:
    with sandboxes(expose_ro="/etc"):
        pass
except Exception as e:
    print(json.dumps(["locked", type(e).__name__, str(e)]))
'''


class Listener:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]

    def close(self) -> None:
        self.sock.close()


class Partial(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        root = self.scratch.dir.resolve()
        self.app = root / "app"
        self.app.mkdir()
        self.secret = root / "secret"
        self.secret.mkdir()
        (self.secret / "key").write_text("SECRET-FILE-77\n")
        (self.app / "tools.py").write_text(TOOLS)
        (self.app / "main.py").write_text(MAIN)
        self.ok, self.bad = Listener(), Listener()
        (self.app / ".py-sandboxes").write_text("\n".join([
            "py-sandbox=true", "os-sandbox=none", f"expose-ro={self.app}", "python-import=*",
            f"net=ALLOW|tcp|127.0.0.1|{self.ok.port}|OUT", "learn=false",
        ]) + "\n")

    def tearDown(self) -> None:
        self.ok.close()
        self.bad.close()
        self.scratch.__exit__()

    def run_app(self) -> tuple[dict, str, str]:
        import subprocess

        env = dict(os.environ, LLM_TOKEN="token-of-the-parent", PYTHON_SB=sbtest.PYTHON_SB)
        cp = subprocess.run([DEBIAN_PYTHON, "main.py", str(sbtest.TOP_SRCDIR / "python"),
                             str(self.secret / "key"), str(self.ok.port), str(self.bad.port)],
                            cwd=self.app, env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        results = {}
        for line in cp.stdout.splitlines():
            if line.startswith("["):
                row = json.loads(line)
                results[row[0]] = row[1:]
        return results, cp.stdout, cp.stderr

    def test_partial_application(self) -> None:
        sbtest.require_binary()
        r, out, err = self.run_app()
        # The application keeps its rights.
        self.assertEqual(r["parent-reads-secret"], ["ok", "SECRET-FILE-77"])
        self.assertEqual(r["parent-token"], ["ok", "token-of-the-parent"])
        # H1: a value back, prints in the caller's output (init_fn's too).
        self.assertEqual(r["answer"], ["ok", 42])
        self.assertIn("init ran\n", out)
        self.assertIn("tool output line\n", out)
        self.assertEqual(r["pid-differs"], ["ok", True])
        # The tool cannot read the secret file nor see the parent's variable (H3).
        self.assertIn(r["read_secret"][0], ("FileNotFoundError", "RuleFileNotFoundError"))
        self.assertEqual(r["token"], ["ok", None])
        # Network: its rule's port yes, another loopback port no.
        self.assertEqual(r["connect-allowed"], ["ok", "connected"])
        self.assertIn(r["connect-refused"][0], ("ConnectionRefusedError", "RuleSocketConnectionRefusedError"))
        # H2: the exception's class and the remote traceback; a rule refusal
        # carries its denial.
        self.assertEqual(r["boom"][:3], ["ValueError", "remote boom", []])
        self.assertIn('tools.py", line', r["boom"][3])
        self.assertIn('raise ValueError("remote boom")', r["boom"][3])
        self.assertEqual(r["run_shell"][0], "RuleApiPermissionError")
        self.assertEqual(r["run_shell"][2], [
            "RuleApiPermissionError: os.system() is denied by the API guard (category: process-exec).\n"
            "Add `python-api=ALLOW:os.system` for this function only, "
            "or `python-api=ALLOW:process-exec` for the whole category."])
        # Load: 1 000 calls in a row, 8 concurrent coroutines.
        self.assertEqual(r["thousand"], ["ok", 1000])
        self.assertEqual(r["eight"], ["ok", [0, 2, 4, 6, 8, 10, 12, 14]])
        for i in range(8):
            self.assertIn(f"async {i}\n", out)
        self.assertEqual(r["in-sandbox"], ["ok", False])
        # A dead worker fails its call, the next call restarts it (init_fn again).
        self.assertEqual(r["die"][0], "SandBoxProtocolError")
        self.assertEqual(r["restarted"], ["ok", 42])
        self.assertEqual(out.count("init ran\n"), 2)
        # After the block the decorated function runs in the caller again.
        self.assertEqual(r["after"], ["ok", 42])
        self.assertNotIn("Traceback", err)
        # run() and `async with`.
        self.assertEqual(r["run"], ["ok", [42, True]])
        # Rules passed by the code are refused under the learn=false lock.
        self.assertEqual(r["locked"][0], "ConfigSyntaxError")
        self.assertIn("learning mode is forbidden", r["locked"][1] + " ".join(r["locked"][1:]))


if __name__ == "__main__":
    sbtest.main(Partial)

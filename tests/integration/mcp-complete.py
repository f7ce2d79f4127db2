#!/usr/bin/env python3
"""The MCP server sample in complete mode: ``python-sb server.py`` (issue 11).

An MCP client (tests/integration/mcp-lib.py) spawns the server under
python-sb with the sample's own policy (contrib/samples/mcp-server/
.py-sandboxes) and sends the upstream sample's attack list over stdio:

* an allowed fetch of a loopback page works;
* file:///etc/passwd, a secret file, another loopback port (a canary
  listener that must never get a connection) and an intranet address (refused
  by the supervisor through net=DENY|*|10.0.0.0/8, checked in its decision
  log and on stderr) are refused;
* the ().__class__.__base__.__subclasses__() escape to subprocess.Popen and
  an endless comprehension are stopped, whether eval is refused
  (dynamic-code) or guarded by the eval-* rules;
* every stdout line stays one JSON-RPC 2.0 response, ids in order.

The test runs in a network namespace of its own when it can create one, so an
unrefused intranet connect fails with ENETUNREACH instead of leaving the
machine; without one, the intranet case is skipped.  Every wait is bounded.
A negative control first runs the same payloads without python-sb: the escape
must work there, or the payload proves nothing.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

spec = importlib.util.spec_from_file_location("mcp_lib", Path(__file__).with_name("mcp-lib.py"))
mcp = importlib.util.module_from_spec(spec)
assert spec.loader is not None
spec.loader.exec_module(mcp)

class CompleteMode(mcp.Fixture, mcp.SessionChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.make_fixture()
        cls.log = cls.scratch.dir / "decisions.jsonl"
        cmd = [sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}", f"--log={cls.log}", "server.py"]
        cls.client = mcp.McpClient(cmd, cls.sample, mcp.session_env(cls.site), cls.scratch.dir / "sb.stderr")
        try:
            cls.steps = mcp.run_session(cls.client, cls.site, cls.canary, cls.secret, cls.marker, cls.intranet)
        finally:
            cls.client.kill()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.drop_fixture()

    def supervisor_lines(self) -> list:
        return [line for line in self.client.stderr().splitlines() if line.startswith("python-sb: ")]

    def events(self) -> list:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def test_decision_log_shows_the_supervisor_refusals(self) -> None:
        refused = {(e.get("syscall"), e.get("object")): e for e in self.events() if e.get("verdict") == "denied"}
        self.assertIn(("connect", f"127.0.0.1:{self.canary.port}"), refused, sorted(refused))
        if self.intranet:
            ev = refused.get(("connect", f"{mcp.INTRANET}:80"))
            self.assertIsNotNone(ev, f"the supervisor made no decision on {mcp.INTRANET}: {sorted(refused)}")
            self.assertEqual(ev["rule"]["text"], "net=DENY|*|10.0.0.0/8|*|OUT")
            self.assertEqual(ev["errno"], "ECONNREFUSED")

    def test_nothing_is_executed(self) -> None:
        # The interpreter's own start is the only exec; the escape's never happens.
        execs = [e for e in self.events() if e.get("kind") == "exec" and e.get("verdict") == "allowed"]
        self.assertLessEqual(len(execs), 1, execs)
        self.assertFalse(any(str(e.get("object", "")).endswith("/touch") for e in execs), execs)

    def test_policy_is_a_reviewed_whitelist(self) -> None:
        # Upstream sample check 7, on both policies of the sample.
        for name in (".py-sandboxes", ".py-sandboxes-partial"):
            rules = [line.split("#", 1)[0].strip() for line in (self.sample / name).read_text().splitlines()]
            rules = [r for r in rules if r]
            self.assertNotIn("python-import=*", rules, name)
            self.assertFalse([r for r in rules if r.startswith("python-api=ALLOW")], name)
            self.assertFalse([r for r in rules if r.startswith("learn=") and r != "learn=false"], name)
            self.assertIn("learn=false", rules, name)


class FileRuleBehindTheImportRule(mcp.Fixture, unittest.TestCase):
    """The sample's policy refuses file:// already at `import mimetypes`;
    with that module granted, the file rules of the supervisor still refuse
    the secret (defence in depth)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.make_fixture()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.drop_fixture()

    def test_secret_refused_by_the_supervisor(self) -> None:
        pol = self.sample / ".py-sandboxes"
        text = pol.read_text().replace("python-import=json, html, urllib, tools",
                                       "python-import=json, html, urllib, tools, mimetypes")
        self.assertIn("mimetypes", text)
        pol.write_text(text)
        log = self.scratch.dir / "files.jsonl"
        c = mcp.McpClient([sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}", f"--log={log}", "server.py"],
                          self.sample, mcp.session_env(self.site), self.scratch.dir / "files.stderr")
        try:
            c.request("initialize", mcp.INIT_PARAMS)
            text, is_error = c.call_tool("fetch_webpage", {"url": self.secret.as_uri()})
            self.assertTrue(is_error, text)
            self.assertNotIn("not for the model", text)
            self.assertEqual(c.close(), 0)
        finally:
            c.kill()
        denied = [json.loads(line) for line in log.read_text().splitlines()]
        denied = [e for e in denied if e.get("verdict") == "denied" and e.get("object") == str(self.secret)]
        self.assertTrue(denied, f"the supervisor did not refuse {self.secret}:\n{c.stderr()[-2000:]}")
        self.assertEqual(denied[0]["errno"], "ENOENT")


if __name__ == "__main__":
    if not sbtest.seccomp_unotify_available():
        sbtest.skip("no seccomp in this kernel")
    sbtest.require_binary()
    mcp.NETNS = mcp.enter_private_netns()
    print(f"private network: {mcp.NETNS or 'none (the intranet case is skipped)'}")
    suite = unittest.TestSuite()
    for case in (mcp.NegativeControl, CompleteMode, FileRuleBehindTheImportRule):
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)

#!/usr/bin/env python3
"""The MCP server sample in partial mode: ``python3 server.py --partial`` (issue 11).

The server runs unsandboxed; its two tools are ``@sandbox`` functions
(contrib/samples/mcp-server/tools.py) that run in a worker started through
python-sb with the sample's .py-sandboxes-partial (python/pysandboxes/
partial.py).  The same MCP session as mcp-complete.py: an allowed fetch works;
file://, another loopback port and an intranet address are refused (the
latter two by the supervisor, whose refusal lines reach the server's stderr);
the escape to subprocess.Popen and the endless comprehension are stopped;
stdout stays JSON-RPC, although the worker's own output is replayed by the
caller.  Skips (77) only while pysandboxes.partial does not exist.
"""
from __future__ import annotations

import importlib.util
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

PARTIAL = sbtest.TOP_SRCDIR / "python" / "pysandboxes" / "partial.py"


class PartialMode(mcp.Fixture, mcp.SessionChecks, unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.make_fixture()
        cmd = [sbtest.PYTHON, "server.py", "--partial"]
        cls.client = mcp.McpClient(cmd, cls.sample, mcp.session_env(cls.site), cls.scratch.dir / "partial.stderr")
        try:
            cls.steps = mcp.run_session(cls.client, cls.site, cls.canary, cls.secret, cls.marker, cls.intranet)
        finally:
            cls.client.kill()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.drop_fixture()

    def supervisor_lines(self) -> list:
        # The worker's python-sb writes them on its stderr, which the caller
        # copies to its own.
        return [line for line in self.client.stderr().splitlines() if line.startswith("python-sb: ")]

    def test_tools_ran_in_the_worker(self) -> None:
        # The server itself is not sandboxed: a refusal can only come from the worker.
        text = self.refused("fetch canary")
        self.assertTrue(self.supervisor_lines(), "no python-sb line: did the tools run unsandboxed?")
        self.assertIn("cannot fetch", text)

    def test_refusals_name_the_rule_or_the_refusal(self) -> None:
        # What the model reads: the rule (sandbox_denials) or the OS error the
        # supervisor's refusal produced.
        for name in ("fetch /etc/passwd", "fetch secret", "fetch canary"):
            text = self.refused(name)
            self.assertRegex(text, r"Refused by the sandbox|refused|No such file", f"{name}: {text!r}")


if __name__ == "__main__":
    if not PARTIAL.exists():
        sbtest.skip(f"partial mode is not written yet ({PARTIAL} is missing)")
    if not sbtest.seccomp_unotify_available():
        sbtest.skip("no seccomp in this kernel")
    sbtest.require_binary()
    mcp.NETNS = mcp.enter_private_netns()
    print(f"private network: {mcp.NETNS or 'none (the intranet case is skipped)'}")
    suite = unittest.TestSuite()
    for case in (mcp.NegativeControl, PartialMode):
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)

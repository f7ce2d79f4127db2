"""What the agent reports for learning: environment reads and resolved names."""
from __future__ import annotations

import os
import textwrap
import unittest

import support
from support import rules, run_agent


def env_reports(run: support.AgentRun) -> tuple[set, set]:
    reads = {m["name"] for m in run.of("env") if m.get("op") == "read"}
    writes = {m["name"] for m in run.of("env") if m.get("op") == "write"}
    return reads, writes


class Env(unittest.TestCase):
    ENV = dict(os.environ, SB_A="1", SB_B="2", SB_C="3", SB_SCAN="4", SB_DOTENV="5", SB_KNOWN="6")

    def learn(self, code: str, **kw: object) -> support.AgentRun:
        run = run_agent(["-c", textwrap.dedent(code)], rules(mode="learn", **kw), env=self.ENV)  # type: ignore[arg-type]
        self.assertEqual(run.returncode, 0, run.stderr)
        return run

    def test_reads_are_reported(self) -> None:
        run = self.learn("""
            import os
            os.environ['SB_A']; os.environ.get('SB_B'); os.getenv('SB_MISSING'); 'SB_C' in os.environ
            os.environb.get(b'SB_SCAN')
        """)
        reads, writes = env_reports(run)
        self.assertEqual(reads & {"SB_A", "SB_B", "SB_C", "SB_MISSING", "SB_SCAN"},
                         {"SB_A", "SB_B", "SB_C", "SB_MISSING", "SB_SCAN"})
        self.assertEqual(writes, set())
        self.assertTrue(all(m["verdict"] == "would-deny" for m in run.of("env") if m.get("op") == "read"))
        a = [m for m in run.of("env") if m["name"] == "SB_A"]
        self.assertEqual(len(a), 1)
        self.assertEqual(a[0]["pyloc"], "<string>:3 in <module>()")

    def test_full_scans_are_not_reads(self) -> None:
        run = self.learn("""
            import os, json
            d = dict(os.environ); c = os.environ.copy(); items = list(os.environ.items())
            vals = list(os.environ.values()); keys = list(os.environ); s = {**os.environ}
            json.dumps(dict(os.environ))
            for k in os.environ:
                pass
            os.environ['SB_SCAN']  # out of any scan: a read
        """)
        reads, _ = env_reports(run)
        self.assertEqual(reads, {"SB_SCAN"})

    def test_variables_the_program_sets_are_written_not_learned(self) -> None:
        run = self.learn("""
            import os
            if 'SB_DOTENV' not in os.environ or True:  # load_dotenv() reads, then sets
                os.environ['SB_DOTENV'] = 'x'
            os.environ['SB_NEW'] = 'y'; os.environ['SB_NEW']
            del os.environ['SB_A']
            os.environ.setdefault('SB_DEF', 'z'); os.environ.pop('SB_B')
        """)
        reads, writes = env_reports(run)
        self.assertEqual(writes, {"SB_DOTENV", "SB_NEW", "SB_A", "SB_DEF", "SB_B"})
        self.assertNotIn("SB_NEW", reads)  # read after it was set

    def test_names_the_policy_sets_are_not_reported(self) -> None:
        run = self.learn("import os; os.environ.get('SB_KNOWN'); os.environ.get('SB_C')",
                         env_set=("SB_KNOWN",))
        reads, _ = env_reports(run)
        self.assertEqual(reads, {"SB_C"})

    def test_a_scan_crossing_a_policy_name_stays_a_scan(self) -> None:
        # urllib's getproxies() scans os.environ; a name the policy already
        # sets must not desynchronise the scan and turn every later fetch
        # into a learned read.
        run = self.learn("import os; list(os.environ.items()); os.environ.get('SB_C')",
                         env_set=("SB_KNOWN", "SB_A"))
        reads, _ = env_reports(run)
        self.assertEqual(reads, {"SB_C"})

    def test_only_learning_tracks(self) -> None:
        run = run_agent(["-c", "import os; os.environ.get('SB_A'); print(type(os.environ).__name__)"],
                        rules(), env=self.ENV)
        self.assertEqual((run.stdout, run.of("env")), ("_Environ\n", []))


class Dns(unittest.TestCase):
    def test_resolved_names_are_reported_unchanged(self) -> None:
        code = textwrap.dedent("""
            import socket
            r = socket.getaddrinfo('localhost', 80, type=socket.SOCK_STREAM)
            print(sorted({a[4][0] for a in r}) == sorted({a[4][0] for a in socket.getaddrinfo('localhost', 80, type=socket.SOCK_STREAM)}))
            print(socket.gethostbyname('localhost'))
            socket.getaddrinfo('127.0.0.1', 80)
            print(socket.gethostbyname_ex('localhost')[0])
        """)
        run = run_agent(["-c", code], rules(mode="learn"))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines()[:2], ["True", "127.0.0.1"])
        dns = run.of("dns")
        self.assertEqual({m["name"] for m in dns}, {"localhost"})  # an address is not a name
        self.assertTrue(any("127.0.0.1" in m["addrs"] for m in dns))
        self.assertTrue(all(m["verdict"] == "allowed" for m in dns))


if __name__ == "__main__":
    unittest.main()

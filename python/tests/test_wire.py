"""The agent's JSON codec (in pysandboxes._agent): no `json` import at start-up."""
from __future__ import annotations

import json
import subprocess
import unittest

import support
from pysandboxes import _agent as _wire


class Wire(unittest.TestCase):
    def test_round_trip_matches_json(self) -> None:
        docs = [{"kind": "import", "name": "colorsys", "tid": 12, "ok": True, "no": None},
                {"addrs": ["127.0.0.1", "::1"], "f": 1.5, "neg": -3, "nested": {"a": [1, [2, {}]]}},
                {"text": "quote \" backslash \\ newline \n tab \t é ☃ \x00"}, [], {}]
        for doc in docs:
            with self.subTest(doc=doc):
                text = _wire.dumps(doc)
                self.assertEqual(json.loads(text), doc)
                self.assertEqual(_wire.loads(text), doc)
                self.assertTrue(text.isascii())
                self.assertNotIn("\n", text)

    def test_loads_refuses_garbage(self) -> None:
        for bad in ["", "{", '{"a":1} x', "NaN", "[Infinity]", '{"a":}', "tru"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                _wire.loads(bad)

    def test_loads_accepts_surrounding_whitespace(self) -> None:
        self.assertEqual(_wire.loads(' \n{"v": 1}\n '), {"v": 1})

    def test_agent_start_does_not_import_json(self) -> None:
        code = "import sys; print('json' in sys.modules, 're' in sys.modules)"
        bare = subprocess.run([support.PYTHON, "-c", code], capture_output=True, text=True).stdout
        run = support.run_agent(["-c", code], support.rules())
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, bare)


if __name__ == "__main__":
    unittest.main()

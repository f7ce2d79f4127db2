#!/usr/bin/env python3
"""A program that forges its own code objects (file names with newlines and
a fake policy line, 100 000-character names, control characters, a
megabyte of garbage as location table): the reader stays bounded, every
string it returns is printable and cannot start a new line."""
import importlib.util
import unittest
from pathlib import Path

_spec = importlib.util.spec_from_file_location("tracer_common", Path(__file__).with_name("tracer-common.py"))
tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tc)

CORRUPT = tc.TARGETS / "corrupt.py"


def printable(s: str) -> bool:
    return all(ord(c) >= 0x20 and c != "\x7f" and not 0x80 <= ord(c) < 0xa0 for c in s)


class Fuzz(unittest.TestCase):
    def test_forged_code_objects(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, CORRUPT) as t:
                tc.wait_blocked(t.pid)
                th = tc.dump(t.pid, t.pid)["threads"][0]
                fr = {f["func"]: f for f in th["frames"]}
                for f in th["frames"]:
                    self.assertTrue(printable(f["file"]), f)
                    self.assertTrue(printable(f["func"]), f)
                    self.assertLess(len(f["file"].encode()), 256)
                    self.assertLess(len(f["func"].encode()), 96)
                self.assertEqual(th["frames"][0]["func"], "sleeper")
                self.assertEqual(fr["newline"]["file"], "/tmp/x.py?python-import=os?# ")
                self.assertTrue(fr["long"]["file"].startswith("...d"))
                self.assertTrue(fr["long"]["file"].endswith("/tail.py"))
                self.assertIn("ctl?[31mred?", fr)
                self.assertEqual(fr["emoji_\U0001f600_\u20ac"]["file"], "/tmp/\u00fc\u20ac\U0001f600.py")
                self.assertIsInstance(fr["garbage_lines"]["line"], int)
                loc = tc.run_dump_tool("--loc", str(t.pid), str(t.pid))
                self.assertEqual(loc.returncode, 0)
                self.assertNotIn("\\n", loc.stdout)
                text = tc.run_dump_tool("--dump", str(t.pid)).stdout
                self.assertEqual(text.count("\n    "), len(th["frames"]))


if __name__ == "__main__":
    tc.main(Fuzz)

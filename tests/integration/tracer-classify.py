#!/usr/bin/env python3
"""Classification on live processes: code run by exec/eval/compile is
flagged (also with a forged file name, also when an exec'd function runs
later), stdlib-generated code and `python -c` are not, and a thread blocked
inside a nested import names the module being imported."""
import importlib.util
import unittest
from pathlib import Path

_spec = importlib.util.spec_from_file_location("tracer_common", Path(__file__).with_name("tracer-common.py"))
tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tc)

EXEC = tc.TARGETS / "exec_target.py"
IMPORT = tc.TARGETS / "import_target.py"


def read(py: str, *args: str) -> dict:
    with tc.Target(py, *args) as t:
        tc.wait_blocked(t.pid)
        return tc.dump(t.pid, t.pid)["threads"][0]


def dynamic(th: dict) -> list:
    return [f["dynamic"] for f in th["frames"]]


class Classify(unittest.TestCase):
    m = tc.marker_lines(EXEC)
    f = str(EXEC)

    def test_exec_string(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, EXEC, "exec")
                fr = tc.frames(th)
                self.assertEqual(fr[:3], [("<string>", "from_exec", 4), ("<string>", "<module>", 5),
                                          (self.f, "run_exec", self.m["exec"])])
                self.assertEqual(dynamic(th)[:4], [True, True, False, False])
                self.assertTrue(th["from_eval"])
                self.assertEqual(th["user_frame"], 2)
                self.assertEqual(th["loc"], f"{self.f}:{self.m['exec']} in run_exec()")

    def test_exec_function_called_later(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, EXEC, "later")
                self.assertEqual(tc.frames(th)[:2], [("<string>", "from_exec", 4), (self.f, "run_later", self.m["later"])])
                self.assertTrue(th["from_eval"])
                self.assertEqual(th["user_frame"], 1)

    def test_exec_forged_filename(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, EXEC, "forged")
                fr = tc.frames(th)
                self.assertEqual(fr[0], ("/usr/lib/python3.11/os.py", "from_exec", 4))
                self.assertEqual(dynamic(th)[:3], [True, True, False])
                self.assertTrue(th["from_eval"])
                self.assertEqual(fr[th["user_frame"]], (self.f, "run_forged", self.m["forged"]))

    def test_eval(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, EXEC, "eval")
                fr = tc.frames(th)
                self.assertEqual(fr[:3], [(self.f, "ready_sleep", self.m["ready_sleep"]), ("<string>", "<module>", 1),
                                          (self.f, "run_eval", self.m["eval"])])
                self.assertEqual(dynamic(th)[:3], [False, True, False])
                self.assertTrue(th["from_eval"])
                self.assertEqual(th["user_frame"], 0)

    def test_dataclass_generated_code_is_not_eval(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, EXEC, "dataclass")
                fr = tc.frames(th)
                self.assertEqual(fr[1], (self.f, "Config.__post_init__", self.m["post_init"]))
                self.assertEqual(fr[2][0], "<string>")
                self.assertFalse(th["from_eval"])

    def test_dash_c_main_is_not_eval(self):
        src = "import time\nprint('READY', flush=True)\ntime.sleep(60)\n"
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, "-c", src)
                self.assertEqual(tc.frames(th), [("<string>", "<module>", 3)])
                self.assertFalse(th["from_eval"])
                self.assertEqual(th["user_frame"], 0)
                th = read(py, "-c", f"exec({src!r})")
                self.assertEqual(tc.frames(th), [("<string>", "<module>", 3), ("<string>", "<module>", 1)])
                self.assertTrue(th["from_eval"])

    def test_nested_import(self):
        mods = tc.TARGETS / "pyfr_mods"
        mi, mo, mt = (tc.marker_lines(p) for p in (mods / "slow_inner.py", mods / "slow_outer.py", IMPORT))
        for label, py in tc.interpreters():
            with self.subTest(python=label):
                th = read(py, IMPORT)
                fr = tc.frames(th)
                self.assertEqual(th["importing"], "slow_inner")
                self.assertEqual(fr[0], (str(mods / "slow_inner.py"), "<module>", mi["inner"]))
                self.assertIn((str(mods / "slow_outer.py"), "<module>", mo["outer"]), fr)
                self.assertIn((str(IMPORT), "load", mt["load"]), fr)
                names = [x[1] for x in fr]
                self.assertEqual(names.count("_find_and_load"), 2)
                self.assertTrue(all(x[0].startswith("<frozen importlib._bootstrap")
                                    for x in fr if x[1] in ("_find_and_load", "_call_with_frames_removed")))
                self.assertFalse(th["from_eval"])
                self.assertEqual(th["user_frame"], 0)


if __name__ == "__main__":
    tc.main(Classify)

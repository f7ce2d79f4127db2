#!/usr/bin/env python3
"""sb_stack_dump (python-sb --stack PID): every thread's Python stack as
text, like py-spy dump; with --native the C frames too (libunwind)."""
import importlib.util
import re
import subprocess
import time
import unittest
from pathlib import Path

_spec = importlib.util.spec_from_file_location("tracer_common", Path(__file__).with_name("tracer-common.py"))
tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tc)

THREADS = tc.TARGETS / "threads.py"


class Dump(unittest.TestCase):
    def test_three_threads(self):
        m = tc.marker_lines(THREADS)
        f = str(THREADS)
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, THREADS) as t:
                tc.wait_blocked(t.pid)
                out = tc.run_dump_tool("--dump", str(t.pid))
                self.assertEqual(out.returncode, 0, out.stderr)
                text = out.stdout
                self.assertRegex(text, rf"^Process {t.pid}: ")
                self.assertRegex(text, r"\nPython v3\.1[1-9]\.\d+ \(")
                heads = re.findall(r"^Thread (\d+) \((idle|active)\)", text, re.M)
                self.assertEqual(sorted(int(h[0]) for h in heads), sorted(int(v) for v in t.fields.values()))
                for func, marker in (("worker_sleep", "worker_sleep"), ("ticker", "ticker"),
                                     ("worker_gen", "worker_gen"), ("main", "main_join")):
                    self.assertIn(f"    {func} ({f}:{m[marker]})", text)
                self.assertNotIn("<unreadable>", text)

    def test_native_frames(self):
        with tc.Target(tc.DEBIAN_PYTHON, THREADS) as t:
            tc.wait_blocked(t.pid)
            out = tc.run_dump_tool("--dump", "--native", str(t.pid))
            self.assertEqual(out.returncode, 0, out.stderr)
            sections = out.stdout.split("\nThread ")[1:]
            self.assertEqual(len(sections), 3)
            if "built without libunwind" in out.stdout:
                self.skipTest("built without libunwind")
            for s in sections:
                self.assertIn("    native:\n", s)
                # Every thread waits in libc: sleeping or on a lock.
                self.assertRegex(s, r"#0 +0x[0-9a-f]+ (clock_nanosleep|__futex_abstimed_wait\w*|sem_\w+|"
                                    r"pthread_\w+|__lll_lock_wait\w*|__nptl_\w+|\w*futex\w*)")
            # The worker's C stack passes through the interpreter.
            self.assertIn("_PyEval_EvalFrameDefault", out.stdout)

    def test_running_thread(self):
        """A thread that runs while it is read: Python frames retried on torn
        reads, native frames through a short PTRACE_INTERRUPT."""
        busy = tc.TARGETS / "busy.py"
        m = tc.marker_lines(busy)
        with tc.Target(tc.DEBIAN_PYTHON, busy) as t:
            spinner = int(t.fields["spinner"])
            out = tc.run_dump_tool("--dump", "--native", str(t.pid))
            self.assertEqual(out.returncode, 0, out.stderr)
            section = [s for s in out.stdout.split("\nThread ")[1:] if s.startswith(f"{spinner} ")]
            self.assertEqual(len(section), 1, out.stdout)
            lines = section[0].splitlines()
            # The loop is on two lines: either may be executing.
            self.assertRegex(lines[1], rf"^    spin \({re.escape(str(busy))}:(?:{m['spin'] - 1}|{m['spin']})\) <-$")
            if "built without libunwind" not in out.stdout:
                self.assertIn("    native:", lines)
                self.assertIn("_PyEval_EvalFrameDefault", section[0])
            # The spinner was let go: it still runs.
            time.sleep(0.05)
            self.assertIsNone(t.proc.poll())
            state = Path(f"/proc/{t.pid}/task/{spinner}/stat").read_text().rsplit(")", 1)[1].split()[0]
            self.assertIn(state, "RS")

    def test_not_python(self):
        sleeper = subprocess.Popen(["sleep", "60"])
        try:
            tc.wait_blocked(sleeper.pid)
            out = tc.run_dump_tool("--dump", str(sleeper.pid))
            self.assertEqual(out.returncode, 0)
            self.assertEqual(out.stdout.strip(), "error: No such file or directory")
        finally:
            sleeper.kill()
            sleeper.wait()


if __name__ == "__main__":
    tc.main(Dump)

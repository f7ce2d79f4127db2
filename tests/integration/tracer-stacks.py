#!/usr/bin/env python3
"""Python stacks read from live processes: exact file:line:function for a
known program, worker threads, a running generator, deep recursion, a
non-ASCII path, forked children, a pid namespace; and a clean "unknown" for
an unsupported interpreter (3.10)."""
import importlib.util
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

_spec = importlib.util.spec_from_file_location("tracer_common", Path(__file__).with_name("tracer-common.py"))
tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tc)

SLEEPY = tc.TARGETS / "sleepy.py"


def sleepy_frames(path: Path) -> list:
    m = tc.marker_lines(SLEEPY)
    f = str(path)
    return [(f, "Sleeper.inner", m["inner"]), (f, "middle", m["middle"]), (f, "outer", m["outer"]),
            (f, "<module>", m["module"])]


class Stacks(unittest.TestCase):
    def test_sleepy_exact(self):
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, SLEEPY) as t:
                tc.wait_blocked(t.pid)
                d = tc.dump(t.pid, t.pid)
                self.assertTrue(d["supported"])
                th = d["threads"][0]
                self.assertEqual(tc.frames(th), sleepy_frames(SLEEPY))
                self.assertFalse(th["from_eval"])
                self.assertEqual(th["importing"], "")
                self.assertEqual(th["user_frame"], 0)
                want = f"{SLEEPY}:{tc.marker_lines(SLEEPY)['inner']} in Sleeper.inner()"
                self.assertEqual(th["loc"], want)
                # The supervisor's entry point, with its per-pid cache.
                loc = tc.run_dump_tool("--loc", str(t.pid), str(t.pid))
                self.assertEqual(loc.returncode, 0, loc.stderr)
                self.assertIn(f'"loc":"{want}"', loc.stdout)
                self.assertIn('"from_eval":false', loc.stdout)

    def test_threads_and_generator(self):
        threads = tc.TARGETS / "threads.py"
        m = tc.marker_lines(threads)
        f = str(threads)
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, threads) as t:
                tc.wait_blocked(t.pid)
                ids = {k: int(v) for k, v in t.fields.items()}
                d = tc.dump(t.pid, ids["sleeper"], ids["gen"], ids["main"])
                sleeper, gen, main = (tc.frames(th) for th in d["threads"])
                self.assertEqual(sleeper[0], (f, "worker_sleep", m["worker_sleep"]))
                self.assertEqual([fr[1] for fr in sleeper[1:]], ["Thread.run", "Thread._bootstrap_inner",
                                                                 "Thread._bootstrap"])
                self.assertEqual(gen[:2], [(f, "ticker", m["ticker"]), (f, "worker_gen", m["worker_gen"])])
                user = d["threads"][2]["user_frame"]
                self.assertEqual(main[user], (f, "main", m["main_join"]))
                self.assertEqual(main[user + 1][1], "<module>")
                self.assertTrue(all(fr[0].endswith("threading.py") for fr in main[:user]))
                # Walking every tstate finds the same three threads.
                everything = tc.dump(t.pid)
                self.assertEqual(sorted(th["tid"] for th in everything["threads"]), sorted(ids.values()))

    def test_deep_recursion(self):
        deep = tc.TARGETS / "deep.py"
        m = tc.marker_lines(deep)
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, deep, "500") as t:
                tc.wait_blocked(t.pid)
                th = tc.dump(t.pid, t.pid)["threads"][0]
                self.assertEqual(th["depth"], 502)
                self.assertFalse(th["truncated"])
                fr = tc.frames(th)
                self.assertEqual(len(fr), 32)
                self.assertEqual(fr[0], (str(deep), "recurse", m["bottom"]))
                self.assertTrue(all(x == (str(deep), "recurse", m["recurse"]) for x in fr[1:]))

    def test_non_ascii_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp, "dïr ü€😀")
            d.mkdir()
            script = d / "slëepy.py"
            shutil.copy(SLEEPY, script)
            for label, py in tc.interpreters():
                with self.subTest(python=label), tc.Target(py, script) as t:
                    tc.wait_blocked(t.pid)
                    th = tc.dump(t.pid, t.pid)["threads"][0]
                    self.assertEqual(tc.frames(th), sleepy_frames(script))

    def test_forked_child(self):
        forker = tc.TARGETS / "forker.py"
        m = tc.marker_lines(forker)
        f = str(forker)
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, forker) as t:
                child, worker = int(t.fields["child"]), int(t.fields["worker"])
                try:
                    tc.wait_blocked(child)
                    tc.wait_blocked(t.pid)
                    d = tc.dump(child, child, worker)
                    main, thread = (tc.frames(th) for th in d["threads"])
                    self.assertEqual(main[0], (f, "child_main", m["child_main"]))
                    self.assertEqual(main[1][1], "<module>")
                    self.assertEqual(thread[0], (f, "after_fork_worker", m["after_fork_worker"]))
                    parent = tc.frames(tc.dump(t.pid, t.pid)["threads"][0])
                    self.assertEqual(parent[0], (f, "<module>", m["parent_wait"]))
                finally:
                    os.kill(child, 9)

    def test_pid_namespace(self):
        unshare = shutil.which("unshare")
        if not unshare or os.geteuid() != 0:
            self.skipTest("needs unshare(1) and root")
        probe = subprocess.run([unshare, "--pid", "--fork", "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest(f"cannot create a pid namespace: {probe.stderr!r}")
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, SLEEPY, prefix=[unshare, "--pid", "--fork"]) as t:
                children = Path(f"/proc/{t.pid}/task/{t.pid}/children").read_text().split()
                self.assertEqual(len(children), 1)
                pid = int(children[0])
                tc.wait_blocked(pid)
                nspid = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                         if line.startswith("NSpid:")][0].split()
                self.assertEqual(nspid[-1], "1")
                # Our tid goes in; the target's own tid (1) is matched.
                th = tc.dump(pid, pid)["threads"][0]
                self.assertEqual(tc.frames(th), sleepy_frames(SLEEPY))
                self.assertEqual(tc.dump(pid)["threads"][0]["tid"], 1)

    def test_cache_follows_exec(self):
        """The per-pid cache (sb_pyloc_for) notices an execve: from Python to
        Python, and from a non-Python program to Python."""
        reexec = tc.TARGETS / "reexec.py"
        want = f"{SLEEPY}:{tc.marker_lines(SLEEPY)['inner']} in Sleeper.inner()"
        first = f"{reexec}:{tc.marker_lines(reexec)['first']} in first()"
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, reexec) as t:
                tc.wait_blocked(t.pid)
                seq = subprocess.Popen([str(tc.PYSTACK_DUMP), "--loc-seq", str(t.pid), str(t.pid)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                try:
                    seq.stdin.write("loc\n")
                    seq.stdin.flush()
                    self.assertIn(f'"loc":"{first}"', tc.read_line(seq.stdout))
                    os.kill(t.pid, signal.SIGUSR1)
                    self.assertTrue(tc.read_line(t.proc.stdout).startswith("READY"))
                    tc.wait_blocked(t.pid)
                    seq.stdin.write("loc\n")
                    seq.stdin.flush()
                    self.assertIn(f'"loc":"{want}"', tc.read_line(seq.stdout))
                finally:
                    seq.stdin.close()
                    seq.wait()
        # Not Python yet (a shell), then Python after its exec.
        sh = subprocess.Popen(["/bin/sh", "-c", f'read x; exec {tc.DEBIAN_PYTHON} "$0"', str(SLEEPY)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        seq = subprocess.Popen([str(tc.PYSTACK_DUMP), "--loc-seq", str(sh.pid), str(sh.pid)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            tc.wait_blocked(sh.pid)
            for _ in range(2):  # the second answer comes from the negative cache
                seq.stdin.write("loc\n")
                seq.stdin.flush()
                self.assertIn('"rc":0,"loc":""', tc.read_line(seq.stdout))
            sh.stdin.write("go\n")
            sh.stdin.flush()
            self.assertTrue(tc.read_line(sh.stdout).startswith("READY"))
            tc.wait_blocked(sh.pid)
            seq.stdin.write("loc\n")
            seq.stdin.flush()
            self.assertIn(f'"loc":"{want}"', tc.read_line(seq.stdout))
        finally:
            seq.stdin.close()
            seq.wait()
            sh.kill()
            sh.wait()
            for f in (sh.stdin, sh.stdout, seq.stdout):
                f.close()

    def test_concurrent_callers(self):
        """Several threads share the per-pid cache while others drop it."""
        with tc.Target(tc.DEBIAN_PYTHON, SLEEPY) as t:
            tc.wait_blocked(t.pid)
            out = tc.run_dump_tool("--stress", "4", "500", str(t.pid), str(t.pid))
            self.assertEqual(out.returncode, 0, out.stderr)
            want = f"{SLEEPY}:{tc.marker_lines(SLEEPY)['inner']} in Sleeper.inner()"
            self.assertEqual(out.stdout.strip(), f'{{"loc":"{want}","mismatches":0,"errors":0}}')

    def test_unsupported_python_310(self):
        py = tc.pyenv_python("3.10")
        if not py:
            self.skipTest("no pyenv 3.10")
        with tc.Target(py, SLEEPY) as t:
            tc.wait_blocked(t.pid)
            d = tc.dump(t.pid, t.pid)
            self.assertFalse(d["supported"])
            loc = tc.run_dump_tool("--loc", str(t.pid), str(t.pid))
            self.assertEqual(loc.returncode, 0, loc.stderr)
            self.assertIn('"rc":0,"loc":""', loc.stdout)
            text = tc.run_dump_tool("--dump", str(t.pid))
            self.assertEqual(text.returncode, 0)
            self.assertIn("error: No such file or directory", text.stdout)

    def test_class_instantiation(self):
        """3.13 pushes an internal __init__ frame for A(): not shown."""
        src = ("import time\nclass A:\n    def __init__(self):\n        print('READY', flush=True)\n"
               "        time.sleep(60)\ndef f():\n    A()\nf()\n")
        for label, py in tc.interpreters():
            with self.subTest(python=label), tc.Target(py, "-c", src) as t:
                tc.wait_blocked(t.pid)
                th = tc.dump(t.pid, t.pid)["threads"][0]
                self.assertEqual(tc.frames(th), [("<string>", "A.__init__", 5), ("<string>", "f", 7),
                                                 ("<string>", "<module>", 8)])

    def test_cost_is_reported(self):
        """Not an assertion on time: prints the cost of one stack read for
        the record (doc/attribution.md quotes these numbers)."""
        deep = tc.TARGETS / "deep.py"
        with tc.Target(tc.DEBIAN_PYTHON, deep, "28") as t:
            tc.wait_blocked(t.pid)
            out = tc.run_dump_tool("--bench", "2000", str(t.pid), str(t.pid))
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn('"depth":30', out.stdout)
            print("\n  30-frame stack:", out.stdout.strip())


if __name__ == "__main__":
    tc.main(Stacks)

"""The bootstrap: rules from the channel, sys.path and PYTHONPATH restored, the
user's own sitecustomize chained, fail-closed start-up, arming before __main__."""
from __future__ import annotations

import os
import tempfile
import textwrap
import unittest

import support
from support import rules, run_agent


class Bootstrap(unittest.TestCase):
    def test_traces_are_removed(self) -> None:
        code = textwrap.dedent("""
            import os, sys
            print([p for p in sys.path if 'bootstrap' in p])
            print(os.environ.get('PYTHONPATH'))
            print(os.environ.get('PYSANDBOXES_AGENT_FD'), os.environ.get('PYSANDBOXES_AGENT_PKGDIR'))
            import pysandboxes; print(pysandboxes.is_in_sandbox())
        """)
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        run = run_agent(["-c", code], rules(), env=env)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.split("\n")[:4], ["[]", "None", "None None", "True"])
        env["PYTHONPATH"] = "/opt/mine"
        run = run_agent(["-c", code], rules(), env=env)
        self.assertEqual(run.stdout.split("\n")[1], "/opt/mine")

    def test_users_sitecustomize_runs_unguarded_before_the_program(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("import colorsys\nprint('USER-SITECUSTOMIZE')\n")
            env = dict(os.environ, PYTHONPATH=d)
            run = run_agent(["-c", "import sitecustomize; print(sitecustomize.__file__)"],
                            rules(imports="json"), env=env)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(lines[0], "USER-SITECUSTOMIZE")
        self.assertEqual(lines[1], os.path.join(d, "sitecustomize.py"))

    def test_no_channel_means_no_agent(self) -> None:
        # The bootstrap directory alone (no descriptor): the program runs as usual.
        env = dict(os.environ, PYTHONPATH=str(support.PYDIR / "bootstrap"))
        import subprocess

        out = subprocess.run([support.PYTHON, "-c", "import sys; print('pysandboxes' in sys.modules)"],
                             env=env, capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout.strip()), (0, "False"))

    def test_bad_rules_fail_closed(self) -> None:
        for doc in ({"version": 2}, "not an object"):
            with self.subTest(doc=doc):
                proc, sock = support.spawn_agent(["-c", "print('RAN')"], None)
                sock.sendall((repr(doc) + "\n").encode())
                out, err = proc.communicate(timeout=60)
                sock.close()
                self.assertEqual(proc.returncode, 255)
                self.assertNotIn("RAN", out)
                self.assertIn("python-sb: the in-interpreter agent could not start", err)

    def test_channel_closed_before_rules_fails_closed(self) -> None:
        proc, sock = support.spawn_agent(["-c", "print('RAN')"], None)
        sock.close()
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 255)
        self.assertNotIn("RAN", out)

    def test_channel_is_not_inherited(self) -> None:
        code = textwrap.dedent("""
            import subprocess, sys
            fds = subprocess.run(['ls', '/proc/self/fd'], capture_output=True, text=True).stdout.split()
            print(sorted(int(x) for x in fds))
        """)
        run = run_agent(["-c", code], rules(allow=("process-exec",)))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "[0, 1, 2, 3]")  # ls's own directory descriptor

    def test_guards_arm_only_for_the_program(self) -> None:
        # Imports of the interpreter start-up and of site are framework;
        # the same import in the program is judged.
        run = run_agent(["-c", "import colorsys"], rules(imports="json"))
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("Module named 'colorsys' is not allowed by a rule", run.stderr)
        for kind in (["-m", "json.tool", "--help"], ["-c", "pass"]):
            run = run_agent(kind, rules(imports="*"))
            self.assertEqual(run.returncode, 0, run.stderr)

    def test_script_stdin_and_module(self) -> None:
        prog = support.program("import colorsys\nprint('X')\n")
        run = run_agent([prog], rules(imports="colorsys"))
        self.assertEqual((run.returncode, run.stdout), (0, "X\n"), run.stderr)
        run = run_agent([prog], rules(imports="json"))
        self.assertNotEqual(run.returncode, 0)
        run = run_agent(["-m", "colorsys"], rules(imports="json"))
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("Module named 'colorsys'", run.stderr)


if __name__ == "__main__":
    unittest.main()


class LearningDoors(unittest.TestCase):
    """Learning without eval-* rules loads the eval guard on the program's
    first evaluation; until then the doors pass the standard library's own
    calls to the builtins exactly as the guard would have."""

    def test_library_calls_pass_and_the_first_program_call_loads_the_guard(self) -> None:
        code = textwrap.dedent("""
            from __future__ import annotations
            import collections, dataclasses, sys, timeit, typing
            def f(x: "int") -> "list[int]":
                return [x]
            print(typing.get_type_hints(f)["x"].__name__, collections.namedtuple("T", "a")(1).a,
                  dataclasses.make_dataclass("P", [("x", int)])(2).x, timeit.timeit("1 + 1", number=1) >= 0,
                  "pysandboxes.evalguard" in sys.modules)
            code = compile("x = 1", "<s>", "exec")
            print(code.co_flags & 0x1000000 != 0, "pysandboxes.evalguard" in sys.modules)
            y = 3
            print(eval("y - 1"), "pysandboxes.evalguard" in sys.modules)
        """)
        run = run_agent(["-c", code], rules(mode="learn"))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.splitlines(), ["int 1 2 True False", "True True", "2 True"])
        evals = [m for m in run.messages if m.get("kind") == "eval"]
        self.assertTrue(evals, run.messages)
        self.assertTrue(all(":" in m.get("pyloc", "") and "<string>" in m["pyloc"] for m in evals), evals)

    def test_eval_rules_load_the_guard_at_start(self) -> None:
        # Rules to check (a mistake in them must stop the start) and enforce
        # mode: no doors.
        code = "import sys; print('pysandboxes.evalguard' in sys.modules)"
        for mode, present in (("learn", True), ("enforce", True)):
            with self.subTest(mode=mode):
                doc = rules(mode=mode, eval={"present": present, "profiles": {"": {"syntax": ["arith"]}}})
                run = run_agent(["-c", code], doc)
                self.assertEqual((run.returncode, run.stdout.strip()), (0, "True"), run.stderr)

    def test_an_evaluation_while_the_guard_loads_does_not_hang(self) -> None:
        # The program's own audit hook evaluates a string on each import: the
        # imports of the guard's first load call it on the loading thread.
        code = textwrap.dedent("""
            import sys
            seen = []
            def hook(event, args):
                if event == "import" and not seen:
                    seen.append(eval("1 + 1"))
            sys.addaudithook(hook)
            print(eval("2 * 3"), seen)
        """)
        run = run_agent(["-c", code], rules(mode="learn"), timeout=30)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "6 [2]")

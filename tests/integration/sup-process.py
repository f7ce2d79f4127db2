#!/usr/bin/env python3
"""Processes: an exec= binary runs, any other does not (its marker is never
written); fork needs process-exec; signals reach only the sandbox, never
python-sb itself or anything outside, from Python, a C program or a
grandchild; learn mode lets process calls through and records them."""
from __future__ import annotations

import json
import os
import unittest

import sbtest
from sup_util import ATTACK, TRY, Tree, lines_of, need_progs, real_python, run

MARKER_TOOL = '''#!/bin/sh
echo ran > "$1"
'''


class Process(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)
        need_progs(self)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_exec_allowed_and_refused(self) -> None:
        tool = self.t.prog / "tool.sh"
        tool.write_text(MARKER_TOOL)
        tool.chmod(0o755)
        marker = self.t.out / "marker"
        s = self.t.script(TRY + '''
import subprocess
attack, tool, marker = sys.argv[1:4]
attempt("allowed", lambda: subprocess.run([attack, "read", sys.argv[4]], capture_output=True, text=True).stdout.strip())
attempt("refused", lambda: subprocess.run([tool, marker]).returncode)
attempt("execv", lambda: os.execv(tool, [tool, marker]))
''')
        cp = run(self.t, [str(s), str(ATTACK), str(tool), str(marker), str(self.t.data / "public.txt")],
                 ["python-api=ALLOW:process-exec", f"exec={ATTACK}", "exec=/bin/sh", "exec=/usr/bin/dash"])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(lines_of(cp, "allowed "), ["allowed OK 'read OK public data'"])
        self.assertEqual(lines_of(cp, "refused "), ["refused ERR EACCES"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "execv "), ["execv ERR EACCES"])
        self.assertFalse(marker.exists())
        self.assertIn(f"python-sb: DENIED exec '{tool}'", cp.stderr)

    def test_exec_through_top_level_symlink(self) -> None:
        """/bin/x where /bin is a symlink to usr/bin (merged /usr) is judged as
        /usr/bin/x: the first time, which finds out that /bin is a symlink,
        and every later time, when the supervisor reads the link up front."""
        if os.path.realpath("/bin") != "/usr/bin" or not all(
                os.access(f"/usr/bin/{p}", os.X_OK) for p in ("true", "false")):
            self.skipTest("/bin is not a symlink to /usr/bin")
        s = self.t.script(TRY + '''
import subprocess
for i in range(3):
    attempt(f"true{i}", lambda: subprocess.run(["/bin/true"]).returncode)
    attempt(f"false{i}", lambda: subprocess.run(["/bin/false"]).returncode)
''')
        cp = run(self.t, [str(s)], ["python-api=ALLOW:process-exec", "exec=/usr/bin/true"])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        for i in range(3):
            self.assertEqual(lines_of(cp, f"true{i} "), [f"true{i} OK 0"], cp.stdout + cp.stderr)
            self.assertEqual(lines_of(cp, f"false{i} "), [f"false{i} ERR EACCES"], cp.stdout + cp.stderr)
        self.assertIn("python-sb: DENIED exec '/usr/bin/false'", cp.stderr)

    def test_fork_needs_process_exec(self) -> None:
        s = self.t.script(TRY + '''
import subprocess
attempt("fork", lambda: os.fork())
attempt("spawn", lambda: subprocess.run(["/bin/true"]).returncode)
''')
        cp = run(self.t, [str(s)])
        self.assertEqual(lines_of(cp, "fork "), ["fork ERR EPERM"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "spawn "), ["spawn ERR EPERM"])
        self.assertIn("add python-api=ALLOW:process-exec", cp.stderr)

    def test_threads_need_threads(self) -> None:
        s = self.t.script('''
import threading
try:
    t = threading.Thread(target=print, args=("in thread",)); t.start(); t.join()
except RuntimeError as e:
    print("refused:", e)
''')
        cp = run(self.t, [str(s)])
        self.assertEqual(cp.stdout, "refused: can't start new thread\n", cp.stderr)
        cp = run(self.t, [str(s)], ["python-api=ALLOW:threads"])
        self.assertEqual(cp.stdout, "in thread\n", cp.stderr)

    def test_signals_stay_inside(self) -> None:
        s = self.t.script(TRY + '''
import signal, subprocess, time
sup = os.getppid()
attack = sys.argv[1]
attempt("kill-parent", lambda: os.kill(sup, signal.SIGTERM))
attempt("kill-parent-0", lambda: os.kill(sup, 0))
attempt("killpg-shared", lambda: os.killpg(0, signal.SIGTERM))
attempt("kill-init", lambda: os.kill(1, signal.SIGTERM))
got = []
signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
attempt("kill-self", lambda: (os.kill(os.getpid(), signal.SIGUSR1), len(got))[1])
child = subprocess.Popen(["/bin/sleep", "30"])
attempt("kill-child", lambda: (os.kill(child.pid, signal.SIGTERM), child.wait())[1])
out = subprocess.run([attack, "kill", str(sup), "15"], capture_output=True, text=True).stdout.strip()
print("native", out)
gc = subprocess.run([sys.executable, "-c",
    "import subprocess, sys; print(subprocess.run([sys.argv[1], 'kill', sys.argv[2], '9'], capture_output=True, text=True).stdout.strip())",
    attack, str(sup)], capture_output=True, text=True).stdout.strip()
print("grandchild", gc)
print("still here", flush=True)
''')
        cp = run(self.t, [str(s), str(ATTACK)],
                 ["python-api=ALLOW:process-exec", "python-api=ALLOW:process-control",
                  f"exec={ATTACK}", "exec=/usr/bin/sleep", f"exec={real_python()}"])
        self.assertEqual(cp.returncode, 0, cp.stdout + cp.stderr)
        for name in ("kill-parent", "kill-parent-0", "killpg-shared", "kill-init"):
            self.assertEqual(lines_of(cp, name + " "), [f"{name} ERR EPERM"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "kill-self "), ["kill-self OK 1"])
        self.assertEqual(lines_of(cp, "kill-child "), ["kill-child OK -15"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "native "), ["native kill ERR EPERM"])
        self.assertEqual(lines_of(cp, "grandchild "), ["grandchild kill ERR EPERM"])
        self.assertEqual(lines_of(cp, "still here"), ["still here"])

    def test_chroot_refused_and_said_why(self) -> None:
        s = self.t.script(TRY + '''
attempt("chroot", lambda: os.chroot(sys.argv[1]))
print("cwd", os.getcwd() == sys.argv[2], os.path.exists(sys.argv[3]))
''')
        cp = run(self.t, [str(s), str(self.t.out), str(self.t.root), str(s)], ["python-api=ALLOW:privileges"])
        self.assertEqual(lines_of(cp, "chroot "), ["chroot ERR EPERM"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "cwd "), ["cwd True True"], cp.stdout + cp.stderr)
        self.assertIn(f"python-sb: DENIED chroot '{self.t.out}' (none) at ", cp.stderr)
        self.assertIn(": a new root would change what every path means; no rule allows chroot\n", cp.stderr)

    def test_proc_directory_as_pidfd(self) -> None:
        """A /proc/PID directory descriptor serves as a pidfd, as the kernel
        allows (CPython's test_signal uses it): delivered to the program
        itself, refused for python-sb, which stays alive."""
        s = self.t.script(TRY + '''
import signal
got = []
signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
own = os.open(f"/proc/{os.getpid()}", os.O_DIRECTORY)
sup = os.open(f"/proc/{os.getppid()}", os.O_DIRECTORY)
attempt("self", lambda: (signal.pidfd_send_signal(own, signal.SIGUSR1), len(got))[1])
attempt("parent", lambda: signal.pidfd_send_signal(sup, signal.SIGTERM))
attempt("status-file", lambda: signal.pidfd_send_signal(os.open("/proc/self/status", os.O_RDONLY), 0))
print("still here", flush=True)
''')
        cp = run(self.t, [str(s)], ["expose-ro=/proc"])
        self.assertEqual(cp.returncode, 0, cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "self "), ["self OK 1"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "parent "), ["parent ERR EPERM"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "status-file "), ["status-file ERR EBADF"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "still here"), ["still here"])

    def test_kill_child_needs_process_control(self) -> None:
        s = self.t.script(TRY + '''
import signal, subprocess
child = subprocess.Popen(["/bin/sleep", "30"])
attempt("kill-child", lambda: os.kill(child.pid, signal.SIGKILL))
''')
        cp = run(self.t, [str(s)], ["python-api=ALLOW:process-exec", "exec=/usr/bin/sleep"])
        self.assertEqual(lines_of(cp, "kill-child "), ["kill-child ERR EPERM"], cp.stdout + cp.stderr)
        self.assertIn("add python-api=ALLOW:process-control", cp.stderr)

    def test_learn_lets_through(self) -> None:
        s = self.t.script(TRY + '''
attempt("fork", lambda: (lambda pid: pid == 0 and os._exit(0) or os.waitpid(pid, 0)[1])(os.fork()))
attempt("read", lambda: open(sys.argv[1]).read().strip())
''')
        log = self.t.out / "events.jsonl"
        cp = run(self.t, ["--learn", f"--log={log}", str(s), str(self.t.data / "public.txt")])
        self.assertEqual(lines_of(cp, "fork "), ["fork OK 0"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "read "), ["read OK 'public data'"])
        self.assertNotIn("DENIED", cp.stderr)
        # The fork is an event for the learner, though the filter let it run.
        events = [json.loads(l) for l in log.read_text().splitlines()]
        forks = [e for e in events if e.get("syscall") in ("clone", "fork", "vfork")]
        self.assertTrue(forks, "no process-creation event in learn mode")
        self.assertEqual(forks[0].get("category"), "process-exec")


if __name__ == "__main__":
    sbtest.main(Process)

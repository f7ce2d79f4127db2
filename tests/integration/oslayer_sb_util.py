"""Shared checks of the kernel layers that start the program themselves
(os-sandbox=unshare, bwrap, firejail), run through python-sb itself:
tests/integration/os-unshare-sb.py, os-bwrap-sb.py, os-firejail-sb.py.

Each layer test subclasses LayerThroughPythonSb, sets LAYER and the outcomes
that differ, and calls main().  What is refused here is refused by the
supervisor first (it emulates opens and performs connects); the layer alone
is tested by os-unshare.py and os-wrappers.py.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402

PROGRAM = ou.PROBE_PRELUDE + r'''
import subprocess
def own_status():
    # /proc/PID of the program's own pid namespace: resolved inside the
    # program's root, it names the interpreter itself.
    with open("/proc/%d/status" % os.getpid()) as f:
        name = f.readline().split()[1]
    if not name.startswith("python"):
        raise OSError(errno.EIO, name)
print("pid", os.getpid(), flush=True)
print("hostname", socket.gethostname(), flush=True)
attempt("read ro", lambda: read("ro/data.txt"))
attempt("write rw", lambda: write("rw/out.txt"))
attempt("read secret", lambda: read({secret!r}))
attempt("write policy", lambda: write({policy!r}, "a"))
attempt("exec refused", lambda: subprocess.run(["/usr/bin/true"]))
attempt("exec allowed", lambda: subprocess.run(["/usr/bin/false"]))
attempt("connect allowed", lambda: tcp({allowed}))
attempt("connect denied", lambda: tcp({denied}))
attempt("own status", own_status)
print("to stdout", flush=True)
sys.stderr.write("to stderr\n")
sys.exit(7)
'''

# Reads stdin, writes both streams, leaves with a status: python-sb must be
# indistinguishable from bare python here.
IO_PROGRAM = r'''
import sys
line = sys.stdin.readline()
print("read", line.strip())
print("warning on stderr", file=sys.stderr)
raise SystemExit(int(line))
'''

SIGNAL_PROGRAM = r'''
import os, signal, sys, time
def term(sig, frame):
    os.write(1, b"terminated\n")	# print() may be inside its own flush of "ready"
    os._exit(5)
signal.signal(signal.SIGTERM, term)
print("ready", flush=True)
time.sleep(60)
'''

# Signals and priorities inside and across the layer's pid namespace: the
# program's pids are its namespace's (its first child is pid 3 under unshare),
# `outside` is a host pid the program must not reach.
PIDS_PROGRAM = ou.PROBE_PRELUDE + r'''
import signal, threading, time
outside = int(sys.argv[1])
def child():
    pid = os.fork()
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    return pid
def reaped(pid):
    for _ in range(1000):	# 10 s, then the child is reported unsignalled
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            return os.WTERMSIG(st) if os.WIFSIGNALED(st) else -1
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    return "none"
attempt("kill self 0", lambda: os.kill(os.getpid(), 0))
attempt("own thread", lambda: signal.pthread_kill(threading.get_ident(), 0))
pid = child()
nice = min(os.getpriority(os.PRIO_PROCESS, 0) + 1, 19)	# raising it needs no privilege
attempt("priority child", lambda: os.setpriority(os.PRIO_PROCESS, pid, nice))
print("child nice", "yes" if os.getpriority(os.PRIO_PROCESS, pid) == nice else "no", flush=True)
attempt("kill outside", lambda: os.kill(outside, signal.SIGTERM))
attempt("priority outside", lambda: os.setpriority(os.PRIO_PROCESS, outside, 19))
attempt("kill child", lambda: os.kill(pid, signal.SIGTERM))
print("child got", reaped(pid), flush=True)
pid = child()
fd = os.pidfd_open(pid)
attempt("pidfd child", lambda: signal.pidfd_send_signal(fd, signal.SIGUSR1))
print("pidfd child got", reaped(pid), flush=True)
print("done", "yes", flush=True)
'''

# Process creation is granted but exec= names one binary, so the exec attempts
# reach the supervisor's exec check; every import is open, so the outcomes are
# the supervisor's and the layer's, not the agent's.
BASE_RULES = "python-import=*\npython-api=ALLOW:process-exec\nexec=/usr/bin/false\n"


def listener() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s


class LayerThroughPythonSb(unittest.TestCase):
    LAYER = ""
    # What the program sees when it connects to a host loopback port a net=
    # rule allows: the layer's own network namespace refuses it.
    CONNECT_ALLOWED = "ECONNREFUSED"
    PYTHONS = ou.PYTHONS

    def setUp(self):
        self.secret_dir = Path(tempfile.mkdtemp(prefix="sbsecret-"))
        self.secret = self.secret_dir / "token"
        self.secret.write_text("secret\n")
        self.allowed = listener()
        self.denied = listener()

    def tearDown(self):
        self.allowed.close()
        self.denied.close()
        shutil.rmtree(self.secret_dir, ignore_errors=True)

    # ---- helpers ---------------------------------------------------------------

    def layer(self, s: sbtest.Scratch, python: str = "/usr/bin/python3", rules: str = "",
              top_rw: bool = False) -> ou.Layer:
        port = self.allowed.getsockname()[1]
        return ou.Layer(s, python, self.LAYER, top_rw=top_rw,
                        rules=BASE_RULES + f"net=ALLOW|tcp|127.0.0.1|{port}|OUT\n" + rules)

    def run_program(self, s: sbtest.Scratch, layer: ou.Layer, python: str = "/usr/bin/python3",
                    **kw) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        prog = s.write("prog.py", PROGRAM.format(
            secret=str(self.secret), policy=str(layer.policy),
            allowed=self.allowed.getsockname()[1], denied=self.denied.getsockname()[1]))
        cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python=python, **kw)
        return cp, ou.outcomes(cp)

    def check_confined(self, cp: subprocess.CompletedProcess[str], r: dict[str, str], s: sbtest.Scratch):
        why = cp.stdout + cp.stderr
        self.assertEqual(cp.returncode, 7, why)
        self.assertEqual(r.get("read ro"), "OK", why)
        self.assertEqual(r.get("write rw"), "OK", why)
        self.assertEqual((s.dir / "rw" / "out.txt").read_text(), "x")
        self.assertEqual(r.get("read secret"), "ENOENT", why)
        self.assertIn(r.get("write policy"), ("EACCES", "EROFS"), why)
        self.assertEqual(r.get("exec refused"), "EACCES", why)
        self.assertEqual(r.get("exec allowed"), "OK", why)
        self.assertEqual(r.get("connect allowed"), self.CONNECT_ALLOWED, why)
        self.assertEqual(r.get("connect denied"), "ECONNREFUSED", why)
        self.assertEqual(r.get("hostname"), "python-sb", why)
        self.assertIn("to stdout\n", cp.stdout)
        self.assertIn("to stderr\n", cp.stderr)
        # The refusals are the supervisor's, with its notices.
        self.assertIn("python-sb: DENIED exec '/usr/bin/true'", cp.stderr)

    # ---- the tests -------------------------------------------------------------

    def test_check_config(self):
        with sbtest.Scratch() as s:
            layer = self.layer(s)
            cp = sbtest.run_sb(["--check-config"], cwd=layer.dir, python="/usr/bin/python3")
            self.assertEqual(cp.returncode, 0, cp.stderr)
            self.assertIn(f"os-sandbox: {self.LAYER}", cp.stdout)
            self.assertIn("does not enforce (the supervisor does):", cp.stdout)
            self.assertIn("self-test: reading", cp.stdout)
            self.assertIn("self-test: TCP connect to 127.0.0.1", cp.stdout)

    def test_confined(self):
        for python in self.PYTHONS:
            with self.subTest(python=python), sbtest.Scratch() as s:
                layer = self.layer(s, python)
                cp, r = self.run_program(s, layer, python)
                self.check_confined(cp, r, s)

    def test_policy_file_in_writable_exposure(self):
        with sbtest.Scratch() as s:
            layer = self.layer(s, top_rw=True)
            policy = str(layer.policy)
            prog = s.write("prog.py", ou.PROBE_PRELUDE + f"attempt('write policy', lambda: write({policy!r}, 'a'))\n"
                           f"attempt('unlink policy', lambda: os.unlink({policy!r}))\n"
                           "attempt('write beside it', lambda: write('beside.txt'))\n")
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3")
            self.assertEqual(cp.returncode, 0, cp.stderr)
            r = ou.outcomes(cp)
            self.assertIn(r["write policy"], ("EACCES", "EROFS"))
            self.assertIn(r["unlink policy"], ("EACCES", "EBUSY", "EPERM"))
            self.assertEqual(r["write beside it"], "OK")
            self.assertTrue(layer.policy.exists())

    def test_like_bare_python(self):
        with sbtest.Scratch() as s:
            layer = self.layer(s)
            prog = s.write("io.py", IO_PROGRAM)
            for status in ("0", "7"):
                with self.subTest(status=status):
                    bare = sbtest.run_bare([str(prog)], cwd=layer.dir, input=status + "\n")
                    cp = sbtest.run_sb([str(prog)], cwd=layer.dir, input=status + "\n",
                                       python="/usr/bin/python3")
                    self.assertEqual((cp.returncode, cp.stdout, cp.stderr),
                                     (bare.returncode, bare.stdout, bare.stderr))
                    self.assertEqual(cp.returncode, int(status))

    def test_signal_to_python_sb_reaches_the_program(self):
        # python-sb forwards it to its child (pid 1 of the namespace, or the
        # wrapper's stand-in), which hands it to the program.
        with sbtest.Scratch() as s:
            layer = self.layer(s)
            prog = s.write("sig.py", SIGNAL_PROGRAM)
            p = subprocess.Popen([sbtest.PYTHON_SB, "--python=/usr/bin/python3", str(prog)], cwd=layer.dir,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                self.assertEqual(p.stdout.readline(), "ready\n")
                p.send_signal(signal.SIGTERM)
                out, err = p.communicate(timeout=30)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            self.assertEqual(p.returncode, 5, err)
            self.assertEqual(out, "terminated\n")

    def test_paths_resolve_in_the_program_root(self):
        # The supervisor opens the program's files for it: /proc/PID of the
        # program's pid namespace must be resolved inside the program's root.
        with sbtest.Scratch() as s:
            layer = self.layer(s)
            cp, r = self.run_program(s, layer)
            self.assertEqual(r.get("own status"), "OK", cp.stdout + cp.stderr)

    def test_layer_alone(self):
        # With the supervisor's decisions widened to CONTINUE everything (a
        # test-only hook, SB_TEST_WIDEN=1, in a build that honours it), the
        # layer alone still hides the secret, keeps the read-only exposure
        # and the policy read-only and the host's loopback out of reach.
        widen = {"SB_TEST_WIDEN": "1"}
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", "none", rules=BASE_RULES)
            _, r = self.run_program(s, layer, env=widen)
        if r.get("read secret") != "OK":
            self.skipTest("this python-sb has no widening test hook (SB_TEST_WIDEN)")
        with sbtest.Scratch() as s:
            cp, r = self.run_program(s, self.layer(s), env=widen)
            self.assertEqual(r.get("read ro"), "OK", cp.stdout + cp.stderr)
            self.assertEqual(r.get("write rw"), "OK")
            self.assertIn(r.get("read secret"), ("ENOENT", "EACCES"))
            self.assertIn(r.get("write policy"), ("EROFS", "EACCES"))
            self.assertEqual(r.get("connect allowed"), self.CONNECT_ALLOWED)

    def test_signal_to_itself(self):
        # kill() with the program's own pid of its namespace: the supervisor
        # translates it to its own namespace before judging.
        with sbtest.Scratch() as s:
            layer = self.layer(s, rules="python-api=ALLOW:process-control\n")
            prog = s.write("kill.py", "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
            bare = sbtest.run_bare([str(prog)], cwd=layer.dir)
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3")
            self.assertEqual(bare.returncode, -signal.SIGTERM)
            self.assertEqual(cp.returncode, 128 + signal.SIGTERM, cp.stderr)

    def test_runtime_grants_only(self):
        # No exposure of /usr as a whole: the interpreter runs from the
        # implicit python-runtime grants alone (/usr/bin/python3.11,
        # /usr/lib/python3.11, ...), as with a learned policy.  The layer
        # alone (SB_TEST_WIDEN) still hides the rest of /usr and /etc.
        prog = ou.PROBE_PRELUDE + r'''
def listing(p):
    if not os.listdir(p):
        raise OSError(errno.ENOENT, p)
attempt("read ro", lambda: read("ro/data.txt"))
attempt("list sbin", lambda: listing("/usr/sbin"))
attempt("list include", lambda: listing("/usr/include"))
attempt("read hostname", lambda: read("/etc/hostname"))
'''
        for widen in ("", "1"):
            with self.subTest(widen=widen), sbtest.Scratch() as s:
                (s.dir / "ro").mkdir()
                (s.dir / "ro" / "data.txt").write_text("data\n")
                s.policy(f"os-sandbox={self.LAYER}\npython-import=*\nexpose-ro={s.dir.resolve()}\n")
                path = s.write("runtime.py", prog)
                if widen and not os.access(os.environ.get("PYTHON_SB_WIDEN", ""), os.X_OK):
                    self.skipTest("the test-only build (tests/progs/python-sb-widen) is not built")
                cp = sbtest.run_sb([str(path)], cwd=s.dir, python="/usr/bin/python3",
                                   env={"SB_TEST_WIDEN": widen} if widen else None)
                why = cp.stdout + cp.stderr
                self.assertEqual(cp.returncode, 0, why)
                r = ou.outcomes(cp)
                self.assertEqual(r.get("read ro"), "OK", why)
                for what in ("list sbin", "list include", "read hostname"):
                    self.assertIn(r.get(what), ("ENOENT", "EACCES"), what + ": " + why)

    def test_agent_refusal_in_layer(self):
        # The supervisor's note to the agent names the refused thread by its
        # id in the layer's pid namespace, so the program gets the upstream
        # exception class, as without a layer.
        with sbtest.Scratch() as s:
            layer = self.layer(s, rules=f"ignore={s.dir.resolve() / 'ro' / '.env'}\n")
            (s.dir / "ro" / ".env").write_text("TOKEN=x\n")
            prog = s.write("agent.py", "try:\n    open('ro/.env').read()\n"
                                       "except OSError as e:\n    print(type(e).__name__)\n")
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3")
            self.assertEqual((cp.returncode, cp.stdout), (0, "RuleFileNotFoundError\n"), cp.stderr)

    def run_pids(self, s: sbtest.Scratch, binary: str | None = None,
                 env: dict[str, str] | None = None) -> dict[str, str]:
        layer = self.layer(s, rules="python-api=ALLOW:process-control\n")
        prog = s.write("pids.py", PIDS_PROGRAM)
        canary = subprocess.Popen(["sleep", "60"])
        try:
            cmd = [binary or sbtest.PYTHON_SB, "--python=/usr/bin/python3", str(prog), str(canary.pid)]
            cp = subprocess.run(cmd, cwd=layer.dir, capture_output=True, text=True, timeout=60,
                                env={**os.environ, **(env or {})})
            alive = canary.poll() is None
        finally:
            canary.kill()
            canary.wait()
        why = cp.stdout + cp.stderr
        self.assertEqual(cp.returncode, 0, why)
        self.assertTrue(alive, "the outside canary was signalled: " + why)
        r = ou.outcomes(cp)
        self.assertEqual(r.get("done"), "yes", why)
        return r

    def check_pids(self, r: dict[str, str]) -> None:
        why = repr(r)
        self.assertEqual(r.get("kill self 0"), "OK", why)
        self.assertEqual(r.get("own thread"), "OK", why)
        self.assertEqual(r.get("priority child"), "OK", why)
        self.assertEqual(r.get("child nice"), "yes", why)
        # A host pid names nobody in the program's namespace (ESRCH); were
        # it judged as a host pid, the supervisor would refuse it (EPERM).
        self.assertIn(r.get("kill outside"), ("ESRCH", "EPERM"), why)
        self.assertIn(r.get("priority outside"), ("ESRCH", "EPERM"), why)
        self.assertEqual(r.get("kill child"), "OK", why)
        self.assertEqual(r.get("child got"), str(int(signal.SIGTERM)), why)
        self.assertEqual(r.get("pidfd child"), "OK", why)
        self.assertEqual(r.get("pidfd child got"), str(int(signal.SIGUSR1)), why)

    def test_pids_of_the_namespace(self):
        # kill/setpriority/pidfd_send_signal on the program's own child by
        # its pid in the layer's namespace work (process-control granted);
        # a pid of the host never reaches a host process.
        with sbtest.Scratch() as s:
            self.check_pids(self.run_pids(s))

    def test_pids_by_walking_proc(self):
        # Kernels before 6.11 have no NS_GET_PID_FROM_PIDNS: the supervisor
        # walks /proc for the NSpid instead.  The test-only build takes that
        # way when SB_TEST_PIDNS_WALK is set.
        widen = os.environ.get("PYTHON_SB_WIDEN", "")
        if not widen or not os.access(widen, os.X_OK):
            self.skipTest("the test-only build (tests/progs/python-sb-widen) is not built")
        with sbtest.Scratch() as s:
            self.check_pids(self.run_pids(s, widen, {"SB_TEST_PIDNS_WALK": "1"}))

    def test_proc_self(self):
        with sbtest.Scratch() as s:
            layer = self.layer(s)
            prog = s.write("self.py", "import os\nprint(len(os.listdir('/proc/self/fd')) > 0)\n")
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3")
            self.assertEqual((cp.returncode, cp.stdout), (0, "True\n"), cp.stderr)


def main(case: type[LayerThroughPythonSb], why_not: str) -> None:
    """Skip (77) with `why_not` when the layer cannot run here, else run."""
    sbtest.require_binary()
    if why_not:
        sbtest.skip(why_not)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not res.wasSuccessful():
        sys.exit(1)
    sys.exit(sbtest.SKIP if res.testsRun and len(res.skipped) == res.testsRun else 0)


def layer_unusable(layer: str) -> str:
    """Why python-sb cannot apply `layer` here ("" when it can): the missing
    tool, user namespaces, a kernel feature, as python-sb itself says."""
    with sbtest.Scratch() as s:
        ou.Layer(s, "/usr/bin/python3", layer)
        cp = sbtest.run_sb(["--check-config"], cwd=s.dir, python="/usr/bin/python3")
    if cp.returncode == 0 and f"os-sandbox: {layer}" in cp.stdout:
        return ""
    return f"os-sandbox={layer} cannot be applied here: " + (cp.stderr.strip() or f"exit {cp.returncode}")

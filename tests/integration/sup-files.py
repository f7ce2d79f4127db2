#!/usr/bin/env python3
"""Files the policy does not expose stay out of reach, whatever the route:
`..`, a symlink inside an exposed directory, /proc/self/root, an O_PATH
descriptor reopened through /proc/self/fd, a dirfd, a hard link, a rename;
from Python, from ctypes, from a C program and from a grandchild.  Writes to a
read-only exposure and to the active rule file are refused.  Every test
checks the outcome itself (content never printed, marker never created)."""
from __future__ import annotations

import os
import unittest

import sbtest
from sup_util import ATTACK, SECRET_TEXT, TRY, Tree, lines_of, need_progs, pythons, real_python, run, run_bare

# name -> expected outcome; the secret's content must never appear.
EXPECT = {
    "plain": "ERR ENOENT",
    "dotdot": "ERR ENOENT",
    "symlink": "ERR ENOENT",
    "procroot": "ERR ENOENT",
    "opath-procfd": "ERR ENOENT",
    "opath-secret": "ERR ENOENT",
    "dirfd": "ERR ENOENT",
    "hardlink": "ERR ENOENT",
    "hardlink-read": "ERR ENOENT",
    "rename-in": "ERR ENOENT",
    "write-ro": "ERR EACCES",
    "public": "OK",
    "write-rw": "OK",
}

PY_ATTACKS = TRY + '''
root = sys.argv[1]
S, D, O = f"{root}/secret/key", f"{root}/data", f"{root}/out"
def rd(p):
    with open(p) as f:
        return f.read()
def wr(p, text):
    with open(p, "w") as f:
        return f.write(text)
attempt("plain", lambda: rd(S))
attempt("dotdot", lambda: rd(f"{D}/../secret/key"))
attempt("symlink", lambda: rd(f"{D}/link"))
attempt("procroot", lambda: rd(f"/proc/self/root{S}"))
pfd = os.open(D, os.O_PATH)
attempt("opath-procfd", lambda: rd(f"/proc/self/fd/{pfd}/../secret/key"))
attempt("opath-secret", lambda: os.open(S, os.O_PATH))
dfd = os.open(D, os.O_RDONLY)
attempt("dirfd", lambda: os.read(os.open("../secret/key", os.O_RDONLY, dir_fd=dfd), 100))
attempt("hardlink", lambda: os.link(S, f"{O}/hl"))
attempt("hardlink-read", lambda: rd(f"{O}/hl"))
attempt("rename-in", lambda: os.rename(S, f"{O}/moved"))
attempt("write-ro", lambda: wr(f"{D}/new.txt", "x"))
attempt("public", lambda: rd(f"{D}/public.txt"))
attempt("write-rw", lambda: wr(f"{O}/written.txt", "ok"))
'''

CTYPES_ATTACKS = TRY + '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
libc.openat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
def chk(rc):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc
def rd(p, flags=0):
    fd = chk(libc.open(p.encode(), flags, 0))
    return os.read(fd, 100).decode()
root = sys.argv[1]
S, D, O = f"{root}/secret/key", f"{root}/data", f"{root}/out"
attempt("plain", lambda: rd(S))
attempt("dotdot", lambda: rd(f"{D}/../secret/key"))
attempt("symlink", lambda: rd(f"{D}/link"))
attempt("procroot", lambda: rd(f"/proc/self/root{S}"))
pfd = chk(libc.open(D.encode(), os.O_PATH, 0))
attempt("opath-procfd", lambda: rd(f"/proc/self/fd/{pfd}/../secret/key"))
attempt("opath-secret", lambda: chk(libc.open(S.encode(), os.O_PATH, 0)))
dfd = chk(libc.open(D.encode(), os.O_RDONLY, 0))
attempt("dirfd", lambda: os.read(chk(libc.openat(dfd, b"../secret/key", 0, 0)), 100))
attempt("hardlink", lambda: chk(libc.link(S.encode(), f"{O}/hl".encode())))
attempt("hardlink-read", lambda: rd(f"{O}/hl"))
attempt("rename-in", lambda: chk(libc.rename(S.encode(), f"{O}/moved".encode())))
attempt("write-ro", lambda: chk(libc.open(f"{D}/new.txt".encode(), os.O_WRONLY | os.O_CREAT, 0o644)))
attempt("public", lambda: rd(f"{D}/public.txt"))
attempt("write-rw", lambda: os.write(chk(libc.open(f"{O}/written.txt".encode(), os.O_WRONLY | os.O_CREAT, 0o644)), b"ok"))
'''

# The C program: one attack per run, same names.
NATIVE = '''
import subprocess, sys
root, attack = sys.argv[1], sys.argv[2]
S, D, O = f"{root}/secret/key", f"{root}/data", f"{root}/out"
runs = {
    "plain": ["read", S],
    "dotdot": ["read", f"{D}/../secret/key"],
    "symlink": ["read", f"{D}/link"],
    "procroot": ["read", f"/proc/self/root{S}"],
    "opath-procfd": ["procfd", D, "../secret/key"],
    "opath-secret": ["opath", S],
    "dirfd": ["dirfd", D, "../secret/key"],
    "hardlink": ["link", S, f"{O}/hl"],
    "hardlink-read": ["read", f"{O}/hl"],
    "rename-in": ["rename", S, f"{O}/moved"],
    "write-ro": ["write", f"{D}/new.txt", "x"],
    "public": ["read", f"{D}/public.txt"],
    "write-rw": ["write", f"{O}/written.txt", "ok"],
}
for name, argv in runs.items():
    out = subprocess.run([attack, *argv], capture_output=True, text=True).stdout.split(None, 1)
    print(name, out[1].strip() if len(out) > 1 else "NOTHING", flush=True)
'''

# A grandchild: the program starts python, which starts the C program.
GRANDCHILD = '''
import subprocess, sys
r = subprocess.run([sys.executable, sys.argv[1], *sys.argv[2:]])
sys.exit(r.returncode)
'''


class Files(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def check(self, cp) -> None:
        self.assertNotIn(SECRET_TEXT, cp.stdout + cp.stderr)
        got = {}
        for line in cp.stdout.splitlines():
            name, _, rest = line.partition(" ")
            got[name] = rest
        for name, want in EXPECT.items():
            self.assertTrue(got.get(name, "").startswith(want),
                            f"{name}: got {got.get(name)!r}, want {want!r}\n{cp.stdout}\n{cp.stderr}")
        # Nothing leaked into the tree, nothing moved out of it.
        self.assertEqual((self.t.secret / "key").read_text(), SECRET_TEXT + "\n")
        for name in ("hl", "moved"):
            self.assertFalse((self.t.out / name).exists(), name)
        self.assertFalse((self.t.data / "new.txt").exists())
        self.assertEqual((self.t.out / "written.txt").read_text(), "ok")

    def test_python(self) -> None:
        s = self.t.script(PY_ATTACKS)
        for py in pythons():
            with self.subTest(python=py):
                (self.t.out / "written.txt").unlink(missing_ok=True)
                cp = run(self.t, [str(s), str(self.t.root)], python=py)
                self.assertEqual(cp.returncode, 0, cp.stderr)
                self.check(cp)
        # One notice per refusal, naming the object and the rule to add.
        self.assertIn(f"python-sb: DENIED open '{self.t.secret}/key' (read)", cp.stderr)
        self.assertIn(f"python-sb: DENIED open '{self.t.data}/new.txt' (write)", cp.stderr)

    def test_ctypes(self) -> None:
        s = self.t.script(CTYPES_ATTACKS)
        cp = run(self.t, [str(s), str(self.t.root)])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.check(cp)

    def test_native_child(self) -> None:
        need_progs(self)
        s = self.t.script(NATIVE)
        cp = run(self.t, [str(s), str(self.t.root), str(ATTACK)],
                 ["python-api=ALLOW:process-exec", f"exec={ATTACK}"])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.check(cp)

    def test_native_grandchild(self) -> None:
        need_progs(self)
        native = self.t.script(NATIVE, "native.py")
        s = self.t.script(GRANDCHILD)
        cp = run(self.t, [str(s), str(native), str(self.t.root), str(ATTACK)],
                 ["python-api=ALLOW:process-exec", f"exec={ATTACK}", f"exec={real_python()}"])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.check(cp)

    def test_active_policy_protected(self) -> None:
        """The rule file sits in a writable exposure: still never writable."""
        cfgdir = self.t.out / "cfg"
        cfgdir.mkdir()
        self.t.policy = cfgdir / ".py-sandboxes"
        s = self.t.script(TRY + '''
P = sys.argv[1]
attempt("append", lambda: open(P, "a").write("expose-rw=/\\n"))
attempt("truncate", lambda: open(P, "w"))
attempt("unlink", lambda: os.unlink(P))
attempt("rename-over", lambda: (open(P + ".new", "w").write("x"), os.rename(P + ".new", P)))
attempt("rename-away", lambda: os.rename(P, P + ".old"))
attempt("hardlink", lambda: os.link(P, P + ".hl"))
attempt("rename-dir", lambda: os.rename(os.path.dirname(P), os.path.dirname(P) + "2"))
attempt("chmod", lambda: os.chmod(P, 0o600))
attempt("read", lambda: len(open(P).read()) > 0)
''')
        self.t.write_policy()
        before = self.t.policy.read_text()
        cp = run(self.t, [str(s), str(self.t.policy)])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        for name in ("append", "truncate", "unlink", "rename-over", "rename-away", "hardlink",
                     "rename-dir", "chmod"):
            self.assertEqual(lines_of(cp, name + " "), [f"{name} ERR EACCES"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "read "), ["read OK True"])
        self.assertEqual(self.t.policy.read_text(), before)
        self.assertFalse((cfgdir / ".py-sandboxes.old").exists())
        self.assertFalse((cfgdir / ".py-sandboxes.hl").exists())

    def test_read_only_names_answered_as_the_kernel_does(self) -> None:
        """In a read-only directory, removing a name that is not there is
        ENOENT and creating one that is there EEXIST, as the kernel answers
        before it checks the write (os_helper.unlink() counts on it); the
        writes themselves are refused with EACCES; a hidden directory tells
        nothing either way."""
        (self.t.data / "sub").mkdir()
        s = self.t.script(TRY + '''
data, secret = sys.argv[1], sys.argv[2]
attempt("unlink-missing", lambda: os.unlink(data + "/missing.txt"))
attempt("rmdir-missing", lambda: os.rmdir(data + "/missing"))
attempt("rename-missing", lambda: os.rename(data + "/missing.txt", data + "/x.txt"))
attempt("mkdir-there", lambda: os.mkdir(data + "/sub"))
attempt("symlink-there", lambda: os.symlink("x", data + "/public.txt"))
attempt("unlink-there", lambda: os.unlink(data + "/public.txt"))
attempt("mkdir-new", lambda: os.mkdir(data + "/new"))
attempt("secret-unlink-there", lambda: os.unlink(secret + "/key"))
attempt("secret-unlink-missing", lambda: os.unlink(secret + "/missing"))
attempt("secret-mkdir-there", lambda: os.mkdir(secret))
''')
        cp = run(self.t, [str(s), str(self.t.data), str(self.t.secret)])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        want = {"unlink-missing": "ERR ENOENT", "rmdir-missing": "ERR ENOENT", "rename-missing": "ERR ENOENT",
                "mkdir-there": "ERR EEXIST", "symlink-there": "ERR EEXIST", "unlink-there": "ERR EACCES",
                "mkdir-new": "ERR EACCES", "secret-unlink-there": "ERR ENOENT",
                "secret-unlink-missing": "ERR ENOENT", "secret-mkdir-there": "ERR ENOENT"}
        for name, outcome in want.items():
            self.assertEqual(lines_of(cp, name + " "), [f"{name} {outcome}"], cp.stdout + cp.stderr)
        self.assertTrue((self.t.data / "public.txt").exists())
        self.assertFalse((self.t.data / "new").exists())
        # Only the calls that would have changed something are refusals.
        denied = [l for l in cp.stderr.splitlines() if l.startswith("python-sb: DENIED")]
        self.assertFalse([l for l in denied if f"'{self.t.data}/missing" in l or "/sub'" in l], cp.stderr)
        self.assertTrue([l for l in denied if "public.txt' (write)" in l and "unlink" in l], cp.stderr)

    def test_tmpfile_linked_as_bare(self) -> None:
        """An O_TMPFILE made in a writable directory gets its name with linkat,
        through /proc/self/fd/N or AT_EMPTY_PATH, as under bare python; not in
        a read-only directory, and an unlinked file the kernel would not link
        (O_EXCL, or removed while open) stays unlinked, as bare."""
        s = self.t.script(TRY + '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_FOLLOW, AT_EMPTY_PATH = -100, 0x400, 0x1000
out, data = sys.argv[1], sys.argv[2]
def linkat(fd, to, empty):
    r = (libc.linkat(fd, b"", AT_FDCWD, to.encode(), AT_EMPTY_PATH) if empty else
         libc.linkat(AT_FDCWD, f"/proc/self/fd/{fd}".encode(), AT_FDCWD, to.encode(), AT_SYMLINK_FOLLOW))
    if r:
        raise OSError(ctypes.get_errno(), "linkat")
    return open(to).read()
def tmpfile(text, excl=False):
    fd = os.open(out, os.O_TMPFILE | os.O_WRONLY | (os.O_EXCL if excl else 0), 0o644)
    os.write(fd, text.encode())
    return fd
def removed():
    fd = os.open(out + "/gone.txt", os.O_CREAT | os.O_WRONLY, 0o644)
    os.unlink(out + "/gone.txt")
    return fd
attempt("proc", lambda: linkat(tmpfile("via proc"), out + "/a.txt", False))
attempt("empty", lambda: linkat(tmpfile("via empty"), out + "/b.txt", True))
attempt("excl", lambda: linkat(tmpfile("x", True), out + "/c.txt", False))
attempt("removed", lambda: linkat(removed(), out + "/d.txt", False))
attempt("into-ro", lambda: linkat(tmpfile("y"), data + "/e.txt", False))
''')
        args = [str(s), str(self.t.out), str(self.t.data)]
        if os.geteuid() != 0:
            self.skipTest("before Linux 6.10, linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH even bare")
        cp = run(self.t, args)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(lines_of(cp, "proc "), ["proc OK 'via proc'"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "empty "), ["empty OK 'via empty'"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "excl "), ["excl ERR ENOENT"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "removed "), ["removed ERR ENOENT"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "into-ro "), ["into-ro ERR EACCES"], cp.stdout + cp.stderr)
        self.assertFalse((self.t.data / "e.txt").exists())
        for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
            (self.t.out / name).unlink(missing_ok=True)
        # Bare python, for the four the policy allows: the same.
        bare = run_bare(self.t, args)
        self.assertEqual([l for l in bare.stdout.splitlines() if not l.startswith("into-ro ")],
                         [l for l in cp.stdout.splitlines() if not l.startswith("into-ro ")])

    def test_no_tip_exposes_too_much(self) -> None:
        """Refusals outside every exposure name the rule to add, but never one
        that would expose the whole tree, every process's /proc entries (the
        environment of each process of the same user) or every device; the
        supervisor's own environment stays out of reach."""
        marker = f"/sb-tip-{os.getpid()}.txt"
        s = self.t.script(TRY + f'''
attempt("ppid-environ", lambda: SECRET in open(f"/proc/{{os.getppid()}}/environ", "rb").read().decode("latin-1"))
attempt("cpuinfo", lambda: len(open("/proc/cpuinfo").read()) > 0)
attempt("dev", lambda: len(os.listdir("/dev")) > 0)
attempt("root-write", lambda: open({marker!r}, "w").write("x"))
attempt("osrelease", lambda: len(open("/proc/sys/kernel/osrelease").read()) > 0)
'''.replace("SECRET", repr(SECRET_TEXT)))
        try:
            cp = run(self.t, [str(s)], env={"SB_TEST_SUPERVISOR_SECRET": SECRET_TEXT})
            self.assertFalse(os.path.exists(marker), "the program wrote " + marker)
        finally:
            if os.path.exists(marker):
                os.unlink(marker)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        for name in ("ppid-environ", "cpuinfo", "dev", "osrelease"):
            self.assertEqual(lines_of(cp, name + " "), [f"{name} ERR ENOENT"], cp.stdout + cp.stderr)
        self.assertEqual(lines_of(cp, "root-write "), ["root-write ERR ENOENT"], cp.stdout + cp.stderr)
        notices = [l for l in cp.stderr.splitlines() if l.startswith("python-sb: DENIED")]

        def notice(obj: str) -> str:
            found = [l for l in notices if f" '{obj}' " in l]
            self.assertEqual(len(found), 1, cp.stderr)
            return found[0]

        self.assertTrue(notice(f"/proc/{cp_ppid(notices)}/environ").endswith(": a process outside the sandbox"),
                        cp.stderr)
        self.assertTrue(notice("/proc/cpuinfo").endswith(": no expose rule (none is suggested for '/proc' whole)"),
                        cp.stderr)
        self.assertTrue(notice("/dev").endswith(": no expose rule (none is suggested for '/dev' whole)"), cp.stderr)
        self.assertTrue(notice(marker).endswith(": no expose rule (none is suggested for '/' whole)"), cp.stderr)
        self.assertTrue(notice("/proc/sys/kernel/osrelease").endswith("; add expose-ro=/proc/sys/kernel"),
                        cp.stderr)
        for wide in ("expose-ro=/proc\n", "expose-ro=/dev\n", "expose-rw=/\n", "expose-ro=/proc/1"):
            self.assertNotIn("add " + wide, cp.stderr + "\n")


def cp_ppid(notices: list[str]) -> str:
    """The process number in the refused /proc/PID/environ (python-sb's)."""
    for line in notices:
        if "/environ' " in line:
            return line.split("'/proc/", 1)[1].split("/", 1)[0]
    return "?"


if __name__ == "__main__":
    sbtest.main(Files)

#!/usr/bin/env python3
"""Calls that would blind or escape the supervisor are refused in-kernel
(SPEC §3): x32 and int 0x80 kill the process; io_uring, clone3 get ENOSYS;
ptrace, process_vm_readv/writev, pidfd_getfd, namespaces, seccomp, bpf,
mount, TIOCSTI, personality changes, open_by_handle_at get EPERM.  Each probe
uses arguments the kernel itself would answer differently, so a pass proves
the call never reached it."""
from __future__ import annotations

import platform
import signal
import unittest

import sbtest
from sup_util import ATTACK, Tree, need_progs, run

PROBES = '''
import os, subprocess, sys
attack = sys.argv[1]
sup = str(os.getppid())
for argv in (["io_uring"], ["clone3"], ["ptrace"], ["vmread", sup], ["pidfd_getfd", sup, "3"],
             ["unshare"], ["clone_ns"], ["seccomp"], ["prctl_seccomp"], ["tiocsti"],
             ["personality"], ["bpf"], ["mount"], ["open_by_handle"], ["x32"], ["int80"]):
    r = subprocess.run([attack, *argv], capture_output=True, text=True)
    print(argv[0], r.stdout.split(None, 1)[1].strip() if r.stdout else f"killed {r.returncode}", flush=True)
'''

EXPECT = {
    "io_uring": "ERR ENOSYS",
    "clone3": "ERR ENOSYS",
    "ptrace": "ERR EPERM",
    "vmread": "ERR EPERM",
    "pidfd_getfd": "ERR EPERM",
    "unshare": "ERR EPERM",
    "clone_ns": "ERR EPERM",
    "seccomp": "ERR EPERM",
    "prctl_seccomp": "ERR EPERM",
    "tiocsti": "ERR EPERM",
    "personality": "ERR EPERM",
    "bpf": "ERR EPERM",
    "mount": "ERR EPERM",
    "open_by_handle": "ERR EPERM",
    "x32": f"killed {-signal.SIGSYS}",
    "int80": f"killed {-signal.SIGSYS}",
}


class Bypass(unittest.TestCase):
    def test_probes(self) -> None:
        need_progs(self)
        if platform.machine() != "x86_64":
            self.skipTest("probes are written for x86_64")
        with sbtest.Scratch() as scratch:
            t = Tree(scratch)
            s = t.script(PROBES)
            cp = run(t, [str(s), str(ATTACK)], ["python-api=ALLOW:process-exec", f"exec={ATTACK}"])
            self.assertEqual(cp.returncode, 0, cp.stderr)
            got = dict(line.split(" ", 1) for line in cp.stdout.splitlines())
            for name, want in EXPECT.items():
                self.assertEqual(got.get(name), want, f"{name}\n{cp.stdout}\n{cp.stderr}")


if __name__ == "__main__":
    sbtest.main(Bypass)

#!/usr/bin/env python3
"""Run CPython's own test modules bare and under python-sb, and compare.

CPython's test suite exercises the file, process and socket calls far more
widely than our own tests; a module that passes bare and fails under
python-sb, with a policy that allows what it does, is a call python-sb does
not perform as the kernel would.  On 2026-12-02 it found three: os.open()
with keyword arguments (test_os), open kept in a class becoming a method
(test_io), and pidfd_send_signal() with a /proc/PID directory (test_signal).

    python3 contrib/stdlib-diff/run.py [--python PY] [--python-sb PATH] [MODULE...]

PY must have the `test` package (pyenv's builds do; Debian's python3 needs
libpython3.X-testsuite).  Not part of `make check`: the default modules take
a minute.  Exit status: 0 when every module that passes bare passes under
python-sb, 1 otherwise, 77 when PY has no test package.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

MODULES = ["test_os", "test_io", "test_shutil", "test_tempfile", "test_pathlib", "test_glob",
           "test_posix", "test_fileio", "test_stat", "test_posixpath", "test_fcntl", "test_select",
           "test_subprocess", "test_threading", "test_zipfile", "test_tarfile", "test_sqlite3",
           "test_logging"]

# Tests that fail under python-sb by design, each with the reason
# (doc/supervisor.md §7, doc/user-guide.md "Troubleshooting").
EXPECTED = {
    "test_openpty": "a pseudo-terminal needs /dev/ptmx and /dev/pts exposed, which the policy below does not",
    "test_copyxattr_symlinks": "trusted.* attributes on a symlink: the supervisor refuses xattrs on symlinks",
    "test_stress_delivery_simultaneous": "a signal storm can interrupt a trapped call before it is received (EINTR)",
}

POLICY = """\
expose-ro=/
expose-rw={tmp}
expose-rw=/dev/shm
python-import=*
python-api=ALLOW:process-exec, process-control, privileges, threads, native, introspection, dynamic-code, deserialization
net=ALLOW|*|127.0.0.1|*|IN
net=ALLOW|*|127.0.0.1|*|OUT
net=ALLOW|*|::1|*|IN
net=ALLOW|*|::1|*|OUT
env=PATH=${{PATH}}
env=HOME=${{HOME}}
env=TMPDIR={tmp}
"""


def run(cmd: list[str], tmp: Path) -> tuple[bool, str]:
    # A home of its own: test_site and others create ~/.local/lib/pythonX.Y,
    # which every later python-sb start would then stat (and refuse).
    env = dict(os.environ, TMPDIR=str(tmp), HOME=str(tmp / "home"))
    p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=1800)
    return p.returncode == 0, p.stdout + p.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=shutil.which("python3") or "/usr/bin/python3")
    ap.add_argument("--python-sb", default=str(HERE.parent.parent / "python-sb"))
    ap.add_argument("modules", nargs="*", default=MODULES)
    args = ap.parse_args()
    if subprocess.run([args.python, "-c", "import test.support"], capture_output=True).returncode:
        print(f"{args.python} has no `test` package: skipped", file=sys.stderr)
        return 77
    work = Path(tempfile.mkdtemp(prefix="sb-stdlib-")).resolve()
    tmp = work / "tmp"
    tmp.mkdir()
    (tmp / "home").mkdir()
    policy = work / "policy"
    policy.write_text(POLICY.format(tmp=tmp))
    ignore = [a for name in EXPECTED for a in ("-i", name)]
    bad = 0
    try:
        for mod in args.modules:
            bare_ok, _ = run([args.python, "-m", "test", *ignore, mod], tmp)
            sb_ok, out = run([args.python_sb, f"--python={args.python}", f"--pysandboxes-config={policy}",
                              "-m", "test", *ignore, mod], tmp)
            verdict = "same" if bare_ok == sb_ok else "DIFFERS"
            print(f"{mod:22s} bare {'ok' if bare_ok else 'FAIL':4s}  python-sb {'ok' if sb_ok else 'FAIL':4s}  {verdict}",
                  flush=True)
            if bare_ok and not sb_ok:
                bad += 1
                print("\n".join("    " + l for l in out.splitlines()[-30:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"ignored by design: {', '.join(f'{k} ({v})' for k, v in EXPECTED.items())}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

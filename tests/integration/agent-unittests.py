#!/usr/bin/env python3
"""The pysandboxes unit tests (python/tests, stdlib unittest) under every
interpreter at hand: the Debian /usr/bin/python3 always, pyenv's 3.10-3.13
when installed.  Each run plays the supervisor's end of the agent channel
itself; the end-to-end partial-mode case also uses the built python-sb."""
from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402


def main() -> None:
    tests = sbtest.TOP_SRCDIR / "python" / "tests"
    interpreters = [p for p in ["/usr/bin/python3", *sbtest.pyenv_pythons()] if os.access(p, os.X_OK)]
    seen: set[str] = set()
    failed = []
    for python in interpreters:
        real = os.path.realpath(python)
        if real in seen:
            continue
        seen.add(real)
        print(f"== {python}", flush=True)
        env = dict(os.environ, SB_TOP_SRCDIR=str(sbtest.TOP_SRCDIR))
        rc = subprocess.run([python, "-m", "unittest", "discover", "-s", str(tests), "-t", str(tests)],
                            cwd=tests, env=env, timeout=900).returncode
        if rc != 0:
            failed.append(python)
    if not seen:
        sbtest.skip("no Python interpreter")
    if failed:
        print("FAILED under:", ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Red-team attacks of group 'net' (tests/redteam/catalogue.txt).

As root, the runner re-executes itself in a network namespace of its own
(unshare -n) whose loopback device also carries the "intranet", metadata
and "internet" addresses of rt.INTRANET: every canary listens inside it and
nothing can leave it.  Without root the loopback attacks run on the host's
loopback and the namespace ones are skipped."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rt  # noqa: E402


def enter_netns() -> None:
    if os.environ.get("RT_IN_NETNS") is not None or os.geteuid() != 0:
        return
    if not (shutil.which("unshare") and shutil.which("ip")):
        return
    env = dict(os.environ, RT_IN_NETNS="1")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return
    r = subprocess.run(["unshare", "-n", "--", sys.executable, os.path.abspath(__file__)], env=env)
    sys.exit(r.returncode)


def setup_netns() -> None:
    if os.environ.get("RT_IN_NETNS") != "1":
        return
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for ip in rt.INTRANET:
        subprocess.run(["ip", "addr", "add", f"{ip}/32", "dev", "lo"], check=True)


if __name__ == "__main__":
    enter_netns()
    setup_netns()
    rt.main("net")

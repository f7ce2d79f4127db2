#!/usr/bin/env python3
"""The red-team catalogue is consistent and doc/security.md shows it.

- doc/security.md's table is what gen-table.py writes from catalogue.txt
  (`make redteam-table` rewrites it);
- ids are unique, every group has its runner, every program exists and every
  attack program is used and listed in redteam.mk (so `make dist` ships it);
- every open entry and every accepted residual says why;
- every row 1-38 of the reference's attack catalogue (§8.2) is covered by an
  attack or listed as not applicable with a reason;
- at least 60 attacks."""
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rt  # noqa: E402

HERE = Path(__file__).resolve().parent
DOC = rt.SRCDIR / "doc" / "security.md"
NEEDS = {"root", "netns", "ext", "passfd", "inherit", "proc", "handle", "dns", "kmsg", "alive",
         "policy-in-out", "netstate"}
LAUNCH = {"", "group", "child", "mount", "nofile", "nobody"}


def main() -> int:
    errors = []
    attacks, na = rt.load_all()
    ids = [a.id for a in attacks]
    errors += [f"duplicate id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    if len(attacks) < 60:
        errors.append(f"only {len(attacks)} attacks (at least 60)")
    mk = (HERE / "redteam.mk").read_text()
    used = {a.program for a in attacks}
    for a in attacks:
        if not (HERE / f"run-{a.group}.py").exists():
            errors.append(f"{a.id}: no runner run-{a.group}.py")
        if not (rt.ATTACKS / a.program).exists():
            errors.append(f"{a.id}: no program attacks/{a.program}")
        if (a.status == "open" or a.accept) and not a.reason.strip():
            errors.append(f"{a.id}: open or residual without a reason")
        if a.status not in ("holds", "open"):
            errors.append(f"{a.id}: status must be holds or open")
        if a.hook and a.hook not in rt.HOOKS:
            errors.append(f"{a.id}: unknown hook {a.hook}")
        if not set(a.needs) <= NEEDS or a.launch not in LAUNCH:
            errors.append(f"{a.id}: unknown needs or launch")
        if not set(a.modes) <= set(rt.MODES) or not set(a.accept) <= set(a.catalogue_modes):
            errors.append(f"{a.id}: bad modes/accept")
        if a.control != "bare" and not a.control.startswith("none - "):
            errors.append(f"{a.id}: control is 'bare' or 'none - <why>'")
    for f in sorted(rt.ATTACKS.glob("*.py")):
        if f.name not in used and f.name not in ("rtlib.py", "evilmod.py"):
            errors.append(f"attacks/{f.name} is used by no attack")
        if f"tests/redteam/attacks/{f.name}" not in mk:
            errors.append(f"attacks/{f.name} is not listed in redteam.mk")
    covered = {int(r) for a in attacks for r in re.findall(r"8\.2-(\d+)", a.ref)}
    covered |= {int(r) for n in na for r in re.findall(r"8\.2-(\d+)", n.ref) if n.why.strip()}
    missing = sorted(set(range(1, 39)) - covered)
    if missing:
        errors.append(f"reference §8.2 rows neither attacked nor explained: {missing}")
    gen = subprocess.run([sys.executable, str(HERE / "gen-table.py"), "--check", str(DOC)],
                         capture_output=True, text=True)
    if gen.returncode:
        errors.append(f"{DOC} does not show the catalogue: run `make redteam-table` {gen.stdout}{gen.stderr}")
    for e in errors:
        print("FAIL", e)
    print(f"# {len(attacks)} attacks, {sum(a.status == 'open' for a in attacks)} open, "
          f"{len(na)} reference rows not applicable")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""os-sandbox=firejail through python-sb: the spawn runs firejail with the
command line generated from the policy (--net=none); inside it python-sb's
exec stub installs the supervisor's filter (innermost) and hands the listener
back, and the supervisor decides every file, exec and connect of the program.

Skips (77) when firejail is missing or cannot run here."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_sb_util as osb  # noqa: E402
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402


class FirejailThroughPythonSb(osb.LayerThroughPythonSb):
    LAYER = "firejail"

    def test_fails_closed_without_firejail(self):
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", "firejail")
            prog = s.write("started.py", "open('rw/started', 'w')\n")
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3", env={"PATH": "/nonexistent"})
            self.assertEqual(cp.returncode, 255)
            self.assertIn("os-sandbox=firejail", cp.stderr)
            self.assertIn("apt-get install firejail", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists())


if __name__ == "__main__":
    osb.main(FirejailThroughPythonSb, osb.layer_unusable("firejail"))

#!/usr/bin/env python3
"""os-sandbox=bwrap through python-sb: the spawn runs bubblewrap with the
command line generated from the policy; inside it python-sb's exec stub
installs the supervisor's filter (innermost) and hands the listener back, and
the supervisor decides every file, exec and connect of the program, with
paths resolved in bwrap's root.  bwrap.share-net=yes shares the host's
network (the supervisor then judges each address).

Skips (77) when bwrap is missing or cannot run here."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oslayer_sb_util as osb  # noqa: E402
import oslayer_util as ou  # noqa: E402
import sbtest  # noqa: E402


class BwrapThroughPythonSb(osb.LayerThroughPythonSb):
    LAYER = "bwrap"

    def test_share_net(self):
        with sbtest.Scratch() as s:
            layer = self.layer(s, rules="bwrap.share-net=yes\n")
            cp, r = self.run_program(s, layer)
            self.assertEqual(cp.returncode, 7, cp.stderr)
            self.assertEqual(r.get("connect allowed"), "OK", cp.stdout + cp.stderr)
            self.assertEqual(r.get("connect denied"), "ECONNREFUSED")	# the supervisor's refusal
            self.assertIn("DENIED connect 127.0.0.1:%d" % self.denied.getsockname()[1], cp.stderr)
            self.assertEqual(r.get("read secret"), "ENOENT")

    def test_fails_closed_without_bwrap(self):
        with sbtest.Scratch() as s:
            layer = ou.Layer(s, "/usr/bin/python3", "bwrap")
            prog = s.write("started.py", "open('rw/started', 'w')\n")
            cp = sbtest.run_sb([str(prog)], cwd=layer.dir, python="/usr/bin/python3", env={"PATH": "/nonexistent"})
            self.assertEqual(cp.returncode, 255)
            self.assertIn("os-sandbox=bwrap", cp.stderr)
            self.assertIn("apt-get install bubblewrap", cp.stderr)
            self.assertFalse((s.dir / "rw" / "started").exists())


if __name__ == "__main__":
    osb.main(BwrapThroughPythonSb, osb.layer_unusable("bwrap"))

#!/usr/bin/env python3
"""The man pages document everything, and render cleanly (issue 11).

* every option `python-sb --help` prints appears in doc/python-sb.1;
* every key of the policy parser (the keys src/pol_*.c looks for:
  pol_key_is() calls and the *_keys tables) appears in doc/py-sandboxes.5;
* both pages render without a single warning with `groff -ww -man -Tutf8 -z`,
  and `man -l` formats them.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

TOP = sbtest.TOP_SRCDIR
MAN1 = TOP / "doc" / "python-sb.1"
MAN5 = TOP / "doc" / "py-sandboxes.5"
# Placeholders of the help text, not options.
NOT_OPTIONS = {"--<sb-option>=<value>", "--<sb-option>"}
# Parameters of kernel layers ("qemu.memory=2G"): documented by their form.
PROVIDER_TABLES = {"qemu_keys"}


def roff_text(path: Path) -> str:
    """The page source with the escapes that matter for matching undone:
    \\- and \\(hy are '-', font changes and other one-letter escapes go."""
    s = path.read_text()
    s = s.replace("\\-", "-").replace("\\(hy", "-").replace("\\(dq", '"').replace("\\(aq", "'")
    s = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", s)
    s = s.replace("\\&", "").replace("\\e", "\\")
    # .BR a b / .BI a b: the alternating macros glue their arguments
    out = []
    for line in s.splitlines():
        m = re.match(r"^\.(B|I|BR|RB|BI|IB|IR|RI)\s+(.*)$", line)
        if m:
            args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', m.group(2))]
            line = ("".join if len(m.group(1)) == 2 else " ".join)(args)
        out.append(line)
    return "\n".join(out)


def mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def help_options() -> list[str]:
    p = subprocess.run([sbtest.PYTHON_SB, "--help"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError(f"python-sb --help failed: {p.stderr}")
    opts: list[str] = []
    for line in p.stdout.splitlines():
        # Option lines start with spaces then '-': "-h, -?, --help", "  --audit   Refuse ..."
        m = re.match(r"^\s{1,4}(-[^\s].*)$", line)
        if not m:
            continue
        head = re.split(r"\s{2,}", m.group(1))[0]
        for tok in re.split(r",\s*", head):
            tok = tok.split()[0] if tok.split() else tok
            tok = re.split(r"[=\[]", tok)[0] if not tok.startswith("--<") else tok
            if tok.startswith("-") and tok not in NOT_OPTIONS and tok not in opts:
                opts.append(tok)
    return opts


def policy_keys() -> list[str]:
    keys: list[str] = []
    for src in sorted((TOP / "src").glob("pol_*.c")):
        text = src.read_text()
        keys += re.findall(r'pol_key_is\(\s*\w+\s*,\s*"([a-z][a-z0-9-]*)"\s*\)', text)
        for name, body in re.findall(r"\b(\w*keys)\s*\[[^\]]*\]\s*=\s*\{(.*?)\};", text, re.S):
            if name not in PROVIDER_TABLES:
                keys += re.findall(r'"([a-z][a-z0-9-]*)"', body)
        if re.search(r'strncmp\([^;]*"include"', text):
            keys.append("include")
    seen: list[str] = []
    for k in keys:
        if k not in seen:
            seen.append(k)
    return seen


class ManPages(unittest.TestCase):
    def test_every_help_option_is_in_python_sb_1(self) -> None:
        opts = help_options()
        self.assertGreater(len(opts), 20, f"could not read the options of --help: {opts}")
        for needed in ("--audit", "--report", "--fail-on-violation", "--learn", "--diff", "-m", "-c"):
            self.assertIn(needed, opts)
        text = roff_text(MAN1)
        missing = [o for o in opts if not mentions(text, o)]
        self.assertEqual(missing, [], f"options of python-sb --help missing from {MAN1.name}")

    def test_every_policy_key_is_in_py_sandboxes_5(self) -> None:
        keys = policy_keys()
        for needed in ("env", "expose-ro", "net", "python-import", "eval-timeout", "limit-nproc", "exec"):
            self.assertIn(needed, keys, f"the key table of src/pol_*.c was not found: {keys}")
        text = roff_text(MAN5)
        missing = [k for k in keys if not (mentions(text, k + "=") or mentions(text, k))]
        self.assertEqual(missing, [], f"policy keys missing from {MAN5.name}")
        self.assertRegex(text, r"key containing a dot|<provider>\.|bwrap\.", "provider parameters undocumented")

    def test_pages_render_without_warnings(self) -> None:
        groff = shutil.which("groff")
        if not groff:
            self.skipTest("groff is not installed (apt-get install groff-base)")
        for page in (MAN1, MAN5):
            p = subprocess.run([groff, "-ww", "-man", "-Tutf8", "-z", str(page)], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual((p.returncode, p.stderr), (0, ""), f"{page.name} does not render cleanly")

    def test_man_formats_them(self) -> None:
        man = shutil.which("man")
        if not man:
            self.skipTest("man is not installed")
        for page in (MAN1, MAN5):
            p = subprocess.run([man, "-l", str(page)], capture_output=True, text=True, timeout=60,
                               env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80"})
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("NAME", p.stdout)


if __name__ == "__main__":
    sbtest.main(ManPages)

#!/usr/bin/env python3
"""python-sb is built hardened (m4/sb_warnings.m4, SB_HARDENING): every symbol
bound at start, the GOT read-only while it runs (full RELRO), no executable
stack.  The running supervisor is checked, not only the file: a write to its
GOT, the classic way from a memory bug to a hijacked call, must fault."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtest  # noqa: E402

PT_GNU_STACK, PT_GNU_RELRO, PT_DYNAMIC, PF_X = 0x6474E551, 0x6474E552, 2, 1
DT_FLAGS, DT_FLAGS_1, DF_BIND_NOW, DF_1_NOW = 30, 0x6FFFFFFB, 0x8, 0x1


class Elf:
    def __init__(self, path: str) -> None:
        self.data = Path(path).read_bytes()
        if self.data[:4] != b"\x7fELF" or self.data[4] != 2:
            raise ValueError(f"{path}: not a 64-bit ELF file")
        (self.phoff, self.shoff, _, _, self.phentsize, self.phnum, self.shentsize, self.shnum,
         self.shstrndx) = struct.unpack_from("<QQIHHHHHH", self.data, 0x20)

    def segments(self):
        for i in range(self.phnum):
            yield struct.unpack_from("<IIQQQQQQ", self.data, self.phoff + i * self.phentsize)

    def sections(self):
        strtab = struct.unpack_from("<IIQQQQIIQQ", self.data, self.shoff + self.shstrndx * self.shentsize)
        for i in range(self.shnum):
            sh = struct.unpack_from("<IIQQQQIIQQ", self.data, self.shoff + i * self.shentsize)
            start = strtab[4] + sh[0]
            name = self.data[start:self.data.index(b"\0", start)].decode()
            yield name, sh[3], sh[5]  # name, address, size

    def dynamic(self):
        for p_type, _, p_offset, _, _, p_filesz, _, _ in self.segments():
            if p_type == PT_DYNAMIC:
                for off in range(p_offset, p_offset + p_filesz, 16):
                    yield struct.unpack_from("<qQ", self.data, off)


class Hardening(unittest.TestCase):
    def setUp(self) -> None:
        if os.environ.get("SB_HARDENING") == "no":
            self.skipTest("configured with --disable-hardening")
        self.elf = Elf(sbtest.PYTHON_SB)

    def test_every_symbol_is_bound_at_start(self) -> None:
        dyn = dict(self.elf.dynamic())
        self.assertTrue(dyn.get(DT_FLAGS, 0) & DF_BIND_NOW or dyn.get(DT_FLAGS_1, 0) & DF_1_NOW,
                        "python-sb is linked for lazy binding (-z now missing)")

    def test_the_stack_is_not_executable(self) -> None:
        stacks = [flags for p_type, flags, *_ in self.elf.segments() if p_type == PT_GNU_STACK]
        self.assertEqual(len(stacks), 1, "no PT_GNU_STACK: the loader would make the stack executable")
        self.assertFalse(stacks[0] & PF_X)

    def test_the_running_supervisor_s_got_is_read_only(self) -> None:
        relro = [(vaddr, memsz) for p_type, _, _, vaddr, _, _, memsz, _ in self.elf.segments()
                 if p_type == PT_GNU_RELRO]
        self.assertEqual(len(relro), 1, "no PT_GNU_RELRO segment")
        got = {name: (addr, size) for name, addr, size in self.elf.sections() if name in (".got", ".got.plt")}
        self.assertIn(".got", got)
        lo, hi = relro[0][0], relro[0][0] + relro[0][1]
        for name, (addr, size) in got.items():
            self.assertTrue(lo <= addr and addr + size <= hi, f"{name} is outside the RELRO segment")

        with sbtest.Scratch() as s:
            s.policy("expose-ro=.\n")
            s.write("wait.py", "import sys, time\nsys.stdout.write('up\\n'); sys.stdout.flush(); time.sleep(30)\n")
            proc = subprocess.Popen([sbtest.PYTHON_SB, f"--python={sbtest.PYTHON}", "wait.py"], cwd=s.dir,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                self.assertEqual(proc.stdout.readline(), "up\n")
                maps = Path(f"/proc/{proc.pid}/maps").read_text().splitlines()
            finally:
                proc.kill()
                proc.communicate()
        exe = os.path.realpath(sbtest.PYTHON_SB)
        mine = [m.split() for m in maps if m.split()[-1] == exe]
        base = min(int(m[0].split("-")[0], 16) - int(m[2], 16) for m in mine)
        for name, (addr, size) in got.items():
            where = base + addr
            perms = [m[1] for m in mine
                     if int(m[0].split("-")[0], 16) <= where < int(m[0].split("-")[1], 16)]
            self.assertEqual(len(perms), 1, f"{name} at {where:#x} is not mapped from {exe}")
            self.assertEqual(perms[0][:3], "r--", f"{name} of the running python-sb is writable")


if __name__ == "__main__":
    sbtest.main(Hardening)

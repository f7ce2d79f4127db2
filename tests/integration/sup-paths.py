#!/usr/bin/env python3
"""How the supervisor reads a path from the program's memory (src/procmem.c):
the first 256 bytes, never past their page, then the rest.  Long paths, a
path crossing a page boundary, one ending at the last byte before an
unmapped page, one running into it, one longer than PATH_MAX: each is read
whole or refused with the kernel's own errno, and a long path to the secret
is refused like a short one."""
from __future__ import annotations

import unittest

import sbtest
from sup_util import SECRET_TEXT, Tree, run

PROG = r'''
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.open.argtypes = [ctypes.c_void_p, ctypes.c_int]
data, secret = sys.argv[1], sys.argv[2]
PAGE = mmap.PAGESIZE

# Three pages, the third unmapped: a string can cross from the first to the
# second, or end right before the third.
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
base = libc.mmap(None, 3 * PAGE, 3, 0x22, -1, 0)
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.munmap(base + 2 * PAGE, PAGE)
END = base + 2 * PAGE

def at(addr, raw):
    ctypes.memmove(addr, raw, len(raw))
    return addr

def try_open(label, addr):
    fd = libc.open(addr, os.O_RDONLY)
    if fd < 0:
        print(label, "ERR", os.strerror(ctypes.get_errno()))
    else:
        print(label, "READ", os.read(fd, 100).decode().strip())
        os.close(fd)

def put(path):
    b = path.encode() + b"\0"
    buf = ctypes.create_string_buffer(b, len(b))
    keep.append(buf)
    return ctypes.addressof(buf)

keep = []
deep = data + "/" + "/".join(["d" * 60] * 14) + "/f.txt"
try_open("deep", put(deep))
try_open("deep-secret", put(secret + "/" + "/".join([".."] * 0) + "//" * 200 + "key"))
crossing = (data + "/" + "./" * 150 + "public.txt").encode() + b"\0"
try_open("crossing", at(base + PAGE - 100, crossing))
ending = (data + "/" + "./" * 40 + "public.txt").encode() + b"\0"
try_open("ending", at(END - len(ending), ending))
unterminated = (data + "/public.txt").encode()
try_open("unterminated", at(END - len(unterminated), unterminated))
try_open("too-long", put(data + "/" + "./" * 2100 + "public.txt"))
'''


class Paths(unittest.TestCase):
    def setUp(self) -> None:
        self.scratch = sbtest.Scratch()
        self.t = Tree(self.scratch)
        d = self.t.data.joinpath(*(["d" * 60] * 14))
        d.mkdir(parents=True)
        (d / "f.txt").write_text("deep data\n")
        self.script = self.t.script(PROG)

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def test_paths_read_whole_or_refused(self) -> None:
        cp = run(self.t, [str(self.script), str(self.t.data), str(self.t.secret)],
                 ["python-api=ALLOW:native"])
        self.assertEqual(cp.returncode, 0, cp.stderr)
        out = dict(line.split(" ", 1) for line in cp.stdout.splitlines())
        self.assertNotIn(SECRET_TEXT, cp.stdout)
        self.assertEqual(out["deep"], "READ deep data")
        self.assertTrue(out["deep-secret"].startswith("ERR"), out)
        self.assertEqual(out["crossing"], "READ public data")
        self.assertEqual(out["ending"], "READ public data")
        self.assertEqual(out["unterminated"], "ERR Bad address")
        self.assertEqual(out["too-long"], "ERR File name too long")
        # Bare, the same program reads the same (the secret too: no sandbox).
        bare = sbtest.run_bare([str(self.script), str(self.t.data), str(self.t.secret)])
        want = dict(line.split(" ", 1) for line in bare.stdout.splitlines())
        for k in ("deep", "crossing", "ending", "unterminated", "too-long"):
            self.assertEqual(out[k], want[k], k)


if __name__ == "__main__":
    sbtest.main(Paths)

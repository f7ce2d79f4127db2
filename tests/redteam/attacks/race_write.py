"""A thread flips the path buffer while the main thread opens through it for
writing, creating or listing, and uses what it got.  Under os-sandbox=auto
(no ignore=, the policy file outside out/) these opens take the CONTINUE
fast path that Landlock backs (SPEC §9): WRITE_FILE and TRUNCATE for a write,
MAKE_REG for a creation, READ_DIR for a listing.  Pairs (same length, one
memmove flips them):
  out/written.txt <-> data/public.txt   O_WRONLY|O_CREAT|O_TRUNC, then write
  out/w1.txt      <-> secret/key        O_WRONLY|O_APPEND, then write
  out/xy.txt      <-> data/x.txt        O_WRONLY|O_CREAT|O_EXCL (creation)
  data/sub        <-> secret/.          O_RDONLY|O_DIRECTORY, then a listing
The harness proves that data/ and secret/ are unchanged (no new file either)
and that the secret's name never shows up."""
import ctypes
import errno
import os
import sys
import threading
import time
from rtlib import CTX, done

os.chdir(CTX["root"])
libc = ctypes.CDLL(None, use_errno=True)
libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
libc.open.restype = ctypes.c_int
with open("out/written.txt", "w") as f:
    f.write("out\n")
with open("out/w1.txt", "w") as f:
    f.write("out\n")


def race(a, b, flags, seconds, use):
    assert len(a) == len(b), (a, b)
    n = len(a) + 1
    buf = ctypes.create_string_buffer(a.encode(), n)
    A = ctypes.create_string_buffer(a.encode(), n)
    B = ctypes.create_string_buffer(b.encode(), n)
    stop = threading.Event()

    def flip():
        mm, dst = ctypes.memmove, ctypes.addressof(buf)
        while not stop.is_set():
            mm(dst, B, n)
            mm(dst, A, n)

    t = threading.Thread(target=flip)
    t.start()
    tries = ok = 0
    errs = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        fd = libc.open(buf, flags, 0o644)
        tries += 1
        if fd < 0:
            e = errno.errorcode.get(ctypes.get_errno(), "?")
            errs[e] = errs.get(e, 0) + 1
        if fd >= 0:
            ok += 1
            try:
                use(fd)
            finally:
                os.close(fd)
    stop.set()
    t.join()
    # With Landlock, an EACCES for the secret (the supervisor answers
    # ENOENT there) is a race the kernel layer refused.
    print(f"race {a} <-> {b} tries={tries} ok={ok} errors={sorted(errs.items())}", flush=True)


def write(fd):
    os.write(fd, b"RT-RACE-WRITE\n")


def created(fd):
    os.write(fd, b"RT-RACE-CREATE\n")
    for p in ("out/xy.txt", "data/x.txt"):
        try:
            os.unlink(p)
        except OSError:
            pass


SEEN = set()


def listing(fd):
    # The names in the directory the descriptor really is (each new one once).
    names = tuple(sorted(os.listdir(fd)))
    if names not in SEEN:
        SEEN.add(names)
        print("list", list(names), flush=True)


sys.setswitchinterval(1e-5)
W = os.O_WRONLY | os.O_CLOEXEC
race("out/written.txt", "data/public.txt", W | os.O_CREAT | os.O_TRUNC, 0.6, write)
race("out/w1.txt", "secret/key", W | os.O_APPEND, 0.6, write)
race("out/xy.txt", "data/x.txt", W | os.O_CREAT | os.O_EXCL, 0.6, created)
race("data/sub", "secret/.", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0.6, listing)
done()

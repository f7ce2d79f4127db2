#!/usr/bin/env python3
"""Write the committed seed corpora of the fuzz targets (fuzz/corpus-*/).

Each seed follows its target's input format (see the comment at the top of
fuzz/fuzz_<name>.c).  Run from anywhere: python3 fuzz/gen-seeds.py.  The
seeds are small on purpose; libFuzzer grows them.  fuzz/corpus (the policy
loader's) is kept by hand and not touched here.
"""
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus-" + target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def fields(*parts):
    return b"\0".join(p.encode() if isinstance(p, str) else p for p in parts)


# ---- sockaddr: ctl, cap selector, address bytes -------------------------------

def sockaddr():
    AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET = 1, 2, 10, 16, 17
    sin = lambda port, ip: struct.pack("<H", AF_INET) + struct.pack(">H", port) + bytes(ip) + bytes(8)
    sin6 = lambda port, ip, scope=b"": (struct.pack("<H", AF_INET6) + struct.pack(">H", port) + bytes(4)
                                        + bytes(ip) + scope)
    seeds = {
        "inet-loopback": sin(8080, [127, 0, 0, 1]),
        "inet-any": sin(0, [0, 0, 0, 0]),
        "inet-short": sin(80, [1, 2, 3, 4])[:10],
        "inet6-loopback": sin6(443, [0] * 15 + [1], bytes(4)),
        "inet6-rfc2133": sin6(53, [0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1]),
        "inet6-mapped": sin6(80, [0] * 10 + [0xff, 0xff, 10, 0, 0, 1], bytes(4)),
        "unix-path": struct.pack("<H", AF_UNIX) + b"/run/x.sock\0",
        "unix-path-nonul": struct.pack("<H", AF_UNIX) + b"r" * 108,
        "unix-abstract": struct.pack("<H", AF_UNIX) + b"\0name\0with\x01nul",
        "unix-unnamed": struct.pack("<H", AF_UNIX),
        "unix-too-long": struct.pack("<H", AF_UNIX) + b"x" * 120,
        "netlink": struct.pack("<HHII", AF_NETLINK, 0, 1234, 0x10),
        "packet": struct.pack("<H", AF_PACKET) + bytes(18),
        "unspec": struct.pack("<H", 0),
        "one-byte": b"\x02",
    }
    for name, sa in seeds.items():
        write("sockaddr", name, bytes([0, 40]) + sa)
    write("sockaddr", "inet-truncated-len", bytes([1 | (7 << 2), 5]) + seeds["inet-loopback"])
    write("sockaddr", "inet6-huge-len", bytes([2, 0]) + seeds["inet6-loopback"] + bytes(128))
    write("sockaddr", "inet-udp-in", bytes([0xc0, 3]) + seeds["inet-any"])
    # An rtnetlink RTM_GETADDR dump request (what getifaddrs sends).
    nl = struct.pack("<IHHII", 16 + 8, 22, 0x301, 1, 0) + struct.pack("<BBBBI", 0, 0, 0, 0, 0)
    write("sockaddr", "rtnetlink-getaddr", bytes([0, 0]) + nl)


# ---- pathres: ctl, pattern \0 subject \0 cwd \0 home ----------------------------

def pathres():
    seeds = [
        (0x0e, "*.pyc", "__pycache__/mod.cpython-311.pyc", "/home/u/app", "/home/u"),
        (0x08, ".env", "a/.env/b", "/", "/root"),
        (0x08, "/tmp/*/secret", "x/secret", "/tmp", "/home/u"),
        (0x08, "data/*.csv", "data/x.csv", "/srv", ""),
        (0x00, "[!a-z]?[]x]\\*", "Xy]*", "rel/cwd", "~"),
        (0x02, "API_*", "API_KEY", "/", "/"),
        (0x02, "*\n*", "a\nb", "/", "/"),
        (0x0c, "[^.]*", "~/x/../../y/./z", "/a/b/c", "/home/u/"),
        (0x08, "**/**", "../../../etc/passwd", "/", "/"),
        (0x04, "a[", "~", "/", "/home/u"),
    ]
    for i, (ctl, pat, subj, cwd, home) in enumerate(seeds):
        write("pathres", "seed-%02d" % i, bytes([ctl]) + fields(pat, subj, cwd, home))


# ---- resolve: ctl (target, flags, dirfd), path ----------------------------------

def resolve():
    # ctl: bit 0 target (1: chrooted), bits 1-3 SB_RES_FOLLOW|PARENT|EMPTY,
    # bits 4-6 dirfd (0,1: cwd; 2: fd 40; 3: pipe; 4: socket; 5: our-only 44;
    # 6: 2; 7: 99), bit 7 NULL path with EMPTY.
    F, P, E = 2, 4, 8
    paths = [
        (F, "a/b/c"), (0, "file"), (F, "/proc/self/fd/40"), (F, "/proc/self/fd/41"), (F, "l_self/fd/43"),
        (F, "l_fd/b"), (0, "l_loop"), (F, "l_loop"), (F, "l_ab/file2"), (F, "l_up/t0/a"), (F, "l_dotdot/etc"),
        (F, "l_tself/a/b"), (F, "l_root/b/c"), (F, "l_cwd/c/deep"), (F, "a/b/l_back"), (F | P, "a/b/new"),
        (F | P, "l_dangling"), (P, "a/b/"), (P, "a/b/c/.."), (F, "fifo"), (F, "../../../../etc"),
        (F, "/proc/thread-self/fd/40/b"), (F, "/proc/self/root/a/b"), (F, "/proc/self/cwd/l_abs"),
        (F, "/proc/1/root/etc"), (F | P, "/proc/self/fd/40/newfile"), (F, "//a///b/./c/"), (0, "emptydir/..//a"),
        (F, "l_slash/c"), (F, "a/l_file"), (F, "/proc/self/fd/99"), (F, "/proc/self/task/0/fd/40"),
        (F, "/proc/self/exe"), (F, "/proc/self/fd"), (F, "/proc/self/fd/"), (F, "x" * 300),
    ]
    n = 0
    for flags, p in paths:
        for target in (0, 1):
            write("resolve", "seed-%03d" % n, bytes([target | flags]) + p.encode())
            n += 1
    for dsel in range(8):
        write("resolve", "dirfd-%d" % dsel, bytes([(dsel << 4) | F]) + b"b/c")
        write("resolve", "dirfd-empty-%d" % dsel, bytes([(dsel << 4) | E | F]) + b"")
    write("resolve", "null-empty", bytes([0x80 | (2 << 4) | E]))


# ---- tracer_decode ---------------------------------------------------------------

LT_REAL = bytes([0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88,
                 0x32, 0x82, 0x76, 0x80, 0x76, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01, 0x0d, 0x20,
                 0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01, 0x0d, 0x20, 0xf1,
                 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x06,
                 0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x0c, 0x00, 0x10, 0x11, 0xf0, 0x05, 0x02, 0x09, 0x1b])

DBG313 = [0x30d00f0, 0, 0x452b8, 608, 632, 0x2f998, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0,
          7768, 7760, 304, 0, 8, 16, 72, 152, 160, 232, 32, 80, 8, 0, 56, 72, 70, 208, 112, 120, 128, 136,
          68, 52, 96, 104, 200, 16, 8, 416, 24, 88, 168, 32, 24, 16, 40, 24, 16, 48, 32, 40, 24, 16, 32,
          16, 24, 40, 16, 32, 64, 32, 16, 40, 240, 200]


def tracer_decode():
    for i, (first, idx, chunk) in enumerate([(2, 0, 1), (2, 37, 5), (100, 400, 63), (-5, 3, 7)]):
        write("tracer_decode", "linetable-%d" % i,
              bytes([0]) + struct.pack("<iHB", first, idx + 1, chunk - 1) + LT_REAL)
    write("tracer_decode", "linetable-bad-varint",
          bytes([0]) + struct.pack("<iHB", 5, 1, 3) + bytes([0xe8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01]))
    strs = [
        ((1 << 2) | (1 << 5) | (1 << 6), 0, 64, b"/app/main.py"),
        ((2 << 2) | (1 << 5), 1, 10, struct.pack("<6H", 0x20ac, ord("x"), 0xfc, 0xd800, 0x2028, 10)),
        ((4 << 2) | (1 << 5), 2, 9, struct.pack("<4I", 0x1f600, 0x110000, 0x85, 0x41)),
        (0, 3, 16, b"bad kind"),
        ((1 << 2), 0, 3, bytes([0x61, 0x0a, 0x1b, 0x7f, 0xe9])),
    ]
    for i, (state, kind, cap, data) in enumerate(strs):
        nchars = len(data) // [1, 2, 4, 1][kind]
        write("tracer_decode", "str-%d" % i,
              bytes([1]) + struct.pack("<IBHH", state, kind, cap, nchars) + data)
    blob313 = b"xdebugpy" + b"".join(struct.pack("<Q", w) for w in DBG313)
    write("tracer_decode", "dbg-raw-313", bytes([2, 0]) + blob313)
    write("tracer_decode", "dbg-raw-313-pyver", bytes([2, 8]) + blob313)
    write("tracer_decode", "dbg-patched-313", bytes([2, 1]) + bytes([18, 0]) + struct.pack("<H", 4096))
    write("tracer_decode", "dbg-patched-314", bytes([2, 2 | 8 | 16]) + bytes([30, 1]) + struct.pack("<Q", 2 << 20))
    write("tracer_decode", "dbg-short", bytes([2, 0xe1 | 0x1f]))
    for i, v in enumerate([0x030b02f0, 0x030c01f0, 0x030d00f0, 0x020712f0]):
        write("tracer_decode", "builtin-%d" % i, bytes([3]) + struct.pack("<I", v))


# ---- frames: sel (layout, scenario, tid), patches --------------------------------

def frames():
    for layout in range(5):
        for scen in range(3):
            sel = layout | (scen << 3)
            write("frames", "clean-%d-%d" % (layout, scen), bytes([sel]) + (b"\0" if layout == 3 else b""))
    # One patch of each value kind on the import scenario, before and between walks.
    for op in range(8):
        for when in (0, 0x20):
            rec = bytes([op | 0x18 | when]) + struct.pack("<HHQ", 5 + op, 8 * op, 0x1234567 * (op + 1))
            write("frames", "patch-%d-%s" % (op, "second" if when else "first"), bytes([2]) + rec)
    write("frames", "decoy-thread", bytes([0x80 | 1]))


# ---- elf: ctl, file ------------------------------------------------------------------

def elf(symbols=True, section=False, libpython=False, symtab=False, build_id=True, etype=3):
    """A minimal x86-64 ELF: PT_LOAD, PT_NOTE (GNU build-id), symbols in
    .dynsym (or .symtab), optionally a .PyRuntime section or a DT_NEEDED-like
    libpython name in .dynstr."""
    names = [b"", b"_PyRuntime", b"Py_Version", b"PyCode_Type"]
    strtab = b"\0"
    offs = []
    for n in names[1:]:
        offs.append(len(strtab))
        strtab += n + b"\0"
    if libpython:
        strtab += b"libpython3.11.so.1.0\0"
    shnames = b"\0.dynsym\0.dynstr\0.shstrtab\0.PyRuntime\0.note.gnu.build-id\0"
    shn = lambda s: shnames.index(s.encode() + b"\0")
    note = struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes(range(1, 21)) if build_id else b""
    syms = bytes(24)
    if symbols:
        for i, value in enumerate([0x4000, 0x5000, 0x6000]):
            syms += struct.pack("<IBBHQQ", offs[i], 0x11, 0, 4, value, 64)
    ehsize, phsize, shsize = 64, 56, 64
    phoff = ehsize
    note_off = phoff + 2 * phsize
    syms_off = note_off + len(note)
    str_off = syms_off + len(syms)
    shstr_off = str_off + len(strtab)
    shoff = (shstr_off + len(shnames) + 7) & ~7
    sections = [bytes(shsize)]
    sections.append(struct.pack("<IIQQQQIIQQ", shn(".dynsym"), 2 if symtab else 11, 2, 0x200, syms_off,
                                len(syms), 2, 1, 8, 24))
    sections.append(struct.pack("<IIQQQQIIQQ", shn(".dynstr"), 3, 2, 0x300, str_off, len(strtab), 0, 0, 1, 0))
    sections.append(struct.pack("<IIQQQQIIQQ", shn(".shstrtab"), 3, 0, 0, shstr_off, len(shnames), 0, 0, 1, 0))
    sections.append(struct.pack("<IIQQQQIIQQ", shn(".PyRuntime") if section else shn(".note.gnu.build-id"),
                                1 if section else 7, 3, 0x4000 if section else 0x100,
                                note_off, len(note), 0, 0, 8, 0))
    eh = (b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
          + struct.pack("<HHIQQQIHHHHHH", etype, 62, 1, 0, phoff, shoff, 0, ehsize, phsize, 2, shsize,
                        len(sections), 3))
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x1000, 0x1000, 0x8000, 0x8000, 0x1000)
    ph += struct.pack("<IIQQQQQQ", 4, 4, note_off, 0x100, 0x100, len(note), len(note), 4)
    body = eh + ph + note + syms + strtab + shnames
    body += bytes(shoff - len(body))
    return body + b"".join(sections)


def elf_seeds():
    write("elf", "python-dynsym", bytes([0]) + elf())
    write("elf", "python-symtab", bytes([0]) + elf(symtab=True))
    write("elf", "python-exec", bytes([0]) + elf(etype=2))
    write("elf", "stripped-pyruntime-section", bytes([0]) + elf(symbols=False, section=True))
    write("elf", "needs-libpython", bytes([0]) + elf(symbols=False, libpython=True))
    write("elf", "no-build-id", bytes([0]) + elf(build_id=False))
    write("elf", "repair-header", bytes([1]) + bytes(64))
    write("elf", "script", bytes([0]) + b"#!/bin/sh\n")
    eh = bytearray(elf())
    struct.pack_into("<H", eh, 56, 60000)      # e_phnum
    write("elf", "huge-phnum", bytes([0]) + bytes(eh))
    eh = bytearray(elf())
    struct.pack_into("<QH", eh, 40, 1 << 30, 0)  # e_shoff far away
    write("elf", "far-sections", bytes([0]) + bytes(eh))


# ---- learn_merge: ctl, file \0 dirname \0 env \0 host \0 module \0 api \0 why \0 journal

TEMPLATE_MARKERS = "".join("# <learning_guard_%s>\n# </learning_guard_%s>\n\n" % (b, b)
                           for b in ("envs", "files", "socket", "import", "api", "eval"))


def learn_merge():
    files = {
        "markers": TEMPLATE_MARKERS,
        "no-markers": "env=HOME=${HOME}\nexpose-ro=./data\n",
        "supersede": "expose-ro=./out\n" + TEMPLATE_MARKERS,
        "supersede-spelled": "expose-ro=./out/\nexpose-ro=out\n" + TEMPLATE_MARKERS,
        "already-learned": ("expose-ro=./data\nexpose-rw=./out\nexec=/usr/bin/env\nenv=API_KEY=${API_KEY}\n"
                            "python-import=json, requests\nnet=ALLOW|TCP|example.com|443|OUT\n"
                            "net=ALLOW|TCP|::1/128|8080|OUT\npython-api=ALLOW:subprocess.Popen\n"
                            "python-api=ALLOW:threads\n"),
        "duplicate-markers": TEMPLATE_MARKERS + TEMPLATE_MARKERS,
        "crlf": TEMPLATE_MARKERS.replace("\n", "\r\n"),
        "end-before-start": "# </learning_guard_files>\n# <learning_guard_files>\n",
        "learn-lock": "learn=false\n" + TEMPLATE_MARKERS,
        "learn-file": "learn=./.py-sandboxes\n" + TEMPLATE_MARKERS,
        "continuation": "expose-ro=./data \\\n# </learning_guard_files>\n",
        "no-final-newline": "env=HOME=${HOME}",
        "exec-block": TEMPLATE_MARKERS + "# <learning_guard_exec>\n# </learning_guard_exec>\n",
        "quoted": "ignore=\"*.tmp # not a comment\"\n" + TEMPLATE_MARKERS,
        "empty": "",
    }
    for i, (name, text) in enumerate(sorted(files.items())):
        write("learn_merge", name, bytes([0]) + fields(text, "", "", "", "", "", "", ""))
        write("learn_merge", name + "-fuzzed", bytes([2 | 0x10 | (i % 8) << 5])
              + fields(text, "new dir#x", "MY_VAR", "api.example.com", "numpy.linalg", "os.system",
                       "app/main.py:3 in f()", ""))
    write("learn_merge", "template", bytes([1]) + fields("", "d", "X", "h", "m", "a", "w", ""))
    write("learn_merge", "symlink", bytes([8]) + fields(TEMPLATE_MARKERS, "", "", "", "", "", "", ""))
    journal = "".join(json.dumps(o) + "\n" for o in [
        {"k": "path", "key": "/etc/hostname", "bits": 1, "c": 1, "why": "a.py:1 in f()"},
        {"k": "net", "fam": 2, "addr": "c0000201", "port": 443, "proto": 1, "dir": 1, "bits": 0, "c": 0},
        {"k": "dns", "fam": 2, "addr": "c0000201", "port": 0, "proto": 0, "dir": 0, "key": "example.com",
         "bits": 0, "c": 0},
        {"k": "env", "key": "HOME", "bits": 0, "c": 0, "why": "x\nexpose-rw=/"},
        {"k": "import", "key": "yaml", "bits": 0, "c": 0},
        {"k": "api", "key": "os.system", "bits": 0, "c": 0},
        {"k": "cat", "bits": 3, "c": 0},
        {"k": "exec", "key": "/bin/sh", "bits": 0, "c": 0},
    ]) + '{"k":"path","key":"/torn'
    write("learn_merge", "journal", bytes([4]) + fields(TEMPLATE_MARKERS, "", "", "", "", "", "", journal))


# ---- agent_msg: the record ---------------------------------------------------------

def agent_msg():
    msgs = [
        {"kind": "import", "name": "requests", "verdict": "would-deny", "pid": 42, "tid": 42,
         "pyloc": "app/main.py:3 in <module>()"},
        {"kind": "import", "name": "xml.etree", "verdict": "denied"},
        {"kind": "api", "name": "os.system", "category": "process-exec", "verdict": "would-deny",
         "pyloc": "tools.py:9 in run()"},
        {"kind": "api", "name": "ctypes.CDLL", "category": "native"},
        {"kind": "env", "name": "API_KEY", "op": "read", "verdict": "would-deny"},
        {"kind": "env", "name": "DEBUG", "op": "write"},
        {"kind": "dns", "name": "example.com", "addrs": ["192.0.2.1", "2001:db8::1", "bogus"]},
        {"kind": "dns", "name": "nowhere.test", "addrs": []},
        {"kind": "import", "name": "a\u0001b\u2028c", "verdict": "would-deny", "pyloc": "x\ny"},
        {"kind": "refusal", "name": "x"},
        {"kind": "env", "name": "BAD NAME=${X}", "op": "read"},
    ]
    for i, m in enumerate(msgs):
        write("agent_msg", "msg-%02d" % i, json.dumps(m))
    write("agent_msg", "not-json", "{\"kind\": \"import\", \"name\": ")
    write("agent_msg", "trailing-newline", json.dumps(msgs[0]) + "\n")


# ---- event_json: fixed fields, then strings ------------------------------------------

def event_json():
    def ev(kind, verdict, access, addr_fam, addr, flags, strings, err=2, proto=1, direction=1, cat=255, cause=0):
        head = bytes([kind, verdict, err, access, proto, direction, cat, cause, flags])
        head += struct.pack("<iiiQI", 257, 42, 43, 1700000000, 123456789)
        head += bytes([addr_fam]) + addr.ljust(28, b"\0")[:28]
        head += struct.pack("<IH", 7, 300)
        return head + fields(*strings)

    strs = ["openat", "/home/u/.ssh/id_rsa", "", "", "app/tools.py:42 in fetch()", "", "a.py\t3\tf\tl\n",
            ".py-sandboxes", "expose-ro=~/.ssh"]
    write("event_json", "path-denied", ev(0, 1, 1, 0, b"", 4, strs))
    write("event_json", "path-hostile", ev(0, 2, 3, 0, b"", 4 | 1,
                                           [b"open\xe2\x80", b"/tmp/a\nb\x1b[31m\xff\xc0\xaf'\"\\\xed\xa0\x80",
                                            b"", b"", b"x\ty", b"mod\x7f", b"f\tno\n", b"\xff", b"ignore=*"]))
    write("event_json", "net-v4", ev(1, 1, 0, 0, struct.pack(">H", 443) + bytes([192, 0, 2, 1]), 0,
                                     ["connect", "", "", "", "", "", "", "", ""]))
    write("event_json", "net-v6-mapped", ev(1, 2, 0, 1 | 4, struct.pack(">H", 80) + bytes(16), 4,
                                           ["sendto", "", "raw socket", "", "", "", "", "f", "net=DENY|*"]))
    write("event_json", "exec", ev(3, 1, 4, 0, b"", 4, ["execve", "/usr/bin/curl", "", "", "", "", "", "f", ""]))
    write("event_json", "proc", ev(4, 1, 0, 0, b"", 0, ["clone", "", "", "", "", "", "", "", ""], cat=3))
    write("event_json", "env", ev(5, 2, 1, 0, b"", 0, ["env", "", "API_KEY", "", "", "", "", "", ""]))
    write("event_json", "import-eval", ev(6, 1, 0, 0, b"", 1, ["import", "", "pkg.mod", "", "", "pkg.mod", "", "", ""],
                                          cause=2))
    write("event_json", "api", ev(7, 1, 0, 0, b"", 0, ["api", "", "os.system", "", "", "", "", "", ""], cat=0))
    write("event_json", "dns", ev(8, 0, 0, 1, struct.pack(">H", 0) + bytes(15) + b"\1", 0,
                                  ["dns", "", "example.com", "", "", "", "", "", ""]))
    write("event_json", "stack-unterminated", ev(0, 1, 1, 0, b"", 2, ["openat", "/x", "", "", "", "",
                                                                     "f.py\t1\tg\te", "", ""]))


# ---- findings: inputs that broke a promise, kept as regression seeds ----------------

def findings():
    # src/pathres.c resolve_parent(): the last component /proc/self followed
    # with readlinkat() in the supervisor names the supervisor's /proc/PID.
    write("resolve", "crash-proc-self-parent-follow", bytes([2 | 4]) + b"/proc/self")
    write("resolve", "crash-proc-thread-self-parent-follow", bytes([2 | 4]) + b"/proc/thread-self/")
    # tracer/pyframes.c frame_bytes(): a frame address within fr_size of 2^64
    # wraps "addr + fs <= whi" and memcpy reads outside p->window.
    write("frames", "crash-window-wrap", b"^wppppppp\x02")
    # tracer/pyframes.c code_line(): a frame not started yet (instr before
    # the code) gets co_firstlineno as is, negative when forged: line < -1.
    # Layout 3.11, import scenario; object 21 is the innermost code object
    # (co_firstlineno at 72), object 5 the data-stack chunk (the innermost
    # frame's instr at 24 + 2 * 96 + 56).
    write("frames", "crash-negative-firstlineno",
          bytes([0]) + bytes([0x09]) + struct.pack("<HHQ", 21, 72, 0xfffffffb)
          + bytes([0x10]) + struct.pack("<HHQ", 5, 272, 0))
    # src/learn_gen.c gen_api(): a function the registry does not list is
    # written as python-api=ALLOW:NAME, which the loader refuses.
    write("learn_merge", "crash-unregistered-api",
          bytes([2 | (5 << 5)]) + fields(TEMPLATE_MARKERS, "", "", "", "", "x.y", "", ""))
    write("agent_msg", "crash-unregistered-api",
          json.dumps({"kind": "api", "name": "x.y", "category": "native", "verdict": "would-deny"}))


def findings_learn():
    # src/learn_gen.c gen_exec(): a program that no longer exists (a
    # temporary script deleted after it ran, or an item replayed from the
    # journal) is written as exec=PATH, which the loader refuses ("must
    # exist").
    journal = json.dumps({"k": "exec", "key": "/nonexistent/tmp-script.sh", "bits": 0, "c": 0}) + "\n"
    write("learn_merge", "crash-exec-gone", bytes([4]) + fields(TEMPLATE_MARKERS, "", "", "", "", "", "", journal))


def main():
    findings()
    findings_learn()
    sockaddr()
    pathres()
    resolve()
    tracer_decode()
    frames()
    elf_seeds()
    learn_merge()
    agent_msg()
    event_json()
    return 0


if __name__ == "__main__":
    sys.exit(main())

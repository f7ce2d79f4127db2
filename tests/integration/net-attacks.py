#!/usr/bin/env python3
"""Attacks on the network handlers from below the Python layer: ctypes calls
straight into libc, a C program started by the Python program, threads that
rewrite the sockaddr or swap the descriptor while the supervisor decides,
sendmsg/sendmmsg address vectors, netlink and raw sockets.

The supervisor judges its own copy of the address and performs the call on
its own duplicate of the socket, so no race may ever reach a refused server.
"""
from __future__ import annotations

import errno
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import netlib  # noqa: E402
import sbtest  # noqa: E402
from netlib import PRELUDE, TcpServer, UdpSink  # noqa: E402

CTYPES = PRELUDE + '''
import ctypes, struct, threading
libc = ctypes.CDLL(None, use_errno=True)
def sockaddr_in(port):
    raw = struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + bytes([127, 0, 0, 1]) + bytes(8)
    return ctypes.create_string_buffer(raw, 16)
def raw_connect(port):
    def go():
        fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
        buf = sockaddr_in(port)
        if libc.connect(fd, buf, 16) != 0:
            e = ctypes.get_errno(); os.close(fd); raise OSError(e, os.strerror(e))
        os.close(fd)
    return go
'''


class NetAttacks(unittest.TestCase):
    def setUp(self) -> None:
        netlib.seccomp_skip()
        self.scratch = sbtest.Scratch()

    def tearDown(self) -> None:
        self.scratch.__exit__()

    def prog_path(self, name: str) -> str:
        p = netlib.PROGS / name
        if not os.access(p, os.X_OK):
            self.fail(f"{p} not built (make check builds it)")
        return str(p)

    def exec_rules(self) -> list[str]:
        # A C program needs its loader and libc, and the grant to start it.
        return ["python-api=ALLOW:process-exec", "python-api=ALLOW:threads", f"expose-ro={netlib.PROGS}",
                "expose-ro=/usr/lib", "expose-ro=/etc"]

    def test_ctypes_connect(self) -> None:
        prog = CTYPES + '''
attempt("ok", raw_connect(int(sys.argv[1])))
attempt("no", raw_connect(int(sys.argv[2])))
'''
        with TcpServer() as ok, TcpServer(serve=False) as no:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT"], args=[ok.port, no.port])
            self.assertEqual(netlib.check_run(self, cp), {"ok": "OK", "no": "ECONNREFUSED"})
            self.assertEqual(no.pending(), 0)

    def test_ctypes_flip_sockaddr(self) -> None:
        """One thread rewrites the port in the buffer while another connects."""
        prog = CTYPES + '''
ok_port, no_port = int(sys.argv[1]), int(sys.argv[2])
buf = sockaddr_in(ok_port)
a, b = struct.pack("!H", ok_port), struct.pack("!H", no_port)
stop = False
def flip():
    while not stop:
        ctypes.memmove(ctypes.addressof(buf) + 2, b, 2)
        ctypes.memmove(ctypes.addressof(buf) + 2, a, 2)
t = threading.Thread(target=flip); t.start()
res = {"ok": 0, "refused": 0, "other": 0}
for i in range(300):
    fd = libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    r = libc.connect(fd, buf, 16)
    e = ctypes.get_errno()
    os.close(fd)
    res["ok" if r == 0 else "refused" if e == errno.ECONNREFUSED else "other"] += 1
stop = True; t.join()
print("other", res["other"]); print("total", res["ok"] + res["refused"])
'''
        with TcpServer() as ok, TcpServer(serve=False, backlog=512) as no:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT", "python-api=ALLOW:threads"],
                            args=[ok.port, no.port], timeout=120)
            self.assertEqual(netlib.check_run(self, cp), {"other": "0", "total": "300"})
            self.assertEqual(no.pending(), 0, "a connect reached the refused server")

    def test_c_program(self) -> None:
        exe = self.prog_path("net_connect")
        prog = PRELUDE + '''
import subprocess
env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")  # a sanitizer build reads /proc at exit
for label, args in (("tcp_ok", ["tcp", "127.0.0.1", sys.argv[2]]), ("tcp_no", ["tcp", "127.0.0.1", sys.argv[3]]),
                    ("udp_no", ["udp", "127.0.0.1", sys.argv[4]])):
    out = subprocess.run([sys.argv[1], *args], capture_output=True, text=True, env=env).stdout.split()
    print(label, out[1] if out and out[0] == "ERR" else out[0] if out else "NOOUTPUT", flush=True)
'''
        with TcpServer() as ok, TcpServer(serve=False) as no, UdpSink() as sink:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT", *self.exec_rules()],
                            args=[exe, ok.port, no.port, sink.port])
            self.assertEqual(netlib.check_run(self, cp), {"tcp_ok": "OK", "tcp_no": "ECONNREFUSED",
                                                          "udp_no": "ECONNREFUSED"})
            self.assertEqual(ok.accepted, 1)
            self.assertEqual(no.pending(), 0)
            self.assertEqual(sink.received(), [])

    def test_c_flip_threads(self) -> None:
        exe = self.prog_path("net_flip")
        prog = '''
import os, subprocess, sys
env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")  # a sanitizer build reads /proc at exit
for mode, a, b in (("addr", sys.argv[2], sys.argv[3]), ("fd", sys.argv[2], sys.argv[4])):
    out = subprocess.run([sys.argv[1], mode, a, b, "400"], capture_output=True, text=True, env=env)
    print(mode, out.stdout.strip().replace(" ", "/") or ("rc=%d" % out.returncode), flush=True)
'''
        with TcpServer(backlog=512) as ok, TcpServer(serve=False, backlog=512) as no, UdpSink() as sink:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT", *self.exec_rules()],
                            args=[exe, ok.port, no.port, sink.port], timeout=120)
            res = netlib.check_run(self, cp)
            self.assertTrue(res.get("addr", "").startswith("done/"), cp.stdout + cp.stderr)
            self.assertIn("other=0", res["addr"])
            self.assertTrue(res.get("fd", "").startswith("done/"), cp.stdout + cp.stderr)
            self.assertEqual(no.pending(), 0, "a connect reached the refused server")
            self.assertEqual(sink.received(), [], "a datagram reached the refused port")

    def test_sendmsg_and_sendmmsg(self) -> None:
        prog = CTYPES + '''
ok_port, no_port = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt("sendmsg_ok", lambda: s.sendmsg([b"m1"], [], 0, ("127.0.0.1", ok_port)))
attempt("sendmsg_no", lambda: s.sendmsg([b"m2"], [], 0, ("127.0.0.1", no_port)))
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(iovec)),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
def vec(ports):
    keep, v = [], (mmsghdr * len(ports))()
    for i, p in enumerate(ports):
        addr, data = sockaddr_in(p), ctypes.create_string_buffer(b"v%d" % i, 2)
        io = iovec(ctypes.cast(data, ctypes.c_void_p), 2)
        keep += [addr, data, io]
        v[i].hdr = msghdr(ctypes.cast(addr, ctypes.c_void_p), 16, ctypes.pointer(io), 1, None, 0, 0)
    return v, keep
v, keep = vec([ok_port, ok_port, no_port, ok_port])
n = libc.sendmmsg(s.fileno(), v, 4, 0)
print("mmsg_sent", n, flush=True)
print("mmsg_lens", ",".join(str(v[i].len) for i in range(n)), flush=True)
v2, keep2 = vec([no_port])
n2 = libc.sendmmsg(s.fileno(), v2, 1, 0)
print("mmsg_first_refused", "%d/%s" % (n2, errno.errorcode.get(ctypes.get_errno())), flush=True)
'''
        with UdpSink() as ok, UdpSink() as no:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|udp|127.0.0.1|{ok.port}|OUT"], args=[ok.port, no.port])
            self.assertEqual(netlib.check_run(self, cp),
                             {"sendmsg_ok": "OK", "sendmsg_no": "ECONNREFUSED", "mmsg_sent": "2",
                              "mmsg_lens": "2,2", "mmsg_first_refused": "-1/ECONNREFUSED"})
            self.assertEqual(ok.received(), [b"m1", b"v0", b"v1"])
            self.assertEqual(no.received(), [])

    def test_tcp_fast_open(self) -> None:
        """sendto(MSG_FASTOPEN) connects: judged as a connect."""
        prog = PRELUDE + '''
ok_port, no_port = int(sys.argv[1]), int(sys.argv[2])
def tfo(port, blocking):
    def go():
        s = socket.socket()
        s.setblocking(blocking)
        try:
            s.sendto(b"ping", socket.MSG_FASTOPEN, ("127.0.0.1", port))
        except BlockingIOError:
            pass  # EINPROGRESS: the SYN is on its way
    return go
attempt("tfo_no", tfo(no_port, False))
attempt("tfo_no_blocking", tfo(no_port, True))
attempt("tfo_ok_blocking", tfo(ok_port, True))
'''
        with TcpServer(serve=False) as ok, TcpServer(serve=False) as no:
            cp = netlib.run(self.scratch, prog, [f"net=ALLOW|tcp|127.0.0.1|{ok.port}|OUT"], args=[ok.port, no.port])
            self.assertEqual(netlib.check_run(self, cp), {"tfo_no": "ECONNREFUSED", "tfo_no_blocking": "ECONNREFUSED",
                                                          "tfo_ok_blocking": errno.errorcode[errno.EOPNOTSUPP]})
            self.assertEqual(no.pending(), 0)
            self.assertEqual(ok.pending(), 0, "a blocking Fast Open is answered before any SYN")

    def test_netlink_and_raw(self) -> None:
        prog = PRELUDE + '''
import struct
attempt("if_nameindex", lambda: socket.if_nameindex())
def newaddr():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.bind((0, 0))
    # RTM_NEWADDR (20), NLM_F_REQUEST|NLM_F_CREATE: a change, never sent for the program
    s.sendto(struct.pack("=IHHII", 16 + 8, 20, 0x401, 1, 0) + bytes(8), (0, 0))
attempt("rtm_newaddr", newaddr)
def uevent():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15)  # NETLINK_KOBJECT_UEVENT
    s.bind((0, 1))
attempt("uevent_bind", uevent)
def raw_icmp():
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.sendto(b"\\x08\\0\\0\\0\\0\\0\\0\\0", ("127.0.0.1", 0))
attempt("raw_sendto", raw_icmp)
def packet_bind():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind(("lo", 0))
attempt("packet_bind", packet_bind)
'''
        if os.geteuid() != 0:
            self.skipTest("raw and packet sockets need root")
        cp = netlib.run(self.scratch, prog, ["net=ALLOW|*|*|*|OUT"])
        # Refused at whichever wall comes first: the filter (netlink other
        # than NETLINK_ROUTE: EAFNOSUPPORT), the kernel once the spawn has
        # dropped root's capabilities (raw and packet sockets: EPERM), or the
        # supervisor (EACCES, ECONNREFUSED).
        got = netlib.check_run(self, cp)
        want = {"if_nameindex": {"OK"}, "rtm_newaddr": {"EPERM"},
                "uevent_bind": {"EAFNOSUPPORT", "EACCES"}, "raw_sendto": {"EPERM", "ECONNREFUSED"},
                "packet_bind": {"EPERM", "EACCES"}}
        self.assertEqual(set(got), set(want))
        for k, ok in want.items():
            self.assertIn(got[k], ok, k)


if __name__ == "__main__":
    sbtest.main(NetAttacks)

#!/usr/bin/env python3
"""AF_UNIX sockets are judged as paths (reference §2.4): connect, send and
bind need the socket's directory exposed read-write; abstract names and
autobind are refused.  Descriptors passed with SCM_RIGHTS still work.
"""
from __future__ import annotations

import os
import shutil
import socket
import stat
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import netlib  # noqa: E402
import sbtest  # noqa: E402
from netlib import PRELUDE, UnixServer  # noqa: E402

CONNECT = PRELUDE + '''
def uconnect(path):
    def go():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall(b"ping")
            assert s.recv(4) == b"pong"
    return go
for i, p in enumerate(sys.argv[1:]):
    attempt("c%d" % i, uconnect(p.replace("@", "\\0", 1) if p.startswith("@") else p))
'''


class NetUnix(unittest.TestCase):
    def setUp(self) -> None:
        netlib.seccomp_skip()
        self.scratch = sbtest.Scratch()
        # Socket directories outside the scratch dir (which is exposed ro).
        self.rw = Path(tempfile.mkdtemp(prefix="sbnet-rw-"))
        self.hidden = Path(tempfile.mkdtemp(prefix="sbnet-hidden-"))

    def tearDown(self) -> None:
        self.scratch.__exit__()
        for d in (self.rw, self.hidden):
            shutil.rmtree(d, ignore_errors=True)

    def test_connect_exposed_rw(self) -> None:
        with UnixServer(str(self.rw / "s.sock")) as srv:
            cp = netlib.run(self.scratch, CONNECT, [f"expose-rw={self.rw}"], args=[srv.path])
            self.assertEqual(netlib.check_run(self, cp), {"c0": "OK"})
            self.assertEqual(srv.accepted, 1)

    def test_connect_unexposed_refused(self) -> None:
        with UnixServer(str(self.hidden / "s.sock"), serve=False) as srv:
            cp = netlib.run(self.scratch, CONNECT, [f"expose-rw={self.rw}"], args=[srv.path])
            self.assertEqual(netlib.check_run(self, cp), {"c0": "ECONNREFUSED"})
            self.assertEqual(srv.pending(), 0)
            self.assertIn(f"expose-rw={self.hidden}", cp.stderr)

    def test_connect_read_only_refused(self) -> None:
        with UnixServer(str(self.hidden / "s.sock"), serve=False) as srv:
            cp = netlib.run(self.scratch, CONNECT, [f"expose-ro={self.hidden}"], args=[srv.path])
            self.assertEqual(netlib.check_run(self, cp), {"c0": "ECONNREFUSED"})
            self.assertEqual(srv.pending(), 0)

    def test_connect_through_symlink_judges_target(self) -> None:
        """A link in an exposed directory to a socket elsewhere: judged where it leads."""
        with UnixServer(str(self.hidden / "s.sock"), serve=False) as srv:
            (self.rw / "link.sock").symlink_to(srv.path)
            cp = netlib.run(self.scratch, CONNECT, [f"expose-rw={self.rw}"], args=[str(self.rw / "link.sock")])
            self.assertEqual(netlib.check_run(self, cp), {"c0": "ECONNREFUSED"})
            self.assertEqual(srv.pending(), 0)

    def test_connect_relative_path(self) -> None:
        prog = PRELUDE + '''
os.chdir(sys.argv[1])
def go():
    with socket.socket(socket.AF_UNIX) as s:
        s.connect("s.sock"); s.sendall(b"ping"); assert s.recv(4) == b"pong"
attempt("rel", go)
'''
        with UnixServer(str(self.rw / "s.sock")) as srv:
            cp = netlib.run(self.scratch, prog, [f"expose-rw={self.rw}"], args=[str(self.rw)])
            self.assertEqual(netlib.check_run(self, cp), {"rel": "OK"})
            self.assertEqual(srv.accepted, 1)

    def test_missing_socket_and_missing_dir(self) -> None:
        cp = netlib.run(self.scratch, CONNECT, [f"expose-rw={self.rw}"],
                        args=[str(self.rw / "none.sock"), str(self.hidden / "nodir" / "x.sock"),
                              str(self.rw / "nodir" / "x.sock")])
        # Exposed: the kernel's answer.  Unexposed: refused whether or not it exists.
        self.assertEqual(netlib.check_run(self, cp), {"c0": "ENOENT", "c1": "ECONNREFUSED", "c2": "ENOENT"})

    def test_abstract_refused(self) -> None:
        name = "\0sbnet-%d" % os.getpid()
        with UnixServer(name, serve=False) as srv:
            cp = netlib.run(self.scratch, CONNECT, [f"expose-rw={self.rw}"], args=["@" + name[1:]])
            self.assertEqual(netlib.check_run(self, cp), {"c0": "ECONNREFUSED"})
            self.assertEqual(srv.pending(), 0)
            # The line says why no rule helps, and offers none.
            line = [l for l in cp.stderr.splitlines() if l.startswith("python-sb: DENIED connect '@sbnet-")]
            self.assertEqual(len(line), 1, cp.stderr)
            self.assertTrue(line[0].endswith(": abstract AF_UNIX sockets are refused"), line[0])

    def test_bind(self) -> None:
        prog = PRELUDE + '''
rw, hidden = sys.argv[1], sys.argv[2]
os.umask(0o077)
a = socket.socket(socket.AF_UNIX)
attempt("bind_rw", lambda: a.bind(rw + "/srv.sock"))
print("name", a.getsockname(), flush=True)
b = socket.socket(socket.AF_UNIX)
attempt("bind_hidden", lambda: b.bind(hidden + "/srv.sock"))
c = socket.socket(socket.AF_UNIX)
attempt("autobind", lambda: c.bind(""))
d = socket.socket(socket.AF_UNIX)
attempt("bind_abstract", lambda: d.bind("\\0sbnet-abstract"))
e = socket.socket(socket.AF_UNIX)
attempt("bind_via_link", lambda: e.bind(rw + "/out/x.sock"))
os.chdir(rw)
f = socket.socket(socket.AF_UNIX)
attempt("bind_relative", lambda: f.bind("rel.sock"))
print("relname", f.getsockname(), flush=True)
'''
        (self.rw / "out").symlink_to(self.hidden)
        cp = netlib.run(self.scratch, prog, [f"expose-rw={self.rw}"], args=[self.rw, self.hidden])
        res = netlib.check_run(self, cp)
        self.assertEqual(res, {"bind_rw": "OK", "name": f"{self.rw}/srv.sock", "bind_hidden": "EACCES",
                               "autobind": "EACCES", "bind_abstract": "EACCES", "bind_via_link": "EACCES",
                               "bind_relative": "OK", "relname": "rel.sock"})
        st = os.lstat(self.rw / "srv.sock")
        self.assertTrue(stat.S_ISSOCK(st.st_mode))
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o700, "the program's umask applies")
        self.assertEqual(sorted(p.name for p in self.hidden.iterdir()), [])

    def test_bind_symlink_swap_race(self) -> None:
        """A thread swaps a directory of the bind path between a link inside
        the exposed tree and a link to an unexposed one while another binds:
        no socket file may ever appear in the unexposed directory."""
        prog = PRELUDE + '''
import threading
rw, hidden = sys.argv[1], sys.argv[2]
os.mkdir(rw + "/real")
os.symlink(rw + "/real", rw + "/d")
stop = False
def flip():
    while not stop:
        for target in (hidden, rw + "/real"):
            try:
                os.symlink(target, rw + "/tmp")
                os.replace(rw + "/tmp", rw + "/d")
            except OSError:
                pass
t = threading.Thread(target=flip)
t.start()
res = {}
for i in range(400):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(rw + "/d/x.sock")
        res["ok"] = res.get("ok", 0) + 1
        os.unlink(rw + "/real/x.sock")
    except OSError as e:
        res[errno.errorcode[e.errno]] = res.get(errno.errorcode[e.errno], 0) + 1
    s.close()
stop = True
t.join()
print("outcomes", ",".join("%s=%d" % kv for kv in sorted(res.items())), flush=True)
'''
        cp = netlib.run(self.scratch, prog, [f"expose-rw={self.rw}", "python-api=ALLOW:threads"],
                        args=[self.rw, self.hidden], timeout=120)
        res = netlib.check_run(self, cp)
        self.assertIn("outcomes", res, cp.stdout)
        self.assertEqual(sorted(p.name for p in self.hidden.iterdir()), [], res["outcomes"])

    def test_datagram_sendto(self) -> None:
        prog = PRELUDE + '''
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
attempt("rw", lambda: s.sendto(b"rw", sys.argv[1]))
attempt("hidden", lambda: s.sendto(b"hidden", sys.argv[2]))
attempt("msg", lambda: s.sendmsg([b"msg"], [], 0, sys.argv[1]))
'''
        recv_rw = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        recv_hidden = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        with recv_rw, recv_hidden:
            recv_rw.bind(str(self.rw / "d.sock"))
            recv_hidden.bind(str(self.hidden / "d.sock"))
            cp = netlib.run(self.scratch, prog, [f"expose-rw={self.rw}"],
                            args=[self.rw / "d.sock", self.hidden / "d.sock"])
            self.assertEqual(netlib.check_run(self, cp), {"rw": "OK", "hidden": "ECONNREFUSED", "msg": "OK"})
            recv_rw.setblocking(False)
            recv_hidden.setblocking(False)
            self.assertEqual(recv_rw.recv(16), b"rw")
            self.assertEqual(recv_rw.recv(16), b"msg")
            self.assertRaises(BlockingIOError, recv_hidden.recv, 16)

    def test_scm_rights_over_socketpair(self) -> None:
        prog = PRELUDE + '''
import array
a, b = socket.socketpair()
r, w = os.pipe()
os.write(w, b"through the fd")
fds = array.array("i", [r])
attempt("send", lambda: a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)]))
msg, anc, flags, addr = b.recvmsg(1, socket.CMSG_SPACE(4))
got = array.array("i"); got.frombytes(anc[0][2][:4])
print("data", os.read(got[0], 64).decode().replace(" ", "_"), flush=True)
attempt("badfd", lambda: a.sendmsg([b"y"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [999]))]))
'''
        cp = netlib.run(self.scratch, prog, [])
        self.assertEqual(netlib.check_run(self, cp), {"send": "OK", "data": "through_the_fd", "badfd": "EBADF"})


if __name__ == "__main__":
    sbtest.main(NetUnix)

"""The red-team harness: runs the attacks of tests/redteam/catalogue.txt.

Each attack is a small program (tests/redteam/attacks/) run by the real
python-sb under a policy that does not allow what it tries, once per kernel
layer (`os-sandbox=none`: the supervisor alone; `auto`: with Landlock; the
attacks marked `layers: yes` also under `unshare`, `bwrap` and `firejail`,
every attack with RT_LAYERS=all).  The
program tries, and prints whatever it obtained.  The harness never trusts an
error message: an attack has *held* only when every proof holds:

  leak     no canary text in the output, in the writable tree or in /tmp
           (the secret file's content, an ignored .env, a host environment
           variable the policy does not pass, a hidden file's name, ...)
  breach   no line the program prints only when something worked that must
           not ("RT-CHILD-RAN", "RT-GOT-FD", "RT-ORPHAN-ALIVE", ...)
  marker   no marker file (the program would have created it)
  net      the loopback canary listeners (TCP, UDP, AF_UNIX path and
           abstract, "intranet" addresses in a private network namespace)
           accepted and received nothing
  proc     an outside canary process is alive, unsignalled, unchanged
  files    the read-only tree and the secret are unchanged
  policy   the rule file is unchanged
  alive    python-sb itself survived (the program's own exit status)
  + the attack's own proofs (gone, inbound, sbexit, forks, netstate, ...)

A control run of the same program with the bare interpreter must *breach*
(the attack works when nothing stops it), unless the catalogue says why no
control is possible: a test that cannot fail proves nothing.

Exit status (automake): 0 all held, 1 a breach or a broken attack, 77 all
skipped, 99 harness error.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import hashlib
import json
import os
import re
import secrets
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
SRCDIR = Path(os.environ.get("SB_TOP_SRCDIR", HERE.parents[1]))
BUILDDIR = Path(os.environ.get("SB_TOP_BUILDDIR", SRCDIR))
PYTHON_SB = os.environ.get("PYTHON_SB", str(BUILDDIR / "python-sb"))
# The Debian interpreter is always the one tested (brief); RT_PYTHON overrides.
PYTHON = os.environ.get("RT_PYTHON") or ("/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK)
                                         else os.environ.get("SB_PYTHON", "python3"))
CATALOGUE = HERE / "catalogue.txt"
ATTACKS = HERE / "attacks"
NATIVE_DIR = BUILDDIR / "tests" / "redteam"
NATIVE = NATIVE_DIR / "rt_native.so"
MARKER_PROG = NATIVE_DIR / "rt_marker"
MODES = ("none", "auto")
# The layers that start the program themselves (doc/os-layers.md): an attack
# runs under them too when its stanza says `layers: yes` (the representative
# subset, doc/security.md §6), or every attack with RT_LAYERS=all.
LAYERS = ("unshare", "bwrap", "firejail")
SKIP, HARD = 77, 99

# Lines a program prints only when something worked that must not.
BREACH_LINES = ("RT-CHILD-RAN", "RT-GOT-FD", "RT-ORPHAN-ALIVE", "RT-NS-CHANGED", "RT-PERSONA-CHANGED",
                "RT-UFFD-FD", "RT-NESTED-FILTER", "RT-ALLOC-OK", "RT-UID-CHANGED", "RT-EVILMOD-RAN",
                "RT-ANOMALY", "RT-FD-OVER-LIMIT", "RT-CONNECTED", "RT-EXISTS")

# Files the harness itself writes into the read-only tree during a run.
HARNESS_FILES = {"parent_env.txt", ".parent_env.tmp", "child-canary.pid"}

# Addresses the network runner puts on the loopback device of its own
# network namespace (never reachable outside it).
INTRANET = ("10.255.255.1", "192.168.77.1", "169.254.169.254", "203.0.113.7")


# ---- the catalogue ---------------------------------------------------------------------

@dataclasses.dataclass
class Attack:
    id: str
    group: str
    title: str
    ref: str = "-"
    program: str = ""
    args: list[str] = dataclasses.field(default_factory=list)
    policy: list[str] = dataclasses.field(default_factory=list)
    proof: str = ""
    control: str = "bare"
    layer: str = ""
    status: str = "holds"
    reason: str = ""
    modes: tuple[str, ...] = MODES
    layers: bool = False                # also run under unshare, bwrap and firejail
    accept: tuple[str, ...] = ()        # modes where a breach is a documented residual
    needs: tuple[str, ...] = ()
    hook: str = ""
    launch: str = ""
    agent: bool = False
    done: bool = True
    timeout: float = 30.0
    serial: bool = False
    line: int = 0

    @property
    def test(self) -> str:
        return f"tests/redteam/run-{self.group}.py"

    @property
    def catalogue_modes(self) -> tuple[str, ...]:
        """The modes the catalogue names (layers: yes adds LAYERS)."""
        return self.modes + (tuple(m for m in LAYERS if m not in self.modes) if self.layers else ())

    @property
    def all_modes(self) -> tuple[str, ...]:
        """The modes this attack runs under here (RT_LAYERS=all: every layer)."""
        if os.environ.get("RT_LAYERS") == "all":
            return self.modes + tuple(m for m in LAYERS if m not in self.modes)
        return self.catalogue_modes


LIST_KEYS = {"args", "policy"}
TUPLE_KEYS = {"modes", "accept", "needs"}


@dataclasses.dataclass
class NotApplicable:
    """A reference row no attack covers, and why (`na:` stanzas)."""
    ref: str
    why: str


def load_catalogue(path: Path = CATALOGUE) -> list[Attack]:
    return load_all(path)[0]


def load_all(path: Path = CATALOGUE) -> tuple[list[Attack], list[NotApplicable]]:
    """Stanzas of `key: value` lines separated by blank lines; `#` comments."""
    attacks, na, cur, start = [], [], {}, 0
    text = path.read_text().splitlines() + [""]
    for n, raw in enumerate(text, 1):
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur and "na" in cur:
                na.append(NotApplicable(cur["na"], cur.get("why", "")))
                cur = {}
            elif cur:
                attacks.append(_attack(cur, start, path))
                cur = {}
            continue
        if line.startswith((" ", "\t")) and cur:
            key = cur["_last"]
            if key in LIST_KEYS:
                cur[key].append(line.strip())
            else:
                cur[key] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"{path}({n}): expected 'key: value'")
        key, value = key.strip(), value.strip()
        if not cur:
            start = n
        cur["_last"] = key
        if key in LIST_KEYS:
            cur.setdefault(key, []).append(value)
        elif key in cur:
            raise ValueError(f"{path}({n}): {key} given twice")
        else:
            cur[key] = value
    return attacks, na


def _attack(d: dict, line: int, path: Path) -> Attack:
    d = dict(d)
    d.pop("_last", None)
    known = {f.name for f in dataclasses.fields(Attack)}
    unknown = set(d) - known
    if unknown:
        raise ValueError(f"{path}({line}): unknown keys {sorted(unknown)}")
    kw: dict = {"line": line}
    for k, v in d.items():
        if k in TUPLE_KEYS:
            kw[k] = tuple(v.split())
        elif k in ("agent", "done", "serial", "layers"):
            kw[k] = v.lower() in ("yes", "true", "1")
        elif k == "timeout":
            kw[k] = float(v)
        elif k == "args":
            kw[k] = [a for line_ in v for a in line_.split()]
        else:
            kw[k] = v
    for req in ("id", "group", "title", "program", "proof", "layer"):
        if not kw.get(req):
            raise ValueError(f"{path}({line}): missing {req}")
    return Attack(**kw)


# ---- canary listeners --------------------------------------------------------------------

class Canary:
    """A listener that must never be reached: counts connections and bytes."""

    def __init__(self, name: str, sock: socket.socket, stream: bool) -> None:
        self.name, self.sock, self.stream = name, sock, stream
        self.accepted = 0
        self.data = b""
        self.conns: list[socket.socket] = []

    @property
    def hit(self) -> bool:
        return self.accepted > 0 or bool(self.data)


class Listeners:
    """Loopback listeners served by one selector thread for the whole run."""

    def __init__(self) -> None:
        self.sel = selectors.DefaultSelector()
        self.lock = threading.Lock()
        self.wake_r, self.wake_w = socket.socketpair()
        self.sel.register(self.wake_r, selectors.EVENT_READ, None)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            for key, _ in self.sel.select():
                if key.data is None:
                    self.wake_r.recv(64)
                    continue
                canary, conn = key.data
                try:
                    if conn is None and canary.stream:
                        c, _ = canary.sock.accept()
                        c.setblocking(False)
                        canary.accepted += 1
                        canary.conns.append(c)
                        with self.lock:
                            self.sel.register(c, selectors.EVENT_READ, (canary, c))
                        continue
                    data = (conn or canary.sock).recv(65536)
                    if data:
                        canary.data += data
                    elif conn is not None:
                        self.sel.unregister(conn)
                        conn.close()
                except OSError:
                    if conn is not None:
                        try:
                            self.sel.unregister(conn)
                        except (KeyError, ValueError):
                            pass
                        conn.close()

    def _add(self, name: str, s: socket.socket, stream: bool) -> Canary:
        c = Canary(name, s, stream)
        s.setblocking(False)
        with self.lock:
            self.sel.register(s, selectors.EVENT_READ, (c, None))
        self.wake_w.send(b"x")
        return c

    def tcp(self, name: str, host: str = "127.0.0.1", port: int = 0, backlog: int = 4096) -> Canary:
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(backlog)
        return self._add(name, s, True)

    def udp(self, name: str, host: str = "127.0.0.1", port: int = 0) -> Canary:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((host, port))
        return self._add(name, s, False)

    def unix(self, name: str, path: str, dgram: bool = False) -> Canary:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if dgram else socket.SOCK_STREAM)
        s.bind(path)
        if not dgram:
            s.listen(4096)
        return self._add(name, s, not dgram)

    def settle(self, cs: list[Canary], limit: float = 3.0) -> None:
        """Wait until nothing is pending on these canaries: a connection still
        in a backlog, or a datagram not read yet, must count."""
        import select
        end = time.monotonic() + limit
        while time.monotonic() < end:
            socks = [c.sock for c in cs] + [k for c in cs for k in c.conns if k.fileno() >= 0]
            try:
                ready, _, _ = select.select(socks, [], [], 0)
            except (OSError, ValueError):
                ready = [None]
            if not ready:
                return
            time.sleep(0.02)

    def close(self, cs: list[Canary]) -> None:
        with self.lock:
            for c in cs:
                try:
                    self.sel.unregister(c.sock)
                except (KeyError, ValueError):
                    pass
                c.sock.close()


class Server:
    """An allowed loopback TCP server: accepts, answers 'RT-OK', closes."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4096)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                c.sendall(b"RT-OK\n")
            except OSError:
                pass
            c.close()


# ---- environment probes ------------------------------------------------------------------

_facts: dict[str, object] = {}


def real_python() -> str:
    if "python" not in _facts:
        _facts["python"] = subprocess.run(
            [PYTHON, "-c", "import os, sys; print(os.path.realpath(sys.executable))"],
            capture_output=True, text=True, check=True).stdout.strip()
    return str(_facts["python"])


def netns_ready() -> bool:
    return os.environ.get("RT_IN_NETNS") == "1"


def auto_layer(work: Path) -> str:
    """What os-sandbox=auto gives here, from python-sb --check-config."""
    if "auto" not in _facts:
        pol = work / "auto-probe.py-sandboxes"
        pol.write_text("os-sandbox=auto\npy-sandbox=false\n")
        r = subprocess.run([PYTHON_SB, f"--python={PYTHON}", "--check-config", f"--pysandboxes-config={pol}"],
                           capture_output=True, text=True, cwd=work)
        m = re.search(r"^os-sandbox: (.*)$", r.stdout, re.M)
        _facts["auto"] = m.group(1).strip() if m else "unknown (" + (r.stderr.strip()[:200] or "no output") + ")"
    return str(_facts["auto"])


def layer_unusable(work: Path, layer: str) -> str:
    """Why python-sb cannot apply `layer` here ("" when it can), as python-sb
    says it (the tool or user namespaces missing): those runs skip."""
    key = "layer-" + layer
    if key not in _facts:
        pol = work / f"{layer}-probe.py-sandboxes"
        pol.write_text(f"os-sandbox={layer}\npy-sandbox=false\n")
        r = subprocess.run([PYTHON_SB, f"--python={PYTHON}", "--check-config", f"--pysandboxes-config={pol}"],
                           capture_output=True, text=True, cwd=work)
        ok = r.returncode == 0 and f"os-sandbox: {layer}" in r.stdout
        _facts[key] = "" if ok else (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[0][:200]
    return str(_facts[key])


def have_ipv6() -> bool:
    if "ipv6" not in _facts:
        try:
            s = socket.socket(socket.AF_INET6)
            s.bind(("::1", 0))
            s.close()
            _facts["ipv6"] = True
        except OSError:
            _facts["ipv6"] = False
    return bool(_facts["ipv6"])


def build_extension(work: Path) -> Path | None:
    """Build tests/redteam/rtext.c against the test interpreter's headers."""
    if "ext" in _facts:
        return _facts["ext"]  # type: ignore[return-value]
    _facts["ext"] = None
    info = subprocess.run([PYTHON, "-c", "import sysconfig as s; print(s.get_paths()['include']); "
                           "print(s.get_config_var('EXT_SUFFIX'))"], capture_output=True, text=True)
    if info.returncode:
        return None
    inc, suffix = info.stdout.split()
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc or not Path(inc, "Python.h").exists():
        return None
    d = work / "ext"
    d.mkdir(exist_ok=True)
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", f"-I{inc}", str(HERE / "rtext.c"), "-o",
                        str(d / f"rtext{suffix}")], capture_output=True, text=True)
    if r.returncode:
        print(f"note: C extension not built: {r.stderr.strip()[:300]}")
        return None
    _facts["ext"] = d
    return d


def file_handle(path: Path) -> tuple[str, int] | None:
    """The kernel's file handle for PATH (name_to_handle_at), as hex and type."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(8 + 128)
    ctypes.c_uint.from_buffer(buf, 0).value = 128
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, str(path).encode(), buf, ctypes.byref(mount_id), 0) != 0:
        return None
    nbytes = ctypes.c_uint.from_buffer(buf, 0).value
    htype = ctypes.c_int.from_buffer(buf, 4).value
    return buf.raw[8:8 + nbytes].hex(), htype


# ---- one run -----------------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    verdict: str                 # held, breach, error, skip
    details: list[str]
    seconds: float = 0.0
    out: str = ""


class Run:
    """A fresh tree, its canaries and one execution of an attack program."""

    def __init__(self, h: "Harness", a: Attack, mode: str | None) -> None:
        self.h, self.a, self.mode = h, a, mode
        self.root = Path(tempfile.mkdtemp(prefix=f"rt-{a.id}-", dir=h.work)).resolve()
        self.tok = {k: f"RT{k.upper()}-{secrets.token_hex(6)}" for k in
                    ("secret", "dotenv", "env", "name", "hidden", "sniff", "kmsg", "tmp")}
        self.canaries: list[Canary] = []
        self.extra: dict[str, object] = {}
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.proc: subprocess.Popen | None = None
        self.procs: list[subprocess.Popen] = []
        self.holding: list[object] = []
        self.failures: list[str] = []

    # -- tree --
    def build(self) -> dict:
        r, a = self.root, self.a
        prog, data, out, sec = r / "prog", r / "data", r / "out", r / "secret"
        for d in (prog, data, data / "sub", out, sec, r / "hidden" / "inner"):
            d.mkdir(parents=True)
        (sec / "key").write_text(self.tok["secret"] + "\n")
        (sec / self.tok["name"]).write_text("x\n")
        (r / "hidden" / "key").write_text(self.tok["hidden"] + "\n")
        (r / "hidden" / "inner" / "mounted.txt").write_text("seen through the bind mount\n")
        (data / "public.txt").write_text("public data\n")
        (data / "key").write_text("public key\n")
        (data / "pub1").write_text("public one\n")
        (data / "sub" / "key").write_text("public sub key\n")
        (data / ".env").write_text(f"TOKEN={self.tok['dotenv']}\n")
        (data / "link").symlink_to("../secret/key")
        for f in (ATTACKS / a.program, ATTACKS / "rtlib.py", ATTACKS / "evilmod.py"):
            shutil.copy(f, prog / f.name)
        shutil.copy("/usr/bin/true", prog / "ok")
        self.ctx = {
            "root": str(r), "prog": str(prog), "data": str(data), "out": str(out),
            "secret": str(sec / "key"), "secret_dir": str(sec), "public": str(data / "public.txt"),
            "marker": str(out / f"RT-MARKER-{secrets.token_hex(4)}"), "marker_prog": str(MARKER_PROG),
            "native": str(NATIVE), "python": real_python(), "python_sb": PYTHON_SB,
            "tmp_prefix": self.tok["tmp"], "args": a.args, "mode": self.mode or "bare",
            "ext_dir": str(self.h.ext_dir or ""), "hidden": str(r / "hidden" / "key"),
        }
        self._canaries()
        self._snapshot()
        return self.ctx

    def _canaries(self) -> None:
        L, r, ctx = self.h.listeners, self.root, self.ctx
        tcp = L.tcp("tcp")
        udp = L.udp("udp")
        unix = L.unix("unix", str(r / "secret" / "sock"))
        dgram = L.unix("unix-dgram", str(r / "secret" / "dsock"), dgram=True)
        abstract_name = f"rt-canary-{secrets.token_hex(6)}"
        abstract = L.unix("abstract", "\0" + abstract_name)
        self.canaries += [tcp, udp, unix, dgram, abstract]
        ctx.update(tcp=tcp.sock.getsockname()[1], udp=udp.sock.getsockname()[1], unix=str(r / "secret" / "sock"),
                   unix_dgram=str(r / "secret" / "dsock"), abstract=abstract_name,
                   allowed_tcp=self.h.server.port, allowed_udp=self.h.udp_sink.getsockname()[1])
        if have_ipv6():
            tcp6 = L.tcp("tcp6", "::1")
            self.canaries.append(tcp6)
            ctx["tcp6"] = tcp6.sock.getsockname()[1]
        if "dns" in self.a.needs:
            # DNS on loopback port 53 inside the private namespace, else any port.
            try:
                c = L.udp("udp-53", "127.0.0.1", 53 if netns_ready() else 0)
            except OSError:
                c = L.udp("udp-53", "127.0.0.1", 0)
            self.canaries.append(c)
            ctx["dns_port"] = c.sock.getsockname()[1]
        if "netns" in self.a.needs and netns_ready():
            # Fixed ports: these attacks run one at a time (Harness.serial).
            for ip in INTRANET:
                for port in (80, 443):
                    self.canaries.append(L.tcp(f"intranet {ip}:{port}", ip, port))
            ctx["intranet"] = list(INTRANET)
        if "inherit" in self.a.needs:
            inh = L.tcp("inherited-socket")
            self.canaries.append(inh)
            cli = socket.create_connection(inh.sock.getsockname())
            time.sleep(0.05)
            inh.accepted = 0      # the harness's own connection
            self.holding.append(cli)
            self.extra["pass_fds"] = [cli.fileno()]
        if "passfd" in self.a.needs:
            fd = os.open(r / "secret" / "key", os.O_RDONLY)
            self.holding.append(fd)
            self.extra["pass_fds"] = list(self.extra.get("pass_fds", [])) + [fd]
        if "proc" in self.a.needs:
            self._proc_canary()
        if "kmsg" in self.a.needs:
            with open("/dev/kmsg", "w") as f:    # one harmless line in the host's kernel log
                f.write(f"python-sb red-team canary {self.tok['kmsg']}\n")
        if "handle" in self.a.needs:
            fh = file_handle(r / "secret" / "key")
            if fh:
                ctx["handle"], ctx["handle_type"] = fh

    CANARY_CODE = ("import os, signal, sys, time\n"
                   "m = sys.argv[1]\n"
                   "def h(s, f):\n"
                   "    open(m, 'a').write(f'signal {s}\\n')\n"
                   "for s in (signal.SIGURG, signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP, signal.SIGINT,"
                   " signal.SIGCONT, signal.SIGIO, signal.SIGWINCH):\n"
                   "    signal.signal(s, h)\n"
                   "print('ready', flush=True)\n"
                   "end = time.time() + 60\n"
                   "while time.time() < end: time.sleep(0.05)\n")

    def _proc_canary(self) -> None:
        m = self.root / "canary-signals"
        p = subprocess.Popen([sys.executable, "-c", self.CANARY_CODE, str(m)], stdout=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        p.stdout.readline()
        self.procs.append(p)
        self.ctx["canary_pid"] = p.pid
        self.extra["canary"] = p
        self.extra["canary_limits"] = Path(f"/proc/{p.pid}/limits").read_text()
        self.extra["canary_nice"] = os.getpriority(os.PRIO_PROCESS, p.pid)
        self.extra["canary_sched"] = sched_state(p.pid)

    def _snapshot(self) -> None:
        self.extra["files_before"] = self._tree_state()

    def _tree_state(self) -> dict:
        st = {}
        for base in ("data", "secret", "prog", "hidden"):
            for p in sorted((self.root / base).rglob("*")):
                if p.name in HARNESS_FILES:
                    continue
                try:
                    s = p.lstat()
                except OSError:
                    continue
                content = b""
                if stat.S_ISREG(s.st_mode):
                    content = p.read_bytes()
                elif stat.S_ISLNK(s.st_mode):
                    content = os.readlink(p).encode()
                try:
                    xattrs = sorted(os.listxattr(p, follow_symlinks=False))
                except OSError:
                    xattrs = []
                st[str(p.relative_to(self.root))] = (stat.S_IFMT(s.st_mode), s.st_mode & 0o7777, s.st_uid,
                                                    s.st_mtime_ns if not stat.S_ISDIR(s.st_mode) else 0,
                                                    hashlib.sha1(content).hexdigest(), tuple(xattrs))
        return st

    # -- policy --
    def write_policy(self) -> Path:
        a, ctx = self.a, self.ctx
        lines = [f"os-sandbox={self.mode or 'none'}", "py-sandbox=" + ("true" if a.agent else "false"),
                 f"expose-ro={ctx['prog']}", f"expose-ro={ctx['data']}", f"expose-rw={ctx['out']}",
                 f"expose-ro={NATIVE_DIR}"]
        # With the agent, imports are open unless the attack names its own
        # list (python-import=* anywhere would drop every other name).
        if a.agent and not any(p.startswith("python-import=") for p in a.policy):
            lines.append("python-import=*")
        if self.h.ext_dir:
            lines.append(f"expose-ro={self.h.ext_dir}")
        for p in a.policy:
            lines.append(p.format(**ctx))
        where = self.root / ("out/cfg" if "policy-in-out" in a.needs else "")
        where.mkdir(parents=True, exist_ok=True)
        pol = where / ".py-sandboxes"
        pol.write_text("\n".join(lines) + "\n")
        self.extra["policy_path"] = pol
        self.extra["policy_bytes"] = pol.read_bytes()
        return pol

    # -- execution --
    def command(self) -> tuple[list[str], dict]:
        a, ctx = self.a, self.ctx
        prog = [str(self.root / "prog" / a.program), json.dumps(ctx)]
        # The secret first: attacks that read a parent's environment block
        # (P15) read a bounded window from its start, and a large test
        # environment (make check exports many variables) must not push the
        # secret out of it.
        env = {"RT_HOST_SECRET": self.tok["env"], **os.environ}
        env["RT_HOST_SECRET"] = self.tok["env"]
        env.pop("PYTHONPATH", None)
        pol = self.write_policy()
        if self.mode is None:
            inner = [PYTHON, "-B", *prog]
            tail = '"$@"; exit $?'
        else:
            inner = [PYTHON_SB, f"--python={PYTHON}", f"--pysandboxes-config={pol}", "-B", *prog]
            tail = 'exec "$@"'
        head = ""
        canary = f'"{sys.executable}" -c "$RT_CANARY" "{self.root}/canary-signals" >/dev/null 2>&1 &'
        if a.launch == "group":
            # Same process group and session as python-sb, not its child.
            self.extra["gc_file"] = self.root / "group-canary"
            head = f'({canary} echo $! > "{self.extra["gc_file"]}"); sleep 0.3; '
            env["RT_CANARY"] = self.CANARY_CODE
        elif a.launch == "child":
            # A child the shell had before it exec'd python-sb: python-sb
            # inherits it as its own child, though it never was sandboxed.
            self.extra["gc_file"] = self.root / "data" / "child-canary.pid"
            head = f'{canary} echo $! > "{self.extra["gc_file"]}"; sleep 0.3; '
            env["RT_CANARY"] = self.CANARY_CODE
        if a.launch == "nobody":
            # An unprivileged user: RLIMIT_NPROC and capabilities as for most users.
            for d in (self.root, self.root / "prog", self.root / "data"):
                os.chmod(d, 0o755)
            os.chmod(self.root / "out", 0o777)
            inner = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *inner]
        if a.launch == "mount":
            inner = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                     'mount --bind "$0" "$1" && shift && exec "$@"', str(self.root / "hidden" / "inner"),
                     str(self.root / "data" / "sub"), *inner]
        return ["sh", "-c", head + tail, "sh", *inner], env

    def start(self) -> None:
        cmd, env = self.command()
        preexec = None
        if self.a.launch == "nofile" and self.mode is not None:
            def preexec() -> None:
                import resource
                resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True, pass_fds=self.extra.get("pass_fds", ()),
                                     preexec_fn=preexec)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc and self.proc.stdout
        for raw in self.proc.stdout:
            with self.cond:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append("\0EOF")
            self.cond.notify_all()

    def wait_line(self, prefix: str, timeout: float = 10) -> str | None:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for l in self.lines:
                    if l.startswith(prefix):
                        return l
                    if l == "\0EOF":
                        return None
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def finish(self) -> None:
        """Wait for the program and its output; past the deadline, kill its group."""
        assert self.proc
        deadline = self.t0 + self.a.timeout
        try:
            self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.failures.append(f"timeout after {self.a.timeout:.0f}s")
            self.kill_group()
            self.proc.wait()
        self.reader.join(timeout=max(0.1, deadline + 3 - time.monotonic()))
        if self.reader.is_alive():
            self.failures.append("output still open (a process outlived python-sb)")
            self.kill_group()
            self.reader.join(timeout=5)
        self.seconds = time.monotonic() - self.t0

    def kill_group(self) -> None:
        if self.proc:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in self.extra.get("strays", []):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def cleanup(self) -> None:
        self.kill_group()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        gc = self.extra.get("gc_file")
        if gc is not None and gc.exists():
            try:
                os.kill(int(gc.read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        for h in self.holding:
            if isinstance(h, int):
                os.close(h)
            else:
                h.close()  # type: ignore[attr-defined]
        self.h.listeners.close(self.canaries)
        for d in ("/tmp", "/dev/shm"):
            for p in Path(d).glob(self.tok["tmp"] + "*"):
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def output(self) -> str:
        with self.cond:
            return "\n".join(l for l in self.lines if l != "\0EOF")


# ---- proofs ------------------------------------------------------------------------------

def shadow_line() -> str | None:
    """The first line of /etc/shadow when the harness can read it (root)."""
    if "shadow" not in _facts:
        try:
            _facts["shadow"] = Path("/etc/shadow").read_text().splitlines()[0].strip() or None
        except (OSError, IndexError):
            _facts["shadow"] = None
    return _facts["shadow"]  # type: ignore[return-value]


def judge(run: Run, rc: int | None) -> tuple[list[str], list[str]]:
    """(breaches, harness errors) of a finished run."""
    out, a, root = run.output, run.a, run.root
    found: list[str] = []
    tokens = {k: v for k, v in run.tok.items() if k != "tmp"}
    tokens["listening port"] = f"RTPORT-{run.ctx['tcp']}-RTPORT"   # rt_sock_diag's line for it
    sl = shadow_line()
    if sl and len(sl) > 8:
        tokens["shadow"] = sl
    for k, t in tokens.items():
        if t in out:
            found.append(f"leak: the {k} canary is in the output")
    for p in (root / "out").rglob("*"):
        try:
            s = p.lstat()
        except OSError:
            continue
        if p.name.startswith("RT-MARKER"):
            found.append(f"marker: {p.relative_to(root)} was created")
        if stat.S_ISCHR(s.st_mode) or stat.S_ISBLK(s.st_mode):
            found.append(f"files: device node {p.relative_to(root)} was created")
        if any(t in p.name for t in tokens.values()):
            found.append(f"leak: a canary names {p.relative_to(root)}")
        if stat.S_ISREG(s.st_mode) and p.name != ".py-sandboxes":
            body = p.read_bytes()[:1 << 20].decode(errors="replace")
            for k, t in tokens.items():
                if t in body:
                    found.append(f"leak: the {k} canary was written to {p.relative_to(root)}")
    for d in ("/tmp", "/dev/shm"):
        for p in Path(d).glob(run.tok["tmp"] + "*"):
            found.append(f"files: {p} was created outside every exposure")
    for b in BREACH_LINES:
        if b in out:
            line = next(l for l in out.splitlines() if b in l)
            found.append(f"breach: {line[:160]}")
    run.h.listeners.settle(run.canaries)
    for c in run.canaries:
        if c.hit:
            found.append(f"net: canary {c.name} accepted {c.accepted}, received {c.data[:40]!r}")
    after = run._tree_state()
    before = run.extra["files_before"]
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:
        found.append("files: changed " + ", ".join(changed[:6]))
    pol = run.extra.get("policy_path")
    if pol is not None and (not pol.exists() or pol.read_bytes() != run.extra["policy_bytes"]):
        found.append("policy: the rule file was changed or removed")
    found += judge_processes(run)
    found += judge_custom(run, out)
    errors: list[str] = []
    finished = "RT-DONE" in out
    if a.done and "alive" in a.needs:
        if not finished or rc != 0:
            found.append(f"alive: the program did not finish (status {rc}): python-sb or its parent died")
    elif a.done and not finished:
        errors.append(f"the attack did not run to the end (status {rc}); last lines: "
                      + " | ".join(out.splitlines()[-4:])[:400])
    errors += [f for f in run.failures]
    return found, errors


def sched_state(pid: int) -> tuple:
    """Scheduling policy, CPU affinity and I/O priority of a process."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    try:
        return (os.sched_getscheduler(pid), tuple(sorted(os.sched_getaffinity(pid))),
                libc.syscall(252, 1, pid))        # ioprio_get(IOPRIO_WHO_PROCESS, pid)
    except OSError:
        return ("gone",)


def judge_processes(run: Run) -> list[str]:
    found = []
    sig = run.root / "canary-signals"
    if sig.exists():
        found.append("proc: canary process got " + sig.read_text().strip().replace("\n", ", "))
    c = run.extra.get("canary")
    if c is not None:
        if c.poll() is not None:
            found.append(f"proc: canary process died ({c.returncode})")
        else:
            if Path(f"/proc/{c.pid}/limits").read_text() != run.extra["canary_limits"]:
                found.append("proc: canary process limits changed")
            if os.getpriority(os.PRIO_PROCESS, c.pid) != run.extra["canary_nice"]:
                found.append("proc: canary process priority changed")
            if sched_state(c.pid) != run.extra["canary_sched"]:
                found.append(f"proc: canary scheduling changed {run.extra['canary_sched']} -> {sched_state(c.pid)}")
            st = Path(f"/proc/{c.pid}/stat").read_text().rsplit(")", 1)[1].split()
            if st[0] in ("T", "t"):
                found.append("proc: canary process stopped")
    gc = run.extra.get("gc_file")
    if gc is not None and gc.exists():
        try:
            pid = int(gc.read_text())
            os.kill(pid, 0)
            st = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if st[0] in ("Z", "X"):
                found.append("proc: process-group canary died")
        except (OSError, ValueError):
            found.append("proc: process-group canary died")
    return found


def judge_custom(run: Run, out: str) -> list[str]:
    found = list(run.extra.get("hook_breaches", []))
    m = re.search(r"^FORKS (\d+)", out, re.M)
    lim = next((int(l.split("=", 1)[1]) for l in run.a.policy if l.startswith("limit-nproc=")), None)
    if m and lim is not None and int(m.group(1)) > lim:
        found.append(f"limit: {m.group(1)} processes started under limit-nproc={lim}")
    if "netstate" in run.a.needs and netns_ready():
        found += netns_check_and_restore()
    return found


def netns_check_and_restore() -> list[str]:
    found = []
    link = subprocess.run(["ip", "-o", "link", "show", "lo"], capture_output=True, text=True).stdout
    if "UP" not in link.split(">")[0]:
        found.append("net: lo was taken down")
        subprocess.run(["ip", "link", "set", "lo", "up"], check=False)
    addrs = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", "lo"], capture_output=True, text=True).stdout
    if "10.77.77.77" in addrs:
        found.append("net: address 10.77.77.77 was added to lo")
        subprocess.run(["ip", "addr", "del", "10.77.77.77/32", "dev", "lo"], check=False)
    return found


# ---- hooks: the harness acting during a run -------------------------------------------------

def pids_of(line: str | None) -> list[int]:
    return [int(x) for x in (line or "").split()[1:] if x.isdigit()]


def host_pids(run: Run, pids: list[int]) -> list[int]:
    """The pids a program printed, as the harness sees them.  Under a layer
    with a pid namespace they are the namespace's: the processes below
    python-sb whose innermost pid (NSpid) is one of them.  A pid not found
    there is a harness failure, never a silent pass."""
    if run.mode not in LAYERS or not run.proc:
        return pids
    children: dict[int, list[int]] = {}
    inner: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            st = (d / "status").read_text()
        except OSError:
            continue
        pp = re.search(r"^PPid:\s*(\d+)", st, re.M)
        ns = re.search(r"^NSpid:\s*(.*)$", st, re.M)
        if not pp or not ns:
            continue
        children.setdefault(int(pp.group(1)), []).append(int(d.name))
        if len(ns.group(1).split()) > 1:
            inner[int(d.name)] = int(ns.group(1).split()[-1])
    below, todo = set(), [run.proc.pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in below:
                below.add(c)
                todo.append(c)
    out = []
    for pid in pids:
        found = [h for h in below if inner.get(h) == pid]
        if len(found) != 1:
            run.failures.append(f"pid {pid} of the program's namespace: {len(found)} processes below python-sb")
        out += found
    return out


def gone(pid: int, within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            st = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if st in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def hook_envaddr(run: Run) -> None:
    """Tell the program where its parent keeps its environment."""
    assert run.proc
    pid, want = run.proc.pid, PYTHON_SB if run.mode else "/bin/sh"
    end = time.monotonic() + 3
    while time.monotonic() < end:
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            break
        if run.mode is None or os.path.samefile(exe, want):
            break
        time.sleep(0.01)
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return
    # Fields 50, 51 of proc_pid_stat(5): env_start, env_end (f[0] is field 3).
    tmp = run.root / "data" / ".parent_env.tmp"
    tmp.write_text(f"{pid} {f[47]} {f[48]}\n")
    tmp.rename(run.root / "data" / "parent_env.txt")


def hook_kill9(run: Run) -> None:
    """SIGKILL python-sb while the program attacks; every pid it named must go."""
    assert run.proc
    line = run.wait_line("RT-READY", 15)
    if line is None:
        run.failures.append("the program never said RT-READY")
        return
    time.sleep(0.4)
    gc = run.wait_line("RT-READY-GC", 0.1)
    pids = host_pids(run, pids_of(line) + pids_of(gc))
    os.kill(run.proc.pid, signal.SIGKILL)
    time.sleep(0.8)          # what the program does now reaches nobody
    for pid in pids:
        if not gone(pid, 5):
            run.extra.setdefault("hook_breaches", []).append(
                f"gone: pid {pid} still runs 5 s after python-sb was killed")
            run.extra.setdefault("strays", []).append(pid)
    run.kill_group()


def hook_killtarget(run: Run) -> None:
    """SIGKILL the program mid-notification; python-sb must end promptly."""
    assert run.proc
    line = run.wait_line("RT-READY", 15)
    if line is None:
        run.failures.append("the program never said RT-READY")
        return
    time.sleep(0.4)
    for pid in host_pids(run, pids_of(line)):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        run.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        run.extra.setdefault("hook_breaches", []).append(
            "sbexit: python-sb still runs 5 s after its program was killed")


def hook_sniff(run: Run) -> None:
    """Talk over loopback (harness to harness) with the sniff canary inside."""
    assert run.proc
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    end = time.monotonic() + 3
    while time.monotonic() < end and run.proc.poll() is None:
        c = socket.create_connection(srv.getsockname())
        s, _ = srv.accept()
        c.sendall(run.tok["sniff"].encode())
        s.recv(100)
        c.close()
        s.close()
        time.sleep(0.03)
    srv.close()


def hook_inbound(run: Run) -> None:
    """The program listens; whatever it got to listen on must be unreachable."""
    line = run.wait_line("RT-LISTENING", 15)
    for tok in (line or "").split()[1:]:
        try:
            if tok.startswith("@"):
                c = socket.socket(socket.AF_UNIX)
                c.settimeout(1)
                c.connect("\0" + tok[1:])
            else:
                host, _, port = tok.rpartition(":")
                c = socket.create_connection((host.strip("[]"), int(port)), timeout=1)
            c.close()
            run.extra.setdefault("hook_breaches", []).append(f"inbound: connected to the program at {tok}")
        except OSError:
            pass


def hook_supsample(run: Run) -> None:
    """Sample python-sb's descriptors and threads while the program runs."""
    assert run.proc
    pid, fds, threads = run.proc.pid, 0, 0
    while run.proc.poll() is None:
        try:
            fds = max(fds, len(os.listdir(f"/proc/{pid}/fd")))
            st = Path(f"/proc/{pid}/status").read_text()
            threads = max(threads, int(re.search(r"^Threads:\s*(\d+)", st, re.M).group(1)))
        except (OSError, AttributeError):
            pass
        time.sleep(0.05)
    run.extra["sampled"] = (fds, threads)
    if run.mode and (fds > 64 or threads > 40):
        run.extra.setdefault("hook_breaches", []).append(
            f"bounded: python-sb reached {fds} descriptors and {threads} threads")


HOOKS: dict[str, Callable[[Run], None]] = {
    "envaddr": hook_envaddr, "kill9": hook_kill9, "killtarget": hook_killtarget, "sniff": hook_sniff,
    "inbound": hook_inbound, "supsample": hook_supsample,
}


# ---- the runner ----------------------------------------------------------------------------

class Harness:
    def __init__(self, group: str) -> None:
        self.group = group
        self.work = Path(tempfile.mkdtemp(prefix=f"rt-{group}-"))
        os.chmod(self.work, 0o755)
        self.listeners = Listeners()
        self.server = Server()
        self.udp_sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # allowed UDP target
        self.udp_sink.bind(("127.0.0.1", 0))
        self.ext_dir: Path | None = None
        only = {x for x in os.environ.get("RT_ONLY", "").split(",") if x}
        self.attacks = [a for a in load_catalogue() if a.group == group and (not only or a.id in only)]
        if any("ext" in a.needs for a in self.attacks):
            self.ext_dir = build_extension(self.work)
        self.verbose = os.environ.get("RT_VERBOSE") == "1"

    def skip_reason(self, a: Attack) -> str | None:
        if "netns" in a.needs and not netns_ready():
            return "needs a private network namespace (root and unshare)"
        if "root" in a.needs and os.geteuid() != 0:
            return "needs root"
        if "ext" in a.needs and not self.ext_dir:
            return "no C compiler or Python.h for the C extension"
        if a.launch == "mount" and (os.geteuid() != 0 or not shutil.which("unshare")):
            return "needs root and unshare(1) for a private mount namespace"
        if a.launch == "nobody" and (os.geteuid() != 0 or not shutil.which("setpriv")):
            return "needs root and setpriv(1) to run as another user"
        return None

    def run_one(self, a: Attack, mode: str | None) -> Outcome:
        run = Run(self, a, mode)
        try:
            run.build()
            run.start()
            if a.hook:
                HOOKS[a.hook](run)
            run.finish()
            rc = run.proc.returncode if run.proc else None
            found, errors = judge(run, rc)
            out = run.output
            if mode is None and found:
                # A control that breached proves the attack works, finished or not
                # (an exec that worked replaced the program).
                return Outcome("breach", found, run.seconds, out)
            if errors:
                return Outcome("error", errors + found, run.seconds, out)
            return Outcome("breach" if found else "held", found, run.seconds, out)
        except Exception as e:  # noqa: BLE001 - a harness error is reported, never passed
            return Outcome("error", [f"harness: {type(e).__name__}: {e}"], 0, run.output)
        finally:
            run.cleanup()

    def main(self) -> int:
        if not os.access(PYTHON_SB, os.X_OK):
            print(f"python-sb not built: {PYTHON_SB}")
            return HARD
        for f in (NATIVE, MARKER_PROG):
            if not f.exists():
                print(f"{f} not built (make check builds it)")
                return HARD
        if not self.attacks:
            print(f"no attacks in group {self.group}")
            return HARD
        t0 = time.monotonic()
        layer = auto_layer(self.work)
        print(f"# os-sandbox=auto here: {layer}")
        # Without Landlock, auto is the supervisor alone: what is a documented
        # residual with os-sandbox=none is one with auto as well.
        self.auto_is_none = not layer.startswith("landlock")
        jobs: list[tuple[Attack, str | None]] = []
        skipped: dict[str, str] = {}
        self.layer_skips = {m: layer_unusable(self.work, m) for m in LAYERS
                            if any(m in a.all_modes for a in self.attacks)}
        for m, why in self.layer_skips.items():
            print(f"# os-sandbox={m}: " + (f"not usable here, skipped: {why}" if why else "usable"))
        for a in self.attacks:
            why = self.skip_reason(a)
            if why:
                skipped[a.id] = why
                continue
            if a.control == "bare":
                jobs.append((a, None))
            jobs += [(a, m) for m in a.all_modes if not self.layer_skips.get(m)]
        results: dict[tuple[str, str | None], Outcome] = {}
        par = [j for j in jobs if not (j[0].serial or "netns" in j[0].needs)]
        ser = [j for j in jobs if j not in par]
        with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("RT_JOBS", "3"))) as ex:
            futs = {ex.submit(self.run_one, a, m): (a.id, m) for a, m in par}
            for f in concurrent.futures.as_completed(futs):
                results[futs[f]] = f.result()
        for a, m in ser:
            results[(a.id, m)] = self.run_one(a, m)
        # A bare control races the machine (an exec not finished when a hook
        # reads /proc, a loaded CPU): one that did not breach is run again,
        # alone, before the attack is called broken.
        for a in self.attacks:
            ctl = results.get((a.id, None))
            if ctl is not None and ctl.verdict != "breach" and "RT-UNSUPPORTED" not in ctl.out:
                results[(a.id, None)] = self.run_one(a, None)
        rc = self.report(results, skipped)
        print(f"# {self.group}: {len(self.attacks)} attacks, {len(jobs)} runs in {time.monotonic() - t0:.1f}s")
        shutil.rmtree(self.work, ignore_errors=True)
        return rc

    def report(self, results: dict, skipped: dict[str, str]) -> int:
        bad = 0
        ran = 0
        for a in self.attacks:
            if a.id in skipped:
                print(f"SKIP   {a.id:5} {a.title}: {skipped[a.id]}")
                continue
            ctl = results.get((a.id, None))
            if ctl is not None and ("RT-UNSUPPORTED" in ctl.out):
                print(f"SKIP   {a.id:5} {a.title}: the kernel lacks it (bare control: "
                      f"{next(l for l in ctl.out.splitlines() if 'RT-UNSUPPORTED' in l)})")
                continue
            ran += 1
            if ctl is not None and ctl.verdict != "breach":
                bad += 1
                print(f"BROKEN {a.id:5} {a.title}: the bare control did not breach ({ctl.verdict}: "
                      f"{'; '.join(ctl.details)[:300]}) - the attack proves nothing")
                self.dump(ctl)
            for m in a.all_modes:
                tag = f"{a.id:5} {m:4}"
                if self.layer_skips.get(m):
                    print(f"SKIP   {tag} {a.title}: os-sandbox={m} is not usable here")
                    continue
                o = results[(a.id, m)]
                if o.verdict == "held":
                    print(f"HELD   {tag} {a.title} ({o.seconds:.1f}s)")
                    if self.verbose:
                        self.dump(o)
                elif o.verdict == "breach" and (m in a.accept or (m == "auto" and self.auto_is_none
                                                                   and "none" in a.accept)):
                    print(f"RESID  {tag} {a.title}: documented residual - {'; '.join(o.details)}")
                elif o.verdict == "breach":
                    bad += 1
                    label = "OPEN  " if a.status == "open" else "BREACH"
                    print(f"{label} {tag} {a.title}: {'; '.join(o.details)}")
                    self.dump(o)
                else:
                    bad += 1
                    print(f"ERROR  {tag} {a.title}: {'; '.join(o.details)}")
                    self.dump(o)
            if a.status == "open" and all(results[(a.id, m)].verdict == "held" for m in a.modes):
                # (the layers are not asked: a pid namespace closes some open entries, X03)
                print(f"NOTE   {a.id:5} marked open in catalogue.txt but held here: {a.reason}")
        if bad:
            return 1
        return 0 if ran else SKIP

    def dump(self, o: Outcome) -> None:
        lines = o.out.splitlines()
        for l in lines[-12 if not self.verbose else None:]:
            print(f"    | {l[:300]}")


def main(group: str) -> None:
    sys.exit(Harness(group).main())

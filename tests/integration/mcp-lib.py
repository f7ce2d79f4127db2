"""Helpers of the MCP sample tests (mcp-complete.py, mcp-partial.py).

Load with ``load_mcp_lib()`` of those files (the name has a dash, as every
file of this area).  What is here:

* a private network namespace with only loopback, so that an address the
  supervisor ought to refuse (10.255.255.1) can never be reached even if it
  does not: the connect then fails at once with ENETUNREACH, no packet leaves
  the machine, and the test fails on the missing refusal instead of hanging;
* an "allowed site" (a loopback HTTP server) and a canary listener that
  must never see a connection;
* an MCP client over stdio: one JSON-RPC 2.0 message per line, every wait
  bounded, every line the server writes kept and checked.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import http.server
import json
import os
import queue
import shutil
import socket
import struct
import subprocess
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

import sbtest

SAMPLE_FILES = ("server.py", "tools.py", ".py-sandboxes", ".py-sandboxes-partial", "README.md")
PAGE = ("<html><head><title>Allowed site</title></head>"
        "<body><h1>Hello from the allowed site</h1><p>loopback only</p></body></html>")
CALL_TIMEOUT = 30.0


# ---- payloads ---------------------------------------------------------------------------------

def escape_to_popen(marker: str) -> str:
    """The subclasses walk of the upstream samples, from empty builtins to
    subprocess.Popen: it creates `marker` when nothing stops it."""
    return ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]"
            ".__init__.__globals__['__builtins__']['__import__']('subprocess')"
            f".Popen(['touch', {marker!r}]).wait()")


# An endless comprehension over itertools.count, reached without builtins.
INFINITE_COMPREHENSION = ("[x for x in [c for c in ().__class__.__base__.__subclasses__() "
                          "if c.__name__ == 'count'][0]()]")
# Arithmetic only (inside eval-syntax=arith), but a number of a billion digits.
HUGE_POWER = "10 ** 10 ** 9"


# ---- a network of our own ----------------------------------------------------------------------

CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000


def _lo_up() -> None:
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, siocgifflags, ifr))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sh", b"lo", flags | iff_up))


def enter_private_netns() -> Optional[str]:
    """Move this (still single-threaded) process into a new network
    namespace with loopback up.  Returns how, or None when it cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) == 0:
        _lo_up()
        return "network namespace"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return None
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        _lo_up()
    except OSError:
        return None
    return "user and network namespaces"


def route_to(addr: str) -> bool:
    """True when the kernel has a route to addr (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect((addr, 9))
            return True
        except OSError as e:
            if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
                return False
            raise


# ---- the allowed site and the canary ---------------------------------------------------------------

class Site:
    """A loopback HTTP server serving PAGE; counts its requests."""

    def __init__(self) -> None:
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                site.hits += 1
                body = PAGE.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.hits = 0
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Canary:
    """A listening socket nobody may reach; connections would queue up
    (the kernel completes the handshake without accept())."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def reached(self) -> bool:
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True

    def close(self) -> None:
        self.sock.close()


# ---- the sample -----------------------------------------------------------------------------------------

def copy_sample(top_srcdir: Path, dst: Path) -> Path:
    """The sample in a scratch directory (the source tree may be read-only)."""
    src = top_srcdir / "contrib" / "samples" / "mcp-server"
    dst.mkdir(parents=True, exist_ok=True)
    for name in SAMPLE_FILES:
        shutil.copy2(src / name, dst / name)
    return dst


# ---- the MCP client -----------------------------------------------------------------------------------

class ProtocolError(AssertionError):
    pass


class McpClient:
    """Drive an MCP server over stdio as a client would."""

    def __init__(self, cmd: List[str], cwd: Path, env: Dict[str, str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self.stderr_file = open(stderr_path, "wb")
        full_env = dict(os.environ)
        full_env.update(env)
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr_file, start_new_session=True)
        self.lines: List[bytes] = []          # everything the server wrote on stdout
        self.sent_ids: List[Any] = []
        self.next_id = 1
        self.q: "queue.Queue[Optional[bytes]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.append(line)
            self.q.put(line)
        self.q.put(None)

    def stderr(self) -> str:
        if not self.stderr_file.closed:
            self.stderr_file.flush()
        return self.stderr_path.read_text(errors="replace")

    def _send(self, msg: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: Optional[dict] = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: Optional[dict] = None, timeout: float = CALL_TIMEOUT) -> dict:
        """Send a request and return its response, within `timeout` seconds;
        the server is killed and ProtocolError raised otherwise."""
        id_ = self.next_id
        self.next_id += 1
        self.sent_ids.append(id_)
        self._send({"jsonrpc": "2.0", "id": id_, "method": method,
                    **({"params": params} if params is not None else {})})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.q.get(timeout=max(left, 0.01))
            except queue.Empty:
                self.kill()
                raise ProtocolError(f"no answer to {method} within {timeout:.0f} s; stderr:\n{self.stderr()[-3000:]}")
            if line is None:
                raise ProtocolError(f"the server closed stdout during {method} (status {self.proc.poll()}); "
                                    f"stderr:\n{self.stderr()[-3000:]}")
            try:
                msg = json.loads(line)
            except ValueError:
                raise ProtocolError(f"not JSON on stdout: {line[:300]!r}")
            if not isinstance(msg, dict) or msg.get("id") != id_:
                raise ProtocolError(f"answer to {method} (id {id_}) expected, got {line[:300]!r}")
            return msg

    def call_tool(self, name: str, arguments: dict, timeout: float = CALL_TIMEOUT) -> tuple:
        """(text, is_error) of a tools/call."""
        msg = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
        if "result" not in msg:
            raise ProtocolError(f"tools/call {name} answered with an error: {msg}")
        res = msg["result"]
        content = res.get("content")
        if not (isinstance(content, list) and content and all(c.get("type") == "text" for c in content)):
            raise ProtocolError(f"tools/call {name}: unexpected content {res!r}")
        return "".join(c["text"] for c in content), bool(res.get("isError"))

    def close(self, timeout: float = CALL_TIMEOUT) -> Optional[int]:
        """End of input: the server must exit by itself."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        finally:
            self.stderr_file.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                self.proc.kill()
            self.proc.wait()

    def stream_errors(self) -> List[str]:
        """Every stdout line must be one JSON-RPC 2.0 response to a request we
        sent, in order, each answered once; nothing else."""
        errors = []
        ids = []
        for n, line in enumerate(self.lines, 1):
            try:
                msg = json.loads(line)
            except ValueError:
                errors.append(f"stdout line {n} is not JSON: {line[:200]!r}")
                continue
            if not line.endswith(b"\n") or line.count(b"\n") != 1:
                errors.append(f"stdout line {n} is not one line")
            if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                errors.append(f"stdout line {n} is not JSON-RPC 2.0: {line[:200]!r}")
                continue
            if ("result" in msg) == ("error" in msg):
                errors.append(f"stdout line {n} needs exactly one of result and error")
            ids.append(msg.get("id"))
        if ids != self.sent_ids:
            errors.append(f"response ids {ids} do not match the request ids {self.sent_ids}")
        return errors


# ---- one session, the same in complete and partial mode --------------------------------------------

INIT_PARAMS = {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "py-sandboxes-tests", "version": "1"}}
INTRANET = "10.255.255.1"


def run_session(client: McpClient, site: Site, canary: Canary, secret: Path, marker: Path,
                intranet: bool) -> Dict[str, Any]:
    """The attack list of the upstream MCP sample, as an MCP client would send
    it.  Returns step -> (text, is_error) or the exception the step raised;
    a step that fails never stops the next ones unless the server is gone."""
    out: Dict[str, Any] = {}

    def step(name: str, fn: Any) -> None:
        if client.proc.poll() is not None and name != "exit":
            out[name] = ProtocolError(f"the server is gone (status {client.proc.poll()})")
            return
        try:
            out[name] = fn()
        except (ProtocolError, OSError) as e:
            out[name] = e

    step("initialize", lambda: client.request("initialize", INIT_PARAMS))
    step("initialized", lambda: client.notify("notifications/initialized"))
    step("tools/list", lambda: client.request("tools/list"))
    step("unknown method", lambda: client.request("resources/list"))
    step("fetch allowed", lambda: client.call_tool("fetch_webpage", {"url": f"http://127.0.0.1:{site.port}/"}))
    step("fetch /etc/passwd", lambda: client.call_tool("fetch_webpage", {"url": "file:///etc/passwd"}))
    step("fetch secret", lambda: client.call_tool("fetch_webpage", {"url": secret.as_uri()}))
    step("fetch canary", lambda: client.call_tool("fetch_webpage", {"url": f"http://127.0.0.1:{canary.port}/"}))
    if intranet:
        step("fetch intranet", lambda: client.call_tool("fetch_webpage", {"url": f"http://{INTRANET}/"}))
    step("eval arith", lambda: client.call_tool("evaluate_expression", {"expression": "(3 + 4) * 2"}))
    step("eval compare", lambda: client.call_tool("evaluate_expression", {"expression": "2 ** 10 > 1000"}))
    step("eval dunder", lambda: client.call_tool("evaluate_expression", {"expression": "().__class__"}))
    step("eval escape", lambda: client.call_tool("evaluate_expression",
                                                 {"expression": escape_to_popen(str(marker))}))
    step("eval infinite", lambda: client.call_tool("evaluate_expression", {"expression": INFINITE_COMPREHENSION}))
    step("eval huge", lambda: client.call_tool("evaluate_expression", {"expression": HUGE_POWER}))
    step("ping", lambda: client.request("ping"))
    step("fetch allowed again",
         lambda: client.call_tool("fetch_webpage", {"url": f"http://127.0.0.1:{site.port}/again"}))
    step("exit", lambda: client.close())
    return out


class SessionChecks:
    """Assertions on a run_session() result, mixed into a unittest.TestCase
    that sets: steps, client, site, canary, secret, marker, intranet, and
    supervisor_lines() (the supervisor's refusal lines seen for the run)."""

    steps: Dict[str, Any]

    def ok(self, name: str) -> Any:
        got = self.steps.get(name)
        if isinstance(got, BaseException) or got is None and name != "initialized":
            self.fail(f"{name}: {got!r}\nserver stderr:\n{self.client.stderr()[-3000:]}")  # type: ignore[attr-defined]
        return got

    def refused(self, name: str) -> str:
        text, is_error = self.ok(name)
        self.assertTrue(is_error, f"{name} was not refused: {text[:500]!r}")  # type: ignore[attr-defined]
        return text

    # -- protocol --------------------------------------------------------------------------------

    def test_protocol(self) -> None:
        init = self.ok("initialize")["result"]
        self.assertEqual(init["protocolVersion"], "2025-06-18")  # type: ignore[attr-defined]
        self.assertIn("tools", init["capabilities"])  # type: ignore[attr-defined]
        names = [t["name"] for t in self.ok("tools/list")["result"]["tools"]]
        self.assertEqual(sorted(names), ["evaluate_expression", "fetch_webpage"])  # type: ignore[attr-defined]
        self.assertEqual(self.ok("unknown method")["error"]["code"], -32601)  # type: ignore[attr-defined]
        self.assertEqual(self.ok("ping"), {"jsonrpc": "2.0", "id": self.ok("ping")["id"], "result": {}})  # type: ignore[attr-defined]

    def test_stdout_stays_json_rpc(self) -> None:
        self.assertEqual(self.client.stream_errors(), [])  # type: ignore[attr-defined]

    def test_server_ends_cleanly(self) -> None:
        self.assertEqual(self.ok("exit"), 0,  # type: ignore[attr-defined]
                         f"stderr:\n{self.client.stderr()[-3000:]}")  # type: ignore[attr-defined]

    # -- fetch_webpage ----------------------------------------------------------------------------

    def test_allowed_fetch_works(self) -> None:
        for name in ("fetch allowed", "fetch allowed again"):
            text, is_error = self.ok(name)
            self.assertFalse(is_error, text)  # type: ignore[attr-defined]
            self.assertIn("Hello from the allowed site", text)  # type: ignore[attr-defined]
        self.assertEqual(self.site.hits, 2)  # type: ignore[attr-defined]

    def test_file_urls_are_refused(self) -> None:
        self.assertNotIn("root:x:0:0", self.refused("fetch /etc/passwd"))  # type: ignore[attr-defined]
        self.assertNotIn("not for the model", self.refused("fetch secret"))  # type: ignore[attr-defined]

    def test_other_loopback_port_is_refused_by_the_supervisor(self) -> None:
        self.refused("fetch canary")
        self.assertFalse(self.canary.reached(), "the canary listener got a connection")  # type: ignore[attr-defined]
        # The Python location ("at tools.py:57 in ...()") sits between the
        # object and the reason when the supervisor knows it.
        want = (f"DENIED connect 127.0.0.1:{self.canary.port} (tcp)",
                f"Connection to [127.0.0.1]:{self.canary.port} DENIED by implicit default policy")
        self.assertTrue(any(all(w in line for w in want) for line in self.supervisor_lines()),  # type: ignore[attr-defined]
                        f"no supervisor refusal {want!r} in:\n" + "\n".join(self.supervisor_lines()))  # type: ignore[attr-defined]

    def test_intranet_is_refused_by_the_supervisor(self) -> None:
        if not self.intranet:  # type: ignore[attr-defined]
            self.skipTest("no private network namespace: an intranet address is never targeted")  # type: ignore[attr-defined]
        self.refused("fetch intranet")
        want = (f"DENIED connect {INTRANET}:80 (tcp)",
                f"Connection to [{INTRANET}]:80 DENIED by explicit rule 'net=DENY|*|10.0.0.0/8|*|OUT'")
        self.assertTrue(any(all(w in line for w in want) for line in self.supervisor_lines()),  # type: ignore[attr-defined]
                        f"the supervisor did not refuse the intranet connect ({want!r}); its lines:\n"
                        + "\n".join(self.supervisor_lines()))  # type: ignore[attr-defined]

    # -- evaluate_expression ------------------------------------------------------------------------

    def eval_mode(self) -> str:
        """"guarded" (eval-* rules in force) or "refused" (dynamic-code)."""
        text, is_error = self.ok("eval arith")
        if not is_error:
            self.assertEqual(text, "14")  # type: ignore[attr-defined]
            return "guarded"
        self.assertIn("dynamic-code", text, f"eval neither computed nor was refused as dynamic-code: {text!r}")  # type: ignore[attr-defined]
        return "refused"

    def test_eval_computes_or_is_refused(self) -> None:
        mode = self.eval_mode()
        text, is_error = self.ok("eval compare")
        if mode == "guarded":
            self.assertEqual((text, is_error), ("True", False))  # type: ignore[attr-defined]
        else:
            self.assertTrue(is_error)  # type: ignore[attr-defined]
        # guarded or refused, never plain eval: a dunder is out of the sub-language
        self.assertNotIn("<class 'tuple'>", self.refused("eval dunder"))  # type: ignore[attr-defined]
        print(f"eval mode: {mode}")

    def test_escape_to_popen_never_runs(self) -> None:
        self.eval_mode()
        text = self.refused("eval escape")
        self.assertFalse(self.marker.exists(), f"the escape ran: {self.marker} exists; tool said {text!r}")  # type: ignore[attr-defined]

    def test_denial_of_service_is_stopped(self) -> None:
        self.eval_mode()
        self.refused("eval infinite")
        self.refused("eval huge")
        self.ok("ping")  # and the server still answers


# ---- fixtures shared by the two tests --------------------------------------------------------------

NETNS: Optional[str] = None  # set by the test before any thread starts


def session_env(site: Site) -> dict:
    # PYTHONPATH: the server must find pysandboxes the way it would once
    # installed; here it comes from the source tree.
    return {"MCP_ALLOWED_PORT": str(site.port), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": str(sbtest.TOP_SRCDIR / "python"), "PYTHON_SB": sbtest.PYTHON_SB}


class Fixture:
    scratch: sbtest.Scratch

    @classmethod
    def make_fixture(cls) -> None:
        cls.scratch = sbtest.Scratch()
        cls.sample = copy_sample(sbtest.TOP_SRCDIR, cls.scratch.dir / "sample")
        cls.secret = cls.scratch.write("secret.txt", "not for the model\n")
        cls.marker = cls.scratch.dir / "escaped"
        cls.site = Site()
        cls.canary = Canary()
        cls.intranet = NETNS is not None and not route_to(INTRANET)

    @classmethod
    def drop_fixture(cls) -> None:
        cls.site.close()
        cls.canary.close()
        cls.scratch.__exit__(None, None, None)


class NegativeControl(Fixture, unittest.TestCase):
    """Without python-sb the payloads do what they say."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.make_fixture()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.drop_fixture()

    def test_unsandboxed_server_leaks_and_escapes(self) -> None:
        c = McpClient([sbtest.PYTHON, "server.py"], self.sample, session_env(self.site),
                      self.scratch.dir / "bare.stderr")
        try:
            c.request("initialize", INIT_PARAMS)
            text, is_error = c.call_tool("fetch_webpage", {"url": self.secret.as_uri()})
            self.assertEqual((text.strip(), is_error), ("not for the model", False))
            text, is_error = c.call_tool("evaluate_expression", {"expression": escape_to_popen(str(self.marker))})
            self.assertFalse(is_error, text)
            self.assertTrue(self.marker.exists(), "the escape payload does not work even unsandboxed")
            self.assertEqual(c.close(), 0)
            self.assertEqual(c.stream_errors(), [])
        finally:
            c.kill()

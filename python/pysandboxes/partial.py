"""Partial mode: only ``@sandbox`` functions run sandboxed (reference §5).

::

    @sandbox
    def tool(x): ...

    with sandboxes():          # or: async with sandboxes(), or pysandboxes.run(main())
        tool(1)                # runs in the worker, under python-sb

The worker is ``python-sb [rules] pysandboxes/_worker.py``: the supervisor and
the kernel layers apply to it exactly as to any program python-sb runs.  It is
reached over a socket pair (its stdout); calls and results are pickled, and
results are decoded by :mod:`pysandboxes.unpickle`.  One worker per process,
shared by nested and repeated ``sandboxes()`` (reference counted), restarted
with ``init_fn`` when it dies, stopped when the last ``sandboxes()`` exits, at
interpreter exit and on SIGINT/SIGTERM/SIGQUIT.
"""
from __future__ import annotations

import asyncio
import atexit
import builtins
import concurrent.futures
import functools
import inspect
import itertools
import os
import pickle
import signal
import socket
import sys
import threading
import types
from typing import Any, Callable, Optional, TypeVar

from . import _agent, _proto, unpickle
from .exceptions import (ConfigSyntaxError, SandBoxBaseExceptionError, SandBoxError,
                         SandBoxProtocolError, new_exception)

__all__ = ["sandboxes", "run", "sandbox", "is_in_sandbox", "RemoteTraceback", "RemoteError"]

F = TypeVar("F", bound=Callable[..., Any])

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
MAX_RESTARTS = 3
CONFIG_NAME = ".py-sandboxes"
_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_in_worker = False          # set by the worker itself
_lock = threading.RLock()
_daemon: Optional["_Daemon"] = None
_refs = 0


def is_in_sandbox() -> bool:
    """True inside python-sb (complete mode or a worker): calls are direct."""
    return _in_worker or _agent.current is not None


class RemoteTraceback(Exception):
    """The worker's traceback, chained as ``__cause__`` of a re-raised exception."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text.rstrip()}\n"""'


class RemoteError(Exception):
    """An exception of a class the caller cannot (or may not) rebuild."""

    def __init__(self, remote_type: str, message: str) -> None:
        super().__init__(f"{remote_type}: {message}")
        self.remote_type = remote_type


# ---- the worker, seen from the caller ------------------------------------------


def _python_sb() -> str:
    found = os.environ.get("PYTHON_SB")
    if not found:
        import shutil

        found = shutil.which("python-sb")
    if not found:
        raise SandBoxError("python-sb not found: set PYTHON_SB or put python-sb on PATH")
    return found


def _find_config(name: Optional[str], caller_globals: dict) -> Optional[str]:
    """Reference §1.3 (API): a bare name is looked for as a resource of the
    calling module's package (nearest package first), then in the current
    directory; a path is used as given."""
    name = name or CONFIG_NAME
    if "/" in name:
        return os.path.abspath(os.path.expanduser(name))
    package = caller_globals.get("__package__") or ""
    while package:
        mod = sys.modules.get(package)
        for d in getattr(mod, "__path__", None) or ():
            candidate = os.path.join(d, name)
            if os.path.isfile(candidate):
                return candidate
        package = package.rpartition(".")[0]
    return os.path.abspath(name)


def _target(fn: Callable) -> tuple:
    """How the worker finds fn: (kind, module or main script, qualified name)."""
    fn = getattr(fn, "__sb_original__", fn)
    qual = getattr(fn, "__qualname__", "")
    if not qual or "<locals>" in qual or "<lambda>" in qual:
        raise TypeError(f"@sandbox needs a module-level function, not {qual or fn!r}")
    module = getattr(fn, "__module__", None)
    if module == "__main__":
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        if spec is not None and spec.name:
            return ("module", spec.name, qual)
        path = getattr(main, "__file__", None)
        if not path:
            raise TypeError(f"{qual}: a @sandbox function of an interactive __main__ cannot be "
                            "imported by the worker; define it in a module")
        return ("path", os.path.abspath(path), qual)
    if not module:
        raise TypeError(f"{qual}: unknown module")
    return ("module", module, qual)


def _exc_class(module: str, qualname: str) -> Optional[type]:
    # Only classes the caller already has: a payload never triggers an import.
    obj: Any = builtins if module == "builtins" else sys.modules.get(module)
    for part in qualname.split("."):
        if obj is None or part.startswith("<"):
            return None
        obj = getattr(obj, part, None)
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return obj
    return None


def _rebuild(desc: dict) -> BaseException:
    """The caller's copy of an exception the worker raised."""
    def data(blob: object) -> Any:
        if not isinstance(blob, bytes):
            return None
        try:
            return unpickle.loads(blob, unpickle.DATA_ONLY)
        except Exception:
            return None

    module, qualname = str(desc.get("module", "")), str(desc.get("qualname", ""))
    message = str(desc.get("message", ""))
    if desc.get("base"):
        exc: BaseException = SandBoxBaseExceptionError(f"{qualname}: {message}" if message else qualname)
    else:
        cls = _exc_class(module, qualname)
        args = data(desc.get("args"))
        args = tuple(args) if isinstance(args, tuple) else (message,)
        exc = RemoteError(f"{module}.{qualname}", message)
        if cls is not None:
            try:
                # A built-in __init__ only stores its arguments; an application's
                # may want others than the ones it stored: skip it.
                builtin_init = not isinstance(cls.__init__, types.FunctionType)
                exc = cls(*args) if builtin_init else new_exception(cls, args)
            except Exception:
                exc = RemoteError(f"{module}.{qualname}", message)
        if isinstance(exc, OSError) and isinstance(desc.get("os"), tuple):
            for attr, value in zip(("errno", "strerror", "filename", "filename2"), desc["os"]):
                # Unset stays unset (an explicit None would show in str()).
                if value is not None and getattr(exc, attr, None) != value:
                    try:
                        setattr(exc, attr, value)
                    except (AttributeError, TypeError):
                        pass
        attrs = desc.get("attrs")
        for key, blob in (attrs.items() if isinstance(attrs, dict) else ()):
            if isinstance(key, str) and not key.startswith("__"):
                try:
                    setattr(exc, key, data(blob))
                except Exception:
                    pass
    denials = desc.get("denials")
    exc.__sandbox_denials__ = [d for d in denials if isinstance(d, str)] if isinstance(denials, list) else []  # type: ignore[attr-defined]
    exc.__cause__ = RemoteTraceback(str(desc.get("traceback", "")))
    return exc


class _Daemon:
    """One worker process and its channel."""

    def __init__(self, init_fn: Optional[Callable], config: Optional[str], envs: Optional[dict],
                 python_args: Optional[list], rules: dict) -> None:
        self.init_target = _target(init_fn) if init_fn is not None else None
        self.config = config
        self.envs = dict(envs or {})
        self.python_args = [str(a) for a in python_args or ()]
        self.rules = rules
        self.mode = str(rules.get("remote-result-mode", "")).replace("_", "-") or None
        guard = rules.get("remote-result-guard")
        self.guard = None if guard is None else str(guard).lower() not in ("false", "0", "none", "off")
        self.ids = itertools.count(1)
        self.pending: dict[int, concurrent.futures.Future] = {}
        self.plock = threading.Lock()
        self.slock = threading.Lock()
        self.state_lock = threading.Lock()
        self.proc: Any = None
        self.sock: Optional[socket.socket] = None
        self.alive = False
        self.closing = False
        self.restarts = 0

    # -- start / stop ------------------------------------------------------------

    def _command(self) -> list:
        cmd = [_python_sb(), f"--python={sys.executable}"]
        if self.config:
            cmd.append(f"--pysandboxes-config={self.config}")
        for key, value in self.rules.items():
            if value is None or value == "":
                cmd.append(f"--{key}")
            else:
                cmd.append(f"--{key}={str(value).lower() if isinstance(value, bool) else value}")
        return cmd + self.python_args + ["-c", _proto.WORKER_COMMAND % _PKG_PARENT]

    def start(self) -> None:
        import subprocess

        parent, child = socket.socketpair()
        env = dict(os.environ)
        env.update({str(k): str(v) for k, v in self.envs.items()})
        try:
            self.proc = subprocess.Popen(self._command(), stdin=subprocess.DEVNULL, stdout=child,
                                         stderr=subprocess.PIPE, env=env, start_new_session=True)
        finally:
            child.close()
        self.sock = parent
        self.stderr_tail: list = []
        self.ready = threading.Event()
        self.pump = threading.Thread(target=self._pump_stderr, name="pysandboxes-stderr", daemon=True)
        self.pump.start()
        try:
            hello = self._handshake()
        except BaseException:
            self.kill()
            raise
        if self.mode is None:
            self.mode = str(hello.get("remote_result_mode") or unpickle.DATA_ONLY)
        if self.guard is None:
            self.guard = hello.get("remote_result_guard") is not False
        self.alive = True
        threading.Thread(target=self._read, name="pysandboxes-reader", daemon=True).start()

    def _pump_stderr(self) -> None:
        """The worker's stderr (and python-sb's) to the caller's sys.stderr;
        the last lines are kept to explain a failed start."""
        proc = self.proc
        for line in iter(proc.stderr.readline, b""):
            text = line.decode("utf-8", "backslashreplace")
            if not self.ready.is_set():
                self.stderr_tail = (self.stderr_tail + [text])[-20:]
            try:
                sys.stderr.write(text)
                sys.stderr.flush()
            except Exception:
                pass

    def _next_frame(self, deadline: float) -> tuple:
        """The next frame during start-up (blocking until deadline)."""
        import time

        assert self.sock is not None
        while not self.frames:
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                raise SandBoxProtocolError("the sandbox worker did not start in time")
            self.sock.settimeout(timeout)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            if not data:
                self._failed_start()
            self.frames.extend(self.reader.feed(data))
        return self.frames.pop(0)

    def _failed_start(self) -> None:
        code = self.proc.wait()
        self.pump.join(timeout=STOP_TIMEOUT)  # every line of its last words
        self.ready.set()
        tail = "".join(self.stderr_tail).strip()
        if code == 255 and tail:
            raise ConfigSyntaxError(tail)
        raise SandBoxProtocolError(f"the sandbox worker exited with status {code} before it was ready"
                                   + (f":\n{tail}" if tail else ""))

    def _handshake(self) -> dict:
        import time

        assert self.sock is not None
        deadline = time.monotonic() + START_TIMEOUT
        buf = b""
        while _proto.MAGIC not in buf:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                raise SandBoxProtocolError("the sandbox worker did not start in time") from None
            if not data:
                self._failed_start()
            buf += data
            if len(buf) > 1 << 20:
                raise SandBoxProtocolError("the sandbox worker sent no greeting")
        self.reader = _proto.Reader()
        self.frames = self.reader.feed(buf[buf.index(_proto.MAGIC) + len(_proto.MAGIC):])
        kind, _cid, payload = self._next_frame(deadline)
        if kind != _proto.HELLO:
            raise SandBoxProtocolError("the sandbox worker did not say hello")
        hello = unpickle.loads(payload, unpickle.DATA_ONLY)
        if not isinstance(hello, dict) or hello.get("version") != 1:
            raise SandBoxProtocolError("the sandbox worker speaks another protocol version")
        init = {"path": [p for p in sys.path if isinstance(p, str)], "init": self.init_target}
        self._send(_proto.INIT, 0, pickle.dumps(init, protocol=pickle.HIGHEST_PROTOCOL))
        kind, _cid, payload = self._next_frame(deadline)
        while kind in (_proto.OUT, _proto.ERR):  # init_fn's prints
            self._replay(kind, payload)
            kind, _cid, payload = self._next_frame(deadline)
        if kind == _proto.EXC:
            raise _rebuild(unpickle.loads(payload, unpickle.DATA_ONLY))  # type: ignore[arg-type]
        if kind != _proto.READY:
            raise SandBoxProtocolError("unexpected frame while the sandbox worker started")
        self.sock.settimeout(None)
        self.ready.set()
        return hello

    def stop(self, graceful: bool = True) -> None:
        self.closing = True
        if graceful:
            with self.plock:
                waiting = list(self.pending.values())
            concurrent.futures.wait(waiting, timeout=STOP_TIMEOUT)
        if self.alive:
            try:
                self._send(_proto.SHUTDOWN, 0)
            except OSError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=STOP_TIMEOUT if graceful else 1.0)
            except Exception:
                self.kill()
        self._close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self) -> None:
        self.alive = False
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
            self.sock = None

    # -- calls ----------------------------------------------------------------------

    def _send(self, kind: int, call_id: int, payload: bytes = b"") -> None:
        data = _proto.frame(kind, call_id, payload)
        with self.slock:
            if self.sock is None:
                raise SandBoxProtocolError("the sandbox worker is not running")
            self.sock.sendall(data)

    def _ensure_running(self) -> None:
        with self.state_lock:
            if self.alive:
                return
            if self.closing:
                raise SandBoxProtocolError("sandboxes() is shutting down")
            if self.restarts >= MAX_RESTARTS:
                raise SandBoxProtocolError(
                    f"the sandbox worker died {self.restarts} times in a row; giving up")
            self.restarts += 1
            self._close()
            self.start()

    def submit(self, fn: Callable, args: tuple, kwargs: dict) -> tuple:
        self._ensure_running()
        payload = pickle.dumps((_target(fn), args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        call_id = next(self.ids)
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self.plock:
            self.pending[call_id] = fut
        try:
            self._send(_proto.CALL, call_id, payload)
        except BaseException:
            with self.plock:
                self.pending.pop(call_id, None)
            raise
        return call_id, fut

    def cancel(self, call_id: int) -> None:
        try:
            self._send(_proto.CANCEL, call_id)
        except (OSError, SandBoxError):
            pass

    # -- the reader thread ----------------------------------------------------------

    def _replay(self, kind: int, payload: bytes) -> None:
        stream = sys.stdout if kind == _proto.OUT else sys.stderr
        try:
            stream.write(payload.decode("utf-8", "backslashreplace"))
            stream.flush()
        except Exception:
            pass

    def _complete(self, kind: int, call_id: int, payload: bytes) -> None:
        with self.plock:
            fut = self.pending.pop(call_id, None)
        if fut is None:
            return
        try:
            if kind == _proto.RESULT:
                value = unpickle.loads(payload, self.mode or unpickle.DATA_ONLY, self.guard is not False)
                self.restarts = 0
                fut.set_result(value)
                return
            desc = unpickle.loads(payload, unpickle.DATA_ONLY)
            exc = _rebuild(desc if isinstance(desc, dict) else {})
            self.restarts = 0
        except BaseException as e:  # a refused payload is the caller's exception
            exc = e
        fut.set_exception(exc)

    def _read(self) -> None:
        sock, proc = self.sock, self.proc
        reason = "the sandbox worker ended"
        try:
            for frame in self.frames:
                self._handle(*frame)
            while sock is not None:
                data = sock.recv(1 << 16)
                if not data:
                    break
                for frame in self.reader.feed(data):
                    self._handle(*frame)
        except _proto.ProtocolError as e:
            reason = f"the sandbox worker broke the protocol: {e}"
            self.kill()
        except OSError:
            pass
        self.alive = False
        code = proc.poll() if proc is not None else None
        if code is None and proc is not None and not self.closing:
            try:
                code = proc.wait(timeout=STOP_TIMEOUT)
            except Exception:
                self.kill()
                code = proc.poll()
        with self.plock:
            orphans, self.pending = self.pending, {}
        for fut in orphans.values():
            fut.set_exception(SandBoxProtocolError(f"{reason} (status {code})"))

    def _handle(self, kind: int, call_id: int, payload: bytes) -> None:
        if kind in (_proto.OUT, _proto.ERR):
            self._replay(kind, payload)
        elif kind in (_proto.RESULT, _proto.EXC):
            self._complete(kind, call_id, payload)
        else:
            raise _proto.ProtocolError(f"unexpected frame type {kind}")


# ---- the public API ----------------------------------------------------------------

_old_handlers: dict = {}


def _on_signal(sig: int, frame: Any) -> None:
    with _lock:
        daemon = _daemon
    if daemon is not None:
        daemon.kill()
    previous = _old_handlers.get(sig, signal.SIG_DFL)
    if callable(previous):
        previous(sig, frame)
    elif previous != signal.SIG_IGN:
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)


def _install_signals() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGINT", "SIGTERM", "SIGQUIT"):
        sig = getattr(signal, name, None)
        if sig is not None and sig not in _old_handlers:
            try:
                _old_handlers[sig] = signal.signal(sig, _on_signal)
            except (ValueError, OSError):
                pass


def _restore_signals() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, previous in list(_old_handlers.items()):
        try:
            if signal.getsignal(sig) is _on_signal:
                signal.signal(sig, previous)
        except (ValueError, OSError, TypeError):
            pass
        _old_handlers.pop(sig, None)


@atexit.register
def _stop_at_exit() -> None:
    global _daemon, _refs
    with _lock:
        daemon, _daemon, _refs = _daemon, None, 0
    if daemon is not None:
        daemon.stop(graceful=False)


class sandboxes:
    """Run the ``@sandbox`` functions called inside this block in the worker.

    ``sandboxes(init_fn=None, sandboxes_config=None, *, envs=None,
    python_args=None, graceful_shutdown=True, **rules)``: ``rules`` are extra
    rule lines (``os_sandbox="landlock"`` is ``--os-sandbox=landlock``),
    refused by python-sb under a ``learn=false`` lock.  Sync (``with``) and
    async (``async with``).  Nested and repeated blocks share one worker.
    """

    def __init__(self, init_fn: Optional[Callable] = None, sandboxes_config: Optional[str] = None, *,
                 envs: Optional[dict] = None, python_args: Optional[list] = None,
                 graceful_shutdown: bool = True, **rules: Any) -> None:
        self.init_fn = init_fn
        # In complete mode nothing starts (and frame introspection may be refused).
        caller_globals = {} if is_in_sandbox() else sys._getframe(1).f_globals
        self.config = _find_config(sandboxes_config, caller_globals)
        self.envs = envs
        self.python_args = python_args
        self.graceful = graceful_shutdown
        self.rules = {k.replace("_", "-"): v for k, v in rules.items()}
        self.entered = False

    def __enter__(self) -> Optional[_Daemon]:
        global _daemon, _refs
        if is_in_sandbox():
            return None  # complete mode: @sandbox calls are direct
        with _lock:
            if _daemon is None:
                daemon = _Daemon(self.init_fn, self.config, self.envs, self.python_args, self.rules)
                daemon.start()
                _daemon = daemon
                _install_signals()
            _refs += 1
            self.entered = True
            return _daemon

    def __exit__(self, *exc: object) -> None:
        global _daemon, _refs
        if not self.entered:
            return
        self.entered = False
        with _lock:
            _refs -= 1
            if _refs > 0:
                return
            daemon, _daemon = _daemon, None
            _restore_signals()
        if daemon is not None:
            daemon.stop(graceful=self.graceful)

    async def __aenter__(self) -> Optional[_Daemon]:
        return await asyncio.get_running_loop().run_in_executor(None, self.__enter__)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.__exit__)


def run(coro: Any, *, init_fn: Optional[Callable] = None, sandboxes_config: Optional[str] = None,
        envs: Optional[dict] = None, python_args: Optional[list] = None,
        graceful_shutdown: bool = True, **rules: Any) -> Any:
    """``asyncio.run(coro)`` inside ``sandboxes(...)``."""
    caller_globals = {} if is_in_sandbox() else sys._getframe(1).f_globals
    config = sandboxes_config or _find_config(None, caller_globals)

    async def main() -> Any:
        async with sandboxes(init_fn, config, envs=envs, python_args=python_args,
                             graceful_shutdown=graceful_shutdown, **rules):
            return await coro
    return asyncio.run(main())


def _active() -> Optional[_Daemon]:
    if is_in_sandbox():
        return None
    with _lock:
        return _daemon if _refs > 0 else None


def sandbox(fn: F) -> F:
    """Run fn in the worker when called inside ``sandboxes()``; directly
    otherwise (and in complete mode).  fn must be a module-level function the
    worker can import; arguments and result must be picklable."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            daemon = _active()
            if daemon is None:
                return await fn(*args, **kwargs)
            call_id, fut = daemon.submit(fn, args, kwargs)
            try:
                return await asyncio.wrap_future(fut)
            except asyncio.CancelledError:
                daemon.cancel(call_id)
                raise
        wrapper: Any = async_wrapper
    else:
        @functools.wraps(fn)
        def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
            daemon = _active()
            if daemon is None:
                return fn(*args, **kwargs)
            call_id, fut = daemon.submit(fn, args, kwargs)
            try:
                exc = fut.exception()  # waits
            except KeyboardInterrupt:
                daemon.cancel(call_id)
                raise
            if exc is not None:
                raise exc  # the traceback starts here, the worker's is its __cause__
            return fut.result()
        wrapper = sync_wrapper
    wrapper.__sb_original__ = fn
    del wrapper.__wrapped__  # nothing to unwrap to reach the unsandboxed function
    return wrapper  # type: ignore[no-any-return]

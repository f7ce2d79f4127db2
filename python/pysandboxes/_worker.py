"""The partial-mode worker: runs ``@sandbox`` functions inside python-sb.

Started by :mod:`pysandboxes.partial` as ``python-sb [rules] -c COMMAND``
(``COMMAND``: :data:`pysandboxes._bootstrap.WORKER_COMMAND`, which imports this
module from the agent's own package) with its stdout connected to the
caller by a socket pair.  It takes that
stream for the frames of :mod:`pysandboxes._proto` and points file descriptor
1 at stderr, so that nothing else the program writes can corrupt a frame.

Start: HELLO (the worker's settings, before any application code ran), then
INIT from the caller (its sys.path, the main script, ``init_fn``); the agent's
guards are armed (the worker's own start-up is framework, not program) and
READY (or EXC) answers.  Calls: CALL -> OUT/ERR (the call's prints, captured
per call, also per asyncio task) then RESULT or EXC.  Synchronous functions
run one at a time on the main thread, outside any event loop (they may use
``asyncio.run``); coroutine functions run concurrently on the worker's loop.
"""
from __future__ import annotations

import os
import sys

# Everything the worker needs is imported now, before the guards are armed:
# the worker's own needs are never charged to the program.
import asyncio
import contextvars
import importlib
import importlib.util
import inspect
import io
import linecache  # noqa: F401  (traceback formatting)
import pickle
import select
import socket
import threading
import traceback

from . import _agent, _proto
from .exceptions import sandbox_denials
from .guards.imports import user_imports

_current: contextvars.ContextVar = contextvars.ContextVar("pysandboxes_call", default=None)
FLUSH_AT = 8192


class _Call:
    """Output buffers of one call."""

    def __init__(self, worker: "Worker", call_id: int) -> None:
        self.worker = worker
        self.id = call_id
        self.bufs: dict[int, list[str]] = {_proto.OUT: [], _proto.ERR: []}
        self.sizes = {_proto.OUT: 0, _proto.ERR: 0}

    def write(self, kind: int, text: str) -> None:
        self.bufs[kind].append(text)
        self.sizes[kind] += len(text)
        if "\n" in text or self.sizes[kind] >= FLUSH_AT:
            self.flush(kind)

    def flush(self, kind: int | None = None) -> None:
        for k in (kind,) if kind is not None else (_proto.OUT, _proto.ERR):
            if self.bufs[k]:
                text = "".join(self.bufs[k])
                self.bufs[k].clear()
                self.sizes[k] = 0
                self.worker.send(k, self.id, text.encode("utf-8", "backslashreplace"))


class _Stream(io.TextIOBase):
    """sys.stdout/sys.stderr of the worker: a call's writes go to its caller."""

    def __init__(self, kind: int, real) -> None:
        self.kind = kind
        self.real = real

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.real.fileno()

    def write(self, text: str) -> int:
        call = _current.get()
        if call is None:
            return self.real.write(text)
        call.write(self.kind, str(text))
        return len(text)

    def flush(self) -> None:
        call = _current.get()
        if call is not None:
            call.flush(self.kind)
        else:
            self.real.flush()


def _describe(exc: BaseException) -> dict:
    """What the caller needs to rebuild exc: never the object itself (the
    caller decodes every piece as plain data)."""
    def blob(value: object) -> bytes | None:
        try:
            return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return None

    attrs = {}
    for k, v in getattr(exc, "__dict__", {}).items():
        if isinstance(k, str) and not k.startswith("__"):
            b = blob(v)
            if b is not None:
                attrs[k] = b
    desc = {
        "module": type(exc).__module__,
        "qualname": type(exc).__qualname__,
        "message": str(exc),
        "args": blob(exc.args),
        "attrs": attrs,
        "traceback": _format(exc),
        "denials": sandbox_denials(exc),
        "base": not isinstance(exc, Exception),
    }
    if isinstance(exc, OSError):
        desc["os"] = (exc.errno, exc.strerror, exc.filename, exc.filename2)
    return desc


_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _format(exc: BaseException) -> str:
    """The traceback text without the agent's own frames (the worker's
    dispatch, the guards' wrappers), in the exception and its chain."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    seen = set()
    todo = [te]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        t.stack = traceback.StackSummary.from_list(
            [f for f in t.stack if not f.filename.startswith(_PKG)])
        todo += [x for x in (t.__cause__, t.__context__) if x is not None]
        todo += list(getattr(t, "exceptions", None) or ())
    return "".join(te.format())


def _resolve(target: tuple):
    """The function named by a caller's target spec."""
    kind, where, qualname = target
    with user_imports():
        if kind == "path":
            mod = sys.modules.get("__mp_main__")
            if mod is None or getattr(mod, "__file__", None) != where:
                mod = _load_main(where)
        else:
            mod = importlib.import_module(where)
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return getattr(obj, "__sb_original__", obj)


def _load_main(path: str):
    """The caller's main script, as multiprocessing's spawn loads it: under
    the name __mp_main__ (its `if __name__ == "__main__":` part stays off),
    also registered as __main__ so that pickles naming __main__ resolve."""
    spec = importlib.util.spec_from_file_location("__mp_main__", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the caller's main script {path!r}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["__mp_main__"] = mod
    spec.loader.exec_module(mod)
    sys.modules["__main__"] = mod
    return mod


class Worker:
    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.sock.setblocking(True)
        self.lock = threading.Lock()
        self.reader = _proto.Reader()
        self.loop = asyncio.new_event_loop()
        self.tasks: dict[int, asyncio.Task] = {}
        self.queue: list[int] = []  # synchronous calls, in arrival order
        self.sync_calls: dict[int, tuple] = {}
        self.init: dict | None = None
        self.stopping = False

    # -- transport --------------------------------------------------------------

    def send(self, kind: int, call_id: int, payload: bytes = b"") -> None:
        data = _proto.frame(kind, call_id, payload)
        with self.lock:
            self.sock.sendall(data)

    def _recv(self) -> None:
        try:
            data = self.sock.recv(1 << 16)
        except InterruptedError:
            return
        if not data:
            self.stopping = True
            return
        for kind, call_id, payload in self.reader.feed(data):
            self._dispatch(kind, call_id, payload)

    def _wait_frame(self) -> None:
        select.select([self.sock], [], [])
        self._recv()

    # -- frames -----------------------------------------------------------------

    def _dispatch(self, kind: int, call_id: int, payload: bytes) -> None:
        if kind == _proto.CALL:
            try:
                target, args, kwargs = pickle.Unpickler(io.BytesIO(payload)).load()
                fn = _resolve(target)
            except BaseException as e:
                self.send(_proto.EXC, call_id, pickle.dumps(_describe(e)))
                return
            if inspect.iscoroutinefunction(fn):
                task = self.loop.create_task(self._run_async(call_id, fn, args, kwargs))
                self.tasks[call_id] = task
                task.add_done_callback(lambda t, cid=call_id: self._task_done(cid))
                return
            self.queue.append(call_id)
            self.sync_calls[call_id] = (fn, args, kwargs)
        elif kind == _proto.CANCEL:
            task = self.tasks.get(call_id)
            if task is not None:
                task.cancel()
        elif kind == _proto.SHUTDOWN:
            self.stopping = True
        if self.loop.is_running() and (self.queue or self.stopping):
            self.loop.stop()

    def _task_done(self, call_id: int) -> None:
        self.tasks.pop(call_id, None)
        if not self.tasks and self.loop.is_running():
            self.loop.stop()

    # -- calls --------------------------------------------------------------------

    def _finish(self, call: _Call, result: object = None, exc: BaseException | None = None) -> None:
        call.flush()
        if exc is None:
            try:
                payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as e:
                exc = TypeError(f"the result of a @sandbox function cannot be pickled: {e}")
            else:
                if len(payload) <= _proto.MAX_FRAME:
                    self.send(_proto.RESULT, call.id, payload)
                    return
                exc = ValueError(f"the result of a @sandbox function is too large ({len(payload)} bytes)")
        self.send(_proto.EXC, call.id, pickle.dumps(_describe(exc)))

    def run_sync(self, call_id: int, fn, args, kwargs) -> None:
        call = _Call(self, call_id)
        token = _current.set(call)
        try:
            with user_imports():
                result = fn(*args, **kwargs)
        except BaseException as e:
            _current.reset(token)
            self._finish(call, exc=e)
            if isinstance(e, KeyboardInterrupt):
                raise
            return
        _current.reset(token)
        self._finish(call, result)

    async def _run_async(self, call_id: int, fn, args, kwargs) -> None:
        call = _Call(self, call_id)
        _current.set(call)  # the task's own context: other tasks are not affected
        try:
            with user_imports():
                result = await fn(*args, **kwargs)
        except BaseException as e:
            self._finish(call, exc=e)
            return
        self._finish(call, result)

    def run_target(self, call_id: int, target: tuple) -> None:
        """Run init_fn (sync or async) as call `call_id`."""
        fn = _resolve(target)
        if inspect.iscoroutinefunction(fn):
            call = _Call(self, call_id)

            async def init() -> None:
                _current.set(call)
                with user_imports():
                    await fn()
                call.flush()
            self.loop.run_until_complete(init())
        else:
            call = _Call(self, call_id)
            token = _current.set(call)
            try:
                with user_imports():
                    fn()
            finally:
                _current.reset(token)
                call.flush()

    # -- life ---------------------------------------------------------------------

    def start(self) -> None:
        agent = _agent.current
        rr = (agent.rules.get("remote_result") if agent is not None else None) or {}
        hello = {"version": 1, "pid": os.getpid(), "agent": agent is not None,
                 "remote_result_mode": rr.get("mode", "data-only"),
                 "remote_result_guard": rr.get("guard", True) is not False}
        with self.lock:
            self.sock.sendall(_proto.MAGIC)
        self.send(_proto.HELLO, 0, pickle.dumps(hello))
        while self.init is None and not self.stopping:
            self._wait_init()
        if self.stopping or self.init is None:
            return
        init = self.init
        sys.path[:] = [p for p in init.get("path", ()) if isinstance(p, str)]
        if agent is not None:
            agent.arm()
        try:
            if init.get("init") is not None:
                self.run_target(0, init["init"])
        except BaseException as e:
            self.send(_proto.EXC, 0, pickle.dumps(_describe(e)))
            self.stopping = True
            return
        self.send(_proto.READY, 0)

    def _wait_init(self) -> None:
        select.select([self.sock], [], [])
        try:
            data = self.sock.recv(1 << 16)
        except InterruptedError:
            return
        if not data:
            self.stopping = True
            return
        for kind, _cid, payload in self.reader.feed(data):
            if kind == _proto.INIT:
                self.init = pickle.Unpickler(io.BytesIO(payload)).load()
            elif kind == _proto.SHUTDOWN:
                self.stopping = True

    def serve(self) -> None:
        while not self.stopping:
            if self.tasks:
                self.loop.add_reader(self.sock.fileno(), self._recv)
                try:
                    self.loop.run_forever()
                finally:
                    self.loop.remove_reader(self.sock.fileno())
            else:
                self._wait_frame()
            while self.queue:
                call_id = self.queue.pop(0)
                fn, args, kwargs = self.sync_calls.pop(call_id)
                self.run_sync(call_id, fn, args, kwargs)
        for task in list(self.tasks.values()):
            task.cancel()
        if self.tasks:
            self.loop.run_until_complete(asyncio.gather(*self.tasks.values(), return_exceptions=True))


def main() -> None:
    fd = os.dup(1)
    os.dup2(2, 1)  # stray writes to fd 1 land on stderr, never in a frame
    os.set_inheritable(fd, False)
    worker = Worker(fd)
    sys.stdout = _Stream(_proto.OUT, sys.stdout)
    sys.stderr = _Stream(_proto.ERR, sys.stderr)
    from . import partial

    partial._in_worker = True
    worker.start()
    worker.serve()

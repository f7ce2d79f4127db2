"""Running an evaluation: inline, or in a worker thread the caller can give up on.

The helpers check the deadline themselves, so the timeout holds inline.  A
worker adds one thing: the caller gets control back at the deadline even
when the evaluation is stuck in a call that released the GIL (a blocking
wait in an object the program supplied).  Such a worker is abandoned and
counted until it ends; above ``eval-max-leaked-threads`` new evaluations are
refused.  Workers are reused (two wait at most), started with ``_thread``
(the supervisor decides whether the interpreter may create threads: when it
refuses, evaluations run inline from then on).
"""
from __future__ import annotations

import os as _os
from time import monotonic as _now

import _thread
from _contextvars import copy_context as _copy_context

from . import _base, _exc

GRACE = 0.25            # seconds the caller waits past the deadline for the worker to stop
MAX_IDLE_WORKERS = 2
_tls = _base._tls
_stack = _base.stack


class _Job:
    __slots__ = ("ev", "fn", "ctx", "result", "exc", "done", "finished", "leaked")

    def __init__(self, ev, fn, ctx) -> None:
        self.ev, self.fn, self.ctx = ev, fn, ctx
        self.result = self.exc = None
        self.done = _thread.allocate_lock()
        self.done.acquire()
        self.finished = self.leaked = False


class _Worker:
    __slots__ = ("wake", "job")

    def __init__(self) -> None:
        self.wake = _thread.allocate_lock()
        self.wake.acquire()
        self.job = None


_pool_lock = _thread.allocate_lock()
_idle: list = []
_leaked = 0
threads_enabled = True


def _after_fork() -> None:
    """Workers do not survive fork(): the child starts with an empty pool."""
    global _pool_lock, _leaked
    _pool_lock = _thread.allocate_lock()
    _idle.clear()
    _leaked = 0


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork)


def leaked_threads() -> int:
    """Workers still running an evaluation whose caller gave up on them."""
    return _leaked


def _execute(ev, fn):
    """Run fn as evaluation ev on this thread; an interruption that the
    evaluated code swallowed is raised anyway."""
    stack = _stack()
    stack.append(ev)
    ev.active = True
    try:
        result = fn()
    except BaseException as e:
        if ev.interrupted and not isinstance(e, _exc.cls.EvalInterrupted):
            raise _exc.interrupted(ev.reason) from e
        raise
    finally:
        stack.pop()
        ev.finish()
    if ev.interrupted:
        raise _exc.interrupted(ev.reason)
    return result


def _worker_main(w: _Worker) -> None:
    global _leaked
    while True:
        w.wake.acquire()
        job, w.job = w.job, None
        if job is None:
            return
        try:
            job.result = job.ctx.run(_execute, job.ev, job.fn)
        except BaseException as e:
            job.exc = e
        with _pool_lock:
            job.finished = True
            if job.leaked:
                _leaked -= 1
            keep = len(_idle) < MAX_IDLE_WORKERS
            if keep:
                _idle.append(w)
        job.done.release()
        if not keep:
            return


def _take_worker():
    global threads_enabled
    with _pool_lock:
        if _idle:
            return _idle.pop()
    w = _Worker()
    try:
        _thread.start_new_thread(_worker_main, (w,))
    except (RuntimeError, OSError):
        threads_enabled = False  # the sandbox refuses threads: run inline from now on
        return None
    return w


def _abandon(job: _Job) -> bool:
    """Count the job's worker as leaked unless it finished meanwhile."""
    global _leaked
    with _pool_lock:
        if job.finished:
            return False
        job.leaked = True
        _leaked += 1
        return True


def run(ev, fn, threaded: bool):
    """Run fn (which executes the rewritten code) under ev's budgets."""
    p = ev.p
    if _leaked > p.max_leaked_threads:  # runaway workers still burn the CPU: no new evaluation
        raise _exc.interrupted(f"eval-max-leaked-threads={p.max_leaked_threads}")
    if not threaded or not threads_enabled or getattr(_tls, "stack", None):
        return _execute(ev, fn)
    w = _take_worker()
    if w is None:
        return _execute(ev, fn)
    job = _Job(ev, fn, _copy_context())
    w.job = job
    w.wake.release()
    try:
        # An evaluation without a time budget has an infinite deadline; the
        # lock takes at most TIMEOUT_MAX (OverflowError beyond).
        done = job.done.acquire(True, min(max(ev.deadline - _now(), 0.0) + GRACE, _thread.TIMEOUT_MAX))
        if not done:
            ev.interrupt(ev.timeout_rule)
            done = job.done.acquire(True, GRACE)
    except BaseException:
        ev.interrupt(ev.timeout_rule)
        _abandon(job)
        raise
    if not done:
        if _abandon(job):
            raise _exc.interrupted(ev.reason)
        job.done.acquire()
    if job.exc is not None:
        e, job.exc = job.exc, None
        raise e
    return job.result

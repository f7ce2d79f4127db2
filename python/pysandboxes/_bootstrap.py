"""Start the agent inside an interpreter launched by python-sb.

Called by the private ``sitecustomize`` (python/bootstrap) during ``site``
start-up, before the user's own ``sitecustomize``/``usercustomize`` and
before ``__main__``.  Guards are installed here and *armed* by the audit
events CPython raises right before it runs the program (``cpython.run_*``):
everything the interpreter and ``site`` did before is framework start-up.
"""
from __future__ import annotations

import builtins
import io
import os
import sys

import _thread

from . import _agent, guards
from .guards import api, dns, imports

ENV_FD = "PYSANDBOXES_AGENT_FD"

# Raised by CPython right before the program's own code (Modules/main.c).
_ARMING_EVENTS = ("cpython.run_command", "cpython.run_module", "cpython.run_file",
                  "cpython.run_stdin", "cpython.run_startup")
# The partial-mode worker arms itself once it is ready to serve calls.
WORKER_MARK = _agent.WORKER_MARK


def _fatal(message: str) -> None:
    # The program must not run without the guards its policy asked for.
    try:
        sys.stderr.write(f"python-sb: the in-interpreter agent could not start: {message}\n")
        sys.stderr.flush()
    finally:
        os._exit(255)


def _make_hook(handlers: dict, agent: _agent.Agent):
    get = handlers.get

    def arm(event: str, args: tuple) -> None:
        if event == "cpython.run_module" and args:
            if args[0] == "pysandboxes._worker":
                return
            agent.main_module = str(args[0])  # runpy finds it: judged as the program's
        if event == "cpython.run_command" and args and str(args[0]).startswith(WORKER_MARK):
            return
        agent.arm()

    for event in _ARMING_EVENTS:
        handlers[event] = None

    # One hook for every guard: audit hooks cannot be removed, and each event
    # costs one dict lookup when no guard wants it.
    def audit_hook(event: str, args: tuple) -> None:
        handler = get(event, False)
        if handler is False:
            return
        if handler is None:
            if not agent.armed:
                arm(event, args)
            return
        exc = handler(args)
        if exc is not None:
            raise exc

    return audit_hook


def _install_eval_guard(agent: _agent.Agent) -> None:
    """eval/exec/compile: refused as dynamic-code (the API guard's wrappers),
    unguarded when python-api allows all three, or run in the declared
    sub-language when eval-* rules are present (the guard then takes the
    builtins over from the API guard)."""
    section = agent.rules.get("eval") or {}
    api_rules = agent.rules.get("api") or {}
    allowed = all((api_rules.get(q) or {}).get("allow") is True
                  for q in ("builtins.eval", "builtins.exec", "builtins.compile"))
    # Learning runs evaluations in the widened sub-language and reports what
    # they needed (reference §3), so that the learned file holds eval-* rules
    # rather than the escape hatch python-api=ALLOW:builtins.eval.
    if not section.get("present") and (agent.mode != "learn" or allowed):
        return  # no eval-* rule: the API guard's dynamic-code doors decide alone
    cats = agent.rules.get("categories") or {}
    threads = bool((cats.get("threads") or {}).get("granted"))
    send = agent.channel.send if agent.channel else None

    def load() -> None:
        from . import evalguard, exceptions

        evalguard.install(section, mode=agent.mode, dynamic_code_allowed=allowed, send=send, exc=exceptions,
                          threads=threads)

    if section.get("present"):
        load()  # its rules are checked now: a mistake in them stops the start
    else:
        _learning_doors(load)


def _learning_doors(load) -> None:
    """Learning without eval-* rules: eval, exec and compile get doors that
    load the eval guard (`load`) on the first call it must see, one from the
    program rather than from the standard library's namedtuple, dataclasses
    or typing, which it lets through anyway.  Loading it costs 2-3 ms, at
    every start of a learning run otherwise; a program that never evaluates
    a string never pays it."""
    guards.builtins_at_start = dict(builtins.__dict__)
    orig_eval, orig_exec, orig_compile = (api.original(getattr(builtins, n)) for n in ("eval", "exec", "compile"))
    loaded: list = []
    loading: list = []  # the thread loading it
    lock = _thread.allocate_lock()

    def hooks():
        if not loaded:
            with lock:
                if not loaded:
                    loading.append(_thread.get_ident())
                    try:
                        load()
                        from .evalguard import hooks

                        loaded.append(hooks)
                    finally:
                        loading.clear()
        return loaded[0]

    def guarded(frame) -> bool:
        if loaded:
            return True
        if loading and loading[0] == _thread.get_ident():
            return False  # an evaluation while the guard loads (a program's audit hook): not learned
        return frame is None or not guards.library_file(frame.f_code.co_filename)

    def eval(source, globals=None, locals=None):  # noqa: A001 - stands for the builtin
        frame = guards.frame_at(1)
        if guarded(frame):
            return hooks().eval_from(frame, source, globals, locals)
        return guards.run_plain(orig_eval, "eval", source, globals, locals, frame, orig_compile)

    def exec(source, globals=None, locals=None, *, closure=None):  # noqa: A001
        frame = guards.frame_at(1)
        if guarded(frame):
            return hooks().exec_from(frame, source, globals, locals, closure)
        return guards.run_plain(orig_exec, "exec", source, globals, locals, frame, orig_compile, closure)

    def compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):  # noqa: A001
        frame = guards.frame_at(1)
        if guarded(frame):
            return hooks().compile_from(frame, source, filename, mode, flags, dont_inherit, optimize, **kwargs)
        if not dont_inherit and frame is not None:
            flags |= frame.f_code.co_flags & guards.FUTURE_MASK
        return orig_compile(source, filename, mode, flags, True, optimize, **kwargs)

    for door, orig in ((eval, orig_eval), (exec, orig_exec), (compile, orig_compile)):
        door.__name__ = door.__qualname__ = orig.__name__
        door.__module__ = "builtins"
        door.__doc__ = orig.__doc__
        door.__sb_qualname__ = "builtins." + orig.__name__
        api._originals[door] = orig
        setattr(builtins, orig.__name__, door)


def _eval_outside_guard(agent: _agent.Agent) -> bool:
    """True when the supervisor judges the imports of eval code (src/sup_attr.c,
    `judge_eval`): enforce mode with eval-* rules or a dynamic-code grant."""
    cats = agent.rules.get("categories") or {}
    return agent.enforcing and bool((agent.rules.get("eval") or {}).get("present")
                                    or (cats.get("dynamic-code") or {}).get("granted"))


def _wrap_open(orig, convert, first: str):
    # Every argument passed as given: the original's own signature decides
    # (os.open(path=...), open(file=...)); `first` names the path parameter.
    def open(*args, **kwargs):
        try:
            return orig(*args, **kwargs)
        except OSError as exc:
            file = args[0] if args else kwargs.get(first)
            if file is None or isinstance(file, int):
                raise
            new = convert(exc, file, False)
            if new is None:
                raise
            raise new from None
    open.__name__ = open.__qualname__ = orig.__name__
    open.__doc__ = orig.__doc__
    open.__module__ = getattr(orig, "__module__", None)
    open.__wrapped__ = orig  # type: ignore[attr-defined]  # inspect.signature() shows the original's
    # Like the built-in it stands for, and unlike a Python function, it must
    # not become a method when a class keeps it (`class C: opener = open`,
    # then self.opener(path), as CPython's test_io does): a staticmethod
    # (callable since 3.10) is called straight from C, adds no frame for
    # frame_at() to skip, and gives the function itself when read from a
    # class.  Pickling open itself no longer works; nothing in the sandbox
    # needs that.
    door = staticmethod(open) if sys.version_info >= (3, 10) else open
    api._originals[door] = orig
    return door


def _wrap_sock(orig, convert):
    def method(self, address):
        try:
            return orig(self, address)
        except OSError as exc:
            new = convert(exc, address, True)
            if new is None:
                raise
            raise new from None
    method.__name__ = method.__qualname__ = orig.__name__
    method.__doc__ = orig.__doc__
    api._originals[method] = orig
    return method


def _install_refusal_notes(agent: _agent.Agent, finder: imports.Finder, now: bool) -> None:
    """open(), os.open() and socket connect()/bind() raise the Rule...Error of
    a refusal the supervisor left a note about (guards/refusals.py, the
    conversion, loaded when one of them first fails)."""
    converter: list = []

    def convert(exc: OSError, obj: object, address: bool) -> OSError | None:
        if not converter:
            from .guards import refusals

            converter.append(refusals.Converter(agent))
        return converter[0].for_address(exc, obj) if address else converter[0].for_path(exc, obj)

    if now:
        from .guards import refusals  # noqa: F401
    wrapped_open = _wrap_open(builtins.open, convert, "file")
    builtins.open = wrapped_open
    if io.open is not wrapped_open:
        io.open = wrapped_open
    os.open = _wrap_open(os.open, convert, "path")

    def socket_loaded(module) -> None:
        cls = getattr(module, "socket", None)
        if not isinstance(cls, type):
            return
        for name in ("connect", "bind"):
            current = getattr(cls, name, None)
            if current is not None and current not in api._originals:
                setattr(cls, name, _wrap_sock(current, convert))

    finder.on_loaded("socket", socket_loaded)


def install(agent: _agent.Agent) -> None:
    """Install every guard the rules and the mode call for.

    What the agent needs only when something is refused (its exceptions,
    the conversion of refusal notes) it loads on first use, not here.  Where
    the supervisor judges the imports of eval code, though, it would also
    judge (and refuse) those the agent makes for a call made from eval code:
    they are loaded now instead."""
    eager = _eval_outside_guard(agent)
    if eager:
        from . import exceptions  # noqa: F401
    handlers: dict = {}
    finder = imports.Finder(agent)
    finder.install(handlers)
    api.ApiGuard(agent, finder).install(handlers)
    _install_eval_guard(agent)
    dns.install(agent)
    if agent.mode == "learn":
        from . import env

        env.install(agent)
    if agent.enforcing and agent.channel is not None:
        _install_refusal_notes(agent, finder, eager)
    writable = agent.rules.get("writable")
    if isinstance(writable, list):
        # Learning and audit refuse no write: a directory is kept only if
        # this uid could not write it bare (never as root); the repeated
        # stats of one import go in every mode.
        from . import _importstat

        if _importstat.supported():
            if agent.enforcing:
                _importstat.ImportStats(writable).install()
            else:
                # The trees learning never writes into a policy (src/learn.c,
                # never_learned): kept even for root.
                kept = tuple({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)})
                _importstat.ImportStats(writable, by_mode=True, kept=kept).install()
    sys.addaudithook(_make_hook(handlers, agent))
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=agent.after_fork)


def start() -> None:
    """Connect to the supervisor and install the guards (no-op outside python-sb)."""
    fd_text = os.environ.pop(ENV_FD, None)
    if fd_text is None or _agent.current is not None:
        return
    try:
        channel = _agent.Channel(int(fd_text))
        rules = channel.read_rules()
    except (ValueError, _agent.ChannelError) as e:
        _fatal(str(e))
        return
    agent = _agent.Agent(rules, channel)
    try:
        install(agent)
    except Exception as e:  # a bug here must not leave the program unguarded
        _fatal(f"{type(e).__name__}: {e}")
    _agent.current = agent

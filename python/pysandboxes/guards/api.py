"""``python-api=``: the sensitive-function registry (reference §2.7).

The supervisor resolves the rules (specificity, DENY winning ties) and sends
every registered function with its verdict; this module enforces the verdicts
inside the interpreter:

* where CPython raises an audit event for the call (``os.system``,
  ``subprocess.Popen``, ``ctypes.dlopen``, ``sys._getframe``...), the audit
  hook judges it; audit hooks cannot be removed and see references taken
  before the guard was installed;
* everywhere else a wrapper replaces the function at the name the registry
  gives (``os.popen``, ``pickle.loads``, ``threading.Thread.start``...),
  in modules already loaded and, through the import finder, in modules that
  load later;
* ``builtins.eval/exec/compile`` get wrappers that keep the caller's
  namespace (``_make_dynamic``), and the ``exec``/``compile`` events catch calls
  that bypass them.

Each door is judged on its own ("an import right is never a call right";
delegation chains cross several doors).  Exemptions are in doc/agent-protocol.md.

This module must never use ``from __future__`` imports: the guarded
``eval``/``exec`` below call the builtins from their own frames, and a
string compiled there would inherit those flags.
"""
import builtins
import sys

from .. import _agent
from . import AGENT, APP, FUTURE_MASK, STDLIB, THIRD_PARTY, busy, classify, frame_at, with_futures

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..exceptions import RuleApiPermissionError

# Audit events that stand for registered functions: event -> (first version, members).
EVENT_DOORS: "dict[str, tuple[tuple[int, int], tuple[str, ...]]]" = {
    "os.system": ((3, 8), ("os.system", "posix.system", "nt.system")),
    "os.exec": ((3, 8), ("os.execv", "os.execve", "posix.execv", "posix.execve", "nt.execv", "nt.execve")),
    "os.posix_spawn": ((3, 8), ("os.posix_spawn", "os.posix_spawnp", "posix.posix_spawn",
                                "posix.posix_spawnp")),
    "os.fork": ((3, 8), ("os.fork", "posix.fork")),
    "os.forkpty": ((3, 8), ("os.forkpty", "posix.forkpty")),
    "os.startfile": ((3, 8), ("os.startfile",)),
    "_winapi.CreateProcess": ((3, 8), ("_winapi.CreateProcess",)),
    "subprocess.Popen": ((3, 8), ("subprocess.Popen",)),
    "os.kill": ((3, 8), ("os.kill", "posix.kill", "nt.kill")),
    "os.killpg": ((3, 8), ("os.killpg", "posix.killpg")),
    "signal.pthread_kill": ((3, 8), ("signal.pthread_kill", "_signal.pthread_kill")),
    "resource.setrlimit": ((3, 8), ("resource.setrlimit",)),
    "resource.prlimit": ((3, 8), ("resource.prlimit",)),
    "_thread.start_new_thread": ((3, 12), ("_thread.start_new_thread", "_thread.start_new",
                                           "threading._start_new_thread")),
    "_thread.start_joinable_thread": ((3, 13), ("_thread.start_joinable_thread",
                                                "threading._start_joinable_thread")),
    "ctypes.dlopen": ((3, 8), ("ctypes.CDLL",)),
    "ctypes.string_at": ((3, 8), ("ctypes.string_at",)),
    "ctypes.wstring_at": ((3, 8), ("ctypes.wstring_at",)),
    "sys._getframe": ((3, 8), ("sys._getframe",)),
    "sys._getframemodulename": ((3, 12), ("sys._getframemodulename",)),
    "sys._current_frames": ((3, 8), ("sys._current_frames",)),
    "sys._current_exceptions": ((3, 10), ("sys._current_exceptions",)),
    "sys.settrace": ((3, 9), ("sys.settrace",)),
    "sys.setprofile": ((3, 9), ("sys.setprofile",)),
    "sys.addaudithook": ((3, 8), ("sys.addaudithook",)),
    "sys.monitoring.register_callback": ((3, 12), ("sys.monitoring.register_callback",)),
    "sys.remote_exec": ((3, 14), ("sys.remote_exec",)),
    "gc.get_objects": ((3, 8), ("gc.get_objects",)),
    "gc.get_referrers": ((3, 8), ("gc.get_referrers",)),
    "gc.get_referents": ((3, 8), ("gc.get_referents",)),
}

# Categories whose doors the standard library may pass on the program's behalf
# (logging and typing read frames; namedtuple, dataclasses and importlib
# compile and execute code).  Dynamic code may also come from installed
# packages (reference §7: only the application's own call sites are guarded).
STDLIB_EXEMPT = frozenset({"introspection", "dynamic-code"})

# wrapper -> original, to unwrap twins (threading._start_new_thread is
# _thread.start_new_thread) and never wrap twice.
_originals: dict = {}


def original(fn):
    """The function a wrapper of this module replaced (fn itself otherwise)."""
    return _originals.get(fn, fn)


# -- guarded eval, exec and compile -------------------------------------------
#
# Wrappers that behave like the builtins.  A Python wrapper changes two things
# the builtins take from their *caller's* frame: the default namespace
# (``eval(s)`` sees the caller's globals and locals) and the ``from
# __future__`` flags strings are compiled with.  These wrappers take both from
# the caller explicitly.

_compile = builtins.compile  # the original, for the wrappers' own compiles


def _namespace(args, kwargs, frame):
    """(args, kwargs) with the caller's globals/locals filled in where the
    builtin would have used them."""
    g = args[0] if args else kwargs.get("globals")
    if g is not None or frame is None:
        return args, kwargs
    loc = args[1] if len(args) > 1 else kwargs.get("locals")
    if loc is None:
        loc = frame.f_locals
        if type(loc) is not dict:
            loc = dict(loc)  # 3.13+: the builtin sees a snapshot, not the write-through proxy
    kwargs = {k: v for k, v in kwargs.items() if k not in ("globals", "locals")}
    return (frame.f_globals, loc) + tuple(args[2:]), kwargs


def _make_dynamic(name, orig, qual, cat, judge):
    """The guarded replacement of builtins.<name>."""
    if name == "compile":
        def compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):
            frame = frame_at(1)
            exc = judge(qual, cat, frame)
            if exc is not None:
                raise exc
            if not dont_inherit and frame is not None:
                flags |= frame.f_code.co_flags & FUTURE_MASK
            return orig(source, filename, mode, flags, True, optimize, **kwargs)
        wrapper = compile
    else:
        mode = "eval" if name == "eval" else "exec"

        def run(source, *args, **kwargs):
            frame = frame_at(1)
            exc = judge(qual, cat, frame)
            if exc is not None:
                raise exc
            args, kwargs = _namespace(args, kwargs, frame)
            return orig(with_futures(source, mode, frame, _compile), *args, **kwargs)
        wrapper = run
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = "builtins"
    wrapper.__doc__ = orig.__doc__
    wrapper.__sb_qualname__ = qual
    return wrapper


def _importlib_originals() -> None:
    """importlib runs each module's code through ``exec`` and compiles a
    source without bytecode through ``compile``, names it looks up in the
    builtins at each call.  The wrappers let the standard library through
    (STDLIB_EXEMPT) after a frame lookup and a judgement, about 7 us a module
    (a tenth of a bare import of a small one).  importlib gets the originals
    as globals of its own instead, only where the ``exec`` and ``compile``
    events are judged: they stand behind any call of the originals, through
    this reference too."""
    bx = sys.modules.get("_frozen_importlib_external")
    if bx is None:
        return
    for name in ("exec", "compile"):
        current = getattr(builtins, name)
        if bx.__dict__.get(name, current) is current:
            setattr(bx, name, original(current))


class ApiGuard:
    def __init__(self, agent: _agent.Agent, finder) -> None:
        self.agent = agent
        self.finder = finder
        registry = agent.rules.get("api") or {}
        self.category: dict[str, str] = {}
        self.order: dict[str, int] = {}  # registry position, for _group()
        self.allow: dict[str, bool] = {}
        self.explicit_deny: set = set()
        for qual, d in registry.items():
            if not isinstance(d, dict) or not isinstance(qual, str):
                continue
            self.order[qual] = len(self.order)
            self.category[qual] = str(d.get("category", ""))
            self.allow[qual] = d.get("allow") is True
            if d.get("allow") is not True and d.get("rule"):
                self.explicit_deny.add(qual)
        self.pending: dict[str, list[str]] = {}  # module name -> quals to wrap

    # -- decisions --------------------------------------------------------------

    def judge(self, qual: str, cat: str, frame) -> "RuleApiPermissionError | None":
        """A call of a door the rules do not allow, made from `frame`: the
        exception to raise (enforcing), or None.  The caller raises it, so
        that tracebacks end at the door rather than deep in the agent."""
        ag = self.agent
        if not ag.armed or frame is None:
            return None
        kind = classify(frame.f_code.co_filename)
        if kind == AGENT:
            return None  # the agent itself, or a wrapper forwarding a call it judged
        if cat in STDLIB_EXEMPT and (kind == STDLIB or kind == THIRD_PARTY and cat == "dynamic-code"):
            return None
        who = None
        f = frame
        while f is not None:
            code = f.f_code
            k = classify(code.co_filename)
            if k == APP:
                who = f
                break
            if k == STDLIB and code.co_name == "<module>":
                return None  # a standard module initialising itself (ctypes dlopen()s at import)
            f = f.f_back
        who = who or frame
        if ag.enforcing:
            from ..exceptions import RuleApiPermissionError

            ag.report("api", qual, "denied", who, category=cat)
            return RuleApiPermissionError(qual, cat)
        ag.report("api", qual, "would-deny", who, category=cat)
        return None

    def _group(self, members: "tuple[str, ...]") -> "tuple[str, str, bool] | None":
        """(reported name, category, allowed) of an event's registered members;
        the name reported is the one listed first in the registry."""
        category = self.category
        present = [q for q in members if q in category]
        if not present:
            return None
        allowed = any(self.allow[q] for q in present) and not any(q in self.explicit_deny for q in present)
        first = min(present, key=self.order.__getitem__) if len(present) > 1 else present[0]
        return first, category[first], allowed

    # -- installation -------------------------------------------------------------

    def install(self, hooks: dict) -> None:
        covered: set = set()
        version = sys.version_info[:2]
        for event, (since, members) in EVENT_DOORS.items():
            if version < since:
                continue
            covered.update(members)
            group = self._group(members)
            if group is None or group[2]:
                continue
            hooks[event] = self._event_handler(event, group[0], group[1])
        for qual, cat in self.category.items():
            if self.allow[qual] or qual in covered:
                continue
            if qual.startswith("builtins.") and cat == "dynamic-code":
                self._wrap_dynamic(qual)
                continue
            self._watch(qual)
        self._dynamic_events(hooks)
        # Registered only now: a module already loaded is wrapped at once,
        # with every function of it the registry names.
        for modname in list(self.pending):
            self.finder.on_loaded(modname, self._module_loaded)

    def _event_handler(self, event: str, qual: str, cat: str):
        judge = self.judge
        if event == "sys._getframe":
            def on_getframe(args: tuple) -> "RuleApiPermissionError | None":
                if busy():  # the agent's own frame lookup
                    return None
                return judge(qual, cat, frame_at(2))
            return on_getframe

        def on_event(args: tuple) -> "RuleApiPermissionError | None":
            return judge(qual, cat, frame_at(2))
        return on_event

    def _wrap_dynamic(self, qual: str) -> None:
        name = qual.partition(".")[2]
        orig = getattr(builtins, name, None)
        if orig is None:
            return
        wrapper = _make_dynamic(name, original(orig), qual, self.category[qual], self.judge)
        _originals[wrapper] = original(orig)
        setattr(builtins, name, wrapper)

    def _dynamic_events(self, hooks: dict) -> None:
        """Calls that bypass the wrappers (a reference taken before they were
        installed) still raise `exec` and `compile`.  Those events do not
        tell eval from exec (eval of a string raises both), so they are
        judged only when none of the three is allowed."""
        doors = ("builtins.eval", "builtins.exec", "builtins.compile")
        if not all(d in self.category and not self.allow[d] for d in doors):
            return
        judge = self.judge
        for event, door in (("exec", "builtins.exec"), ("compile", "builtins.compile")):
            def on_dynamic(args: tuple, door: str = door) -> "RuleApiPermissionError | None":
                return judge(door, "dynamic-code", frame_at(2))
            hooks[event] = on_dynamic
        _importlib_originals()


    def _watch(self, qual: str) -> None:
        parts = qual.split(".")
        for i in range(1, len(parts)):
            self.pending.setdefault(".".join(parts[:i]), []).append(qual)

    def _module_loaded(self, module) -> None:
        name = getattr(module, "__name__", "")
        for qual in self.pending.get(name, ()):
            self._wrap_in(module, name, qual)

    def _wrap_in(self, module, modname: str, qual: str) -> bool:
        path = qual[len(modname) + 1:].split(".")
        owner = module
        try:
            for attr in path[:-1]:
                owner = getattr(owner, attr)
            target = getattr(owner, path[-1])
        except AttributeError:
            return False  # not on this interpreter, or defined in a deeper module
        cat = self.category[qual]
        attr = path[-1]
        if isinstance(target, type):
            # A class: judge its construction (its own __init__).
            if "__init__" not in target.__dict__:
                return False
            owner, attr = target, "__init__"
            target = target.__dict__["__init__"]
        if getattr(target, "__sb_qualname__", None) == qual:
            return True  # wrapped already (a reload found the wrapper)
        raw = owner.__dict__.get(attr) if isinstance(owner, type) else None
        if isinstance(raw, (staticmethod, classmethod)):
            replacement = type(raw)(self._wrapper(qual, cat, original(raw.__func__)))
        else:
            replacement = self._wrapper(qual, cat, original(target))
        try:
            setattr(owner, attr, replacement)
        except (AttributeError, TypeError):
            return False  # a C type: only an audit event could guard it
        return True

    def _wrapper(self, qual: str, cat: str, orig):
        agent = self.agent
        judge = self.judge

        def wrapper(*args, **kwargs):
            if agent.armed:
                exc = judge(qual, cat, frame_at(1))
                if exc is not None:
                    raise exc
            return orig(*args, **kwargs)

        try:  # a function or a builtin: one go (start-up wraps dozens)
            wrapper.__module__, wrapper.__name__ = orig.__module__, orig.__name__
            wrapper.__qualname__, wrapper.__doc__ = orig.__qualname__, orig.__doc__
        except (AttributeError, TypeError):
            for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
                try:
                    setattr(wrapper, attr, getattr(orig, attr))
                except (AttributeError, TypeError):
                    pass
        wrapper.__sb_qualname__ = qual  # type: ignore[attr-defined]
        _originals[wrapper] = orig
        return wrapper

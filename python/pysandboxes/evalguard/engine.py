"""The pipeline of one guarded evaluation: parse, check, rewrite, compile
(cached), build the namespace, run under budgets, report.

Namespaces (reference §7, ``eval-namespace``):

* ``adaptive`` (default): globals the caller passes are honoured (in place,
  as CPython does), but a missing ``__builtins__`` is filled from
  ``eval-call``, never with CPython's full automatic injection; a bare
  ``eval(e)`` sees only the ``eval-call`` builtins, not the caller's
  globals and locals.  Risky names in a supplied context are reported once
  per call site.
* ``closed``: the caller's globals and locals are ignored; the namespace is
  built from ``eval-call`` alone.
* ``caller``: everything the caller passes is honoured and the rewrite is
  skipped (debugging; the static check still applies).

:func:`guarded_eval` always builds its namespace from ``eval-call`` plus the
``names`` it is given.
"""
from __future__ import annotations

import __future__
import ast
import builtins as _b
import types
import warnings
import weakref

from ..guards import FUTURE_MASK
from . import _exc, checker, rewrite, runner, runtime
from .config import SandboxContextWarning, state
from .rules import Profile

_ONLY_AST = ast.PyCF_ONLY_AST
_CACHE_MAX = 512
_orig_compile = runtime._ORIGINALS["compile"]
_orig_eval = runtime._ORIGINALS["eval"]
_orig_exec = runtime._ORIGINALS["exec"]


def guard_for(profile: Profile, learn: bool) -> runtime.Guard:
    g = profile.cache.get(learn)
    if g is None:
        g = profile.cache[learn] = runtime.Guard(profile, learn, state.dynamic)
    return g


class Compiled:
    """One source, checked and compiled for one profile (cached)."""

    __slots__ = ("code", "analysis", "hard", "soft", "text", "profile", "learn", "result_sink", "trivial",
                 "__weakref__")

    def __init__(self, text: str, profile: Profile, learn: bool) -> None:
        self.text = text
        self.profile = profile
        self.learn = learn
        self.code = None
        self.analysis: checker.Analysis | None = None
        self.hard: list = []   # violations no rule can lift
        self.soft: list = []   # violations a rule would lift (learned, or refused when enforcing)
        self.result_sink = False
        self.trivial = False   # reads no name and calls nothing: never worth a thread


_cache: dict = {}
# id(code) -> (weak reference to the code object, its check).  By identity:
# code objects compare equal by content, whatever file they came from.
_blessed: dict = {}


def _bless(code, comp: "Compiled") -> None:
    key = id(code)

    def gone(ref, key=key, table=_blessed) -> None:
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]
    _blessed[key] = (weakref.ref(code, gone), comp)


def _text(source) -> str:
    if isinstance(source, str):
        return source
    try:
        return bytes(source).decode("utf-8")
    except UnicodeDecodeError:
        return bytes(source).decode("latin-1")


def _nesting_error(e: BaseException) -> bool:
    if isinstance(e, (RecursionError, MemoryError)):
        return True
    msg = str(getattr(e, "msg", "") or e)
    return "too many nested" in msg or "too complex" in msg or "nested too deeply" in msg


def _parse(source, filename: str, mode: str, flags: int):
    return _orig_compile(source, filename, mode, _ONLY_AST | (flags & ~_ONLY_AST), True)


def _finish(comp: Compiled, tree, filename: str, mode: str, flags: int, optimize: int, rewrite_it: bool,
            wrap_names: bool = False) -> None:
    try:
        if rewrite_it:
            tree = rewrite.inject(tree, comp.profile.max_alloc, wrap_names,
                                  bool(flags & __future__.annotations.compiler_flag))
        comp.code = _orig_compile(tree, filename, mode, flags & ~_ONLY_AST, True, optimize)
        comp.trivial = not comp.code.co_names and not any(isinstance(c, types.CodeType)
                                                           for c in comp.code.co_consts)
    except (RecursionError, MemoryError) as e:
        comp.hard.append(checker.depth_violation(comp.text, e))
        comp.code = None
    except SyntaxError as e:
        if not _nesting_error(e):
            raise
        comp.hard.append(checker.depth_violation(comp.text, e))
        comp.code = None


def compile_source(source, mode: str, profile: Profile, learn: bool, *, flags: int = 0, filename: str | None = None,
                   optimize: int = -1, result_sink: bool = False, rewrite_it: bool = True,
                   wrap_names: bool = False) -> Compiled:
    """Check and compile `source` (cached).  `mode` is a compile() mode; with
    result_sink, an exec source whose last statement is an expression hands
    its value to the evaluation (guarded_eval)."""
    filename = filename or profile.label
    key = (source, mode, id(profile), learn, flags, filename, optimize, result_sink, rewrite_it, wrap_names)
    comp = _cache.get(key)
    if comp is not None and comp.profile is profile:
        return comp
    text = _text(source)
    comp = Compiled(text, profile, learn)
    try:
        tree = _parse(source, filename, mode, flags)
    except SyntaxError as e:
        if not _nesting_error(e):
            raise
        comp.hard.append(checker.depth_violation(text, e))
        tree = None
    except (RecursionError, MemoryError) as e:
        comp.hard.append(checker.depth_violation(text, e))
        tree = None
    if tree is not None:
        analysis = checker.analyse(tree, profile, text)
        comp.analysis = analysis
        for v in analysis.violations:
            (comp.soft if v.learnable else comp.hard).append(v)
        if not comp.hard and (learn or not comp.soft):
            if result_sink and isinstance(tree, ast.Module) and tree.body and isinstance(tree.body[-1], ast.Expr):
                last = tree.body[-1]
                last.value = ast.Call(func=ast.Name(id="__sb_result__", ctx=ast.Load()), args=[last.value],
                                      keywords=[])
                comp.result_sink = True
            _finish(comp, tree, filename, mode, flags, optimize, rewrite_it, wrap_names)
    if comp.code is not None:
        _bless(comp.code, comp)
    if len(_cache) >= _CACHE_MAX:
        for k in list(_cache)[: _CACHE_MAX // 2]:
            _cache.pop(k, None)
    _cache[key] = comp
    return comp


def blessed(code) -> Compiled | None:
    """The check of a code object made by the guarded compile(), or None."""
    entry = _blessed.get(id(code))
    if entry is not None and entry[0]() is code:
        return entry[1]
    return None


# ---------------------------------------------------------------------------
# refusals


def reject(comp_text: str, profile: Profile, violations: list, frame) -> BaseException:
    """The EvalSyntaxRejected for violations (reported to the supervisor)."""
    headline, blocks, first = checker.report(profile.label, comp_text, violations, profile.name)
    lines = comp_text.splitlines()
    text = lines[first.lineno - 1] if 0 < first.lineno <= len(lines) else ""
    observed: dict = {}
    for v in violations:
        if v.learnable:
            observed.setdefault(v.key, set()).add(v.token)
    state.reporter.denied(profile.name, frame, observed, reason="" if observed else first.message)
    return _exc.syntax_rejected(headline, blocks, first.lineno, first.col + 1, text, profile.label)


def _context_violations(comp: Compiled, profile: Profile, supplied) -> list:
    """Free names the code reads from the builtins without eval-call."""
    out = []
    analysis = comp.analysis
    if analysis is None:
        return out
    seen = set()
    for items, what in ((analysis.free_calls, "call to"), (analysis.free_loads, "name")):
        for name, node in items:
            if name in supplied or name in seen or name not in runtime._ORIGINALS:
                continue
            if name.startswith("__") or profile.call.allows(name):
                continue
            seen.add(name)
            out.append(checker.Violation(node, f"{what} {name!r} is not allowed", "eval-call", name,
                                         warning=checker._CALL_WARNING.get(name, "")))
    return out


# ---------------------------------------------------------------------------
# namespaces


_STRONG_MODULES = frozenset({"os", "posix", "nt", "subprocess", "importlib", "ctypes", "socket", "_socket",
                             "sys", "builtins", "shutil", "pickle", "marshal", "gc", "inspect"})
_SCALARS = (int, float, complex, str, bytes, bool, type(None))
_HELP = {"strong": "the evaluated code can reach everything it exposes",
         "weak": "it runs code outside the sub-language"}
_graded: set = set()


def grade(value) -> str:
    """``strong`` (a module, a capability builtin, a callable of os/subprocess...),
    ``weak`` (other callables and objects), or ``""`` (data)."""
    if isinstance(value, types.ModuleType):
        return "strong"
    if callable(value):
        if id(value) in _CAPABILITY_IDS or getattr(value, "__name__", "") in runtime.CAP_NAMES | {"open"}:
            return "strong"
        module = getattr(value, "__module__", "") or ""
        return "strong" if module.partition(".")[0] in _STRONG_MODULES else "weak"
    if isinstance(value, _SCALARS):
        return ""
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        items = value.values() if isinstance(value, dict) else value
        return "" if all(isinstance(i, _SCALARS) for i in items) else "weak"
    return "weak"


_CAPABILITY_IDS = frozenset(id(runtime._ORIGINALS[n]) for n in runtime.CAP_NAMES | {"open"}
                            if n in runtime._ORIGINALS)


def _grade_context(profile: Profile, frame, mappings) -> bool:
    """Report the risky names of a caller-supplied context once per call site."""
    pyloc, site = state.reporter.where(frame)
    if (profile.name, site) in _graded:
        return True
    if len(_graded) < 65536:
        _graded.add((profile.name, site))
    findings = []
    for mapping in mappings:
        if mapping is None:
            continue
        for name, value in list(mapping.items()):
            if not isinstance(name, str) or name.startswith(checker.RESERVED_PREFIX):
                continue
            if name == "__builtins__":
                if value is _b or value is _b.__dict__:
                    findings.append({"name": name, "grade": "strong", "what": "the full builtins"})
                continue
            g = grade(value)
            if g:
                what = "module" if isinstance(value, types.ModuleType) else "value"
                findings.append({"name": name, "grade": g, "what": what})
    for f in findings:
        msg = (f"eval() context provides {f['what']} {f['name']!r} at {site or '?'}\n"
               f"    {_HELP['strong' if f['grade'] == 'strong' else 'weak']}\n"
               f"    acknowledge with: eval-call={f['name']}        (or use eval-namespace=closed)")
        try:
            warnings.warn_explicit(msg, SandboxContextWarning, frame.f_code.co_filename if frame else "<eval>",
                                   frame.f_lineno if frame else 0)
        except Exception:
            pass
    state.reporter.context(profile.name, frame, findings)
    return True


def _keys(mapping) -> set:
    if mapping is None:
        return set()
    if isinstance(mapping, types.ModuleType):
        mapping = mapping.__dict__
    try:
        return set(mapping.keys())
    except Exception:
        return set()


def _map_names(guard: runtime.Guard, names) -> dict:
    out = {}
    for k, v in dict(names).items():
        if not isinstance(k, str):
            raise TypeError("names: keys must be strings")
        if k.startswith(checker.RESERVED_PREFIX) or k == "__builtins__":
            raise ValueError(f"names: {k!r} cannot be supplied (reserved by the eval guard)")
        out[k] = guard.cap(v)
    return out


# ---------------------------------------------------------------------------
# evaluating


def _new_evaluation(guard: runtime.Guard) -> runtime.Evaluation:
    """An evaluation with its deadline; nested in another, it keeps the
    outer deadline when that one comes first."""
    ev = runtime.Evaluation(guard, runtime._now() + guard.profile.timeout)
    outer = runtime.current()
    if outer is not None and outer.deadline < ev.deadline:
        ev.deadline = outer.deadline
        ev.timeout_rule = outer.timeout_rule
    return ev


def supplied_names(profile: Profile, g, l, names, wrapper: bool) -> set:
    """Names the caller's own namespace provides (calls of them need no eval-call)."""
    if wrapper:
        return _keys(names)
    if profile.namespace == "closed":
        return set()
    if g is None:
        return _keys(l)
    return _keys(g) | _keys(l) | _keys(g.get("__builtins__") if isinstance(g, dict) else None)


def run_compiled(comp: Compiled, kind: str, g, l, frame, ctx: list, *, names=None, wrapper=False, closure=None):
    """Run a checked code object with the namespace its call asks for; `ctx`
    are the context violations (recorded when learning)."""
    profile = comp.profile
    learn = comp.learn
    guard = guard_for(profile, learn)
    context_site = False
    if wrapper:
        ns = {"__builtins__": guard.builtins}
        if names:
            ns.update(_map_names(guard, names))
        loc = None
    elif profile.namespace == "closed" or g is None:
        ns = {"__builtins__": guard.builtins}
        loc = None if profile.namespace == "closed" else l
        if loc is not None:
            context_site = _grade_context(profile, frame, (loc,))
    else:
        if not isinstance(g, dict):
            raise TypeError(f"globals must be a dict, not {type(g).__name__}")
        if "__builtins__" not in g:
            g["__builtins__"] = dict(guard.builtins)
        ns, loc = g, l
        context_site = _grade_context(profile, frame, (g, l))
    if ns.get("__builtins__") is guard.builtins and profile.magic.allows("__builtins__"):
        ns["__builtins__"] = dict(guard.builtins)
    ev = _new_evaluation(guard)
    if learn:
        for v in comp.soft + ctx:
            ev.observed.setdefault(v.key, set()).add(v.token)
        if guard.pending:
            for k, toks in guard.pending.items():
                ev.observed.setdefault(k, set()).update(toks)
            guard.pending.clear()
    ns.update(ev.helpers())
    code = comp.code
    if kind == "eval":
        def fn():
            return _orig_eval(code, ns, loc)
    elif closure is not None:
        def fn():
            return _orig_exec(code, ns, loc, closure=closure)
    else:
        def fn():
            return _orig_exec(code, ns, loc)
    try:
        result = runner.run(ev, fn, state.threads and not comp.trivial)
    except BaseException as e:
        if not learn:
            reason = getattr(e, "reason", None) if isinstance(e, _exc.cls.EvalInterrupted) else None
            if reason is None and isinstance(e, _exc.cls.RuleEvalPermissionError):
                reason = str(e).partition("\n")[0]
            if reason:
                state.reporter.denied(profile.name, frame, reason=reason)
        raise
    finally:
        if learn and (ev.observed or context_site):
            state.reporter.features(profile.name, ev.observed, frame, context_site)
    return ev.result if comp.result_sink else result


def run_caller_mode(comp: Compiled, kind: str, g, l, frame, closure=None):
    """``eval-namespace=caller``: the builtin's own semantics, unrewritten."""
    if comp.learn:
        if comp.soft:
            observed: dict = {}
            for v in comp.soft:
                observed.setdefault(v.key, set()).add(v.token)
            state.reporter.features(comp.profile.name, observed, frame)
    if g is None and frame is not None:
        g = frame.f_globals
        if l is None:
            l = frame.f_locals if type(frame.f_locals) is dict else dict(frame.f_locals)
    if kind == "eval":
        return _orig_eval(comp.code, g, l)
    if closure is not None:
        return _orig_exec(comp.code, g, l, closure=closure)
    return _orig_exec(comp.code, g, l)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _binds_top_level(text: str) -> bool:
    """Does exec'd source bind a name in the namespace it runs in (an
    assignment, def, class or import outside any function)?"""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            return True
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return True
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _needs_caller_scope(comp: Compiled, kind: str, l, frame) -> bool:
    """Learning: would this bare evaluation behave differently without the
    caller's scope, which a guarded (adaptive) one does not see?  It reads a
    name the caller's locals or globals hold, or an exec binds names there."""
    a = comp.analysis
    if a is None or frame is None:
        return False
    scope = l if l is not None else frame.f_locals
    builtins_seen = guard_for(comp.profile, True).builtins
    for name, _pos in a.free_calls + a.free_loads:
        if (name in scope or name in frame.f_globals) and name not in builtins_seen:
            return True
    return kind == "exec" and _binds_top_level(comp.text)


def evaluate(kind: str, source, g, l, frame, *, profile: Profile | None = None, names=None,
             wrapper: bool = False, closure=None):
    """A guarded eval()/exec() (kind "eval"/"exec") or guarded_eval() (kind
    "guarded") of a source string or of a code object from compile()."""
    profile = profile or state.profiles[""]
    learn = state.learning
    flags = frame.f_code.co_flags & FUTURE_MASK if frame is not None and not wrapper else 0
    if isinstance(source, types.CodeType):
        comp = blessed(source)
        if comp is None:
            raise _exc.eval_denied("code object", "eval-syntax",
                                   "exec() and eval() run code objects made by the guarded compile() only; "
                                   "pass the source text instead.")
        kind = "eval" if kind == "eval" else "exec"
    elif isinstance(source, (str, bytes, bytearray, memoryview)):
        if isinstance(source, memoryview):
            source = bytes(source)
        rw = wrapper or profile.namespace != "caller"
        if kind == "guarded":
            try:
                comp = compile_source(source, "eval", profile, learn, flags=flags, rewrite_it=rw)
                kind = "eval"
            except SyntaxError:
                comp = compile_source(source, "exec", profile, learn, flags=flags, result_sink=True, rewrite_it=rw)
                kind = "exec"
        else:
            src = source.lstrip(" \t" if isinstance(source, str) else b" \t") if kind == "eval" else source
            # Globals the caller supplies are used in place, their values unmapped.
            wrap = (g is not None or l is not None) and profile.namespace == "adaptive" and not wrapper
            comp = compile_source(src, kind, profile, learn, flags=flags, rewrite_it=rw, wrap_names=wrap)
    else:
        raise TypeError(f"{kind}() arg 1 must be a string, bytes or code object")
    caller_mode = profile.namespace == "caller" and not wrapper
    ctx = [] if caller_mode else _context_violations(comp, profile, supplied_names(profile, g, l, names, wrapper))
    if comp.hard:
        raise reject(comp.text, profile, comp.hard + ([] if learn else comp.soft + ctx), frame)
    if not learn and (comp.soft or ctx):
        raise reject(comp.text, profile, comp.soft + ctx, frame)
    if caller_mode:
        return run_caller_mode(comp, kind, g, l, frame, closure)
    if (learn and g is None and not wrapper and profile.namespace == "adaptive" and kind in ("eval", "exec")
            and not isinstance(source, types.CodeType) and _needs_caller_scope(comp, kind, l, frame)):
        # Learning must not change what the program does: run it with the
        # builtin's own scope, and have the learner write eval-namespace=caller.
        state.reporter.caller_site(profile.name, frame)
        comp = compile_source(src, kind, profile, learn, flags=flags, rewrite_it=False)
        return run_caller_mode(comp, kind, g, l, frame, closure)
    return run_compiled(comp, kind, g, l, frame, ctx, names=names, wrapper=wrapper, closure=closure)


def guarded_compile(source, filename, mode: str, flags: int, frame, optimize: int = -1):
    """compile() for application code: an AST only (PyCF_ONLY_AST) is
    returned as is; anything else is checked and rewritten like eval/exec
    would, and the code object is remembered as the guard's own."""
    if mode not in ("eval", "exec", "single"):
        if flags & _ONLY_AST:
            return _orig_compile(source, filename, mode, flags, True, optimize)
        raise ValueError("compile() mode must be 'exec', 'eval' or 'single'")
    if flags & _ONLY_AST:
        return _orig_compile(source, filename, mode, flags, True, optimize)
    name = str(getattr(filename, "__fspath__", lambda: filename)()) if filename is not None else ""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    if not (name.startswith("<") and name.endswith(">")) or name.startswith("<frozen"):
        name = f"<{name}>"  # never a path: a code object must not pass for library code
    profile = state.profiles[""]
    learn = state.learning
    if isinstance(source, ast.AST):
        import copy

        src_text = ast.unparse(source) if hasattr(ast, "unparse") else ""
        tree = copy.deepcopy(source)
        comp = _compile_tree(tree, src_text, mode, profile, learn, name, flags, optimize)
    elif isinstance(source, (str, bytes, bytearray, memoryview)):
        comp = compile_source(bytes(source) if isinstance(source, memoryview) else source, mode, profile, learn,
                              flags=flags, filename=name, optimize=optimize,
                              rewrite_it=profile.namespace != "caller", wrap_names=True)
    else:
        raise TypeError("compile() arg 1 must be a string, bytes or AST object")
    if comp.hard or (comp.soft and not learn):
        raise reject(comp.text, profile, comp.hard + ([] if learn else comp.soft), frame)
    return comp.code


def _compile_tree(tree, text: str, mode: str, profile: Profile, learn: bool, filename: str, flags: int,
                  optimize: int) -> Compiled:
    comp = Compiled(text, profile, learn)
    analysis = checker.analyse(tree, profile, text)
    comp.analysis = analysis
    for v in analysis.violations:
        (comp.soft if v.learnable else comp.hard).append(v)
    if not comp.hard and (learn or not comp.soft):
        _finish(comp, tree, filename, mode, flags, optimize, profile.namespace != "caller", True)
    if comp.code is not None:
        _bless(comp.code, comp)
    return comp

"""What the rewritten code calls while it runs: the real barrier of the guard.

Static checks read names as written; these helpers see every attribute read,
every sized operation and every loop turn, whatever spelling led there.

* ``Guard`` -- one per profile (and per learning flag): attribute decisions,
  the namespace's ``__builtins__`` with the guarded shims, size and cost
  checks.  Built once, before the program runs.
* ``Evaluation`` -- the budgets of one evaluation; its bound methods are the
  ``__sb_*__`` helpers of the namespace.  Functions the evaluated code
  defines keep their evaluation: called later by the program, they get a
  fresh budget per outermost call.
* ``run`` (runner.py) executes inline or in a worker thread; sizes.py
  estimates what an operation would allocate or cost.

Nothing here can interrupt one long C call that holds the GIL: the size and
cost checks exist so that such calls are refused before they start.
"""
from __future__ import annotations

import builtins as _b
import sys as _sys
from time import monotonic as _now

import _operator
import _string

from . import _base, _exc
from .rules import FRAME_CAPTURE, RESERVED_PREFIX, Profile
from .sizes import _is_int, _itemsize, _mul_cost, _short, check_printf, check_spec, op_cost, refuse_alloc, result_size

INF = float("inf")
# The builtins as the guard found them (_base.py), not as they are now: this
# module loads on the first guarded evaluation, after the program may have
# replaced some of them.
_ORIGINALS = _base.ORIGINALS
_getattr = _ORIGINALS["getattr"]
_hasattr = _ORIGINALS["hasattr"]
_isinstance = _ORIGINALS["isinstance"]
_format = _ORIGINALS["format"]
_type = _ORIGINALS["type"]
_BUILTIN_FN = _type(len)
current = _base.current

# Names whose builtin value is exchanged for its guarded shim wherever the
# evaluated code reads them (rewrite.visit_Name) or reaches them as an attribute.
CAP_NAMES = frozenset({
    "getattr", "hasattr", "setattr", "delattr", "vars", "dir", "globals", "locals", "type",
    "breakpoint", "help", "exit", "quit", "format", "pow", "range", "iter", "bytes", "bytearray",
    "eval", "exec", "compile", "__import__", "len",
})

BINOPS = {"+": _operator.add, "*": _operator.mul, "**": _operator.pow, "<<": _operator.lshift,
          "%": _operator.mod, "//": _operator.floordiv}
IOPS = {"+": _operator.iadd, "*": _operator.imul, "**": _operator.ipow, "<<": _operator.ilshift,
        "%": _operator.imod, "//": _operator.ifloordiv}

_SMALL = 1 << 62         # integers below this multiply and divide in constant time
RANGE_DIRECT = 4096     # ranges up to this length stay real ranges
RANGE_CHUNK = 4096      # items a big range yields between two budget checks

# ---------------------------------------------------------------------------
# per-profile guard: attribute decisions, shims, builtins


_NEVER, _ORDINARY, _MAGIC = 3, 1, 2
_FRAME_HINT = "Frame capture is always refused; no eval- rule grants it."
_PREFIX_HINT = f"The prefix {RESERVED_PREFIX!r} belongs to the guard's own helpers; no eval- rule grants it."
_FORMAT_HINT = ('Prefer an f-string (f"{x}"), whose attribute reads are checked like any other; '
                "or add `eval-attribute=format` (or `format_map`) exactly: a group or pattern never grants it.")
_SPECIAL = frozenset({"format", "format_map", "vformat", "get_field", "ljust", "rjust", "center", "zfill",
                      "expandtabs", "replace", "join", "to_bytes"})
_MISSING = object()


class Guard:
    """Everything about one profile the runtime needs, computed once."""

    def __init__(self, profile: Profile, learn: bool, dynamic: dict) -> None:
        self.profile = profile
        self.learn = learn
        self.budget = profile.max_alloc
        self._kinds: dict = {}
        self.pending: dict = {}  # observations made outside any evaluation
        self.capmap: dict = {}
        self.shims: dict = {}
        self._make_shims(dynamic)
        self.builtins = self._make_builtins()

    # -- attributes ------------------------------------------------------------

    def kind(self, name) -> int:
        k = self._kinds.get(name)
        if k is None:
            if not _isinstance(name, str):
                raise TypeError(f"attribute name must be string, not '{_type(name).__name__}'")
            p = self.profile
            if name.startswith(RESERVED_PREFIX) or name in FRAME_CAPTURE:
                k = _NEVER
            elif len(name) > 4 and name.startswith("__") and name.endswith("__"):
                k = 0 if p.magic.allows(name) else _MAGIC
            else:
                k = 0 if p.attribute.allows(name) else _ORDINARY
            if len(self._kinds) < 8192:
                self._kinds[name] = k
        return k

    def observe(self, ev, key: str, token: str) -> None:
        # After its evaluation returned, a function it defined reports here,
        # and the next evaluation of the profile sends it.
        target = ev.observed if ev is not None and ev.active else self.pending
        target.setdefault(key, set()).add(token)

    def refuse_attr(self, name: str, k: int, ev) -> None:
        """Raise for a refused attribute, or record it when learning."""
        if k == _NEVER:
            raise _exc.eval_denied(name, "eval-attribute",
                                   _FRAME_HINT if name in FRAME_CAPTURE else _PREFIX_HINT)
        key = "eval-magic" if k == _MAGIC else "eval-attribute"
        if self.learn:
            self.observe(ev, key, name)
            return
        p = self.profile
        rule = f"{key}:{p.name}" if p.name else key
        hint = _FORMAT_HINT if name in ("format", "format_map") else None
        raise _exc.eval_denied(name, rule, hint)

    def allowed_silently(self, name: str) -> bool:
        k = self.kind(name)
        return k == 0 or (self.learn and k != _NEVER)

    def read(self, obj, name, ev, default=_MISSING):
        """``obj.name`` after the attribute rules, with the special cases."""
        k = self.kind(name)
        if k:
            self.refuse_attr(name, k, ev)
        v = _getattr(obj, name) if default is _MISSING else _getattr(obj, name, default)
        if name in _SPECIAL:
            return self.special(obj, name, v, ev)
        return self.cap(v)

    def cap(self, v):
        m = self.capmap.get(id(v))
        return m[1] if m is not None and m[0] is v else v

    # -- methods that resolve attributes or allocate in C ---------------------

    def special(self, obj, name: str, v, ev):
        budget = self.budget
        if name in ("format", "format_map"):
            if _isinstance(obj, str):
                return self._bound_format(obj, v, ev)
            if _isinstance(obj, type) and issubclass(obj, str):
                return self._unbound_format(v, ev)
        if name in ("format", "vformat", "get_field"):
            formatter = _formatter_class()
            if formatter is not None:
                if _isinstance(obj, formatter):
                    return self._formatter_method(obj, name, v, ev, formatter)
                if _isinstance(obj, type) and issubclass(obj, formatter):
                    raise _exc.eval_denied(f"string.Formatter.{name}", "eval-attribute",
                                           "Call it on an instance: the unbound method is not checked.")
        seqtypes = (str, bytes, bytearray)
        bound = _isinstance(obj, seqtypes)
        unbound = _isinstance(obj, type) and issubclass(obj, seqtypes)
        if (bound or unbound) and name in ("ljust", "rjust", "center", "zfill", "expandtabs", "replace", "join"):
            return self._grower(obj if bound else None, name, v, budget)
        if name == "to_bytes" and (_is_int(obj) or (_isinstance(obj, type) and issubclass(obj, int))):
            first = 0 if _is_int(obj) else 1

            def to_bytes(*args, **kwargs):
                length = args[first] if len(args) > first else kwargs.get("length", 1)
                if _is_int(length) and length > budget:
                    raise refuse_alloc(f"to_bytes({length})", length, budget)
                return v(*args, **kwargs)
            return to_bytes
        return self.cap(v)

    def check_template(self, template: str, ev) -> bool:
        """Run the attribute reads of a str.format template past the rules;
        True when a spec takes its width from an argument (`{:{}}`)."""
        nested = False
        for _literal, field, spec, _conv in _string.formatter_parser(template):
            if field is not None:
                self.check_field(field, ev)
            if spec and "{" in spec:
                self.check_template(spec, ev)
                nested = True
            elif spec:
                check_spec(spec, self.budget)
        return nested

    def check_field(self, field: str, ev) -> None:
        _first, rest = _string.formatter_field_name_split(field)
        for is_attr, key in rest:
            if is_attr:
                k = self.kind(key)
                if k:
                    self.refuse_attr(key, k, ev)

    def _widths(self, args, kwargs) -> None:
        for v in (*args, *kwargs.values()):
            if _is_int(v) and not _isinstance(v, bool) and v > self.budget:
                raise refuse_alloc(f"format width {v}", v, self.budget)

    def _bound_format(self, template: str, method, ev):
        def format(*args, **kwargs):
            if self.check_template(template, ev):
                self._widths(args, kwargs)
            return method(*args, **kwargs)
        return format

    def _unbound_format(self, method, ev):
        def format(template="", *args, **kwargs):
            if _isinstance(template, str) and self.check_template(template, ev):
                self._widths(args, kwargs)
            return method(template, *args, **kwargs)
        return format

    def _formatter_method(self, obj, name, method, ev, formatter):
        cls = _type(obj)
        for m in ("parse", "get_field", "get_value", "format_field", "convert_field", "vformat"):
            if _getattr(cls, m, None) is not _getattr(formatter, m, None):
                raise _exc.eval_denied(f"{cls.__name__}.{name}", "eval-attribute",
                                       f"This string.Formatter overrides {m}(): its fields cannot be checked.")
        if name == "get_field":
            def get_field(field_name, *args, **kwargs):
                if _isinstance(field_name, str):
                    self.check_field(field_name, ev)
                return method(field_name, *args, **kwargs)
            return get_field

        def format(template="", *args, **kwargs):
            if _isinstance(template, str) and self.check_template(template, ev):
                self._widths(args[0] if name == "vformat" and args else args, kwargs)
            return method(template, *args, **kwargs)
        return format

    @staticmethod
    def _grower(obj, name, method, budget):
        """str/bytes methods whose result can be much larger than their input."""
        def sized(*args, **kwargs):
            s, rest = (obj, args) if obj is not None else (args[0] if args else "", args[1:])
            size = 0
            if name in ("ljust", "rjust", "center", "zfill"):
                width = rest[0] if rest else kwargs.get("width", 0)
                size = width if _is_int(width) else 0
            elif name == "expandtabs":
                tab = rest[0] if rest else kwargs.get("tabsize", 8)
                size = len(s) * tab if _is_int(tab) else 0
            elif name == "replace" and len(rest) >= 2:
                old, new = rest[0], rest[1]
                count = rest[2] if len(rest) > 2 else kwargs.get("count", -1)
                if _isinstance(old, (str, bytes, bytearray)) and len(new) > len(old):
                    hits = s.count(old) if old else len(s) + 1
                    if _is_int(count) and count >= 0:
                        hits = min(hits, count)
                    size = len(s) + hits * (len(new) - len(old))
            elif name == "join" and rest:
                items = list(rest[0])
                size = sum(len(x) for x in items if _isinstance(x, (str, bytes, bytearray))) \
                    + len(s) * max(len(items) - 1, 0)
                rest = (items,) + tuple(rest[1:])
            size *= _itemsize(s) or 1
            if size > budget:
                raise refuse_alloc(f"{_type(s).__name__}.{name}()", size, budget)
            return method(*((rest if obj is not None else (s,) + tuple(rest))), **kwargs)
        return sized

    # -- shims -----------------------------------------------------------------

    def _refuser(self, name: str, key: str, why: str):
        def refused(*args, **kwargs):
            raise _exc.eval_denied(name, key, f"{why}; no eval- rule grants it.")
        refused.__name__ = refused.__qualname__ = name
        return refused

    def _make_shims(self, dynamic: dict) -> None:
        s = self.shims
        s.update(self._reading_shims())
        s.update(self._sizing_shims())
        s["__import__"] = self._import_shim()
        for name, why in (("setattr", "Attribute store is not part of the sub-language"),
                          ("delattr", "Attribute deletion is not part of the sub-language"),
                          ("globals", "The evaluation namespace is not exposed"),
                          ("locals", "The evaluation namespace is not exposed"),
                          ("breakpoint", "The debugger reaches the host program"),
                          ("help", "The help system reaches the host program"),
                          ("exit", "exit() would end the host program"),
                          ("quit", "quit() would end the host program")):
            s[name] = self._refuser(name, "eval-call", why)
        for name in ("eval", "exec", "compile"):
            if name in dynamic:
                s[name] = dynamic[name]
        for name, shim in s.items():
            raw = _ORIGINALS.get(name)
            if raw is not None:
                self.capmap[id(raw)] = (raw, shim)
        for name in ("eval", "exec", "compile"):  # the installed wrappers stay themselves
            cur = _b.__dict__.get(name)
            if cur is not None and cur is not _ORIGINALS.get(name):
                self.capmap.pop(id(cur), None)
        for mod in (_sys.modules.get("operator"), _operator):
            for name in ("attrgetter", "methodcaller"):
                raw = _getattr(mod, name, None) if mod is not None else None
                if raw is not None:
                    self.capmap[id(raw)] = (raw, TypeShim(raw, self._checked_getter(raw, name)))

    def _reading_shims(self) -> dict:
        """getattr and friends: every name through the attribute rules."""
        g = self

        def getattr(obj, name, *default):
            return g.read(obj, name, current(), default[0] if default else _MISSING)

        def hasattr(obj, name):
            k = g.kind(name)
            if k:
                g.refuse_attr(name, k, current())
            return _hasattr(obj, name)

        def vars(*args):
            if not args:
                raise _exc.eval_denied("vars", "eval-call", "vars() with no argument exposes the evaluation "
                                       "namespace; no eval- rule grants it.")
            return g.read(args[0], "__dict__", current())

        def dir(*args):
            if not args:
                raise _exc.eval_denied("dir", "eval-call", "dir() with no argument exposes the evaluation "
                                       "namespace; no eval- rule grants it.")
            return [n for n in _ORIGINALS["dir"](args[0]) if g.allowed_silently(n)]

        def type_call(*args, **kwargs):
            if len(args) == 1 and not kwargs:
                return _type(args[0])
            raise _exc.eval_denied("type", "eval-call", "The three-argument class factory is refused; "
                                   "no eval- rule grants it.")

        return {"getattr": getattr, "hasattr": hasattr, "vars": vars, "dir": dir,
                "type": TypeShim(_type, type_call)}

    def _sizing_shims(self) -> dict:
        """Builtins that allocate or loop in C: sizes checked before the call,
        long iterations charged to the budget."""
        g = self
        budget = self.budget
        real_len = _ORIGINALS["len"]

        def format(value, spec=""):
            check_spec(spec, budget)
            return _format(value, spec)

        def pow(base, exp, mod=None):
            ev = current()
            if mod is None:
                return binop(g, ev, "**", base, exp)
            if _is_int(base) and _is_int(exp) and _is_int(mod) and mod:
                nm = mod.bit_length() / 30
                _check_time(g, ev, exp.bit_length() * 2 * (_mul_cost(nm, nm) + 4e-9 * nm * nm))
            return _ORIGINALS["pow"](base, exp, mod)

        def range_call(*args):
            r = _ORIGINALS["range"](*args)
            try:
                if real_len(r) <= RANGE_DIRECT:
                    return r
            except OverflowError:
                pass
            return BigRange(r, g)

        def len(obj):
            if _type(obj) is BigRange:
                return obj.__sb_r__.__len__()
            return real_len(obj)

        def iter(obj, *sentinel):
            if not sentinel:
                return _ORIGINALS["iter"](obj)
            return _sentinel_iter(obj, sentinel[0], g)

        def sized(real):
            def make(*args, **kwargs):
                if args and _is_int(args[0]) and not _isinstance(args[0], bool) and args[0] > budget:
                    raise refuse_alloc(f"{real.__name__}({args[0]})", args[0], budget)
                return real(*args, **kwargs)
            return make

        return {"format": format, "pow": pow, "range": TypeShim(_ORIGINALS["range"], range_call), "len": len,
                "iter": iter, "bytes": TypeShim(bytes, sized(bytes)),
                "bytearray": TypeShim(bytearray, sized(bytearray))}

    def _import_shim(self):
        """``__import__`` for import statements and explicit calls: eval-import
        at run time, then the program's own import rules."""
        g = self

        def __import__(name, globals=None, locals=None, fromlist=(), level=0):
            ev = current()
            if level:
                raise _exc.eval_denied("relative import", "eval-import",
                                       "Evaluated code has no package; no eval- rule grants it.")
            if not _isinstance(name, str):
                raise TypeError("__import__() argument 1 must be str")
            if not g.profile.imports.allows(name):
                if not g.learn:
                    p = g.profile
                    raise _exc.eval_denied(name, f"eval-import:{p.name}" if p.name else "eval-import")
                g.observe(ev, "eval-import", name)
            for attr in fromlist or ():
                if attr == "*":
                    raise _exc.eval_denied("from ... import *", "eval-import",
                                           "A star import binds names no rule sees; name each import.")
                k = g.kind(attr)
                if k:
                    g.refuse_attr(attr, k, ev)
            return _b.__import__(name, None, None, fromlist, 0)
        return __import__

    def _checked_getter(self, raw, which: str):
        def make(*names, **kwargs):
            ev = current()
            for n in names[:1] if which == "methodcaller" else names:
                for part in (n.split(".") if _isinstance(n, str) else (n,)):
                    k = self.kind(part)
                    if k:
                        self.refuse_attr(part, k, ev)
            return raw(*names, **kwargs)
        return make

    def _make_builtins(self) -> dict:
        p = self.profile
        names = set()
        for name in _ORIGINALS:
            if name.startswith("_"):
                if p.call.allows(name):
                    names.add(name)
            elif self.learn or p.call.allows(name):
                names.add(name)
        out = {}
        for name in names:
            value = self.shims.get(name, _b.__dict__.get(name, _ORIGINALS.get(name)))
            out[name] = self.cap(value)
        if self.learn or p.syntax.allows("ClassDef"):
            out["__build_class__"] = _ORIGINALS["__build_class__"]
        if self.learn or p.syntax.allows("Import") or p.syntax.allows("ImportFrom"):
            out["__import__"] = self.shims["__import__"]
        out["__name__"] = "__eval__"
        return out


def _formatter_class():
    mod = _sys.modules.get("string")
    return _getattr(mod, "Formatter", None) if mod is not None else None


class TypeShim:
    """A guarded stand-in for a builtin class: calls go through a check,
    ``isinstance``/``issubclass``/class bases/attributes reach the class."""

    __slots__ = ("__sb_real__", "__sb_call__")

    def __init__(self, real, call) -> None:
        self.__sb_real__ = real
        self.__sb_call__ = call

    def __call__(self, *args, **kwargs):
        return self.__sb_call__(*args, **kwargs)

    def __instancecheck__(self, obj) -> bool:
        real = self.__sb_real__
        if real is _ORIGINALS["range"] and _isinstance(obj, BigRange):
            return True
        return _isinstance(real, type) and _isinstance(obj, real)

    def __subclasscheck__(self, cls) -> bool:
        return _isinstance(self.__sb_real__, type) and issubclass(cls, self.__sb_real__)

    def __mro_entries__(self, bases):
        return (self.__sb_real__,)

    def __getattr__(self, name):
        return _getattr(self.__sb_real__, name)

    def __eq__(self, other) -> bool:
        return other is self or other is self.__sb_real__

    def __hash__(self) -> int:
        return hash(self.__sb_real__)

    def __repr__(self) -> str:
        return repr(self.__sb_real__)


def _charge(guard: Guard, n: int, local: list) -> None:
    """Count n items produced in C for the running evaluation (or, outside
    any, for this one iterator), and honour its deadline."""
    ev = current()
    if ev is None:
        local[0] += n
        if local[0] > guard.profile.max_iterations:
            raise _exc.interrupted(f"eval-max-iterations={guard.profile.max_iterations}")
        return
    ev.range_items += n
    if ev.range_items > ev.limit_it:
        ev.stop(f"eval-max-iterations={ev.p.max_iterations}")
    if _now() > ev.deadline:
        ev.stop_time()


class BigRange:
    """A range too long to hand to C consumers (``sum``, ``list``) at once:
    it yields in chunks, each charged to the iteration budget."""

    __slots__ = ("__sb_r__", "__sb_g__")

    def __init__(self, r, guard: Guard) -> None:
        self.__sb_r__ = r
        self.__sb_g__ = guard

    def __iter__(self):
        return _chunks(self.__sb_r__, self.__sb_g__)

    def __reversed__(self):
        return _chunks(self.__sb_r__[::-1], self.__sb_g__)

    # No __len__: list(), tuple() and [*r] would preallocate the whole length
    # before the first chunk is charged.  len() is the guarded shim.
    def __length_hint__(self) -> int:
        return min(len(self.__sb_r__), RANGE_CHUNK) if self.__sb_r__ else 0

    def __bool__(self) -> bool:
        return bool(self.__sb_r__)

    def __getitem__(self, i):
        v = self.__sb_r__[i]
        return BigRange(v, self.__sb_g__) if _isinstance(v, range) else v

    def __contains__(self, x) -> bool:
        if _type(x) in (int, bool):
            return x in self.__sb_r__
        return any(v == x for v in self)

    def count(self, x) -> int:
        if _type(x) in (int, bool):
            return self.__sb_r__.count(x)
        return sum(1 for v in self if v == x)

    def index(self, x) -> int:
        if _type(x) in (int, bool):
            return self.__sb_r__.index(x)
        for i, v in enumerate(self):
            if v == x:
                return i
        raise ValueError(f"{x!r} is not in range")

    @property
    def start(self):
        return self.__sb_r__.start

    @property
    def stop(self):
        return self.__sb_r__.stop

    @property
    def step(self):
        return self.__sb_r__.step

    def __eq__(self, other) -> bool:
        if _isinstance(other, BigRange):
            other = other.__sb_r__
        return self.__sb_r__ == other

    def __hash__(self) -> int:
        return hash(self.__sb_r__)

    def __repr__(self) -> str:
        return repr(self.__sb_r__)


def _chunks(r, guard: Guard):
    step = r.step
    width = RANGE_CHUNK * step
    i, stop = r.start, r.stop
    local = [0]
    while (i < stop) if step > 0 else (i > stop):
        j = i + width
        if (j > stop) if step > 0 else (j < stop):
            j = stop
        part = range(i, j, step)
        _charge(guard, len(part), local)
        yield from part
        i = j


def _sentinel_iter(fn, sentinel, guard: Guard):
    local = [0]
    while True:
        _charge(guard, 1, local)
        v = fn()
        if v == sentinel:
            return
        yield v


def _remaining(guard: Guard, ev) -> float:
    if ev is not None and ev.deadline != INF:
        return ev.deadline - _now()
    return guard.profile.timeout


def _check_time(guard: Guard, ev, cost: float) -> None:
    if cost and cost > _remaining(guard, ev):
        reason = ev.timeout_rule if ev is not None else f"eval-timeout={guard.profile.timeout_text()}"
        if ev is not None:
            ev.stop(reason)
        raise _exc.interrupted(reason)


def binop(guard: Guard, ev, op: str, a, b):
    """`a op b` after the size (eval-max-alloc) and cost (eval-timeout) checks."""
    size = result_size(op, a, b)
    if size > guard.budget:
        raise refuse_alloc(f"{_short(a)} {op} {_short(b)}", size, guard.budget)
    if op in ("*", "**", "//", "%") and _is_int(a) and _is_int(b):
        cost = op_cost(op, a, b)
        if cost:
            _check_time(guard, ev, cost)
    elif op == "%" and _isinstance(a, (str, bytes, bytearray)):
        check_printf(a, b, guard.budget)
    return BINOPS[op](a, b)


# ---------------------------------------------------------------------------
# one evaluation


class Evaluation:
    """The budgets of one evaluation; its bound methods are the helpers."""

    __slots__ = ("g", "p", "learn", "limit_it", "iterations", "limit_depth", "depth", "deadline", "checks",
                 "range_items", "interrupted", "reason", "active", "rearmed", "observed", "result", "timeout_rule",
                 "__weakref__")

    def __init__(self, guard: Guard, deadline: float) -> None:
        self.g = guard
        self.p = guard.profile
        self.learn = guard.learn
        self.limit_it = self.p.max_iterations
        self.limit_depth = self.p.max_call_depth
        self.iterations = self.depth = self.checks = self.range_items = 0
        self.deadline = deadline
        self.interrupted = False
        self.reason = ""
        self.active = False
        self.rearmed = False
        self.observed: dict = {}
        self.result = None
        self.timeout_rule = f"eval-timeout={self.p.timeout_text()}"  # a nested evaluation names the outer one

    def helpers(self) -> dict:
        return {
            "__sb_getattr__": self.getattr_, "__sb_tick__": self.tick, "__sb_tickt__": self.tickt,
            "__sb_enter__": self.enter, "__sb_leave__": self.leave, "__sb_func__": self.func,
            "__sb_add__": self.add, "__sb_mul__": self.mul, "__sb_pow__": self.pow_,
            "__sb_lshift__": self.lshift, "__sb_mod__": self.mod, "__sb_floordiv__": self.floordiv,
            "__sb_iop__": self.iop, "__sb_augitem__": self.augitem, "__sb_slice__": slice,
            "__sb_format__": self.format_, "__sb_cap__": self.g.cap, "__sb_rethrow__": self.rethrow,
            "__sb_result__": self.set_result,
        }

    # -- interruption ------------------------------------------------------------

    def interrupt(self, reason: str) -> None:
        """Make every later check raise (also called by the waiting caller)."""
        if not self.interrupted:
            self.reason = reason
            self.interrupted = True
        self.limit_it = -1
        self.limit_depth = -1
        self.deadline = -INF

    def stop(self, reason: str):
        self.interrupt(reason)
        raise _exc.interrupted(self.reason)

    def stop_time(self):
        self.stop(self.timeout_rule)

    def finish(self) -> None:
        self.active = False
        self.depth = 0
        self.deadline = INF if not self.interrupted else -INF

    def _rearm(self) -> None:
        """A function of a finished evaluation, called by the program: a
        fresh budget for this outermost call."""
        self.iterations = self.range_items = 0
        self.limit_it = self.p.max_iterations
        self.limit_depth = self.p.max_call_depth
        self.interrupted = False
        self.reason = ""
        self.deadline = _now() + self.p.timeout
        self.timeout_rule = f"eval-timeout={self.p.timeout_text()}"
        self.rearmed = True

    # -- budgets -------------------------------------------------------------------

    def tick(self) -> None:
        n = self.iterations + 1
        self.iterations = n
        if n > self.limit_it:
            self.stop(f"eval-max-iterations={self.p.max_iterations}")
        if not n & 15 and _now() > self.deadline:
            self.stop_time()

    def tickt(self) -> bool:
        n = self.iterations + 1
        self.iterations = n
        if n > self.limit_it:
            self.stop(f"eval-max-iterations={self.p.max_iterations}")
        if not n & 15 and _now() > self.deadline:
            self.stop_time()
        return True

    def enter(self) -> None:
        if not self.active and not self.depth:
            self._rearm()
        d = self.depth + 1
        if d > self.limit_depth:
            self.stop(f"eval-max-call-depth={self.p.max_call_depth}")
        self.depth = d
        c = self.checks + 1
        self.checks = c
        if not c & 7 and _now() > self.deadline:
            self.stop_time()

    def leave(self) -> None:
        d = self.depth - 1
        self.depth = d if d > 0 else 0
        if d <= 0 and self.rearmed:
            self.rearmed = False
            self.deadline = INF

    def func(self, fn):
        enter, leave = self.enter, self.leave

        def call(*args, **kwargs):
            enter()
            try:
                return fn(*args, **kwargs)
            finally:
                leave()
        call.__name__ = call.__qualname__ = "<lambda>"
        return call

    def rethrow(self) -> None:
        """First statement of every except handler: an interruption is never
        swallowed, whatever the handler catches."""
        if self.interrupted:
            raise _exc.interrupted(self.reason)
        e = _sys.exc_info()[1]
        cls = _exc.cls.EvalInterrupted
        if _isinstance(e, cls):
            raise e
        group = _getattr(_b, "BaseExceptionGroup", None)
        if group is not None and _isinstance(e, group):
            sub = e.subgroup(cls)
            if sub is not None:
                raise _exc.interrupted(_getattr(sub.exceptions[0], "reason", ""))

    # -- reads and operators ----------------------------------------------------

    def getattr_(self, obj, name):
        g = self.g
        k = g._kinds.get(name)
        if k is None:
            k = g.kind(name)
        if k:
            g.refuse_attr(name, k, self)
        v = _getattr(obj, name)
        if name in _SPECIAL:
            return g.special(obj, name, v, self)
        m = g.capmap.get(id(v))
        return m[1] if m is not None and m[0] is v else v

    def add(self, a, b):
        if _type(a) in (int, float) and _type(b) in (int, float):
            return a + b
        return binop(self.g, self, "+", a, b)

    def mul(self, a, b):
        ta, tb = _type(a), _type(b)
        if ta is float or tb is float or (ta is int and tb is int and -_SMALL < a < _SMALL and -_SMALL < b < _SMALL):
            return a * b
        return binop(self.g, self, "*", a, b)

    def pow_(self, a, b):
        return binop(self.g, self, "**", a, b)

    def lshift(self, a, b):
        return binop(self.g, self, "<<", a, b)

    def mod(self, a, b):
        if _type(a) in (int, float) and _type(b) in (int, float) and abs(a) < 1 << 60:
            return a % b
        return binop(self.g, self, "%", a, b)

    def floordiv(self, a, b):
        if _type(a) in (int, float) and _type(b) in (int, float) and abs(a) < 1 << 60:
            return a // b
        return binop(self.g, self, "//", a, b)

    def iop(self, op: str, a, b):
        ta, tb = _type(a), _type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            if op == "+" or ta is float or tb is float or (op != "**" and op != "<<" and -_SMALL < a < _SMALL
                                                              and -_SMALL < b < _SMALL):
                return IOPS[op](a, b)  # numbers of machine size: nothing to estimate
        size = result_size(op, a, b)
        if size > self.g.budget:
            raise refuse_alloc(f"{_short(a)} {op}= {_short(b)}", size, self.g.budget)
        if op in ("*", "**", "//", "%") and _is_int(a) and _is_int(b):
            _check_time(self.g, self, op_cost(op, a, b))
        elif op == "%" and _isinstance(a, (str, bytes, bytearray)):
            check_printf(a, b, self.g.budget)
        return IOPS[op](a, b)

    def augitem(self, op: str, obj, key, value) -> None:
        obj[key] = self.iop(op, obj[key], value)

    def format_(self, value, conversion: int, spec):
        check_spec(spec, self.g.budget)
        if conversion == 115:
            value = str(value)
        elif conversion == 114:
            value = repr(value)
        elif conversion == 97:
            value = ascii(value)
        return _format(value, spec)

    def set_result(self, value) -> None:
        self.result = value

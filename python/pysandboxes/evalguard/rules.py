"""The ``eval-*`` rules of one profile (reference §2.8 and §7).

Five list keys accumulate into an allow set and a deny set (``DENY:`` wins
wherever it sits, so the order of lines never matters); eight scalar keys
carry the budgets.  ``eval-<key>:<name>=`` lines form an independent named
profile: no inheritance from the default one, so a call site can restrict.

Two sources feed this module: the ``"eval"`` section of the rules document
the supervisor sends to the agent (tokens as written, scalars as numbers),
and ``eval-…`` lines as written in a ``.py-sandboxes`` file (for
:func:`profiles_from_lines`, used by the ready-made profiles and by callers
of :func:`pysandboxes.evalguard.guarded_eval` outside python-sb).
"""
from __future__ import annotations

RESERVED_PREFIX = "__sb_"

# Attributes handing back a frame or code object, and through them the real
# globals of the program: refused whatever eval-attribute and eval-magic say
# (the one implicit DENY).  A generator reaches its frame without a dunder.
FRAME_CAPTURE = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code",
    "f_globals", "f_locals", "f_builtins", "f_back", "f_trace", "tb_frame", "tb_next",
})

SYNTAX_GROUPS: dict[str, tuple[str, ...]] = {
    "arith": ("BinOp", "UnaryOp"),
    "compare": ("Compare", "BoolOp"),
    "conditional": ("If", "IfExp"),
    "loop": ("For", "While", "Break", "Continue"),
    "comprehension": ("ListComp", "SetComp", "DictComp", "GeneratorExp", "comprehension"),
    "assign": ("Assign", "AugAssign", "AnnAssign", "NamedExpr"),
    "func": ("FunctionDef", "Return", "arguments", "arg", "Lambda"),
    "async": ("AsyncFunctionDef", "Await", "AsyncFor", "AsyncWith"),
    "class": ("ClassDef",),
    "exception": ("Try", "TryStar", "Raise", "ExceptHandler"),
    "context": ("With", "withitem"),
    "import": ("Import", "ImportFrom", "alias"),
    "subscript": ("Subscript", "Slice", "Starred"),
    "fstring": ("JoinedStr", "FormattedValue"),
    "tstring": ("TemplateStr", "Interpolation"),
    "yield": ("Yield", "YieldFrom"),
}
GROUP_OF_NODE = {node: group for group, nodes in SYNTAX_GROUPS.items() for node in nodes}

# Always allowed: the parse roots, literals, reading a name, containers.
CORE_NODES = frozenset({
    "Module", "Expression", "Interactive", "Constant", "Name", "Load", "Store", "Del",
    "Tuple", "List", "Dict", "Set", "Expr", "Pass",
})

# Node classes of CPython 3.10-3.14 (deprecated aliases excluded): a profile
# naming a node of a newer Python stays valid on an older one.
_KNOWN_NODES = frozenset("""
AST Add And AnnAssign Assert Assign AsyncFor AsyncFunctionDef AsyncWith Attribute AugAssign Await
BinOp BitAnd BitOr BitXor BoolOp Break Call ClassDef Compare Constant Continue Del Delete Dict
DictComp Div Eq ExceptHandler Expr Expression FloorDiv For FormattedValue FunctionDef FunctionType
GeneratorExp Global Gt GtE If IfExp Import ImportFrom In Interactive Interpolation Invert Is IsNot
JoinedStr LShift Lambda List ListComp Load Lt LtE MatMult Match MatchAs MatchClass MatchMapping
MatchOr MatchSequence MatchSingleton MatchStar MatchValue Mod Module Mult Name NamedExpr Nonlocal
Not NotEq NotIn Or ParamSpec Pass Pow RShift Raise Return Set SetComp Slice Starred Store Sub
Subscript TemplateStr Try TryStar Tuple TypeAlias TypeIgnore TypeVar TypeVarTuple UAdd USub
UnaryOp While With Yield YieldFrom alias arg arguments boolop cmpop comprehension excepthandler
expr expr_context keyword match_case mod operator pattern slice stmt type_ignore type_param
unaryop withitem
""".split())


_node_names: frozenset | None = None


def node_names() -> frozenset:
    """The known node names plus those of this interpreter (``_ast`` is loaded
    only when a token is not in the static list: it costs start-up time)."""
    global _node_names
    if _node_names is None:
        import _ast

        _node_names = _KNOWN_NODES | frozenset(
            n for n, v in vars(_ast).items() if isinstance(v, type) and issubclass(v, _ast.AST))
    return _node_names


def is_node_name(token: str) -> bool:
    return token in _KNOWN_NODES or token in node_names()

ATTRIBUTE_GROUPS = ("str-methods", "list-methods", "dict-methods", "set-methods", "tuple-methods",
                    "num-methods", "bytes-methods", "date-methods")

# str.format/format_map resolve attributes in C from the template: only an
# exact eval-attribute line grants them (never a group or a pattern).
EXACT_ONLY_ATTRIBUTES = frozenset({"format", "format_map"})

SENSITIVE_CALLS = frozenset({
    "getattr", "setattr", "delattr", "vars", "hasattr", "dir", "globals", "type", "breakpoint",
    "open", "eval", "exec", "compile", "__import__",
})

LIST_KEYS = {"eval-syntax": "syntax", "eval-call": "call", "eval-attribute": "attribute",
             "eval-import": "imports", "eval-magic": "magic"}
# The same keys as fields of the rules document's "eval" profiles.
SECTION_FIELDS = {"eval-syntax": "syntax", "eval-call": "call", "eval-attribute": "attribute",
                  "eval-import": "import", "eval-magic": "magic"}
SCALAR_KEYS = {"eval-namespace": "namespace", "eval-timeout": "timeout_ms",
               "eval-max-iterations": "max_iterations", "eval-max-call-depth": "max_call_depth",
               "eval-max-depth": "max_depth", "eval-max-nodes": "max_nodes",
               "eval-max-alloc": "max_alloc", "eval-max-leaked-threads": "max_leaked_threads"}
NAMESPACE_MODES = ("adaptive", "closed", "caller")
DEFAULTS = {"namespace": "adaptive", "timeout_ms": 5000, "max_iterations": 1_000_000,
            "max_call_depth": 20, "max_depth": 20, "max_nodes": 5000, "max_alloc": 10_000_000,
            "max_leaked_threads": 4}


def attribute_group(name: str) -> frozenset:
    """The names of an attribute group, computed from this interpreter."""
    def public(*types: type) -> frozenset:
        return frozenset(n for t in types for n in dir(t) if not n.startswith("_"))

    if name == "str-methods":
        return public(str) - EXACT_ONLY_ATTRIBUTES
    if name == "date-methods":
        import datetime  # only when a profile names the group (at load, before arming)

        return public(datetime.date, datetime.time, datetime.datetime, datetime.timedelta)
    types = {"list-methods": (list,), "dict-methods": (dict,), "set-methods": (set, frozenset),
             "tuple-methods": (tuple,), "num-methods": (int, float), "bytes-methods": (bytes,)}
    return public(*types[name])


def glob_match(pattern: str, name: str) -> bool:
    """`*` is the only metacharacter; the pattern spans the whole name."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == name
    first, last = parts[0], parts[-1]
    if not name.startswith(first) or len(name) < len(first) + len(last) or not name.endswith(last):
        return False
    pos, end = len(first), len(name) - len(last)
    for mid in parts[1:-1]:
        if not mid:
            continue
        pos = name.find(mid, pos, end)
        if pos < 0:
            return False
        pos += len(mid)
    return True


class NameSet:
    """One list key: exact names and patterns, allowed and denied; DENY wins."""

    __slots__ = ("allow", "allow_patterns", "deny", "deny_patterns", "_cache")

    def __init__(self, allow=(), allow_patterns=(), deny=(), deny_patterns=()) -> None:
        self.allow = frozenset(allow)
        self.allow_patterns = tuple(allow_patterns)
        self.deny = frozenset(deny)
        self.deny_patterns = tuple(deny_patterns)
        self._cache: dict[str, bool] = {}

    def allows(self, name: str) -> bool:
        c = self._cache.get(name)
        if c is None:
            c = self._decide(name)
            if len(self._cache) < 4096:
                self._cache[name] = c
        return c

    def _decide(self, name: str) -> bool:
        if name in self.deny or any(glob_match(p, name) for p in self.deny_patterns):
            return False
        return name in self.allow or any(glob_match(p, name) for p in self.allow_patterns)

    def __bool__(self) -> bool:
        return bool(self.allow or self.allow_patterns)


class Profile:
    """The accepted sub-language and budgets of one profile."""

    def __init__(self, name: str, declared: bool, lists: dict, scalars: dict) -> None:
        self.name = name
        self.label = f"<eval:{name}>" if name else "<eval>"
        self.declared = declared
        self.syntax: NameSet = lists["syntax"]
        self.call: NameSet = lists["call"]
        self.attribute: NameSet = lists["attribute"]
        self.imports: NameSet = lists["imports"]
        self.magic: NameSet = lists["magic"]
        self.namespace: str = scalars["namespace"]
        self.timeout_ms: int = scalars["timeout_ms"]
        self.timeout: float = scalars["timeout_ms"] / 1000.0
        self.max_iterations: int = scalars["max_iterations"]
        self.max_call_depth: int = scalars["max_call_depth"]
        self.max_depth: int = scalars["max_depth"]
        self.max_nodes: int = scalars["max_nodes"]
        self.max_alloc: int = scalars["max_alloc"]
        self.max_leaked_threads: int = scalars["max_leaked_threads"]
        self.cache: dict = {}  # per-profile data the runtime builds once (builtins...)

    def timeout_text(self) -> str:
        ms = self.timeout_ms
        return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"

    def __repr__(self) -> str:
        return f"<eval profile {self.name or '(default)'}>"


def default_profile(name: str = "") -> Profile:
    """A profile with no rule: the minimal core and the default budgets."""
    return _Builder(name).build(declared=False)


# ---------------------------------------------------------------------------
# building profiles


def _suggest(token: str, known) -> str:
    import difflib  # only on a configuration error, which is reported before arming

    close = difflib.get_close_matches(token, sorted(known), n=1)
    return f", closest known token is {close[0]!r}" if close else ""


class _Builder:
    def __init__(self, name: str) -> None:
        self.name = name
        self.allow = {f: set() for f in LIST_KEYS.values()}
        self.allow_pat = {f: [] for f in LIST_KEYS.values()}
        self.deny = {f: set() for f in LIST_KEYS.values()}
        self.deny_pat = {f: [] for f in LIST_KEYS.values()}
        self.scalars = dict(DEFAULTS)
        self.seen: dict[str, str] = {}

    def add_token(self, key: str, raw: str, deny: bool, err, warn) -> None:
        field = LIST_KEYS[key]
        token = raw.strip()
        if not token:
            return err("empty target.")
        if token.startswith("DENY:"):
            return err(f"DENY: applies to a whole line; put `{key}={token}` on a line of its own.")
        if RESERVED_PREFIX in token:
            return err(f"{token!r}: the prefix {RESERVED_PREFIX!r} is reserved for the guard's own helpers.")
        allow = self.deny if deny else self.allow
        pats = self.deny_pat if deny else self.allow_pat
        if "*" in token:
            if key == "eval-syntax":
                return err(f"a pattern is not accepted on {key}: the vocabulary is finite.")
            if len(token.replace("*", "")) < 3:
                warn(f"{key}={token} is a short pattern: it matches many names; narrow it or add a DENY.")
            pats[field].append(token)
            return None
        if key == "eval-syntax":
            if token in SYNTAX_GROUPS:
                allow[field].update(SYNTAX_GROUPS[token])
            elif is_node_name(token):
                allow[field].add(token)
            else:
                return err(f"unknown syntax token {token!r}{_suggest(token, list(SYNTAX_GROUPS) + list(node_names()))}.")
            return None
        if key == "eval-attribute" and token in ATTRIBUTE_GROUPS:
            allow[field].update(attribute_group(token))
            return None
        if not deny and key == "eval-attribute" and token in EXACT_ONLY_ATTRIBUTES:
            warn(f"eval-attribute={token} grants a method that resolves attributes from the contents of "
                 "the string: its template is checked at run time, field by field.")
        if not deny and key == "eval-call" and token in SENSITIVE_CALLS:
            warn(f"eval-call={token} grants a sensitive builtin: it is bound to a guarded shim or reaches "
                 "its own guard, but it widens the reachable surface.")
        allow[field].add(token)
        return None

    def set_scalar(self, key: str, value, err, where: str = "an earlier line") -> None:
        field = SCALAR_KEYS[key]
        if field in self.seen:
            return err(f"{key} is set twice in this profile (already at {self.seen[field]}): a scalar is not a set.")
        self.seen[field] = where
        if field == "namespace":
            if value not in NAMESPACE_MODES:
                return err(f"{key}: unknown mode {value!r}, expected one of {list(NAMESPACE_MODES)}.")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return err(f"{key}: the value must be a non-negative integer, not {value!r}.")
        self.scalars[field] = value
        return None

    def build(self, declared: bool = True) -> Profile:
        lists = {}
        for field in LIST_KEYS.values():
            allow = set(self.allow[field])
            deny = set(self.deny[field])
            if field == "syntax":
                allow |= CORE_NODES
            if field == "attribute":
                # A group or pattern never grants format/format_map: only an exact line does.
                deny |= EXACT_ONLY_ATTRIBUTES - allow
            lists[field] = NameSet(allow, self.allow_pat[field], deny, self.deny_pat[field])
        return Profile(self.name, declared, lists, self.scalars)


def parse_scalar_text(key: str, value: str):
    """The value of a scalar key as written in a rule file (`2s`, `10MB`, `1_000`)."""
    value = value.strip()
    if value.startswith("DENY:") or "*" in value:
        raise ValueError(f"{key}: `DENY:` and patterns apply to list keys only.")
    if key == "eval-namespace":
        return value
    raw = value.replace("_", "")
    try:
        if key == "eval-timeout":
            for suffix, mult in (("ms", 1), ("s", 1000), ("m", 60000)):
                if raw.endswith(suffix):
                    return int(round(float(raw[: -len(suffix)]) * mult))
            return int(round(float(raw) * 1000))
        if key == "eval-max-alloc":
            for suffix, mult in (("KB", 10**3), ("MB", 10**6), ("GB", 10**9)):
                if raw.upper().endswith(suffix):
                    return int(float(raw[:-2]) * mult)
        return int(raw)
    except ValueError:
        raise ValueError(f"{key}: invalid value {value!r}.") from None


def profiles_from_section(section: dict) -> tuple[dict[str, Profile], list[str], list[str]]:
    """Profiles from the rules document's ``"eval"`` section.

    Returns (profiles by name, errors, warnings); the default profile is ``""``.
    With ``present`` false, the default profile exists but is not declared."""
    profiles: dict[str, Profile] = {}
    errors: list[str] = []
    warnings: list[str] = []
    raw = section.get("profiles") if isinstance(section, dict) else None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return {"": default_profile()}, ["eval.profiles: an object is expected."], warnings
    present = bool(section.get("present")) if isinstance(section, dict) else False
    for name, spec in raw.items():
        where = f"eval profile {name!r}" if name else "eval profile (default)"
        if not isinstance(name, str) or not isinstance(spec, dict):
            errors.append(f"{where}: an object is expected.")
            continue
        b = _Builder(name)
        for key, field in SECTION_FIELDS.items():
            entries = spec.get(field, [])
            if not isinstance(entries, list):
                errors.append(f"{where}: {key}: a list is expected.")
                continue
            for entry in entries:
                if not isinstance(entry, str):
                    errors.append(f"{where}: {key}: {entry!r} is not a string.")
                    continue
                deny = entry.startswith("DENY:")
                b.add_token(key, entry[5:] if deny else entry, deny,
                            lambda d, k=key: errors.append(f"{where}: In '{k}', {d}"), warnings.append)
        for key, field in SCALAR_KEYS.items():
            if field in spec:
                b.set_scalar(key, spec[field], lambda d: errors.append(f"{where}: {d}"))
        profiles[name] = b.build(declared=present)
    if "" not in profiles:
        profiles[""] = default_profile()
    return profiles, errors, warnings


def profiles_from_lines(lines, source: str = "<rules>") -> tuple[dict[str, Profile], list[str], list[str]]:
    """Profiles from ``eval-…=…`` lines as written in a rule file.

    Returns (profiles by name, errors as ``<source>(<line>): …``, warnings).
    The default profile ``""`` is always present; it is declared when at least
    one line names it."""
    builders: dict[str, _Builder] = {}
    errors: list[str] = []
    warnings: list[str] = []
    for ln, text in enumerate(lines, 1):
        line = text.strip()
        if not line or line.startswith("#"):
            continue
        ref = f"{source}({ln})"

        def err(detail: str, ref=ref, line=line) -> None:
            errors.append(f"{ref}: In {line!r}, {detail}")

        key_part, eq, value = line.partition("=")
        if not eq or not key_part.startswith("eval-"):
            errors.append(f"{ref}: Invalid rule {line!r}")
            continue
        key, _, name = key_part.strip().partition(":")
        b = builders.setdefault(name, _Builder(name))
        value = value.strip()
        if key in LIST_KEYS:
            deny = value.startswith("DENY:")
            for tok in (value[5:] if deny else value).split(","):
                b.add_token(key, tok, deny, err, warnings.append)
        elif key in SCALAR_KEYS:
            try:
                parsed = parse_scalar_text(key, value)
            except ValueError as e:
                err(str(e))
                continue
            b.set_scalar(key, parsed, err, f"line {ln}")
        else:
            err(f"unknown key {key!r}{_suggest(key, list(LIST_KEYS) + list(SCALAR_KEYS))}.")
    profiles = {name: b.build(declared=True) for name, b in builders.items()}
    if "" not in profiles:
        profiles[""] = default_profile()
    return profiles, errors, warnings

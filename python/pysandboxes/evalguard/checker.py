"""Static check of a parsed source against a profile (phase 1).

A courtesy, not the barrier: it reads names as written, and a computed name
is never seen here.  The barriers are the bounded namespace and the runtime
helpers (runtime.py).  What it gives is one exhaustive report, each
violation with its position and the exact rule line that would allow it, so
whoever wrote the code (often a model) corrects it in one round.

The walk is iterative: sources nest deeper than Python's recursion limit
(``1+1+…+1`` is a left-leaning chain of BinOp), and the size limits are
checked before anything else.
"""
from __future__ import annotations

import ast

from .rules import FRAME_CAPTURE, GROUP_OF_NODE, RESERVED_PREFIX, Profile

_MARKERS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
# Gated by their own checks rather than by eval-syntax.
_ALWAYS = frozenset({"Attribute", "Call", "keyword"})

_MAGIC_WARNING = {
    **dict.fromkeys(("__class__", "__base__", "__bases__", "__mro__", "__subclasses__", "__init_subclass__"),
                    "opens the whole type hierarchy"),
    **dict.fromkeys(("__globals__", "__builtins__", "__dict__", "__closure__", "__code__", "__func__",
                     "__self__", "__getattribute__", "__reduce__", "__reduce_ex__"),
                    "reaches the evaluation namespace and the guard's helpers"),
    "__import__": "imports any module the eval-import rules name",
}
_IMPORT_WARNING = {
    "os": "os exposes the process environment", "posix": "posix exposes the process environment",
    "sys": "sys reaches the interpreter's frames and modules",
    "subprocess": "subprocess starts programs", "socket": "socket opens connections",
    "ctypes": "ctypes calls native code", "importlib": "importlib imports anything",
    "builtins": "builtins holds the unguarded builtins", "inspect": "inspect reads frames",
    "gc": "gc reaches every object", "operator": "operator.attrgetter reads attributes in C",
    "pickle": "pickle runs code while loading", "marshal": "marshal builds code objects",
    "code": "code runs an interpreter", "pdb": "pdb runs a debugger", "types": "types builds code and functions",
    "string": "string.Formatter resolves fields in Python", "shutil": "shutil changes files",
    "functools": "functools.partial binds callables",
}
_CALL_WARNING = {
    "getattr": "bound to a guarded shim", "hasattr": "bound to a guarded shim",
    "vars": "bound to a guarded shim", "dir": "bound to a guarded shim", "type": "bound to a guarded shim",
    "open": "reaches the file rules", "eval": "re-enters this guard", "exec": "re-enters this guard",
    "compile": "re-enters this guard", "__import__": "imports what eval-import names",
}


class Violation:
    """One refused construct, with the rule that would allow it."""

    __slots__ = ("lineno", "col", "end_lineno", "end_col", "message", "key", "token", "remedy", "warning",
                 "anchored", "also")

    def __init__(self, node, message: str, key: str, token: str, remedy: str = "", warning: str = "") -> None:
        self.anchored = node is not None  # the source line is shown with carets
        self.also: list[str] = []         # other nodes of the same group on the same line
        self.lineno = getattr(node, "lineno", 1) or 1
        self.col = getattr(node, "col_offset", 0) or 0
        self.end_lineno = getattr(node, "end_lineno", None) or self.lineno
        self.end_col = getattr(node, "end_col_offset", None)
        self.message = message
        self.key = key          # the list key that grants it, "" when no rule can
        self.token = token      # the exact token that key needs
        self.remedy = remedy    # an explanation when key is ""
        self.warning = warning

    @property
    def learnable(self) -> bool:
        return bool(self.key) and self.key in ("eval-syntax", "eval-call", "eval-attribute",
                                              "eval-import", "eval-magic")

    def rule(self, profile_name: str) -> str:
        key = f"{self.key}:{profile_name}" if profile_name else self.key
        return f"{key}={self.token}"


class Position:
    """Where a node was: what a later violation needs, without the tree."""

    __slots__ = ("lineno", "col_offset", "end_lineno", "end_col_offset")

    def __init__(self, node) -> None:
        self.lineno = getattr(node, "lineno", 1)
        self.col_offset = getattr(node, "col_offset", 0)
        self.end_lineno = getattr(node, "end_lineno", None)
        self.end_col_offset = getattr(node, "end_col_offset", None)


class Analysis:
    """What phase 1 found in one source."""

    __slots__ = ("violations", "free_calls", "free_loads", "nodes", "depth", "has_class", "has_import")

    def __init__(self) -> None:
        self.violations: list[Violation] = []
        self.free_calls: list[tuple[str, Position]] = []   # calls of names the source does not bind
        self.free_loads: list[tuple[str, Position]] = []   # other reads of such names
        self.nodes = 0
        self.depth = 0
        self.has_class = False
        self.has_import = False


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def measure(tree: ast.AST) -> tuple[int, int]:
    """(node count, nesting depth), context and operator markers excluded."""
    count = 0
    depth = 0
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, _MARKERS):
            continue
        count += 1
        if d > depth:
            depth = d
        for child in ast.iter_child_nodes(node):
            stack.append((child, d + 1))
    return count, depth


class _Walker:
    def __init__(self, profile: Profile, out: Analysis) -> None:
        self.p = profile
        self.out = out
        self.bound: set[str] = set()
        self.calls: list[tuple[str, ast.AST]] = []
        self.loads: list[tuple[str, ast.AST]] = []
        self.called: set[int] = set()

    def add(self, node, message, key="", token="", remedy="", warning="") -> None:
        self.out.violations.append(Violation(node, message, key, token, remedy, warning))

    # -- names -----------------------------------------------------------------

    def reserved(self, node, name: str | None, kind: str) -> bool:
        if name and name.startswith(RESERVED_PREFIX):
            self.add(node, f"{kind} {name!r} uses the reserved prefix {RESERVED_PREFIX!r}",
                     remedy="rename it: the prefix belongs to the guard's own helpers")
            return True
        return False

    def identifier(self, node, name: str, kind: str) -> None:
        """A name read or bound by the source: the prefix, and dunders."""
        if self.reserved(node, name, kind):
            return
        if _is_dunder(name) and not self.p.magic.allows(name) and not self.p.call.allows(name):
            self.add(node, f"{kind} {name!r} is not allowed", "eval-magic", name,
                     warning=_MAGIC_WARNING.get(name, ""))

    def attribute(self, node, name: str, kind: str = "attribute") -> None:
        """An attribute read named in the source (also `from m import name`
        and class patterns, which read attributes in C)."""
        if self.reserved(node, name, kind):
            return
        if name in FRAME_CAPTURE:
            self.add(node, f"{kind} {name!r} is not allowed",
                     remedy="frame capture is always refused; no eval- rule grants it")
        elif _is_dunder(name):
            if not self.p.magic.allows(name):
                self.add(node, f"{kind} {name!r} is not allowed", "eval-magic", name,
                         warning=_MAGIC_WARNING.get(name, ""))
        elif not self.p.attribute.allows(name):
            self.add(node, f"{kind} {name!r} is not allowed", "eval-attribute", name,
                     warning="resolves attributes from the template: prefer an f-string"
                     if name in ("format", "format_map") else "")

    def module(self, node, name: str) -> None:
        if self.reserved(node, name, "module"):
            return
        if not self.p.imports.allows(name):
            root = name.partition(".")[0]
            self.add(node, f"import {name!r} is not allowed", "eval-import", name,
                     warning=_IMPORT_WARNING.get(root, ""))

    # -- the walk ------------------------------------------------------------

    def walk(self, tree: ast.AST) -> None:
        stack = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, _MARKERS):
                continue
            name = type(node).__name__
            if name not in _ALWAYS and not self.p.syntax.allows(name):
                group = GROUP_OF_NODE.get(name)
                self.add(node, f"{name!r} is not allowed", "eval-syntax", name,
                         remedy=group or "")
            visit = getattr(self, "visit_" + name, None)
            if visit is not None:
                visit(node)
            stack.extend(ast.iter_child_nodes(node))

    def visit_Name(self, node: ast.Name) -> None:
        self.identifier(node, node.id, "identifier")
        if isinstance(node.ctx, ast.Load):
            if id(node) not in self.called:
                self.loads.append((node.id, node))
        else:
            self.bound.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            what = "assigned" if isinstance(node.ctx, ast.Store) else "deleted"
            self.add(node, f"attribute {node.attr!r} is {what}",
                     remedy="the sub-language does not assign or delete attributes")
        self.attribute(node, node.attr)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and isinstance(node.func.ctx, ast.Load):
            self.called.add(id(node.func))
            self.calls.append((node.func.id, node))
        for kw in node.keywords:
            self.reserved(kw, kw.arg, "keyword")

    def _def(self, node) -> None:
        self.reserved(node, node.name, "name")
        self.bound.add(node.name)

    visit_FunctionDef = visit_AsyncFunctionDef = _def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._def(node)
        self.out.has_class = True

    def visit_arg(self, node: ast.arg) -> None:
        self.reserved(node, node.arg, "argument")
        self.bound.add(node.arg)

    def visit_Import(self, node: ast.Import) -> None:
        self.out.has_import = True
        for alias in node.names:
            self.module(node, alias.name)
            if alias.asname:
                self.identifier(node, alias.asname, "name")
            self.bound.add(alias.asname or alias.name.partition(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.out.has_import = True
        if node.level:
            self.add(node, "a relative import is not allowed", remedy="evaluated code has no package")
            return
        self.module(node, node.module or "")
        for alias in node.names:
            if alias.name == "*":
                self.add(node, f"'from {node.module} import *' is not allowed",
                         remedy="name each import: a star import binds names no rule sees")
                continue
            self.attribute(node, alias.name, "imported name")
            if alias.asname:
                self.identifier(node, alias.asname, "name")
            self.bound.add(alias.asname or alias.name)

    def visit_alias(self, node) -> None:  # handled by the statements
        return None

    def _names(self, node) -> None:
        for n in node.names:
            self.identifier(node, n, "name")
            self.bound.add(n)

    visit_Global = visit_Nonlocal = _names

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.identifier(node, node.name, "name")
            self.bound.add(node.name)

    def _capture(self, node) -> None:
        if node.name:
            self.identifier(node, node.name, "name")
            self.bound.add(node.name)

    visit_MatchAs = visit_MatchStar = _capture

    def visit_MatchMapping(self, node) -> None:
        if node.rest:
            self.identifier(node, node.rest, "name")
            self.bound.add(node.rest)

    def visit_MatchClass(self, node) -> None:
        for attr in node.kwd_attrs:
            self.attribute(node, attr, "matched attribute")

    def _type_param(self, node) -> None:
        self.reserved(node, node.name, "name")
        self.bound.add(node.name)

    visit_TypeVar = visit_ParamSpec = visit_TypeVarTuple = _type_param


def analyse(tree: ast.AST, profile: Profile, text: str) -> Analysis:
    """Every way `tree` leaves the profile's sub-language, except the calls
    and reads of free names, which depend on the namespace of each call."""
    out = Analysis()
    out.nodes, out.depth = measure(tree)
    if out.nodes > profile.max_nodes:
        out.violations.append(Violation(None, f"the source holds {out.nodes} nodes", "eval-max-nodes",
                                        str(out.nodes)))
    if out.depth > profile.max_depth:
        out.violations.append(Violation(None, f"the source nests {out.depth} levels deep", "eval-max-depth",
                                        str(out.depth)))
    if out.violations:
        return out  # too large to walk further: the limits exist for that
    w = _Walker(profile, out)
    w.walk(tree)
    # Positions, not nodes: the analysis is cached, the tree must not be.
    out.free_calls = [(n, Position(node)) for n, node in w.calls if n not in w.bound]
    out.free_loads = [(n, Position(node)) for n, node in w.loads if n not in w.bound]
    if RESERVED_PREFIX in text and not any(v.message.find(RESERVED_PREFIX) >= 0 for v in out.violations):
        pos = text.index(RESERVED_PREFIX)
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1)
        v = Violation(None, f"the source mentions the reserved prefix {RESERVED_PREFIX!r}", "", "",
                      remedy="the prefix belongs to the guard's own helpers")
        v.lineno, v.end_lineno, v.col, v.end_col = line, line, col, col + len(RESERVED_PREFIX)
        v.anchored = True
        out.violations.append(v)
    return out


def depth_violation(text: str, exc: BaseException) -> Violation:
    """A parser that gave up on nesting, reported as eval-max-depth."""
    depth = cur = 0
    for ch in text:
        if ch in "([{":
            cur += 1
            depth = max(depth, cur)
        elif ch in ")]}":
            cur -= 1
    if depth > 1:
        return Violation(None, f"the source nests {depth} levels deep (the parser refused it: {exc})",
                         "eval-max-depth", str(depth))
    return Violation(None, f"the source nests too deeply for the parser ({type(exc).__name__}: {exc})", "", "",
                     remedy="the interpreter's own limit; shorten the source")


# ---------------------------------------------------------------------------
# the report


def _col_chars(line: str, col: int) -> int:
    """A UTF-8 byte offset of the AST as a character offset."""
    return len(line.encode("utf-8")[:col].decode("utf-8", "replace"))


_SHOWN = 100


def render(v: Violation, lines: list[str], profile_name: str) -> str:
    out = [f"  line {v.lineno}, col {v.col}: {v.message}"]
    if v.anchored and 0 < v.lineno <= len(lines):
        line = lines[v.lineno - 1].rstrip("\r\n")
        start = _col_chars(line, v.col)
        if v.end_col is not None and v.end_lineno == v.lineno:
            end = _col_chars(line, v.end_col)
        else:
            end = len(line)
        if len(line) > _SHOWN:  # a window around the construct, not a whole minified line
            lo = max(0, min(start - 20, len(line) - _SHOWN))
            line, start, end = line[lo:lo + _SHOWN], start - lo, min(end, lo + _SHOWN) - lo
        out.append(f"      {line}")
        out.append("      " + " " * start + "^" * max(1, end - start))
    if v.key:
        add = f"    add: {v.rule(profile_name)}"
        if v.key == "eval-syntax" and v.remedy:
            group = f"{v.key}:{profile_name}" if profile_name else v.key
            narrow = ", ".join([v.token] + v.also)
            add = f"    add: {group}={v.remedy}        (or, narrower: {group}={narrow})"
        if v.warning:
            add += f"    ⚠ {v.warning}"
        out.append(add)
    else:
        out.append(f"    no rule: {v.remedy}")
    return "\n".join(out)


def report(label: str, text: str, violations: list[Violation], profile_name: str):
    """(headline, one block per violation, first violation) in source order."""
    ordered, seen, groups = [], set(), {}
    for v in sorted(violations, key=lambda v: (v.lineno, v.col, v.end_lineno, v.end_col or 0)):
        if (v.lineno, v.col, v.message) in seen:  # one BinOp chain, one report line
            continue
        seen.add((v.lineno, v.col, v.message))
        if v.key == "eval-syntax" and v.remedy:
            first = groups.get((v.lineno, v.remedy))
            if first is not None:  # `import os` is an Import and an alias: one group, one block
                if v.token != first.token and v.token not in first.also:
                    first.also.append(v.token)
                continue
            groups[(v.lineno, v.remedy)] = v
            v.also = []
        ordered.append(v)
    lines = text.splitlines()
    headline = f"{len(ordered)} rules violated in {label}"
    return headline, [render(v, lines, profile_name) for v in ordered], ordered[0]

"""Rewrite an accepted tree so what phase 1 cannot see is checked at run time.

The injected calls name helpers bound into the namespace of each evaluation
(runtime.Evaluation); phase 1 never sees them, since it ran before, and any
source naming the ``__sb_`` prefix was refused there.  Every helper name ends
with ``__`` so that class bodies do not mangle it.

* attribute reads          -> ``__sb_getattr__(obj, 'name')``
* ``+ * ** << % //``       -> ``__sb_add__(a, b)``... (size and cost checked
                              before computing); constant operands are folded
                              here when the check passes, so ``(3 + 4) * 2``
                              costs nothing at run time
* augmented forms          -> ``x = __sb_iop__('*', x, v)``, ``__sb_augitem__``
* loop bodies              -> ``__sb_tick__()`` first
* comprehension clauses    -> an extra ``if __sb_tickt__()`` condition
* function bodies          -> ``__sb_enter__()`` + ``try/finally __sb_leave__()``
* lambdas                  -> ``__sb_func__(lambda ...)``
* f-string fields with a spec -> ``__sb_format__(value, conversion, spec)``
* names of capability builtins -> ``__sb_cap__(name)`` (a raw ``getattr``
                              reached through a caller's namespace becomes the
                              guarded shim); every name read, for code that
                              runs in a namespace the caller supplied
* except handlers          -> ``__sb_rethrow__()`` first: EvalInterrupted is
                              never swallowed by ``except BaseException``
"""
from __future__ import annotations

import ast

from . import runtime, sizes

_BINOP_HELPERS = {ast.Add: "__sb_add__", ast.Mult: "__sb_mul__", ast.Pow: "__sb_pow__",
                  ast.LShift: "__sb_lshift__", ast.Mod: "__sb_mod__", ast.FloorDiv: "__sb_floordiv__"}
_OP_SYMBOL = {ast.Add: "+", ast.Mult: "*", ast.Pow: "**", ast.LShift: "<<", ast.Mod: "%", ast.FloorDiv: "//"}
_FOLDABLE = (int, float, complex, str, bytes, bool)
_FOLD_MAX = 4096  # largest folded constant (characters, bytes, or bits / 8)


def _call(name: str, args: list) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])


def _stmt(name: str) -> ast.Expr:
    return ast.Expr(value=_call(name, []))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _small(value) -> bool:
    if isinstance(value, (str, bytes)):
        return len(value) <= _FOLD_MAX
    if isinstance(value, int):
        return value.bit_length() <= _FOLD_MAX * 8
    return isinstance(value, (float, complex))


class Injector(ast.NodeTransformer):
    def __init__(self, max_alloc: int, wrap_names: bool = False, lazy_annotations: bool = False) -> None:
        self.max_alloc = max_alloc
        self.wrap_names = wrap_names
        # ``from __future__ import annotations``: annotations are kept as their
        # source text and never evaluated, so a rewrite would only show up in
        # ``__annotations__`` (``'__sb_cap__(x)'`` instead of ``'x'``).
        self.lazy_annotations = lazy_annotations

    def _visit_skipping(self, node, field: str):
        """generic_visit without descending into `field` (a lazy annotation)."""
        if not self.lazy_annotations:
            return self.generic_visit(node)
        kept = getattr(node, field)
        setattr(node, field, None)
        self.generic_visit(node)
        setattr(node, field, kept)
        return node

    def visit_arg(self, node: ast.arg):
        return self._visit_skipping(node, "annotation")

    def visit_AnnAssign(self, node: ast.AnnAssign):
        return self._visit_skipping(node, "annotation")

    # -- reads ---------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(_call("__sb_getattr__", [node.value, ast.Constant(value=node.attr)]), node)

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and (self.wrap_names or node.id in runtime.CAP_NAMES):
            return ast.copy_location(_call("__sb_cap__", [node]), node)
        return node

    # -- operators -----------------------------------------------------------

    def _fold(self, node, op, left, right):
        """A Constant for an operation on constants that passes the size check."""
        if not (isinstance(left, ast.Constant) and isinstance(right, ast.Constant)):
            return None
        a, b = left.value, right.value
        if not isinstance(a, _FOLDABLE) or not isinstance(b, _FOLDABLE):
            return None
        if not sizes.fits(_OP_SYMBOL[op], a, b, self.max_alloc):
            return None
        try:
            value = runtime.BINOPS[_OP_SYMBOL[op]](a, b)
        except Exception:
            return None  # the error belongs to run time
        if not _small(value):
            return None
        return ast.copy_location(ast.Constant(value=value), node)

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        helper = _BINOP_HELPERS.get(type(node.op))
        if helper is None:
            return node
        folded = self._fold(node, type(node.op), node.left, node.right)
        if folded is not None:
            return folded
        return ast.copy_location(_call(helper, [node.left, node.right]), node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant) \
                and type(node.operand.value) in (int, float, complex):
            value = -node.operand.value if isinstance(node.op, ast.USub) else +node.operand.value
            return ast.copy_location(ast.Constant(value=value), node)
        return node

    def _index(self, node):
        """A subscript index as an expression (a Slice is only valid inside [])."""
        if isinstance(node, ast.Slice):
            parts = [p if p is not None else ast.Constant(value=None) for p in (node.lower, node.upper, node.step)]
            return ast.copy_location(_call("__sb_slice__", parts), node)
        if isinstance(node, ast.Tuple):
            return ast.copy_location(ast.Tuple(elts=[self._index(e) for e in node.elts], ctx=ast.Load()), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign):
        self.generic_visit(node)
        op = type(node.op)
        if op not in _OP_SYMBOL:
            return node
        symbol = ast.Constant(value=_OP_SYMBOL[op])
        target = node.target
        if isinstance(target, ast.Name):
            read = ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()), target)
            value = _call("__sb_iop__", [symbol, read, node.value])
            return ast.copy_location(ast.Assign(targets=[target], value=value), node)
        if isinstance(target, ast.Subscript):
            call = _call("__sb_augitem__", [symbol, target.value, self._index(target.slice), node.value])
            return ast.copy_location(ast.Expr(value=call), node)
        return node  # attribute targets were refused by phase 1

    # -- budgets -------------------------------------------------------------

    def _loop(self, node):
        self.generic_visit(node)
        node.body = [_stmt("__sb_tick__")] + node.body
        return node

    visit_For = visit_AsyncFor = visit_While = _loop

    def visit_comprehension(self, node: ast.comprehension):
        self.generic_visit(node)
        node.ifs = [_call("__sb_tickt__", [])] + node.ifs
        return node

    def _function(self, node):
        self._visit_skipping(node, "returns")
        body = node.body
        head = [body[0]] if body and _is_docstring(body[0]) else []
        rest = body[len(head):] or [ast.Pass()]
        node.body = head + [_stmt("__sb_enter__"),
                            ast.Try(body=rest, handlers=[], orelse=[], finalbody=[_stmt("__sb_leave__")])]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node: ast.Lambda):
        self.generic_visit(node)
        return ast.copy_location(_call("__sb_func__", [node]), node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler):
        self.generic_visit(node)
        node.body = [_stmt("__sb_rethrow__")] + node.body
        return node

    # -- patterns: their class and value positions must stay dotted names ----

    def visit_MatchValue(self, node):
        return node  # a dotted name read in C; phase 1 checked its attributes

    def visit_MatchMapping(self, node):
        node.patterns = [self.visit(p) for p in node.patterns]
        return node  # keys are literals or dotted names

    def visit_MatchClass(self, node):
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    # -- formatting ----------------------------------------------------------

    def visit_FormattedValue(self, node: ast.FormattedValue):
        self.generic_visit(node)
        if node.format_spec is None:
            return node
        call = _call("__sb_format__", [node.value, ast.Constant(value=node.conversion), node.format_spec])
        return ast.copy_location(ast.FormattedValue(value=call, conversion=-1, format_spec=None), node)


def inject(tree: ast.AST, max_alloc: int, wrap_names: bool = False, lazy_annotations: bool = False) -> ast.AST:
    """Rewrite `tree` in place (it must have passed phase 1) and return it.

    wrap_names: pass every name read through ``__sb_cap__`` (code that runs
    in a namespace the caller supplied, whose values were never mapped).
    lazy_annotations: the code is compiled under ``from __future__ import
    annotations``; its annotations are left as written."""
    tree = Injector(max_alloc, wrap_names, lazy_annotations).visit(tree)
    return ast.fix_missing_locations(tree)

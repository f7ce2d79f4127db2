"""Sizes and costs, estimated before an operation runs (``eval-max-alloc``
and the time left of ``eval-timeout``).

``10 ** 10**9`` hangs CPython inside C with no way back, ``[0] * 10**10``
allocates before any check could fire, and ``'%0999999999d' % 1`` pads in C:
so the result is measured from the operands first.  Estimates, in bytes: 1
per character (4 when the string is not ASCII), 1 per byte, 8 per list or
tuple item, bits / 8 for integers.  Costs are generous models of CPython's
big-integer algorithms (Karatsuba multiplication, schoolbook division).
"""
from __future__ import annotations

import math as _math

from . import _exc

_isinstance = isinstance
_type = type

_ITEM = {str: 1, bytes: 1, bytearray: 1, list: 8, tuple: 8}


def _itemsize(x) -> int:
    size = _ITEM.get(_type(x))
    if size is None:
        for base, s in _ITEM.items():
            if _isinstance(x, base):
                size = s
                break
        else:
            return 0
    if size == 1 and _isinstance(x, str) and not x.isascii():
        size = 4
    return size


def _is_int(x) -> bool:
    return _isinstance(x, int)


def result_size(op: str, a, b) -> int:
    """Bytes the result of `a op b` would take, when it can grow (0 otherwise)."""
    if op == "*":
        if _is_int(a) and _is_int(b):
            return (a.bit_length() + b.bit_length()) // 8
        if _is_int(b):
            seq, n = a, b
        elif _is_int(a):
            seq, n = b, a
        else:
            return 0
        size = _itemsize(seq)
        return size * len(seq) * n if size and n > 0 else 0
    if op == "**":
        if _is_int(a) and _is_int(b) and b > 0 and (a > 1 or a < -1):
            return int(b * _math.log2(abs(a))) // 8 + 1
        return 0
    if op == "<<":
        if _is_int(a) and _is_int(b) and b > 0 and a:
            return (a.bit_length() + b) // 8
        return 0
    if op == "+":
        size = _itemsize(a)
        if size and _itemsize(b) and not _is_int(a):
            try:
                return (len(a) + len(b)) * size
            except TypeError:
                return 0
    return 0


def _mul_cost(na: float, nb: float) -> float:
    """Seconds to multiply integers of na and nb 30-bit digits (generous)."""
    small, big = (na, nb) if na <= nb else (nb, na)
    if small < 70:
        return small * big * 2e-9
    return 1.2e-8 * (big / small) * small ** 1.585


def op_cost(op: str, a, b) -> float:
    """Seconds a big-integer operation may take (0 for everything else)."""
    if not (_is_int(a) and _is_int(b)):
        return 0.0
    la, lb = a.bit_length(), b.bit_length()
    if op == "**":
        if b <= 0 or a in (0, 1, -1):
            return 0.0
        r = b * _math.log2(abs(a)) / 30
        return 1.5 * _mul_cost(r / 2, r / 2) if r > 1000 else 0.0
    if la < 32768 and lb < 32768:
        return 0.0
    if op == "*":
        return _mul_cost(la / 30, lb / 30)
    if op in ("//", "%"):
        na, nb = la / 30, lb / 30
        return 4e-9 * nb * max(na - nb, 1) if na > nb else 0.0
    return 0.0


def fits(op: str, a, b, budget: int) -> bool:
    """Whether `a op b` passes the size checks (used to fold constants)."""
    if result_size(op, a, b) > budget or op_cost(op, a, b) > 0.001:
        return False
    if op == "%" and _isinstance(a, (str, bytes, bytearray)):
        try:
            check_printf(a, b, budget)
        except BaseException:
            return False
    return True


def _short(x) -> str:
    if _is_int(x) and not _isinstance(x, bool):
        n = x.bit_length()
        return repr(x) if n < 64 else f"<int of {n} bits>"
    if _isinstance(x, (str, bytes, bytearray, list, tuple)):
        return f"<{_type(x).__name__} of length {len(x)}>"
    return f"<{_type(x).__name__}>"


def refuse_alloc(what: str, size: int, budget: int) -> BaseException:
    return _exc.eval_denied(what, "eval-max-alloc",
                            f"It would allocate about {size} bytes, more than eval-max-alloc={budget}; "
                            "raise eval-max-alloc to allow it.")


def _spec_numbers(spec: str):
    n = ""
    for ch in spec:
        if "0" <= ch <= "9":
            n += ch
        elif n:
            yield n
            n = ""
    if n:
        yield n


def check_spec(spec, budget: int) -> None:
    """A width or precision padding a formatted field past eval-max-alloc."""
    if not _isinstance(spec, str):
        return
    for n in _spec_numbers(spec):
        if len(n) > 18 or int(n) > budget:
            raise refuse_alloc(f"format spec {spec!r}", int(n) if len(n) <= 18 else 10**18, budget)


def check_printf(template, values, budget: int) -> None:
    """Widths and precisions of a `%` template, `*` ones read from the values."""
    text = template if _isinstance(template, str) else bytes(template).decode("latin-1")
    n = len(text)
    star = False
    i = text.find("%")
    while 0 <= i < n - 1:
        j = i + 1
        if text[j] == "%":
            i = text.find("%", j + 1)
            continue
        if text[j] == "(":
            j = text.find(")", j)
            if j < 0:
                return
            j += 1
        while j < n and text[j] in "-#0 +":
            j += 1
        for _ in range(2):
            k = j
            while j < n and "0" <= text[j] <= "9":
                j += 1
            if j > k and (j - k > 18 or int(text[k:j]) > budget):
                raise refuse_alloc(f"format {text[i:j + 1]!r}", int(text[k:j]) if j - k <= 18 else 10**18, budget)
            if j < n and text[j] == "*":
                star = True
                j += 1
            if j < n and text[j] == ".":
                j += 1
                continue
            break
        i = text.find("%", j)
    if star:
        for v in values if _isinstance(values, tuple) else (values,):
            if _is_int(v) and not _isinstance(v, bool) and v > budget:
                raise refuse_alloc(f"format width {v}", v, budget)

"""A user privacy profile given as an expression in eps: ``expr --profile "EXPR"``.

The text is parsed with Python's :mod:`ast` (never ``eval``) and only a
whitelist is accepted: numbers (taken exactly from their text: ``0.1`` is
1/10), the variable ``eps``, the constants ``e`` and ``pi``, the operators
``+ - * / **`` and unary ``-``, and the functions ``exp, expm1, log, log1p,
sqrt, erfc, Phi`` (standard normal cdf), ``abs, min, max``. Anything else
(attributes, names, calls of other functions, comprehensions, strings, ...)
is refused with :class:`InvalidParameter` naming ``--profile``. The
expression is evaluated in ball arithmetic, so the enclosure is sound for
every ball ``eps``; e.g. a division by a ball containing 0 gives an
unbounded ball, never a wrong number.

The user asserts that the expression *is* a privacy profile; dpverify does
not know it to be non-increasing, so the staircase bounds (GDPT Thm 4.6) use
the enclosure of the expression over each whole cell instead of its value
at the left end, which is sound for any function.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Mapping

from fractions import Fraction

from flint import arb, ctx

from ..ball import ball, lower_decimal, normal_cdf, parse_exact, upper_decimal, working_precision
from ..errors import InvalidParameter, MalformedCertificate
from ..limits import MAX_EXPR_EXP_ARGUMENT
from ..certificate.format import EXPR_ALLOWED, EXPR_FUNCS
from ..recheck.limits import MAX_EXPR_CHARS, MAX_EXPR_NODES, check_expression
from .base import register_profile

__all__ = ["ExprProfile", "parse_profile_expr", "CAPS"]

#: verify's caps on an expression's parse, applied here too (check_expression below)
_MAX_TEXT = MAX_EXPR_CHARS
_MAX_NODES = MAX_EXPR_NODES
_MAX_INT_POWER = 1000
_MAX_EXP_ARGUMENT = MAX_EXPR_EXP_ARGUMENT
#: the caps, for --help and docs/reference/inputs.md
CAPS = (f"{_MAX_TEXT} characters and {_MAX_NODES} parts, integer powers within +-{_MAX_INT_POWER}, "
        f"exponentials and powers within e^+-{_MAX_EXP_ARGUMENT:.0e}")


def _bounded_exponent(t: arb, what: str) -> None:
    """Refuse an exponential argument beyond the cap before arb evaluates it."""
    if not t.is_finite():
        # a log of 0 or a division by 0 inside it, not a large value (adv36 M4)
        raise _refuse(f"the expression is undefined or too large to compute: {what} has no finite argument "
                      "(a log of 0, a division by 0 or a power of 0 inside it)")
    if abs(t).upper() > _MAX_EXP_ARGUMENT:
        raise _refuse(f"the expression is undefined or too large to compute: {what} is beyond "
                      f"e^{_MAX_EXP_ARGUMENT:.0e} (the cap on expression profiles)")


def _exp(x: arb) -> arb:
    _bounded_exponent(x, "an exponential")
    return x.exp()


def _expm1(x: arb) -> arb:
    _bounded_exponent(x, "an exponential")
    return x.expm1()


def _min(x: arb, y: arb) -> arb:
    if x <= y:
        return x
    if y <= x:
        return y
    return (x + y - abs(x - y)) / 2


def _max(x: arb, y: arb) -> arb:
    if x >= y:
        return x
    if y >= x:
        return y
    return (x + y + abs(x - y)) / 2


def _real(what: str, x: arb, bad: bool) -> None:
    """Refuse a value that is certainly outside a function's real domain (the
    result would be complex or undefined); a ball that only touches the edge
    is left to arb, whose answer is then an unbounded ball (undecided)."""
    if bad:
        raise _refuse(f"{what} of {_short(x)} is not a real number (the expression is undefined there)")


def _log(x: arb) -> arb:
    _real("log", x, bool(x < 0))
    return x.log()


def _log1p(x: arb) -> arb:
    _real("log1p", x, bool(x < -1))
    return x.log1p()


def _sqrt(x: arb) -> arb:
    _real("sqrt", x, bool(x < 0))
    return x.sqrt()


def _power(base: arb, exponent: arb) -> arb:
    """base ** exponent for a non-integer exponent: exp(exponent log base), real for base > 0;
    0 ** b = 0 for b > 0 (eps**0.5 at eps = 0, as verify's walker has it: recheck/profiles.py)."""
    _real("a power with a non-integer exponent", base, bool(base < 0))
    if base.is_zero() and exponent > 0:
        return arb(0)
    if base.is_zero() and exponent < 0:
        raise _refuse(f"0 to the power {_short(exponent)} is not a real number (the expression is undefined there)")
    t = exponent * base.log()
    _bounded_exponent(t, "a power")
    return t.exp()


_FUNCS: dict[str, Callable[..., arb]] = {
    "exp": _exp, "expm1": _expm1, "log": _log, "log1p": _log1p, "sqrt": _sqrt,
    "erfc": lambda x: x.erfc(), "Phi": normal_cdf, "abs": lambda x: abs(x), "min": _min, "max": _max,
}
assert set(_FUNCS) == set(EXPR_FUNCS)  # the grammar is certificate.format's; this is its ball arithmetic
_CONSTS: dict[str, Callable[[], arb]] = {"e": lambda: arb(1).exp(), "pi": arb.pi}
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def _refuse(message: str) -> InvalidParameter:
    return InvalidParameter("profile", f"profile: {message}")


def parse_profile_expr(text: str) -> Callable[[arb], arb]:
    """Validate ``text`` and return a function eps (ball) -> ball.

    Raises InvalidParameter (named ``profile``) for anything outside the
    whitelist, too long an expression, or a missing ``eps``.
    """
    if not isinstance(text, str) or not text.strip():
        raise _refuse("give an expression in eps, e.g. \"exp(-eps**2)\"")
    if len(text) > _MAX_TEXT:
        raise _refuse(f"the expression must be at most {_MAX_TEXT} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise _refuse(f"not a valid expression ({exc.msg})") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > _MAX_NODES:
        raise _refuse(f"the expression has more than {_MAX_NODES} parts")
    source = text.strip()
    uses_eps = any(isinstance(n, ast.Name) and n.id == "eps" for n in nodes)
    if not uses_eps:
        raise _refuse("the expression must use the variable eps")
    build = _compile(tree.body, source)
    # verify's caps on the parse (nesting depth, parentheses, powers): one check for both sides, so
    # that no expression the producer certifies is refused by verify (adv36 G2: 41 nested parentheses)
    try:
        check_expression(text, "profile")
    except MalformedCertificate as exc:
        raise _refuse(str(exc).removeprefix("profile").lstrip(": ")) from None
    return build


def _compile(node: ast.AST, source: str) -> Callable[[arb], arb]:
    allowed = EXPR_ALLOWED
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise _refuse(f"{node.value!r} is not allowed (allowed: {allowed})")
        seg = ast.get_source_segment(source, node) or repr(node.value)
        value = parse_exact(seg, "profile")  # exact from the text: 0.1 is 1/10
        return lambda eps, v=value: ball(v)
    if isinstance(node, ast.Name):
        if node.id == "eps":
            return lambda eps: eps
        if node.id in _CONSTS:
            c = _CONSTS[node.id]
            return lambda eps: c()
        raise _refuse(f"unknown name {node.id!r} (allowed: {allowed})")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _compile(node.operand, source)
        if isinstance(node.op, ast.USub):
            return lambda eps: -inner(eps)
        return inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS):
        left = _compile(node.left, source)
        if isinstance(node.op, ast.Pow):
            exponent = node.right
            neg = isinstance(exponent, ast.UnaryOp) and isinstance(exponent.op, ast.USub)
            base_node = exponent.operand if neg else exponent
            if isinstance(base_node, ast.Constant) and isinstance(base_node.value, int) and not isinstance(base_node.value, bool):
                n = -base_node.value if neg else base_node.value
                if abs(n) > _MAX_INT_POWER:
                    raise _refuse(f"integer powers must be within +-{_MAX_INT_POWER}")
                def int_power(eps: arb, n: int = n) -> arb:
                    b = left(eps)
                    # log|b| * n bounds the result's magnitude (a zero base is fine)
                    if b.is_finite() and not b.contains(0):
                        _bounded_exponent(abs(b).log() * n, "a power")
                    return b ** n

                return int_power
            right = _compile(node.right, source)
            return lambda eps: _power(left(eps), right(eps))
        right = _compile(node.right, source)
        op = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}[type(node.op)]
        return lambda eps: op(left(eps), right(eps))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.dump(node.func)[:40]
            raise _refuse(f"function {name!r} is not allowed (allowed: {allowed})")
        if node.keywords:
            raise _refuse("keyword arguments are not allowed")
        arity, fn = EXPR_FUNCS[node.func.id], _FUNCS[node.func.id]
        if len(node.args) != arity:
            raise _refuse(f"{node.func.id} takes {arity} argument(s)")
        args = [_compile(a, source) for a in node.args]
        return lambda eps: fn(*[a(eps) for a in args])
    raise _refuse(f"{type(node).__name__} is not allowed (allowed: {allowed})")


def _short(x: arb) -> str:
    """Outward decimal text of a ball for a message, with enough digits to show
    on which side of 0 or 1 it lies (up to 60)."""
    if not x.is_finite():
        return x.str(6)
    for digits in (6, 12, 24, 60):
        lo, hi = lower_decimal(x, digits), upper_decimal(x, digits)
        if lo == hi:
            return lo
        if all(Fraction(t) < 0 or Fraction(t) > 1 for t in (lo, hi)) or not (x < 0 or x > 1):
            break
    return f"[{lo}, {hi}]"


@dataclass(frozen=True)
class ExprProfile:
    """A profile given by an expression in eps (the user vouches that it is one)."""

    text: str
    fn: Callable[[arb], arb] = field(repr=False, compare=False)
    name: str = "expr"
    nonincreasing: bool = False

    def delta(self, eps: arb) -> arb:
        """The expression's ball at ``eps``; refused (InvalidParameter naming
        --profile) where its value is certainly outside [0, 1], where no privacy
        profile can be (the user vouches that it is one; this is where the
        claim is checked, at every eps it is used)."""
        value = self.fn(eps)
        if not value.is_finite() and eps.is_exact() and eps.is_finite():
            # at an exact point an unbounded value that stays unbounded with 16x the
            # precision is not a rounding effect: the expression is undefined there
            # (1/0, log(0)) or beyond arb's range (a power tower): refused, instead of
            # "undecided" with a hint to refine the precision or the margin
            for bits in (4 * ctx.prec, 16 * ctx.prec):
                with working_precision(bits):
                    value = self.fn(eps)
                if value.is_finite():
                    break
            else:
                raise _refuse(
                    f"delta(eps) at eps = {_short(eps)} is undefined or too large to compute "
                    "(a division by 0, a log of 0, or an overflow such as a power tower)"
                )
        if not value.is_finite():
            # an unbounded ball (division by a ball containing 0, log of a
            # ball reaching 0, ...): nothing is known; keep it unbounded
            return arb(0, arb("inf"))
        if value < 0 or value > 1:
            raise _refuse(
                f"delta(eps) = {_short(value)} at eps = {_short(eps)} is outside [0, 1]; "
                "a privacy profile takes values in [0, 1]"
            )
        return value

    def delta_at_rational(self, eps: Fraction) -> "arb | None":
        """At an exact eps (``dp profile``): a value whose ball still straddles
        0 or 1 is decided with more precision, so that a value just outside
        [0, 1] is refused too; None hands over to the ball route."""
        value = self.delta(ball(eps))
        if value.is_finite() and not (value >= 0 and value <= 1):
            for bits in (4 * ctx.prec, 16 * ctx.prec):
                with working_precision(bits):
                    v = self.delta(ball(eps))  # raises once certainly outside
                if v >= 0 and v <= 1:
                    break
        return None

    def params(self) -> Mapping[str, str]:
        return {"profile": self.text}


@register_profile("expr")
def _build(options: Mapping[str, str]) -> ExprProfile:
    if "profile" not in options:
        raise InvalidParameter("profile", '--mechanism expr needs --profile "EXPR in eps"')
    text = options["profile"]
    return ExprProfile(text, parse_profile_expr(text))

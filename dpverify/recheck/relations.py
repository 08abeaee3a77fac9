"""Relations between a certified value and a paper's printed number, as
recorded in claim certificates, re-checked on binary numbers: every bound is held as
its two directed roundings and every comparison is exact, so a verdict never rests on
a rounding to nearest.

The first implementation (arb) lives in :mod:`dpverify.theorems.registry`;
this one is deliberately separate, so that a bug in one is caught by the other.
Kinds (``claim.relation.kind``):

* ``rounds_to``: the value rounds to the printed decimal, i.e. lies within half
  a unit of its last printed digit;
* ``order_of_magnitude``: printed ``1e-43`` means 10^-43 <= value < 10^-42;
* ``lt``, ``le``, ``gt``, ``ge``: comparison with ``bound``;
* ``in``: ``lo <= value <= hi``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import CouldNotReprove, MalformedCertificate
from .decimals import exact_decimal, parse_bound

__all__ = ["interval_of_truth", "decide", "decide_decimals"]


#: working bits of the relation's bounds; each is held as an interval [down, up] of two
#: directed roundings, so no decision rests on a rounding to nearest
_PREC = 256


def _dec(text: Any) -> tuple[mpf, mpf]:
    """A relation bound (decimal or a/b) as [down, up]: its roundings toward -inf and +inf
    (equal when the number is binary at :data:`_PREC` bits), so the exact bound is inside."""
    if not isinstance(text, str):
        raise MalformedCertificate(f"relation bound {text!r} must be a string")
    if len(text) > 1000:
        raise MalformedCertificate(f"relation bound {text[:40]!r}...: longer than 1000 characters")
    try:
        if "/" in text:
            n, d = (int(x) for x in text.split("/"))
            if d == 0:
                raise MalformedCertificate(f"relation bound {text!r}: division by zero")
            return (mpmath.fdiv(n, d, prec=_PREC, rounding="f"), mpmath.fdiv(n, d, prec=_PREC, rounding="c"))
        return (parse_bound(text, "claim.relation", rounding="f"), parse_bound(text, "claim.relation", rounding="c"))
    except ValueError:
        raise MalformedCertificate(f"relation bound {text[:40]!r} is not a number") from None


def _half_unit(printed: str) -> str:
    """Half a unit in the last printed digit of a decimal, as a decimal string."""
    mant, _, exp = printed.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    e = (int(exp) if exp else 0) - decimals
    return f"5e{e - 1}"


Bound = tuple[mpf, mpf]


def interval_of_truth(relation: Mapping[str, Any]) -> tuple[Bound, Bound, bool, bool]:
    """(A, B, A_closed, B_closed): the set of values for which the relation holds, from A
    to B, each end an interval [down, up] that contains it (directed roundings: printed +-
    half a unit of its last digit, and ten times the printed number, rounded outward)."""
    kind = relation.get("kind")
    inf = (mpmath.inf, mpmath.inf)
    if kind == "rounds_to":
        p, h = _dec(relation["printed"]), _dec(_half_unit(relation["printed"]))
        a = (mpmath.fsub(p[0], h[1], prec=_PREC, rounding="f"), mpmath.fsub(p[1], h[0], prec=_PREC, rounding="c"))
        b = (mpmath.fadd(p[0], h[0], prec=_PREC, rounding="f"), mpmath.fadd(p[1], h[1], prec=_PREC, rounding="c"))
        return a, b, True, True
    if kind == "order_of_magnitude":
        p = _dec(relation["printed"])
        ten = (mpmath.fmul(p[0], 10, prec=_PREC, rounding="f"), mpmath.fmul(p[1], 10, prec=_PREC, rounding="c"))
        return p, ten, True, False
    if kind in ("lt", "le"):
        return (-mpmath.inf, -mpmath.inf), _dec(relation["bound"]), True, kind == "le"
    if kind in ("gt", "ge"):
        return _dec(relation["bound"]), inf, kind == "ge", True
    if kind == "in":
        return _dec(relation["lo"]), _dec(relation["hi"]), True, True
    raise MalformedCertificate(f"unknown relation kind {kind!r}")


def decide(lo: mpf, hi: mpf, relation: Mapping[str, Any], dps: int = 0) -> str:
    """holds / fails / undecided for every value in [lo, hi] (binary numbers, compared
    exactly): holds only when [lo, hi] lies inside the truth set for every A and B in
    their directed intervals, fails only when it lies outside for every one. ``dps`` is
    not used (the bounds are read at a fixed precision)."""
    (a_dn, a_up), (b_dn, b_up), a_closed, b_closed = interval_of_truth(relation)
    above_a = lo >= a_up if a_closed else lo > a_up
    below_b = hi <= b_dn if b_closed else hi < b_dn
    if above_a and below_b:
        return "holds"
    out_low = hi < a_dn if a_closed else hi <= a_dn
    out_high = lo > b_up if b_closed else lo >= b_up
    if out_low or out_high:
        return "fails"
    return "undecided"


def _exact(text: Any) -> Fraction:
    """A relation bound as an exact rational (:func:`_dec` checks its form first)."""
    _dec(text)
    if "/" in text:
        n, d = (int(x) for x in text.split("/"))
        return Fraction(n, d)
    return exact_decimal(text, "claim.relation")


def decide_decimals(texts: tuple, relation: Mapping[str, Any]) -> "str | None":
    """:func:`decide` on a recorded enclosure's decimal ends themselves, against the relation's bounds,
    all as exact rationals: the verdict the recorded enclosure decides, as the producer decided it on the
    same decimals. The binary readings differ: a claimed eps equal to the recorded upper end "6.123876676"
    is at most that end (holds), but the end read up and the bound read down put the second below the
    first ('undecided'), and a genuine 'holds' was refused (adv47 M1). None where an end is infinite or
    too large to expand (:func:`.decimals.exact_decimal`): the binary :func:`decide` then answers."""
    if any(t in ("inf", "-inf") for t in texts):
        return None
    try:
        lo, hi = (exact_decimal(t, "result.enclosure") for t in texts)
        kind = relation.get("kind")
        if kind == "rounds_to":
            p, h = _exact(relation["printed"]), _exact(_half_unit(relation["printed"]))
            a, b, a_closed, b_closed = p - h, p + h, True, True
        elif kind == "order_of_magnitude":
            p = _exact(relation["printed"])
            a, b, a_closed, b_closed = p, 10 * p, True, False
        elif kind in ("lt", "le"):
            a, b, a_closed, b_closed = None, _exact(relation["bound"]), True, kind == "le"
        elif kind in ("gt", "ge"):
            a, b, a_closed, b_closed = _exact(relation["bound"]), None, kind == "ge", True
        elif kind == "in":
            a, b, a_closed, b_closed = _exact(relation["lo"]), _exact(relation["hi"]), True, True
        else:
            return None
    except CouldNotReprove:
        return None
    above_a = a is None or (lo >= a if a_closed else lo > a)
    below_b = b is None or (hi <= b if b_closed else hi < b)
    if above_a and below_b:
        return "holds"
    out_low = a is not None and (hi < a if a_closed else hi <= a)
    out_high = b is not None and (lo > b if b_closed else lo >= b)
    return "fails" if out_low or out_high else "undecided"

"""The claims registry: every statement of the papers that dpverify re-derives.

A :class:`Claim` names its source (paper short name and theorem / section /
page), the statement, the number *as printed*, a machine-checkable
``relation`` between the printed number and the certified value, and a
``compute`` function returning the certified :class:`Enclosure`.

Verdict semantics for printed numbers (issue "claims registry"): holds when
the whole certified enclosure satisfies the relation (for ``rounds_to``: it
rounds to the printed digits), fails when the whole enclosure violates it,
undecided otherwise. A claim that fails is a finding, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping

from flint import arb

from ..ball import ball, parse_exact, working_precision
from ..verdict import Enclosure, Outcome, Verdict

__all__ = ["Claim", "register", "claims", "decide", "check", "truth_interval"]


@dataclass(frozen=True)
class Claim:
    """One checkable statement from a paper."""

    id: str
    source: str
    statement: str
    printed: str
    relation: Mapping[str, str]
    quantity: str
    inputs: Mapping[str, Any]
    compute: Callable[[], Enclosure] = field(repr=False, compare=False)
    domain: str = ""
    note: str = ""


_REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    if claim.id in _REGISTRY:
        raise ValueError(f"duplicate claim id {claim.id!r}")
    truth_interval(claim.relation)  # reject malformed relations at import time
    _REGISTRY[claim.id] = claim
    return claim


def claims() -> list[Claim]:
    """Every registered claim (loads every ``*_claims`` module of this package,
    in name order; each registers its claims on import)."""
    import importlib
    import pkgutil

    from .. import theorems

    for info in sorted(pkgutil.iter_modules(theorems.__path__), key=lambda i: i.name):
        if info.name.endswith("_claims"):
            importlib.import_module(f"{theorems.__name__}.{info.name}")

    return list(_REGISTRY.values())


def _half_unit(printed: str) -> Fraction:
    mant, _, exp = printed.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return Fraction(1, 2) * Fraction(10) ** ((int(exp) if exp else 0) - decimals)


def truth_interval(relation: Mapping[str, str]) -> tuple[Any, Any, bool, bool]:
    """(A, B, A closed, B closed): the values for which the relation holds;
    None stands for an infinite end."""
    kind = relation.get("kind")
    if kind == "rounds_to":
        p = parse_exact(relation["printed"], "printed")
        h = _half_unit(relation["printed"])
        return p - h, p + h, True, True
    if kind == "order_of_magnitude":
        p = parse_exact(relation["printed"], "printed")
        return p, 10 * p, True, False
    if kind in ("lt", "le"):
        return None, parse_exact(relation["bound"], "bound"), True, kind == "le"
    if kind in ("gt", "ge"):
        return parse_exact(relation["bound"], "bound"), None, kind == "ge", True
    if kind == "in":
        return parse_exact(relation["lo"], "lo"), parse_exact(relation["hi"], "hi"), True, True
    raise ValueError(f"unknown relation kind {kind!r}")


def decide(enclosure: Enclosure, relation: Mapping[str, str]) -> Outcome:
    """Verdict of ``relation`` over every value of ``enclosure`` (exact
    comparisons of exact endpoints; arb answers only when certain)."""
    a, b, a_closed, b_closed = truth_interval(relation)
    lo, hi = enclosure.lo, enclosure.hi
    with working_precision(max(256, enclosure.print_digits() * 4 + 64)):
        A = ball(a) if a is not None else None
        Bb = ball(b) if b is not None else None

        def ge_a(x: arb) -> bool:
            return A is None or bool(x >= A if a_closed else x > A)

        def le_b(x: arb) -> bool:
            return Bb is None or bool(x <= Bb if b_closed else x < Bb)

        if ge_a(lo) and le_b(hi):
            return Outcome.HOLDS
        below = A is not None and bool(hi < A if a_closed else hi <= A)
        above = Bb is not None and bool(lo > Bb if b_closed else lo >= Bb)
        if below or above:
            return Outcome.FAILS
    return Outcome.UNDECIDED


def check(claim: Claim) -> tuple[Enclosure, Verdict]:
    """Compute the claim's certified value and decide its relation."""
    enclosure = claim.compute()
    outcome = decide(enclosure, claim.relation)
    reason = {
        Outcome.HOLDS: f"the certified value {enclosure.short()} satisfies the printed claim",
        Outcome.FAILS: f"the certified value {enclosure.short()} contradicts the printed claim",
        Outcome.UNDECIDED: f"the certified value {enclosure.short()} straddles the printed claim",
    }[outcome]
    return enclosure, Verdict(outcome, reason, {"value": enclosure})

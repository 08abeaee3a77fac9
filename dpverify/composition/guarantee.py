"""(eps, delta)-DP guarantees as composition inputs: the exact value type
:class:`EpsDelta`, the parsing of ``"E,D"`` texts and pairs, and the grouping of
a sequence repeated k times into distinct guarantees with multiplicities (the
types the LT Cor 4.7 binomial step composes at once)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import islice
from typing import Iterable, Mapping, Optional

from flint import arb

from .. import _validate as V
from ..ball import ball, exact_str, parse_exact
from ..errors import InvalidParameter
from ..limits import MAX_COMPOSED_MECHANISMS, MAX_UNGROUPED_MECHANISMS

__all__ = ["EpsDelta", "Key", "as_guarantee", "guarantee_types", "make", "mechanism_list", "parse_mech"]

Key = tuple  # (a: Fraction, b: Fraction): the shift a + log b


@dataclass(frozen=True)
class EpsDelta:
    """An (eps, delta)-DP guarantee with exact eps >= 0 and delta in [0, 1].

    ``exp_eps`` (optional) gives eps as log of an exact rational r >= 1
    instead (then ``eps`` is None): randomized response with rational
    probabilities r / (1 + r), used for exact brute-force cross-checks.
    """

    eps: Optional[Fraction]
    delta: Fraction
    exp_eps: Optional[Fraction] = None

    def key(self) -> Key:
        """Exact shift eps = a + log b."""
        if self.exp_eps is not None:
            return (Fraction(0), self.exp_eps)
        return (self.eps, Fraction(1))

    def eps_ball(self) -> arb:
        if self.exp_eps is not None:
            return ball(self.exp_eps).log()
        return ball(self.eps)

    def text(self) -> str:
        e = exact_str(self.eps) if self.exp_eps is None else f"log({exact_str(self.exp_eps)})"
        return f"{e},{exact_str(self.delta)}"


def make(eps: object, delta: object, name: str = "mech") -> EpsDelta:
    """Validated guarantee: eps >= 0 and delta in [0, 1] (exact inputs)."""
    e = parse_exact(eps, name)
    d = parse_exact(delta, name)
    if e < 0:
        raise InvalidParameter(name, f"{name}: eps={exact_str(e)} must be >= 0 (LT Thm 4.6 needs eps_i >= 0)")
    if not 0 <= d <= 1:
        raise InvalidParameter(name, f"{name}: delta={exact_str(d)} must be in [0, 1]")
    return EpsDelta(e, d)


def parse_mech(text: str, name: str = "mech") -> EpsDelta:
    """``"E,D"`` (exact decimals or fractions) as a guarantee."""
    if not isinstance(text, str) or text.count(",") != 1:
        raise InvalidParameter(name, f"{name}={text!r} must be E,D (e.g. 0.1,1e-8) with E >= 0, D in [0, 1]")
    e, d = (s.strip() for s in text.split(","))
    return make(e, d, name)


def as_guarantee(m: object) -> EpsDelta:
    """A composition input as a checked guarantee. An :class:`EpsDelta` is public and
    built without checks, so it is read by the same rules as a pair (``make``): an
    unchecked EpsDelta(1, -1/2) had been composed into a "certified" negative delta."""
    if isinstance(m, EpsDelta):
        if m.exp_eps is None:
            return make(m.eps, m.delta)
        if m.eps is not None:
            raise InvalidParameter("mech", f"mech: give eps or exp_eps, not both (eps={m.eps!r}, "
                                           f"exp_eps={m.exp_eps!r})")
        r = parse_exact(m.exp_eps, "mech")
        if r < 1:
            raise InvalidParameter("mech", f"mech: exp_eps={exact_str(r)} must be >= 1 (eps = log exp_eps >= 0)")
        return EpsDelta(None, make(0, m.delta).delta, r)
    if isinstance(m, str):
        return parse_mech(m)
    if isinstance(m, (tuple, list)) and len(m) == 2:
        return make(m[0], m[1])
    raise InvalidParameter("mech", f"mech={m!r} must be a pair (eps, delta) or 'E,D'")


def mechanism_list(mechs: object) -> list[object]:
    """The public ``mechs`` argument as a list, read once: any iterable of guarantees
    (a generator too, which the grid routes read twice, once per rounding), at most
    MAX_COMPOSED_MECHANISMS of them counted before any is parsed, so an endless or
    huge iterable is refused at once; a text or a non-iterable is refused by name
    (a text was iterated character by character)."""
    refused = InvalidParameter("mechs", f"mechs={mechs!r:.60} must be a list of guarantees, each a pair "
                                        "(eps, delta) or an 'E,D' text")
    if isinstance(mechs, list):
        items = mechs
    elif isinstance(mechs, (str, bytes, Mapping)) or not hasattr(mechs, "__iter__"):
        # a mapping was read as its keys (adv44 L1), a text character by character
        raise refused
    else:
        try:
            items = list(islice(mechs, MAX_COMPOSED_MECHANISMS + 1))  # type: ignore[call-overload]
        except TypeError:  # an __iter__ that is not callable, or returns no iterator
            raise refused from None
    if len(items) > MAX_COMPOSED_MECHANISMS:
        raise InvalidParameter("mechs", f"at most {MAX_COMPOSED_MECHANISMS:,} mechanisms "
                                        f"(limits.MAX_COMPOSED_MECHANISMS)")
    return items


def guarantee_types(mechs: Iterable[object], k: int, group: bool = True) -> list[tuple[EpsDelta, int]]:
    """Distinct guarantees with their multiplicities (the sequence repeated k
    times); ``group=False`` keeps one entry per mechanism (the plain recursion)."""
    k = V.integer("k", k, lo=1, hi=MAX_COMPOSED_MECHANISMS)
    mechs = mechanism_list(mechs)
    if not group:
        seq = [as_guarantee(m) for m in mechs] * k
        if not seq or len(seq) > MAX_UNGROUPED_MECHANISMS:
            raise InvalidParameter("k", f"the ungrouped recursion takes 1..{MAX_UNGROUPED_MECHANISMS} mechanisms")
        return [(g, 1) for g in seq]
    counts: dict[EpsDelta, int] = {}
    order: list[EpsDelta] = []
    for m in mechs:
        g = as_guarantee(m)
        if g not in counts:
            order.append(g)
            counts[g] = 0
        counts[g] += k
    if not order:
        raise InvalidParameter("mech", "give at least one mechanism (--mech E,D)")
    if sum(counts.values()) > MAX_COMPOSED_MECHANISMS:
        raise InvalidParameter("k", f"k: at most {MAX_COMPOSED_MECHANISMS} composed mechanisms in total")
    return [(g, counts[g]) for g in order]

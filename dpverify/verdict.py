"""Value types of every result: :class:`Enclosure` (a proven interval) and
:class:`Verdict` (holds / fails / undecided, never wrong)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Optional, Union

from flint import arb

from . import ball as B
from .ball import arb_to_fraction, endpoints, lower_decimal, upper_decimal, working_precision
from .errors import InvalidParameter

__all__ = ["Enclosure", "Outcome", "Verdict"]


@dataclass(frozen=True, eq=False)
class Enclosure:
    """A closed interval [lo, hi] proven to contain a true value.

    ``lo`` and ``hi`` are exact arb points (radius 0); ``hi`` may be +inf
    (for instance "no finite eps meets this delta budget"). ``digits`` is the
    relative accuracy that was requested; decimal output uses a few more
    significant digits so that outward rounding does not eat the accuracy.
    ``precision_bits`` records the working precision that produced it.
    """

    lo: arb
    hi: arb
    digits: int = 15
    precision_bits: int = 0

    def __post_init__(self) -> None:
        for name in ("lo", "hi"):
            if not isinstance(getattr(self, name), arb):  # a float nan had no is_exact (adv43 L1)
                raise InvalidParameter(name, f"{name}={getattr(self, name)!r:.60} must be an arb point "
                                             "(an Enclosure is built by dpverify from certified balls)")
        if not (self.lo.is_exact() and self.hi.is_exact()):
            raise ValueError("Enclosure endpoints must be exact points")
        if self.lo > self.hi:
            raise ValueError("Enclosure with lo > hi")

    @classmethod
    def from_ball(cls, x: arb, digits: int = 15, precision_bits: int = 0) -> "Enclosure":
        """The interval [mid - rad, mid + rad] of a ball."""
        lo, hi = endpoints(x)
        return cls(lo, hi, digits, precision_bits)

    @classmethod
    def from_bounds(
        cls, lo: arb, hi: arb, digits: int = 15, precision_bits: int = 0
    ) -> "Enclosure":
        """[lower end of ``lo``, upper end of ``hi``] for balls lo, hi."""
        for name, x in (("lo", lo), ("hi", hi)):
            if not isinstance(x, arb):
                raise InvalidParameter(name, f"{name}={x!r:.60} must be an arb ball")
        return cls(endpoints(lo)[0], endpoints(hi)[1], digits, precision_bits)

    @property
    def is_infinite(self) -> bool:
        return not self.hi.is_finite() or not self.lo.is_finite()

    def as_ball(self) -> arb:
        """The smallest ball containing [lo, hi] (at the current precision,
        rounded outward by arb)."""
        return self.lo.union(self.hi)

    def width(self) -> arb:
        with working_precision(max(128, int(self.digits * 3.4) + 64)):
            return self.hi - self.lo

    def rel_width(self) -> arb:
        """(hi - lo) / min(|lo|, |hi|) for an interval of one sign."""
        with working_precision(max(128, int(self.digits * 3.4) + 64)):
            scale = self.as_ball().abs_lower()
            return (self.hi - self.lo) / scale

    def contains(self, x: Union[Fraction, int, arb]) -> bool:
        """True when the exact value (or whole ball) x lies in [lo, hi]."""
        with working_precision(max(128, int(self.digits * 3.4) + 64)):
            v = B.ball(x)
            return bool(v >= self.lo) and bool(v <= self.hi)

    @property
    def lo_fraction(self) -> Fraction:
        """The lower end as an exact rational (it is an exact binary point).

        Raises:
            ValueError: the lower end is infinite.
        """
        if not self.lo.is_finite():
            raise ValueError(f"the lower end of {self!r} is infinite: no Fraction")
        return arb_to_fraction(self.lo)

    @property
    def hi_fraction(self) -> Fraction:
        """The upper end as an exact rational (it is an exact binary point).

        Raises:
            ValueError: the upper end is infinite (e.g. no finite eps meets the budget).
        """
        if not self.hi.is_finite():
            raise ValueError(f"the upper end of {self!r} is infinite: no Fraction")
        return arb_to_fraction(self.hi)

    def decimals(self, digits: Optional[int] = None) -> tuple[str, str]:
        """(lo, hi) as decimal strings with ``digits`` significant digits (default: enough
        for the requested accuracy), rounded outward: lo down, hi up, so that
        [lo, hi] as decimals still contains the true value."""
        n = self.print_digits() if digits is None else digits
        if n < 1:
            raise ValueError(f"digits={n} must be >= 1")
        lo = lower_decimal(self.lo, n) if self.lo.is_finite() else ("inf" if self.lo > 0 else "-inf")
        hi = upper_decimal(self.hi, n) if self.hi.is_finite() else "inf"
        return lo, hi

    def print_digits(self) -> int:
        return max(17, self.digits + 3)

    def lo_str(self) -> str:
        """The lower end as a decimal rounded down."""
        return self.decimals()[0]

    def hi_str(self) -> str:
        """The upper end as a decimal rounded up."""
        return self.decimals()[1]

    def to_json(self) -> dict[str, str]:
        """Outward-rounded decimal endpoints: lo rounded down, hi rounded up."""
        return {"lo": self.lo_str(), "hi": self.hi_str()}

    def short(self, sig: int = 6) -> str:
        """Human-readable ``[lo, hi]`` with ``sig`` digits, still outward."""
        lo, hi = self.decimals(sig)
        return f"[{lo}, {hi}]"

    def __repr__(self) -> str:
        return f"Enclosure{self.short(17)}"


class Outcome(str, enum.Enum):
    """Three-valued answer of a check."""

    HOLDS = "holds"
    FAILS = "fails"
    UNDECIDED = "undecided"


def printed_to_decide(enc: Enclosure, outcome: Outcome, bound: Any) -> tuple[Enclosure, Outcome]:
    """``enc`` printed with the fewest significant digits (17, 27, 37 or 50) whose decimals, rounded
    outward, decide "value <= bound" as ``outcome`` (decided on the exact ends) says: verify checks a
    recorded verdict against the recorded decimals themselves (relations.decide_decimals), so a delta
    4e-20 above the budget, decided at 30 digits, was printed at 17 as the budget itself and refused
    (adv48 L3). Where even 50 digits do not carry it, UNDECIDED (which claims nothing)."""
    if outcome is Outcome.UNDECIDED:
        return enc, outcome
    for shown in (17, 27, 37, 50):
        e = enc if enc.print_digits() >= shown else dataclasses.replace(enc, digits=shown - 3)
        lo, hi = e.decimals()
        if (outcome is Outcome.HOLDS and hi != "inf" and Fraction(hi) <= bound) or \
                (outcome is Outcome.FAILS and lo not in ("inf", "-inf") and Fraction(lo) > bound):
            return e, outcome
    return enc, Outcome.UNDECIDED


@dataclass(frozen=True, eq=False)
class Verdict:
    """The answer to a check, with the enclosures that decided it.

    HOLDS only if the claim holds for every value in the enclosures, FAILS only
    if it fails for every value; anything else is UNDECIDED.
    """

    outcome: Outcome
    reason: str = ""
    enclosures: Mapping[str, Enclosure] = field(default_factory=dict)
    details: Optional[Mapping[str, Any]] = None

    @property
    def holds(self) -> bool:
        return self.outcome is Outcome.HOLDS

    @property
    def fails(self) -> bool:
        return self.outcome is Outcome.FAILS

    @property
    def undecided(self) -> bool:
        return self.outcome is Outcome.UNDECIDED

    def exit_code(self) -> int:
        """CLI convention: 0 holds, 1 fails, 3 undecided."""
        return {Outcome.HOLDS: 0, Outcome.FAILS: 1, Outcome.UNDECIDED: 3}[self.outcome]

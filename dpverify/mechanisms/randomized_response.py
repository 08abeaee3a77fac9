"""Randomized response RR(eps, delta) (LT Thm 3.4), the dominating pair of
every (eps, delta)-DP guarantee (LT Thm 4.5).

Outputs ((0, bot), (0, top), (1, top), (1, bot)) with

    P = M(0) = (delta, (1-delta) e^eps/(e^eps+1), (1-delta)/(e^eps+1), 0)
    Q = M(1) = (0, (1-delta)/(e^eps+1), (1-delta) e^eps/(e^eps+1), delta).

LT Thm 3.4: for every real t, delta_{P|Q}(t) = delta_{Q|P}(t) =

    delta                                   if eps < t,
    1 - (e^t + 1)(1 - delta)/(e^eps + 1)   if -eps < t <= eps,
    1 - e^t (1 - delta)                     if t <= -eps.

(The same function as :mod:`dpverify.mechanisms.approx_dp`'s worst case,
written piecewise; the equality of the two and of the finite engine's two
routes is tested.) CLI: ``--mechanism rr --p P`` is RR with delta = 0 and
truthful probability p = e^eps / (1 + e^eps), so e^eps = p / (1 - p) exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Optional

from flint import arb

from .. import _validate as V
from ..ball import ball, exact_str
from ..errors import InvalidParameter
from .base import register_profile
from .finite import FiniteMechanism

__all__ = ["RandomizedResponse", "rr_delta_ball"]


def rr_delta_ball(exp_eps: arb, delta: arb, t: arb) -> arb:
    """LT Thm 3.4 piecewise profile at a ball t, given e^eps and delta as balls.

    The pieces are chosen by certified comparisons of e^t with e^eps and
    e^-eps; where t straddles a break the pieces are joined (the profile is
    continuous there, and each piece's ball contains its value on the whole
    ball t, so the union contains the truth)."""
    et = t.exp()
    pieces = []
    if not et <= exp_eps:  # possibly t > eps
        pieces.append(delta)
    if not (et > exp_eps) and not (et * exp_eps <= 1):  # possibly -eps < t <= eps
        pieces.append(1 - (et + 1) * (1 - delta) / (exp_eps + 1))
    if not (et * exp_eps > 1):  # possibly t <= -eps
        pieces.append(1 - et * (1 - delta))
    out = pieces[0]
    for x in pieces[1:]:
        out = out.union(x)
    return out


@dataclass(frozen=True)
class RandomizedResponse:
    """RR(eps, delta) of LT Thm 3.4; eps given exactly, or through an exact
    rational e^eps (``exp_eps``, e.g. p / (1 - p)), then ``eps`` is None."""

    eps: Optional[Fraction]
    delta: Fraction
    exp_eps: Optional[Fraction] = None
    source_params: Optional[Mapping[str, str]] = None
    name: str = "rr"

    def __post_init__(self) -> None:
        if (self.eps is None) == (self.exp_eps is None):
            raise InvalidParameter("eps", "give eps or exp_eps (an exact e^eps), exactly one of them")
        if self.eps is not None:
            object.__setattr__(self, "eps", V.nonnegative("eps", self.eps))
        else:
            r = V.real("exp_eps", self.exp_eps)
            if r < 1:
                raise InvalidParameter("exp_eps", f"exp_eps={self.exp_eps!r} must be >= 1 (it is e^eps, eps >= 0)")
            object.__setattr__(self, "exp_eps", r)
        object.__setattr__(self, "delta", V.closed_unit("delta", self.delta))

    def _exp_eps_ball(self) -> arb:
        return ball(self.exp_eps) if self.exp_eps is not None else ball(self.eps).exp()

    def delta_at(self, t: arb) -> arb:
        """Ball of delta_{P|Q}(t) = delta_{Q|P}(t) by LT Thm 3.4."""
        return rr_delta_ball(self._exp_eps_ball(), ball(self.delta), t)

    # Profile protocol (``delta`` is the guarantee's delta, so the profile is delta_at)
    def params(self) -> Mapping[str, str]:
        if self.source_params is not None:
            return dict(self.source_params)
        e = exact_str(self.eps) if self.exp_eps is None else f"log({exact_str(self.exp_eps)})"
        return {"eps": e, "delta": exact_str(self.delta)}

    def pmfs(self) -> FiniteMechanism:
        """The four-output pair; exact Fractions when e^eps is rational."""
        if self.exp_eps is not None:
            r, d = self.exp_eps, self.delta
            P = (d, (1 - d) * r / (r + 1), (1 - d) / (r + 1), Fraction(0))
            return FiniteMechanism.of(P, P[::-1], "rr")
        r, d = self._exp_eps_ball(), ball(self.delta)
        P = (d, (1 - d) * r / (r + 1), (1 - d) / (r + 1), arb(0))
        return FiniteMechanism(P, P[::-1], "rr")


@dataclass(frozen=True)
class _RRProfile:
    """Adapter to the :class:`~dpverify.mechanisms.base.Profile` protocol."""

    rr: RandomizedResponse
    name: str = "rr"

    def delta(self, eps: arb) -> arb:
        return self.rr.delta_at(eps)

    def params(self) -> Mapping[str, str]:
        return self.rr.params()


@register_profile("rr")
def _build_rr(options: Mapping[str, str]) -> _RRProfile:
    if "p" not in options:
        raise InvalidParameter("p", "--mechanism rr needs --p P (truthful probability in [1/2, 1))")
    p = V.real("p", options["p"])
    if not Fraction(1, 2) <= p < 1:
        raise InvalidParameter("p", f"p={options['p']!r} must be in [1/2, 1)")
    return _RRProfile(RandomizedResponse(None, Fraction(0), p / (1 - p), {"p": options["p"]}))

"""Utility refinement of a privacy-utility trade-off (GDPT Sec 5.2, App C),
as a certified optimisation.

GDPT Sec 5.2: the projected noisy SGD of Feldman et al. (2018) is
(eps0, delta0)-DP for sigma = -C log(delta0) / eps0. To reach a target
(eps, delta) the naive choice is sigma = -C log(delta)/eps, but by GDPT
Thm 3.1 any (eps0, delta0) with eps0 >= eps and

    delta0 + (1 - delta0)(e^eps0 - e^eps)/(1 + e^eps0) = delta,
    i.e.  delta0(eps0) = (delta (1 + u) - u + a) / (1 + a),  u = e^eps0, a = e^eps,

also implies (eps, delta)-DP; App C minimises sigma(eps0) = -C log(delta0(eps0)) / eps0
over eps0 in [eps, eps_max), eps_max = log((delta + a)/(1 - delta)) (delta0 > 0).

What is proved here. sigma'(eps0) = h(eps0) / eps0^2 with
h = -eps0 delta0'/delta0 + log delta0, and delta0' = delta0'' = (delta - 1) u/(1 + a) < 0, so
h' = -eps0 delta0' (delta0 - delta0') / delta0^2 > 0: h is strictly increasing, and
h -> +inf as eps0 -> eps_max. Hence sigma has a unique minimiser: eps0 = eps if
h(eps) >= 0, else the root of h, isolated with certified signs. The minimum
sigma is enclosed by evaluating sigma on the root's bracket (it contains the
minimiser), not by a float minimiser. The target delta may be given as
delta or as its logarithm (GDPT's example is (0.2, e^-2)).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import ball, endpoints, isolate_increasing_root, refine, sign, working_precision
from ..errors import InvalidParameter, PrecisionExhausted, Undecided
from ..verdict import Enclosure
from .expsum import escalated_sign

__all__ = ["SigmaRefinement", "refine_sigma"]


@dataclass(frozen=True)
class SigmaRefinement:
    """The optimal (eps0, delta0) and sigma / C, with the naive sigma / C."""

    eps0: Enclosure
    delta0: Enclosure
    sigma: Enclosure
    naive_sigma: Enclosure


def refine_sigma(eps: ExactInput, delta: Optional[ExactInput] = None, *, log_delta: Optional[ExactInput] = None,
                 digits: int = 15) -> SigmaRefinement:
    """Certified minimum of sigma / C = -log(delta0)/eps0 over the pairs (eps0, delta0)
    that imply (eps, delta)-DP (GDPT Sec 5.2 / App C, see the module docstring)."""
    digits = V.digits(digits)
    e = V.positive("eps", eps)
    if (delta is None) == (log_delta is None):
        raise InvalidParameter("delta", "give exactly one of delta or log_delta")
    if delta is not None:
        d = V.open_unit("delta", delta)
        dball = lambda: ball(d)  # noqa: E731
    else:
        L = V.real("log_delta", log_delta)
        if L >= 0:
            raise InvalidParameter("log_delta", f"log_delta={log_delta!r} must be < 0")
        dball = lambda: ball(L).exp()  # noqa: E731

    def delta0(x: arb) -> arb:
        u, a, D = x.exp(), ball(e).exp(), dball()
        return (D * (1 + u) - u + a) / (1 + a)

    def h(x: arb) -> arb:
        u, a, D = x.exp(), ball(e).exp(), dball()
        d0 = delta0(x)
        d0p = (D - 1) * u / (1 + a)
        return -x * d0p / d0 + d0.log()

    def sigma(x: arb) -> arb:
        return -delta0(x).log() / x

    s0 = escalated_sign(lambda: h(ball(e)), "d sigma/d eps0 at eps")
    if s0 >= 0:  # sigma is non-decreasing from eps on: no refinement possible
        a_pt = b_pt = None
    else:
        hi_pt = _upper_point(e, dball, h)
        lo_exact = _exact_point(e)
        a_pt, b_pt, _ = isolate_increasing_root(h, lo_exact, hi_pt, digits=digits + 2,
                                                what="the optimal eps0 (GDPT App C)")

    def at_opt(f):
        if a_pt is None:
            return lambda: f(ball(e))
        return lambda: f(a_pt.union(b_pt))

    def enc(f, what):
        x, bits = refine(at_opt(f), digits=digits + 1, what=what)
        return Enclosure.from_ball(x, digits, bits)

    eps0 = enc(lambda x: x, "eps0") if a_pt is not None else Enclosure.from_ball(
        refine(lambda: ball(e), digits=digits + 1)[0], digits)
    naive_x, nb = refine(lambda: -dball().log() / ball(e), digits=digits + 1, what="naive sigma")
    naive = Enclosure.from_ball(naive_x, digits, nb)
    best = enc(sigma, "sigma")
    if best.hi > naive.hi:
        # the minimum over eps0 >= eps is at most sigma(eps) = the naive value, so the naive
        # upper end also bounds it; without this a flat optimum next to eps0 = eps could be
        # reported with a (wider) upper end above the naive one
        best = Enclosure(best.lo, naive.hi, best.digits, best.precision_bits)
    return SigmaRefinement(eps0, enc(delta0, "delta0"), best, naive)


def _exact_point(e: Fraction) -> arb:
    with working_precision(e.numerator.bit_length() + e.denominator.bit_length() + 128):
        b = ball(e)
        return b if b.is_exact() else endpoints(b)[1]  # just above eps: h there is still < 0 (checked)


def _upper_point(e: Fraction, dball, h) -> arb:
    """An exact point below eps_max where h > 0 (h -> +inf at eps_max)."""
    with working_precision(256):
        D = dball()
        emax = ((D + ball(e).exp()) / (1 - D)).log()
        for j in range(1, 400):
            x = endpoints(ball(e) + (emax - ball(e)) * (1 - arb(2) ** -j))[0]
            if not x < emax:
                continue
            try:
                if sign(h(x)) > 0:
                    return x
            except Undecided:
                continue
    raise PrecisionExhausted("could not bracket the optimal eps0")

"""A Renyi tail bound of delta(eps) for compositions of Gaussian and Laplace steps: the answer
of a delta query whose delta lies far below anything a grid resolves.

Why: at a huge noise multiplier (sigma = 1e6, q = 0.01, 100 steps, eps = 1) delta is about
e^-(10^11). No unit 2^-K resolves it, so the grid's lower end stays 0 level after level and the
refinement ran to its time budget. Such a query is answered [0, U] at once, U a proved upper
bound of delta(eps) below 2^-TAIL_BITS (:func:`tail_answer`); the lower end 0 is the documented
width of this answer (a positive lower end would be a number like 10^-(10^11), which no
certificate could state or re-check).

What is proved, per direction d (add or remove) and integer order a >= 2: the cumulants
K_d(a) = log E_Q[(dP/dQ)^a] add over the composed steps (Mironov 2017 Prop 1), and
delta_d(eps) = H_{e^eps}(P || Q) <= zeta_a e^(K_d(a) - (a - 1) eps),
zeta_a = (1/a)(1 - 1/a)^(a - 1) (Balle et al. 2020 Thm 21, solved for delta). Each step's K:

* Gaussian (q = 1), mu = 1/sigma: a (a - 1) mu^2 / 2 (Mironov 2017 Prop 7);
* Poisson-subsampled Gaussian, remove (P the mixture, Q = N(0, 1)):
  log sum_j C(a, j) q^j (1 - q)^(a - j) e^((j^2 - j) mu^2 / 2) (Mironov, Talwar, Zhang 2019
  Sec 3.2), summed as log1p of the expm1 terms so that nothing cancels at a huge sigma;
* Poisson-subsampled Gaussian, add (P = N(0, 1), Q the mixture, L = -log(1 - q + q W),
  W = e^(mu x - mu^2/2)): the smaller of (a - 1)(-log(1 - q)) (L <= -log(1 - q), AFA Thm 11 (1))
  and q (a - 1)(1 + q (a - 1)) mu^2 / 2. The second: 1 - q + q W >= W^q (weighted AM-GM), so
  E_P[e^((a-1) L)] <= E[W^(-q (a - 1))] = e^(q (a-1) mu^2/2 + q^2 (a-1)^2 mu^2/2) for x ~ N(0, 1);
* Laplace (q = 1), scale b: log((a/(2a - 1)) e^((a-1)/b) + ((a-1)/(2a - 1)) e^(-a/b))
  (Mironov 2017 Table 2).

Other steps (subsampled Laplace, finite pairs, mixtures, replace-one) have no cumulant here: the
query goes to the grid. The order a is proposed in binary64 by
:func:`dpverify.recheck.tail_plan.propose_order`, the re-check's own proposal, so that both evaluate
the same order; any order proves a bound. The re-check proves its own
bound independently (:func:`dpverify.recheck.events.leaves_delta_upper`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence

from flint import arb

from ..ball import ball, working_precision
from ..recheck.tail_plan import propose_order
from .pairs import SubsampledGaussianPair, SubsampledLaplacePair

__all__ = ["TAIL_BITS", "TAIL_FLOOR_BITS", "renyi_exponent", "tail_answer", "tv_tail", "tv_upper"]

#: a delta query whose proved Renyi bound is at most 2^-TAIL_BITS (about 9.3e-302) is answered
#: [0, U] without a grid: below it a grid's unit would need more than a thousand bits (the re-check's
#: grid route stops at 1e-300)
TAIL_BITS = 1000
#: the recorded upper end is never below 2^-TAIL_FLOOR_BITS (about 1e-3612): a larger upper end is
#: still an upper end, and a bound of e^-(10^9) (eps 10^6) would otherwise be a billion-bit number. It
#: lies below every delta an input can state (decimal exponents within -3000), so a claim's verdict
#: is never left undecided by the floor
TAIL_FLOOR_BITS = 12000

def _leaves(steps: Sequence[Any], direction: str) -> Optional[list]:
    """(kind, mu or 1/b, q, count) per step, or None when a step has no cumulant here."""
    out = []
    for st in steps:
        pair = st.make_pair(direction)
        if isinstance(pair, SubsampledGaussianPair) and pair.direction in ("add", "remove"):
            out.append(("gaussian", Fraction(pair.mu), Fraction(pair.q), st.count))
        elif isinstance(pair, SubsampledLaplacePair) and pair.q == 1 and pair.direction in ("add", "remove"):
            out.append(("laplace", 1 / Fraction(pair.b), Fraction(1), st.count))
        else:
            return None
    return out


def _laplace_float(a: int, lam: Fraction) -> float:
    """A Laplace step's K(a) in binary64 (Mironov 2017 Table 2, lam = 1/b): only proposes the
    order (:func:`dpverify.recheck.tail_plan.propose_order`); e^((a - 1) lam) overflows past
    (a - 1) lam = 709, and the proposal is then the first order."""
    x = float(lam)
    return math.log(a / (2 * a - 1) * math.exp((a - 1) * x) + (a - 1) / (2 * a - 1) * math.exp(-a * x))


def _cumulant(t: str, mu: Fraction, q: Fraction, direction: str, a: int) -> arb:
    """A ball containing an upper bound of one step's K(a) (module docstring)."""
    if t == "laplace":
        lam = ball(mu)
        return (ball(Fraction(a, 2 * a - 1)) * ((a - 1) * lam).exp()
                + ball(Fraction(a - 1, 2 * a - 1)) * (-a * lam).exp()).log()
    c = ball(mu * mu / 2)
    if q == 1:
        return a * (a - 1) * c
    if direction == "remove":
        qb, pb = ball(q), ball(1 - q)
        s = arb(0)
        binom = 1
        for j in range(a + 1):
            if j >= 2:
                s += binom * qb ** j * pb ** (a - j) * ((j * j - j) * c).expm1()
            binom = binom * (a - j) // (j + 1)
        return s.log1p()
    lam = (a - 1) * q
    amgm = (ball(lam * (1 + lam)) * c).upper()
    loss = ((a - 1) * -(1 - ball(q)).log()).upper()
    return amgm if amgm < loss else loss  # each an upper bound of K(a): the smaller is one


def renyi_exponent(steps: Sequence[Any], directions: Sequence[str], eps: Fraction) -> Optional[arb]:
    """A ball whose upper end bounds log delta(eps), the maximum over ``directions`` (module
    docstring), or None where a step has no cumulant here."""
    worst: Optional[arb] = None
    with working_precision(128):
        for d in directions:
            leaves = _leaves(steps, d)
            if leaves is None:
                return None
            a = propose_order(leaves, d, eps, _laplace_float)
            e = sum((times * _cumulant(t, mu, q, d, a) for t, mu, q, times in leaves), arb(0))
            zeta = -ball(a).log() + (a - 1) * (1 - ball(Fraction(1, a))).log()
            e = e + zeta - (a - 1) * ball(eps)
            if not e.is_finite():
                return None
            if worst is None or e.upper() > worst.upper():
                worst = arb(e.upper())
    return worst


def tail_answer(steps: Sequence[Any], directions: Sequence[str], eps: Fraction) -> Optional[Fraction]:
    """U = 2^-k >= the proved bound e^(upper end of :func:`renyi_exponent`), with one power of two
    of slack (the re-check's own rounding of the same bound then stays below it), at least
    2^-TAIL_FLOOR_BITS; or None when the bound is above 2^-TAIL_BITS or there is none. delta(eps)
    lies in [0, U]."""
    e = renyi_exponent(steps, directions, eps)
    if e is None:
        return None
    with working_precision(128):
        bits = (e / arb(2).log()).upper()  # log2 of the bound, rounded up
        if not bits < -TAIL_BITS - 1:
            return None
        if bits < -TAIL_FLOOR_BITS - 2:  # beyond every float at eps = 1e3000: the floor, no float needed
            k = -TAIL_FLOOR_BITS
        else:
            k = max(-TAIL_FLOOR_BITS, math.ceil(float(bits.mid())) + 2)  # at least one power of two above
    return Fraction(1, 1 << -k)


def tv_upper(steps: Sequence[Any], directions: Sequence[str]) -> Optional[Fraction]:
    """An exact upper bound of delta(0) of a composition of Poisson-subsampled Gaussian steps under
    ``directions`` (add and / or remove), or None where a step is another pair.

    delta(0) = sup_S P(S) - Q(S) is the total variation distance, and TV is subadditive over a
    composition: TV(P_1 x ... x P_T, Q_1 x ... x Q_T) <= sum_i TV(P_i, Q_i) (change one coordinate at
    a time, the triangle inequality). One step's pair in either direction is {N(0, 1), (1 - q) N(0, 1)
    + q N(mu, 1)} (mu = 1/sigma, sensitivity 1), whose difference is q (N(mu, 1) - N(0, 1)), so its TV
    is q (2 Phi(mu / 2) - 1) = 2 q int_0^{mu/2} phi <= q phi(0) mu < (2/5) q mu, as phi(0) =
    1/sqrt(2 pi) < 2/5 (exactly: (2/5)^2 2 pi > 1 iff pi > 25/8). eps(delta) = 0 once this is at most
    delta (delta(eps) <= delta(0) for eps >= 0). The same bound as the re-check's own
    (:func:`dpverify.recheck.events._tv_upper`, exact rationals on the certificate's inputs), so
    that an answer [0, 0] the producer proves this way is one verify proves too."""
    total = Fraction(0)
    for d in directions:
        leaves = _leaves(steps, d)
        if leaves is None or any(t != "gaussian" for t, *_ in leaves):
            return None
        total = max(total, sum((times * q * Fraction(2, 5) * mu for _, mu, q, times in leaves), Fraction(0)))
    return total


def tv_tail(steps: Sequence[Any], directions: Sequence[str]) -> Optional[Fraction]:
    """U = 2^-k >= 2 :func:`tv_upper` (one power of two of slack, as :func:`tail_answer`, so that the
    re-check's upward rounding of the same bound stays at or below it) when that is at most
    2^-TAIL_BITS, else None: delta(eps) <= delta(0) <= U for every eps >= 0, the answer [0, U] of a
    delta query far below any grid's unit (a sampling rate of 1e-400)."""
    tv = tv_upper(steps, directions)
    if tv is None or tv == 0 or tv > Fraction(1, 1 << (TAIL_BITS + 1)):
        return None
    k = (tv.denominator // tv.numerator).bit_length() - 2  # 2^k <= 1/(2 tv) (floor division: 2^(k+1) <= den/num)
    return Fraction(1, 1 << min(k, TAIL_FLOOR_BITS))

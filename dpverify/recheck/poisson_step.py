"""One Poisson-subsampled Gaussian step (T = 1) in closed form, on MPFR with directed rounding.

The pair of one step of noise multiplier z, sensitivity 1 and Poisson rate 0 < q < 1 (AFA Thm 11 (1)),
in units of z (mu = 1 / z): remove P = (1 - q) N(0, 1) + q N(mu, 1) against Q = N(0, 1); add the same
two laws swapped. Its privacy curve needs no discretisation: the loss is monotone in x, so the event
{L > eps} is a half line and delta(eps) = P(half line) - e^eps Q(half line) is a sum of normal tails,
which is the Gaussian curve delta_mu (GDPT eq. 2) at a transformed eps.

* remove: P - e^eps Q = q N(mu, 1) - (e^eps - 1 + q) N(0, 1), so for eps >= 0
  delta(eps) = q delta_mu(v), e^v = (e^eps - 1 + q) / q, i.e. v = log1p(expm1(eps) / q) >= 0
  (= eps - log q + log1p(-(1 - q) e^-eps), the form taken past eps = 1).
* add: P - e^eps Q = (1 - (1 - q) e^eps) N(0, 1) - q e^eps N(mu, 1). Where e^-eps <= 1 - q (eps at or
  past the add loss's bound -log(1 - q)) the measure is <= 0 and delta(eps) = 0 exactly; otherwise
  delta(eps) = c delta_mu(v) with c = 1 - (1 - q) e^eps = q e^eps w, e^-v = w = 1 + expm1(-eps) / q, i.e.
  v = -log(w) >= 0 (delta_mu is symmetric in its pair: sup_S N(0)(S) - e^v N(mu)(S) is the same curve).

Both follow from sup_S (a A(S) - b B(S)) = a sup_S (A(S) - (b / a) B(S)) for a > 0 and the Gaussian
curve of N(mu, 1) against N(0, 1). delta_mu is decreasing in its argument, so an enclosure [v0, v1] of v
(rationals, each end rounded outward) gives delta in [c0 delta_mu(v1)_lo, c1 delta_mu(v0)_hi]
(:func:`.gdp.delta_mu_iv`, the one copy of the curve in directed rounding). eps(delta) is a root of the
decreasing curve, proposed in mpmath and proved by two evaluations (:func:`.gdp.decreasing_root_iv`).

The pld.* and events.* re-checks answer from it (:func:`.pld.poisson_step_bounds`) where the whole
schedule is this one step; everything else steps aside (None) to the grid route.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

import mpmath
from gmpy2 import mpfr
from mpmath import mpf

from .core import Arith, Iv, mpf_to_fraction, to_fraction
from .gdp import _propose_eps, cancel_bits, decreasing_root_iv, delta_mu_at_t, delta_mu_iv

#: the directions whose pair is the one above (replace-one under Poisson sampling has none)
_DIRECTIONS = ("add", "remove")
_Z, _ONE = mpfr(0), mpfr(1)


def one_poisson_step(leaves: "list | None", dirs: list) -> "tuple[Fraction, Fraction] | None":
    """(z, q) where the schedule ``leaves`` ((kind, noise multiplier, sampling rate, times), the form of
    :func:`.pld.schedule_leaves` and ``events._Tree.rdp``) is exactly one Poisson-subsampled Gaussian
    step at a rate 0 < q < 1, read in directions among add and remove; None otherwise (a rate-1 Gaussian
    has its own closed form, :func:`.pld.gaussian_bounds`; more steps, another leaf or replace-one:
    the grid route)."""
    if not leaves or len(leaves) != 1 or not dirs or any(d not in _DIRECTIONS for d in dirs):
        return None
    kind, z, q, times = leaves[0]
    if kind != "gaussian" or times != 1 or not all(isinstance(x, Fraction) for x in (z, q)):
        return None
    if not (z > 0 and 0 < q < 1):
        return None
    return z, q


def poisson_delta_iv(A: Arith, mu: Fraction, q: Fraction, d: str, eps: Fraction) -> Iv:
    """An enclosure of delta(eps) of one Poisson-subsampled Gaussian step (shift mu > 0, rate 0 < q < 1)
    in direction ``d`` at the exact rational eps >= 0 (the module's formulas; directed rounding)."""
    Q = A.q(q)
    if d == "remove":
        if eps <= 1:
            v = A.log1p(A.div(A.expm1(A.q(eps)), Q))
        else:  # the same v without e^eps, which leaves MPFR's range past eps = 7e8
            v = A.add(A.sub(A.q(eps), A.log(Q)), A.log1p(A.neg(A.mul(A.q(1 - q), A.exp(A.q(-eps))))))
        c = Q
    else:
        # w = 1 + expm1(-eps) / q = (e^-eps - (1 - q)) / q: the first cancels 1 - q against 1 where q is
        # near 1 (adv56 M1: 1 - q = 1e-100 left w straddling 0 at every eps at 320 bits, no root proved),
        # the second cancels e^-eps against 1 - q where q is small; both enclose w, so their meet does
        w1 = A.add((_ONE, _ONE), A.div(A.expm1(A.q(-eps)), Q))
        w2 = A.div(A.sub(A.exp(A.q(-eps)), A.q(1 - q)), Q)
        w = (max(w1[0], w2[0]), min(w1[1], w2[1]))
        if not w[1] > 0:
            return _Z, _Z  # e^-eps <= 1 - q: the measure P - e^eps Q is <= 0
        w = (max(w[0], _Z), w[1])
        # v = -log(w) decreases in w: its lower end from w's upper end; w = 0 leaves v unbounded above
        v = (A.dn.minus(A.up.log(w[1])), A.up.minus(A.dn.log(w[0])) if w[0] > 0 else None)
        c = A.mul(A.mul(Q, A.exp(A.q(eps))), w)
    lo = A.dn.mul(c[0], delta_mu_iv(A, mu, to_fraction(v[1]))[0]) if v[1] is not None else _Z
    hi = A.up.mul(c[1], delta_mu_iv(A, mu, to_fraction(v[0]))[1])
    return max(lo, _Z), hi


def poisson_step_at(A: Arith, z: Fraction, q: Fraction, dirs: list, kind: str,
                    ends: "tuple[Fraction, Fraction]") -> "tuple | None":
    """The maximum over ``dirs`` of the step's delta(eps) for every eps in ``ends`` (mpfr [lo, hi]), or
    of its eps(delta) for every delta in ``ends`` (rationals [a, b], each direction's root by
    :func:`.gdp.decreasing_root_iv`), at the precision of ``A``; None where an eps is negative, a delta
    not positive or a root's upper end is not proved."""
    mu = 1 / z
    if kind == "delta":
        if ends[0] < 0:
            return None
        los, his = [], []
        for d in dirs:
            # delta(eps) decreases in eps: the lower end at the upper eps
            far = poisson_delta_iv(A, mu, q, d, ends[1])
            near = far if ends[0] == ends[1] else poisson_delta_iv(A, mu, q, d, ends[0])
            los.append(far[0])
            his.append(near[1])
        return max(los), max(his)
    if not ends[0] > 0:
        return None
    roots = []
    for d in dirs:
        r = decreasing_root_iv(lambda x, d=d: poisson_delta_iv(A, mu, q, d, x), ends,
                               lambda d=d: _propose(mu, q, d, (ends[0] + ends[1]) / 2, A.prec), A.prec)
        if r is None:
            return None
        roots.append(r)
    return max(r[0] for r in roots), max(r[1] for r in roots)


def _propose(mu: Fraction, q: Fraction, d: str, delta: Fraction, prec: int) -> Optional[Fraction]:
    """A proposal (mpmath; it proves nothing) of the eps >= 0 with delta(eps) = ``delta`` in direction
    ``d``, or None. Both directions are solved for v (the module's formulas; eps increases with v):
    remove delta = q delta_mu(v), v the Gaussian root of delta / q (:func:`.gdp._propose_eps`),
    eps = log1p(q expm1(v)); add delta = q delta_mu(v) e^-v / (1 - q + q e^-v), decreasing in v, by a
    64-bit bisection and then the secant method at prec + 32 bits (each plus :func:`.gdp.cancel_bits`), eps = -log(1 - q + q e^-v) (:func:`_log_mix`)."""
    if d == "remove":
        if not delta < q:
            return None
        v = _propose_eps(mu * mu, delta / q, prec)
        if v is None:
            return None
        with mpmath.workprec(prec + 32):
            return mpf_to_fraction(mpmath.log1p(mpf(q.numerator) / q.denominator
                                                * mpmath.expm1(mpf(v.numerator) / v.denominator)))
    with mpmath.workprec(64):
        extra = cancel_bits(mpf(mu.numerator) / mu.denominator)
    with mpmath.workprec(prec + 32 + extra):
        v = _add_root(mpf(mu.numerator) / mu.denominator, q, mpf(delta.numerator) / delta.denominator, prec, extra)
        if v is None:
            return None
        return mpf_to_fraction(-_log_mix(q, v))


def _log_mix(q: Fraction, v: mpf) -> mpf:
    """log(1 - q + q e^-v) at mpmath's precision (a proposal): log1p(q expm1(-v)) for q <= 1/2, else from
    1 - q exactly, since q expm1(-v) near -1 cancels 1 - q against 1 (1 - q = 1e-100: 332 bits)."""
    if q <= Fraction(1, 2):
        return mpmath.log1p(mpf(q.numerator) / q.denominator * mpmath.expm1(-v))
    r = 1 - q
    return mpmath.log(mpf(r.numerator) / r.denominator + mpf(q.numerator) / q.denominator * mpmath.exp(-v))


def _add_root(mu: mpf, q: Fraction, delta: mpf, prec: int, extra: int) -> Optional[mpf]:
    """The v > 0 with q delta_mu(v) e^-v / (1 - q + q e^-v) = delta (a proposal), or None. ``q`` is
    exact: :func:`_log_mix` reads 1 - q from it. The bisection works at 64 + ``extra`` bits, the bits
    delta_mu cancels (:func:`.gdp.cancel_bits`; the caller's precision carries them too)."""
    qf = mpf(q.numerator) / q.denominator

    def h(v: mpf) -> mpf:  # log of the curve over delta: decreasing in v
        dm = delta_mu_at_t(mu, v / mu - mu / 2)
        if not dm > 0:
            return mpf("-inf")  # cancellation below the working precision: far below any delta
        return mpmath.log(qf) + mpmath.log(dm) - v - _log_mix(q, v) - mpmath.log(delta)

    with mpmath.workprec(64 + extra):
        if not h(mpf(0)) > 0:
            return None  # eps(delta) is 0 or near it: the proofs' own search settles it
        a, b = mpf(0), mpf(1)
        for _ in range(64):
            if h(b) < 0:
                break
            a, b = b, 2 * b
        else:
            return None
        for _ in range(80):
            c = (a + b) / 2
            a, b = (c, b) if h(c) > 0 else (a, c)
    x0, x1 = a, b
    f0, f1 = h(x0), h(x1)
    for _ in range(40):
        if not (mpmath.isfinite(f0) and mpmath.isfinite(f1)) or f1 == f0:
            return None
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        if not x2 > 0:
            return None
        if abs(x2 - x1) <= x2 * mpf(2) ** -(prec + 8):
            return x2
        x0, f0, x1, f1 = x1, f1, x2, h(x2)
    return None

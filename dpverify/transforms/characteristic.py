"""Characteristic functions of the privacy loss (AFA Def 12, Table 2,
Lemmas 33-35, Def 36) and Levy inversion to PLD CDFs (AFA Lemma 18).

For a pair (P, Q) with densities p, q, AFA Def 12 defines
phi(t) = E_P[e^{i t log(p/q)}] and phi'(t) = E_Q[e^{i t log(q/p)}], t real.
All functions below return acb balls containing the exact value for every t
in the (real) ball ``t``.

* Randomized response P = (p, 1-p), Q = (1-p, p) (AFA Lemma 33):
  phi(t) = phi'(t) = p e^{i t r} + (1 - p) e^{-i t r},  r = log(p / (1-p)).
* Gaussian N(1, s^2) vs N(0, s^2), mu = 1/s (AFA Lemma 35): the loss under P is
  N(mu^2/2, mu^2), so phi(t) = phi'(t) = exp(-mu^2 (t^2 - i t) / 2).
* Laplace Lap(0, b) vs Lap(D, b), r = D / b (AFA Lemma 34, corrected proof):
  the loss under P is r on o <= 0 (mass 1/2), r(1 - 2o/D)... i.e. (|o - D| - |o|)/b,
  and -r on o > D (mass e^{-r}/2); integrating the middle piece,
      phi(t) = (1/2) [ e^{i t r} + e^{-(i t + 1) r} + (e^{i t r} - e^{-(i t + 1) r}) / (2 i t + 1) ].
  This agrees with the *statement* of AFA Lemma 34 (with lambda = b/D = 1/r);
  the printed proof has typos: its first integrand carries e^{alpha/lambda}
  (should be e^{o/lambda}), its third a factor 1/lambda (should be
  1/(2 lambda)), "2it + 1" for "2 i alpha + 1", and its last line ends in
  e^{(i alpha + 1)/lambda} (the exponent's sign is wrong: e^{-(i alpha + 1)/lambda}).
  phi' = phi by the reflection o -> D - o, which swaps P and Q.
* Finite pairs (AFA Def 36): phi(t) = sum_o p(o) e^{i t (log p(o) - log q(o))}.
* Composition: the loss of a product pair is the sum of independent losses,
  so phi multiplies (:func:`compose_phi`).

Levy inversion (AFA Lemma 18): F(x) = P[L <= x] = 1/2 - (1/pi) int_0^inf Im(e^{-itx} phi(t)) / t dt
(at continuity points). It is certified here only for the Gaussian, whose phi
decays like e^{-mu^2 t^2 / 2}, so the truncation at T is bounded by
(1/pi) int_T^inf e^{-mu^2 t^2/2} / t dt <= sqrt(2 pi) Phibar(mu T) / (pi mu T),
and the piece [0, t0] by t0 (|x| + E|L|) (|sin u| <= |u|). For laws with atoms
(randomized response, Laplace) phi does not decay and no such bound exists:
:func:`levy_cdf_estimate` returns a float, explicitly an *estimate*, never used
on a certified path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from flint import acb, arb

from .. import _validate as V
from ..ball import ball, fresh_integration_state, normal_sf, refine
from ..verdict import Enclosure

__all__ = [
    "FinitePair",
    "rr_phi",
    "gaussian_phi",
    "laplace_phi",
    "compose_phi",
    "gaussian_pld_cdf",
    "levy_cdf_estimate",
]

Phi = Callable[[arb], acb]


def rr_phi(p: Fraction, t: arb) -> acb:
    """AFA Lemma 33: p e^{i t r} + (1-p) e^{-i t r}, r = log(p/(1-p))."""
    pb = ball(p)
    r = (pb / (1 - pb)).log()
    it = acb(0, t * r)
    return acb(pb) * it.exp() + acb(1 - pb) * (-it).exp()


def gaussian_phi(mu: Fraction, t: arb) -> acb:
    """AFA Lemma 35 with mu = 1/sigma: exp(-mu^2 (t^2 - i t) / 2)."""
    m2 = ball(mu) ** 2
    return acb(-m2 * t * t / 2, m2 * t / 2).exp()


def laplace_phi(r: Fraction, t: arb) -> acb:
    """AFA Lemma 34 (as corrected in the module docstring), r = sensitivity / scale."""
    rb = ball(r)
    a = acb(0, t * rb).exp()  # e^{i t r}
    b = acb(-rb, -t * rb).exp()  # e^{-(i t + 1) r}
    return (a + b + (a - b) / acb(1, 2 * t)) / 2


@dataclass(frozen=True)
class FinitePair:
    """A pair of pmfs on a finite set (exact rationals; AFA Def 36).
    Outputs with q(o) = 0 < p(o) put mass at +inf loss; they are refused here
    (phi would need the extended-real treatment of AFA Sec D.2)."""

    p: Sequence[Fraction]
    q: Sequence[Fraction]

    def __post_init__(self) -> None:
        if len(self.p) != len(self.q) or not self.p:
            raise ValueError("p and q must be non-empty and of equal length")
        if sum(self.p) != 1 or sum(self.q) != 1 or min(self.p) < 0 or min(self.q) < 0:
            raise ValueError("p and q must be probability vectors (exact)")
        if any(pi > 0 and qi == 0 for pi, qi in zip(self.p, self.q)):
            raise ValueError("p must be absolutely continuous w.r.t. q (no infinite loss)")

    def phi(self, t: arb) -> acb:
        total = acb(0)
        for pi, qi in zip(self.p, self.q):
            if pi == 0:
                continue
            loss = (ball(pi) / ball(qi)).log()
            total += acb(ball(pi)) * acb(0, t * loss).exp()
        return total

    def phi_prime(self, t: arb) -> acb:
        """phi'(t) = E_Q[e^{i t log(q/p)}] (needs q << p)."""
        return FinitePair(self.q, self.p).phi(t)


def compose_phi(phis: Sequence[Phi], counts: Sequence[int]) -> Phi:
    """phi of the composition: prod_i phi_i(t)^{k_i} (independent losses add)."""

    def phi(t: arb) -> acb:
        out = acb(1)
        for f, k in zip(phis, counts):
            out *= f(t) ** k
        return out

    return phi


def _gaussian_cdf_ball(mu: Fraction, x: Fraction) -> arb:
    m = ball(mu)
    xb = ball(x)
    # the truncation point: tail <= 2^-(prec+10)
    from flint import ctx

    prec = ctx.prec
    T_val = math.sqrt(2 * (prec + 20) * math.log(2)) / float(mu) + 1
    T = arb(int(T_val * 64)) / 64
    t0 = arb(2) ** (-(prec + 20))
    m2 = m * m

    def integrand(t: acb, analytic: bool) -> acb:
        # Im(e^{-itx} phi(t)) / t as an entire function of t (for t != 0):
        # (e^{-itx} phi(t) - e^{itx} phi(-t)) / (2 i t)
        def ph(s: acb) -> acb:
            return (-(m2 * (s * s - acb(0, 1) * s)) / 2).exp()

        ix = acb(0, 1) * acb(xb)
        return ((-ix * t).exp() * ph(t) - (ix * t).exp() * ph(-t)) / (2 * acb(0, 1) * t)

    fresh_integration_state()
    body = acb.integral(integrand, t0, T, rel_tol=arb(2) ** (-prec)).real
    # [0, t0]: |integrand| <= |x| + E|L| <= |x| + sqrt(mu^4/4 + mu^2)
    head = t0 * (abs(xb) + (m2 * m2 / 4 + m2).sqrt())
    tail = (2 * arb.pi()).sqrt() * normal_sf(m * T) / (arb.pi() * m * T)
    integral = body + arb(0, (head + tail * arb.pi()).upper())
    return arb(1) / 2 - integral / arb.pi()


def gaussian_pld_cdf(mu: object, x: object, digits: int = 15) -> Enclosure:
    """Certified P[L <= x] for the Gaussian pair (loss under P), by Levy inversion
    of AFA Lemma 35's phi (AFA Lemma 18) with proven truncation bounds. The
    closed form Phi((x - mu^2/2)/mu) is the test's independent reference."""
    m = V.positive("mu", mu)
    xx = V.real("x", x)
    d = V.digits(digits)
    v, bits = refine(lambda: _gaussian_cdf_ball(m, xx), digits=d + 1, what="Gaussian PLD CDF")
    return Enclosure.from_ball(v, d, bits)


def levy_cdf_estimate(phi: Callable[[float], complex], x: float, T: float = 200.0, n: int = 200000) -> float:
    """ESTIMATE (uncertified, floats) of P[L <= x] by truncated Levy inversion
    (AFA Lemma 18) with the midpoint rule on (0, T]. For laws with atoms phi
    does not decay, the truncation error has no bound and the result is only a
    smoothed estimate; never use it on a certified path."""
    h = T / n
    s = 0.0
    for k in range(n):
        t = (k + 0.5) * h
        s += (complex(math.cos(-t * x), math.sin(-t * x)) * phi(t)).imag / t
    return 0.5 - s * h / math.pi

"""Taylor-model cell test for the staircase: sup_{[a, b]} G_f <= T with O(1) cells.

What is proved. mu_GDP is strictly increasing in delta (GDPT App A.5), so for
f(x) in (0, 1): G_f(x) <= T  <=>  f(x) <= delta_T(x)  <=>  H(x) >= 0 with

    H(x) = log delta_T(x) - log f(x).

On a cell [a, b] with centre c and radius r, Taylor's theorem with the
Lagrange remainder gives, for |t| <= r,

    H(c + t) = sum_{k < N} H_k t^k + H^(N)(xi) / N! t^N,   xi in [a, b],

where H_k = H^(k)(c) / k! are enclosed by arb_series arithmetic at the exact
point c, and the remainder coefficient by the *same* series arithmetic with
the ball [a, b] as expansion point (every arb operation is inclusion-isotone,
so the ball's N-th coefficient contains H^(N)(xi)/N! for every xi in the
cell). Hence H >= H_0 - sum_{odd k} |H_k| r^k + sum_{even k > 0} min(0, H_k) r^k
on the cell; if that lower bound is > 0 the cell is proved.

Why it needs O(1) cells where GDPT Thm 4.6's staircase needs eps_h / margin.
The staircase bound mu_GDP(b, f(a)) exceeds G_f by up to the slope bound
sqrt(2 pi)/2 (GDPT Thm 4.5) times the cell width, so closing a cell at
margin m needs width ~ m. Here the only term that is not computed at an exact
point is the remainder, of size ~ C r^{N+1}; H_0 ~ (T - G_f(c)) d log delta/d mu
is the margin itself, so cells of width ~ m^{1/(N+1)} close where G_f is
flat (the Gaussian: G_f = mu0 everywhere) and width ~ m^{1/2} at a smooth
maximum (|H_1| r ~ G_f'' r^2).

The series are the closed forms of the mechanisms' profiles on the open
interval where they are analytic (None elsewhere: the caller then uses the
staircase test):

* Gaussian: delta_mu0(x) = Phi(-x/mu0 + mu0/2) - e^x Phi(-x/mu0 - mu0/2) (GDPT eq. 2);
* Laplace, eps0 = D/b: 1 - exp((x - eps0)/2) on (-eps0, eps0)
  (:mod:`dpverify.mechanisms.laplace`);
* worst case of (eps0, delta0)-DP: delta0 + (1 - delta0)(e^eps0 - e^x)/(1 + e^eps0)
  on (-eps0, eps0) (GDPT Thm 3.1);
* randomized response RR(eps, delta): 1 - (e^x + 1)(1 - delta)/(e^eps + 1)
  on (-eps, eps) (LT Thm 3.4).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Optional

from flint import arb, arb_series

from ..ball import ball

__all__ = ["profile_series", "cell_le_taylor", "ORDER"]

#: Taylor order N (the remainder is the N-th coefficient)
ORDER = 12

Series = Callable[[arb, int], Optional[arb_series]]


def _phi_series(z: arb_series) -> arb_series:
    """Phi(z) = erfc(-z / sqrt 2) / 2 as a series."""
    return (-z / arb(2).sqrt()).erfc() / 2


def _delta_mu_series(mu: arb, x: arb, n: int) -> arb_series:
    t = arb_series([x, 1], prec=n)
    return _phi_series(-t / mu + mu / 2) - t.exp() * _phi_series(-t / mu - mu / 2)


def profile_series(profile: object) -> Optional[Series]:
    """A function (x ball, order n) -> Taylor series of f at x (or None where
    the closed form does not hold on the whole ball x); None when the profile
    has no known closed form."""
    from ..mechanisms.approx_dp import ApproxDPProfile
    from ..mechanisms.gaussian import GaussianProfile
    from ..mechanisms.laplace import LaplaceProfile
    from ..mechanisms.randomized_response import _RRProfile

    if isinstance(profile, GaussianProfile):
        mu0 = profile.mu

        def gauss(x: arb, n: int) -> Optional[arb_series]:
            return _delta_mu_series(ball(mu0), x, n)

        return gauss
    if isinstance(profile, LaplaceProfile):
        e0 = profile.eps0

        def lap(x: arb, n: int) -> Optional[arb_series]:
            E = ball(e0)
            if not (x < E and x > -E):
                return None
            t = arb_series([x, 1], prec=n)
            return 1 - ((t - E) / 2).exp()

        return lap
    if isinstance(profile, ApproxDPProfile):
        e0, d0 = profile.eps0, profile.delta0

        def approx(x: arb, n: int) -> Optional[arb_series]:
            E = ball(e0)
            if not (x < E and x > -E):
                return None
            t = arb_series([x, 1], prec=n)
            return ball(d0) + (1 - ball(d0)) * (E.exp() - t.exp()) / (1 + E.exp())

        return approx
    if isinstance(profile, _RRProfile):
        rr = profile.rr

        def rrs(x: arb, n: int) -> Optional[arb_series]:
            r = rr._exp_eps_ball()
            ex = x.exp()
            if not (ex < r and ex * r > 1):
                return None
            t = arb_series([x, 1], prec=n)
            return 1 - (t.exp() + 1) * (1 - ball(rr.delta)) / (r + 1)

        return rrs
    return None


def _log_ratio(series: Series, T: Fraction, x: arb, n: int) -> Optional[arb_series]:
    f = series(x, n)
    if f is None or not f[0] > 0:
        return None
    dT = _delta_mu_series(ball(T), x, n)
    if not dT[0] > 0:
        return None
    return dT.log() - f.log()


def cell_le_taylor(series: Series, a: Fraction, b: Fraction, T: Fraction, order: int = ORDER) -> bool:
    """True only if f(x) <= delta_T(x) on [a, b] is proved by the Taylor model
    of the module docstring (hence sup_{[a, b]} G_f <= T). T > 0."""
    if T <= 0 or b < a:
        return False
    c = (a + b) / 2
    r = ball((b - a) / 2)
    at_c = _log_ratio(series, T, ball(c), order)
    if at_c is None:
        return False
    on_cell = _log_ratio(series, T, ball(a).union(ball(b)), order + 1)
    if on_cell is None:
        return False
    lower = at_c[0]
    rk = arb(1)
    for k in range(1, order + 1):
        rk = rk * r
        h = on_cell[order] if k == order else at_c[k]
        if not h.is_finite():
            return False
        if k % 2 == 1 or k == order:
            lower -= h.abs_upper() * rk  # |h t^k| <= |h| r^k
        else:
            h_lo = arb(h.lower())
            if h_lo < 0:  # t^k in [0, r^k] for even k
                lower += h_lo * rk
    return bool(lower > 0)

"""Dominating pairs of distributions for the privacy-loss-distribution accountant.

A pair (P, Q) *dominates* a mechanism M under a neighbouring relation when
H_{e^eps}(M(D) || M(D')) <= H_{e^eps}(P || Q) for every eps in R and every
neighbouring D ~ D' (AFA Def 7; alpha = e^eps >= 0, so negative eps count too).
Adaptive composition of mechanisms is dominated by the product of their pairs
(AFA Thm 10), which is what the accountant composes.

Every pair here is described by its *privacy-loss tails*

    P(L > eps)  and  Q(L > eps),    L = log dP/dQ,

as certified balls for any real ``eps`` (arb, current precision). They give the
hockey-stick curve  delta(eps) = P(L > eps) - e^eps Q(L > eps)  and the mass of
P (and Q) on any loss interval, which is all the discretisation needs.
Probability mass of P at L = +inf (AFA Lemma 37, Prop 38) is reported by
:meth:`inf_mass`; the Gaussian pairs below have none (their losses are finite
almost surely), so it is exactly 0.

Implemented (the pairs DP-SGD needs, where the float accountants disagree):

* ``SubsampledGaussianPair(sigma, q, "remove")``: P = (1-q) N(0,1) + q N(mu,1),
  Q = N(0,1), mu = 1/sigma: AFA Thm 11 (1) for Poisson subsampling under the
  *remove* relation, base pair (N(0, sigma^2), N(1, sigma^2)) of the Gaussian
  mechanism with sensitivity 1 (rescaled by sigma). Loss
  L(x) = log(1 - q + q e^{mu x - mu^2/2}) in (log(1-q), inf), increasing in x.
* ``SubsampledGaussianPair(sigma, q, "add")``: P = N(0,1),
  Q = (1-q) N(0,1) + q N(mu,1) (AFA Thm 11 (1), add relation);
  L(x) = -log(1 - q + q e^{mu x - mu^2/2}) in (-inf, -log(1-q)), decreasing in x.
* q = 1: the Gaussian mechanism itself, L ~ N(mu^2/2, mu^2) under P (both
  directions have the same curve, delta_mu of GDPT eq. 2).
* ``SubsampledLaplacePair(b, q, direction)``: the same construction with the
  Laplace base pair (Lap(0,b), Lap(1,b)); loss atoms at both support ends.
* ``FinitePair(P, Q)``: exact rational finite pairs (finite mechanisms,
  randomized response); P-mass at loss +inf tracked exactly (AFA Lemma 37);
  ``approx_dp_pair_exp(e^eps0, delta0)``: the randomized-response pair that
  dominates every (eps0, delta0)-DP mechanism (LT Thm 4.5);
  ``subsample_finite(pair, q, direction)``: AFA Thm 11 (1) for finite pairs
  (mass at +inf of the result exact, AFA Prop 38).

Both pairs are *tight* (AFA Thm 11, "Remark (Exact optimality)": realised by
the datasets [0,...,0,1] vs [0,...,0] for a sum query), so a lower bound of
the composed pair's curve is a lower bound for the mechanism's worst case too.

Replace-one: for q = 1 the pair (N(0,1), N(2 mu, 1)) is tight for the Gaussian
mechanism with replace-one neighbours (a clipped sum moves by at most 2C; Dong,
Roth, Su 2019, Sec 2). For Poisson subsampling with q < 1 under replace-one no
tight dominating pair with a closed form is established in the papers dpverify
is built on (AFA Sec 4.1 and App. "Proposition 30" leave it open), so it is
refused with :class:`~dpverify.errors.InvalidParameter`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from flint import arb, arb_poly, arb_series, ctx

from ..ball import ball, normal_sf, working_precision
from ..errors import InvalidParameter
from .._validate import check_noise_multiplier
from .discretise import _FLOAT_MIN_BLOCK, _FLOAT_MIN_KNOTS
from .dominating import _PROGRESS_EVERY, LossBound, PairFromTails, dyadic_loss_bound, exact_loss_bound
from .taylor_blocks import _TAYLOR_END_RATIO, TaylorExpansion, grid_tails_by_blocks, taylor_expansion

__all__ = ["FinitePair", "SubsampledGaussianPair", "SubsampledLaplacePair", "approx_dp_pair_exp", "subsample_finite"]


#: SubsampledGaussianPair._constants by (sigma, q, direction, precision); arb balls are immutable
_CONSTANTS: dict = {}


@dataclass(frozen=True)
class SubsampledGaussianPair(PairFromTails):
    """Tight dominating pair of the Poisson-subsampled Gaussian mechanism
    (noise multiplier ``sigma``, rate ``q``) for one direction
    (``"remove"``, ``"add"``, or ``"replace"`` which needs q = 1); see the
    module docstring for the distributions and the source."""

    sigma: Fraction
    q: Fraction
    direction: str

    def __post_init__(self) -> None:
        if self.sigma <= 0:
            raise InvalidParameter("noise_multiplier", f"noise_multiplier={self.sigma} must be > 0")
        # every route to a Gaussian pair (a DP-SGD schedule, an event tree) stops here at the latest
        check_noise_multiplier("noise_multiplier", self.sigma)
        if not 0 < self.q <= 1:
            raise InvalidParameter("sampling_rate", f"sampling_rate={self.q} must be in (0, 1]")
        if self.direction not in ("remove", "add", "replace"):
            raise ValueError(f"unknown direction {self.direction!r}")
        if self.direction == "replace" and self.q != 1:
            raise InvalidParameter(
                "neighboring",
                "neighboring='replace-one' with Poisson subsampling (sampling rate < 1) has no "
                "tight dominating pair established in AFA/LT (AFA App. Prop 30 leaves it open); "
                "use add-remove, add or remove, or sampling rate 1",
            )

    @property
    def mu(self) -> Fraction:
        """Shift of the Gaussian pair in units of the noise: sensitivity / sigma
        (sensitivity 2 under replace-one)."""
        return (2 if self.direction == "replace" else 1) / self.sigma

    def inf_mass(self) -> arb:
        """P(L = +inf): 0 for Gaussian pairs (P << Q)."""
        return arb(0)

    def loss_bound(self) -> LossBound:
        """An upper bound of L under P (:mod:`.dominating`). Add, q < 1:
        L(x) = -log(1 - q + q e^{mu x - mu^2/2}) and q e^{...} > 0, so the argument of
        the log exceeds 1 - q and L < -log(1 - q) for every x (the supremum, approached
        as x -> -inf, is not attained: delta(eps) > 0 for every eps below it). Remove:
        L(x) = log(1 - q + q e^{mu x - mu^2/2}) -> +inf as x -> +inf; q = 1 (and
        replace-one): L = mu x - mu^2/2 is unbounded. Those have none (math.inf)."""
        if self.direction != "add" or self.q == 1:
            return math.inf
        return dyadic_loss_bound(-(1 - ball(self.q)).log())

    def _constants(self) -> tuple[arb, arb, arb, arb, arb]:
        """(mu, q, mu^2 / 2, log q, 1 - q) as balls at the working precision. Kept per
        (sigma, q, direction, precision): the range search asks for them at every trial
        point, and the same balls come back (a function of those four only)."""
        key = (self.sigma, self.q, self.direction, ctx.prec)
        hit = _CONSTANTS.get(key)
        if hit is not None:
            return hit
        mu = ball(self.mu)
        q = ball(self.q)
        out = (mu, q, mu * mu / 2, q.log(), 1 - q)
        if len(_CONSTANTS) >= 64:
            _CONSTANTS.pop(next(iter(_CONSTANTS)))
        _CONSTANTS[key] = out
        return out

    def _tails_with(self, eps: arb, c: tuple, sf) -> tuple[arb, arb]:
        """(P(L > eps), Q(L > eps)) from the constants ``c`` and a normal
        survival function ``sf`` (both rigorous on balls).

        Derivation (remove, q < 1): L(x) > eps iff x > x_eps with
        x_eps = (log((e^eps - 1 + q)/q) + mu^2/2)/mu when e^eps > 1 - q, else
        every x qualifies; P(X > t) = (1-q) Phi(-t) + q Phi(mu - t),
        Q(X > t) = Phi(-t). Add: L(x) > eps iff x < x'_eps with the same formula
        at -eps, P(X < t) = Phi(t), Q(X < t) = (1-q) Phi(t) + q Phi(t - mu).
        q = 1 (Gaussian): L(x) = mu x - mu^2/2 under the remove orientation,
        P(L > eps) = Phi(-eps/mu + mu/2), Q(L > eps) = Phi(-eps/mu - mu/2),
        and the add / replace orientations have the same law of L.
        """
        return self._tails_fn(c, sf)(eps)

    def _tails_fn(self, c: tuple, sf) -> Callable[[arb], tuple[arb, arb]]:
        """eps -> :meth:`_tails_with` (eps, c, sf): the same arb operations, with the branches on
        q and the direction taken once (the knot-by-knot route calls it at every knot)."""
        mu, q, half_mu2, logq, one_q = c
        if self.q == 1:
            return lambda eps: (sf(eps / mu - mu / 2), sf(eps / mu + mu / 2))
        remove = self.direction == "remove"
        beyond = (arb(1), arb(1)) if remove else (arb(0), arb(0))

        def tails(eps: arb) -> tuple[arb, arb]:
            a = (eps if remove else -eps).expm1() + q
            if a <= 0:  # beyond the end of the loss support
                return beyond
            if not a > 0:
                raise _undecided(eps)
            x = (a.log() - logq + half_mu2) / mu
            if remove:
                qt = sf(x)
                return one_q * qt + q * sf(x - mu), qt
            pt = sf(-x)
            return pt, one_q * pt + q * sf(mu - x)

        return tails

    @functools.cached_property
    def _range_constants(self) -> Optional[tuple]:
        """(mu, q, log q, mu^2 / 2, remove, q == 1) in binary64 for :meth:`range_floats`, or None
        where it declines (sigma outside [1e-3, 1000]); kept on the instance (the range search asks
        range_floats about 46 times a call, and converting the Fractions at each call was three
        quarters of its cost). The same IEEE operations as computing them at each call."""
        if not Fraction(1, 1000) <= self.sigma <= 1000:
            return None
        mu, q = float(self.mu), float(self.q)
        return mu, q, math.log(q), mu * mu / 2, self.direction == "remove", self.q == 1

    def range_floats(self, eps: float) -> Optional[tuple[float, float]]:
        """Binary64 (P(L > eps), P(L <= eps)), each from positive terms only (no 1 - x), for
        :func:`.discretise.grid_range`'s screen, or None where their relative error is not
        clearly below 1e-6: sigma above 1000 (x = (log a - log q + mu^2 / 2) / mu divides the
        error of log a by mu) or below 1e-3 (mu past binary64's comfort: sigma 1e-2200 has no
        float mu at all), or a = e^(+-eps) - 1 + q within 1e-4 of 0 (near the end of the
        loss support log a loses its digits). Elsewhere the error of a is about 1e-16 (e^eps,
        or q when e^eps - 1 cancels against -q) over a >= 1e-4, so log a errs by about 1e-12,
        x by 1e-9 and each normal tail by |x| 1e-9 relative (|x| <= 40 where a tail is above
        binary64's range). The formulas of :meth:`_tails_with`; only a proposal."""
        fl = self._range_constants
        if fl is None:
            return None
        mu, q, log_q, half_mu2, remove, gauss = fl
        sf = _float_sf
        if gauss:
            return sf(eps / mu - mu / 2), sf(mu / 2 - eps / mu)
        if abs(eps) > 700:  # (e^eps past binary64; the balls decide there)
            return None
        a = math.expm1(eps if remove else -eps) + q
        if abs(a) < 1e-4:
            return None
        if a < 0:  # beyond the end of the loss support: L > eps always (remove) or never (add)
            return (1.0, 0.0) if remove else (0.0, 1.0)
        x = (math.log(a) - log_q + half_mu2) / mu
        if remove:  # L > eps iff X > x: P = (1 - q) N(0, 1) + q N(mu, 1)
            return (1 - q) * sf(x) + q * sf(x - mu), (1 - q) * sf(-x) + q * sf(mu - x)
        return sf(-x), sf(x)  # add, P = N(0, 1): L > eps iff X < x

    def tails(self, eps: arb) -> tuple[arb, arb]:
        """Balls of (P(L > eps), Q(L > eps)) for any real ball ``eps``
        (formulas in :meth:`_tails_with`)."""
        return self._tails_with(eps, self._constants(), normal_sf)

    def tails_at_grid(self, m: int, i0: int, n: int, progress=None) -> tuple[list, list]:
        """:meth:`tails` at the exact points i 2^-m, i = i0..n, by blocks of
        knots that share one Taylor expansion with a proven remainder
        (:func:`.taylor_blocks.taylor_block`, driven by
        :func:`.taylor_blocks.grid_tails_by_blocks`); a block whose remainder is
        not small enough (near an end of the loss support) is split, and its
        smallest pieces get their tails knot by knot: from :class:`_SfLattice`'s
        Taylor polynomials at the lattice j/2 (Cramer's bound on the remainder) up to its
        precision cap, else one arb erfc pair (constants hoisted; arb's own erfc is
        rigorous on balls). Every value is an enclosure either way;
        the choice between the two routes rests on arb balls and the inputs only
        (deterministic, the same on every platform)."""
        P_t, Q_t, _ = self._grid(m, i0, n, progress, 0)
        return P_t, Q_t

    def grid_expansions(self, m: int, i0: int, n: int, progress=None) -> tuple[list, list, list]:
        """As :meth:`tails_at_grid`, but the blocks' expansions are returned unevaluated
        (:class:`.taylor_blocks.TaylorExpansion`, each valid one knot beyond its block on either
        side) and their knots are None in the tail lists: the discretisation forms its masses
        from the expansions directly (:mod:`.discretise`)."""
        return self._grid(m, i0, n, progress, 1)

    def _grid(self, m: int, i0: int, n: int, progress, reach: int) -> tuple[list, list, list]:
        c = self._constants()
        s2 = arb(2).sqrt()
        h = arb(2) ** (-m)
        total = n - i0 + 1
        # a knot's normal tails off the lattice expansions (:class:`_SfLattice`, about a third of
        # the cost of arb's erfc) up to _SF_MAX_PREC bits; arb's erfc beyond
        lattice = ctx.prec <= _SF_MAX_PREC

        def erfc_sf(x: arb) -> arb:
            return (x / s2).erfc() / 2

        sf = _sf_lattice(ctx.prec) if lattice else erfc_sf

        def per_knot(a: int, b: int) -> tuple[list, list]:
            P_t: list = []
            Q_t: list = []
            tails = self._tails_fn(c, sf)
            for i in range(a, b + 1):
                if progress is not None and (i - i0) % _PROGRESS_EVERY == 0:
                    progress((i - i0) / total)
                p, q = tails(h * i)
                P_t.append(p)
                Q_t.append(q)
            return P_t, Q_t

        def series(e: arb, L: int) -> tuple:
            return self._tails_series(e, L, c, s2)

        if lattice and self.q != 1 and _far_knots(self.q, self.direction, m, i0, n) < _FLOAT_MIN_KNOTS:
            # too few knots far enough from the support's end for the blocks' binary64 masses
            # (discretise.block_masses): every block would be evaluated knot by knot in arb anyway,
            # after its two series (about 30 knots' worth each), and near the end most blocks fail
            # and split down to single knots (sigma 4, q 0.01: 314 of 558 knots at 2^-13, 320 of
            # 1193 at 2^-14); each knot off the lattice instead. A choice of route only
            P_t, Q_t = per_knot(i0, n)
            return P_t, Q_t, []
        # the tails are analytic in eps except where e^{+-eps} = 1 - q (the end
        # of the loss support, and its 2 pi i translates)
        end = None if self.q == 1 else c[4].log() * (1 if self.direction == "remove" else -1)
        remove = self.direction == "remove"

        def block(a: int, b: int, order: int, tol: arb) -> "Optional[TaylorExpansion | tuple[list, list]]":
            # a block wholly beyond the end of the loss support: there a = e^(+-eps) - 1 + q < 0 at every
            # knot (remove: eps < log(1 - q); add: eps > -log(1 - q)), where _tails_with answers the
            # exact tails (1, 1) (remove: L > eps everywhere) or (0, 0) (add: L < -log(1 - q) < eps).
            # Decided on balls; a block the comparison does not place is expanded as before. Its Taylor
            # series has no finite log there, so such a block was split down to single knots: half the
            # knots of a MaxCurvePair grid (sampling without replacement: 19 of 25 CPU s at N = 10, B = 5)
            if end is not None and (h * b < end if remove else h * a > end):
                one = arb(1 if remove else 0)
                return [one] * (b - a + 1), [one] * (b - a + 1)
            return taylor_expansion(series, h, a, b, (a + b) // 2, order, tol, reach)

        return grid_tails_by_blocks(m, i0, n, progress, end, block, per_knot, keep=reach > 0)

    def _tails_series(self, eps0: arb, length: int, c: tuple, s2: arb) -> tuple:
        """Taylor coefficients (in t, ``length`` of them) of
        (P(L > eps0 + t), Q(L > eps0 + t)) at the ball ``eps0``: the formulas of
        :meth:`_tails_with` on arb power series (the support end a > 0 is
        required: log of a series whose constant term may be <= 0 is not
        finite, and the caller then splits the block).
        e^{s eps0 + s t} - 1 + q = e^{s eps0} (e^{s t} - 1) + (e^{s eps0} - 1 + q),
        s = +-1, keeps the constant term's expm1 accurate near eps = 0."""
        mu, q, half_mu2, logq, one_q = c
        t = arb_series([0, 1], prec=length)
        if self.q == 1:
            ps = ((eps0 + t) / mu - mu / 2) / s2
            qs = ((eps0 + t) / mu + mu / 2) / s2
            return ps.erfc() / 2, qs.erfc() / 2
        sg = 1 if self.direction == "remove" else -1
        e = eps0 * sg
        a = e.exp() * ((t * sg).exp() - 1) + (e.expm1() + q)
        x = (a.log() - logq + half_mu2) / mu
        if sg == 1:
            qt = (x / s2).erfc() / 2
            return one_q * qt + q * ((x - mu) / s2).erfc() / 2, qt
        pt = (-x / s2).erfc() / 2
        return pt, one_q * pt + q * ((mu - x) / s2).erfc() / 2

    def describe(self) -> dict[str, str]:
        return {"pair": "subsampled-gaussian", "direction": self.direction}


_SQRT2 = math.sqrt(2.0)

#: the working precision up to which :meth:`SubsampledGaussianPair._grid` reads its knots' normal
#: tails off :class:`_SfLattice` (its order grows as prec / 4, and the polynomials' cost with it)
_SF_MAX_PREC = 320


class _SfLattice:
    """Enclosures of the normal survival function sf(y) = erfc(y / sqrt 2) / 2 at the working
    precision ``prec`` from Taylor polynomials at the lattice points c = j / 2 (|c| <= MAX_C),
    each valid on [c - R, c + R], R = 17/64 (a quarter and a margin, so that a ball about a point
    nearest c fits), built on first use and kept: the same inputs give the same balls. A knot's
    two tails cost about a third of arb's erfc pair (2.5 us a polynomial of order 32 at 137 bits,
    against 5-16 us an erfc).

    Proof (Taylor's theorem with the Lagrange remainder, as :func:`.taylor_blocks.taylor_block`):
    sf is entire, so for every real y with |y - c| <= R, sf(y) = sum_(k <= N) a_k (y - c)^k +
    b (y - c)^(N+1) with a_k = sf^(k)(c) / k! and b = sf^(N+1)(xi) / (N+1)! for some xi between
    c and y. The a_k are arb's series coefficients at the exact point c. As sf' = -phi and
    phi^(n) = (-1)^n He_n phi (He the probabilists' Hermite polynomials),
    |b| = |He_N(xi)| phi(xi) / (N+1)!, and Cramer's inequality (Abramowitz & Stegun 22.14.17:
    |H_n(x)| <= k 2^(n/2) sqrt(n!) e^(x^2/2), k < 1.086435, with He_n(x) = 2^(-n/2) H_n(x / sqrt 2))
    gives |He_N(xi)| <= k sqrt(N!) e^(xi^2/4), so |b| <= k sqrt(N!) e^(-xi^2/4) / (sqrt(2 pi) (N+1)!)
    <= B with xi^2 >= d^2, d = max(0, |c| - R). The top coefficient is the ball [-B, B] (arb's
    series over the ball [c - R, c + R] overestimates it by up to 2^20 near |c| = 4, measured:
    8 terms more). |y - c| <= R is decided on arb balls (every value of y), so the polynomial with
    that ball on top, evaluated in arb at the ball y - c, contains sf(y) for every y in the ball;
    elsewhere (or past MAX_C) arb's erfc answers. Floats only pick the lattice point and the order
    N: the least whose remainder B R^(N+1) is below 2^(16 - prec), 4 bits inside the accuracy asked
    of a Taylor block of knots (:func:`.taylor_blocks.grid_tails_by_blocks`)."""

    R = Fraction(17, 64)
    MAX_C = 40
    #: Cramer's constant, rounded up
    K = Fraction(10865, 10000)
    R_FLOAT = 17 / 64
    LOG_R = math.log(17 / 64)
    LOG_K_OVER_SQRT_2PI = math.log(1.0865) - 0.5 * math.log(2 * math.pi)

    def __init__(self, prec: int) -> None:
        self.prec = prec
        self.polys: dict[int, tuple[arb, arb_poly]] = {}
        self.r = ball(self.R)  # (exact)

    def expansion(self, j: int) -> tuple[arb, arb_poly]:
        """The polynomial at c = j / 2 of the class docstring (at the working precision, which
        the caller keeps at ``prec``)."""
        got = self.polys.get(j)
        if got is not None:
            return got
        c = Fraction(j, 2)
        d = max(0.0, abs(j) / 2 - self.R_FLOAT)
        # log of the remainder bound B R^(N+1) at N = 8, then one term at a time
        log_rem = (self.LOG_K_OVER_SQRT_2PI + 0.5 * math.lgamma(9) - math.lgamma(10) - d * d / 4
                   + 9 * self.LOG_R)
        goal = (16 - self.prec) * math.log(2)
        N = 8
        while log_rem > goal:
            N += 1
            # sqrt(N!) / (N+1)! gains 0.5 log N - log(N + 1) from N - 1 to N, R^(N+1) log R
            log_rem += 0.5 * math.log(N) - math.log(N + 1) + self.LOG_R
        centre = ball(c)
        old = ctx.cap
        try:
            with working_precision(self.prec):
                ctx.cap = N + 1
                s2 = arb(2).sqrt()
                # erfc(c / sqrt2 + t / sqrt2) as a series in t (halved below: exact)
                coeffs = arb_series([centre / s2, 1 / s2], prec=N + 1).erfc().coeffs()
                coeffs += [arb(0)] * (N + 1 - len(coeffs))  # (coeffs() drops exact zeros at the top)
                dd = ball(max(Fraction(0), abs(c) - self.R))
                B = ball(self.K) * arb.fac_ui(N).sqrt() * (-(dd * dd) / 4).exp() \
                    / ((2 * arb.pi()).sqrt() * arb.fac_ui(N + 1))
                got = self.polys[j] = (centre, arb_poly(coeffs + [2 * B * arb(0, 1)]) * arb(0.5))
        finally:
            ctx.cap = old
        return got

    def __call__(self, y: arb) -> arb:
        """sf(y) for every value of the ball y (class docstring)."""
        mid = float(y.mid())
        if -self.MAX_C <= mid <= self.MAX_C:
            j = round(2 * mid)
            got = self.polys.get(j)
            c, poly = got if got is not None else self.expansion(j)
            t = y - c
            if t.abs_upper() <= self.r:
                return poly(t)
        return (y / arb(2).sqrt()).erfc() / 2


def _far_knots(q: Fraction, direction: str, m: int, i0: int, n: int) -> int:
    """How many of the knots i0..n on the grid 2^-m lie far enough from the loss support's end
    (log(1 - q) under remove, -log(1 - q) under add) for a Taylor block of _FLOAT_MIN_BLOCK knots
    to be tried there (:func:`.taylor_blocks.grid_tails_by_blocks` tries a block whose radius is
    at most 1/_TAYLOR_END_RATIO of its distance to the end). A float count: a choice of route."""
    end = math.log1p(-float(q)) * (1 if direction == "remove" else -1) * (1 << m)  # in knots
    reach = _TAYLOR_END_RATIO * (_FLOAT_MIN_BLOCK // 2)
    if direction == "remove":
        return max(0, n - max(i0, math.ceil(end + reach)) + 1)
    return max(0, min(n, math.floor(end - reach)) - i0 + 1)


@functools.lru_cache(maxsize=8)
def _sf_lattice(prec: int) -> _SfLattice:
    """:class:`_SfLattice` by working precision (sf is the same function for every pair)."""
    return _SfLattice(prec)


def _float_sf(x: float) -> float:
    """Binary64 normal survival function (a proposal only: :meth:`SubsampledGaussianPair.range_floats`)."""
    return 0.5 * math.erfc(x / _SQRT2)


def _undecided(eps: arb) -> Exception:
    from ..errors import Undecided

    return Undecided(f"eps={eps.str(10)} is too close to the end of the loss support")


@dataclass(frozen=True)
class FinitePair(PairFromTails):
    """A pair of distributions on finitely many outcomes with exact rational
    masses ``P[i]``, ``Q[i]`` (a finite mechanism's worst-case pair, or a
    dominating pair such as randomized response). Outcomes with Q = 0 < P carry
    loss +inf (AFA Lemma 37, Prop 38: that P-mass is :meth:`inf_mass`, counted
    exactly); outcomes with P = 0 have loss -inf and no P-mass.

    The pair is used as given (for a symmetric relation give it once; add and
    remove directions are the pair and its swap, AFA Def 7 remark)."""

    P: tuple
    Q: tuple
    name: str = "finite"

    def __post_init__(self) -> None:
        if len(self.P) != len(self.Q) or not self.P:
            raise InvalidParameter("pair", "P and Q need the same, nonzero number of outcomes")
        for v in (*self.P, *self.Q):
            if v < 0:
                raise InvalidParameter("pair", "probabilities must be >= 0")
        if sum(self.P) != 1 or sum(self.Q) != 1:
            raise InvalidParameter("pair", "P and Q must each sum to 1 exactly")

    def swapped(self) -> "FinitePair":
        return FinitePair(self.Q, self.P, self.name)

    def inf_mass(self) -> arb:
        return ball(sum((p for p, q in zip(self.P, self.Q) if q == 0 and p > 0), Fraction(0)))

    def loss_bound(self) -> LossBound:
        """max log(P[i] / Q[i]) over the outcomes with P[i] > 0 (outcomes of P-mass 0 do
        not count P-almost surely); math.inf when one of them has Q[i] = 0 (loss +inf
        with positive P-mass, AFA Lemma 37), as then delta(eps) >= P(L = inf) > 0 for
        every eps."""
        ratios = [p / q if q > 0 else None for p, q in zip(self.P, self.Q) if p > 0]
        if any(r is None for r in ratios):
            return math.inf
        return dyadic_loss_bound(ball(max(ratios)).log())  # log is increasing: the max ratio

    def _above(self, p: Fraction, q: Fraction, eps: arb) -> bool:
        """Is log(p/q) > eps (finite loss)? Exact at eps = 0; elsewhere e^eps is
        irrational at a rational eps != 0 (Lindemann), so arb decides it at
        enough precision (Undecided makes the caller raise the precision)."""
        if eps.is_exact() and eps.is_zero():
            return p > q
        r = ball(p) / ball(q)
        e = eps.exp()
        if r > e:
            return True
        if r < e:
            return False
        from ..errors import Undecided

        raise Undecided("loss comparison")

    def tails(self, eps: arb) -> tuple[arb, arb]:
        """(P(eps < L < inf), Q(eps < L < inf)) by summation over outcomes."""
        pt, qt = Fraction(0), Fraction(0)
        for p, q in zip(self.P, self.Q):
            if p > 0 and q > 0 and self._above(p, q, eps):
                pt += p
                qt += q
        return ball(pt), ball(qt)


def approx_dp_pair_exp(exp_eps0: Fraction, delta0: Fraction) -> FinitePair:
    """The 4-output randomized-response pair that dominates every
    (eps0, delta0)-DP mechanism, for both directions (LT Thm 4.5; Kairouz, Oh,
    Viswanath 2015): P = (delta0, (1-delta0) e^eps0/(1+e^eps0),
    (1-delta0)/(1+e^eps0), 0), Q the reverse. e^eps0 is given exactly (a
    rational >= 1) so that the masses are rational."""
    if exp_eps0 < 1:
        raise InvalidParameter("exp_eps0", f"exp_eps0={exp_eps0} must be >= 1")
    if not 0 <= delta0 < 1:
        raise InvalidParameter("delta0", f"delta0={delta0} must be in [0, 1)")
    a = (1 - delta0) * exp_eps0 / (1 + exp_eps0)
    b = (1 - delta0) / (1 + exp_eps0)
    return FinitePair((delta0, a, b, Fraction(0)), (Fraction(0), b, a, delta0), "approx-dp")


def subsample_finite(pair: FinitePair, q: Fraction, direction: str) -> FinitePair:
    """Poisson subsampling of a finite dominating pair (AFA Thm 11 (1)): if
    (P, Q) dominates M for add neighbours then (P, (1-q) P + q Q) dominates
    M o Poisson_q for add, and ((1-q) Q + q P, Q) for remove. (For a pair that
    dominates both directions, such as randomized response, both apply.)
    Mass at +inf of the result is again exact (AFA Prop 38)."""
    if not 0 < q <= 1:
        raise InvalidParameter("sampling_rate", f"sampling_rate={q} must be in (0, 1]")
    P, Q = pair.P, pair.Q
    if direction == "add":
        return FinitePair(P, tuple((1 - q) * p + q * r for p, r in zip(P, Q)), pair.name + "-sub-add")
    if direction == "remove":
        return FinitePair(tuple((1 - q) * r + q * p for p, r in zip(P, Q)), Q, pair.name + "-sub-remove")
    raise InvalidParameter("neighboring", f"direction {direction!r}: subsampling is certified for add / remove")


@dataclass(frozen=True)
class SubsampledLaplacePair(PairFromTails):
    """Tight dominating pair of the Poisson-subsampled Laplace mechanism
    (scale ``b``, sensitivity 1, rate ``q``), one direction (AFA Thm 11 (1)
    with the base pair (Lap(0, b), Lap(1, b)), which dominates both add and
    remove by symmetry):

    * remove: P = (1-q) Lap(0,b) + q Lap(1,b), Q = Lap(0,b);
      L(x) = log(1 - q + q r(x)), r(x) = e^{(|x| - |x-1|)/b}, nondecreasing,
      with atoms at Lmin = log(1-q+q e^{-1/b}) (x <= 0) and
      Lmax = log(1-q+q e^{1/b}) (x >= 1);
    * add: P = Lap(0,b), Q = (1-q) Lap(0,b) + q Lap(1,b); L = -log(1-q+q r(x)).

    Tails use the Laplace survival functions S0(x) = e^{-x/b}/2 (x >= 0) and
    S1(x) = 1 - e^{(x-1)/b}/2 (x <= 1). The loss atoms make P(L > eps) jump at
    the ends of the support; the ends are decided by certified comparisons
    (exact for q = 1, where Lmax = 1/b is rational).
    """

    b: Fraction
    q: Fraction
    direction: str

    def __post_init__(self) -> None:
        if self.b <= 0:
            raise InvalidParameter("scale", f"scale={self.b} must be > 0")
        if not 0 < self.q <= 1:
            raise InvalidParameter("sampling_rate", f"sampling_rate={self.q} must be in (0, 1]")
        if self.direction not in ("remove", "add"):
            raise InvalidParameter("neighboring", f"direction {self.direction!r}: add or remove")

    def inf_mass(self) -> arb:
        return arb(0)

    def loss_bound(self) -> LossBound:
        """The top of the loss support (class docstring): L(x) = log(1 - q + q r(x)) with
        r(x) = e^{(|x| - |x-1|)/b} in [e^{-1/b}, e^{1/b}], so remove: L <= Lmax =
        log(1 - q + q e^{1/b}) (attained for x >= 1); add: L = -log(1 - q + q r(x)) <=
        -Lmin = -log(1 - q + q e^{-1/b}) (attained for x <= 0). q = 1: 1/b both ways,
        a rational kept exact (:func:`.dominating.exact_loss_bound`)."""
        if self.q == 1:
            return exact_loss_bound(Fraction(1) / Fraction(self.b))
        lmin, lmax = self._ends()
        return dyadic_loss_bound(lmax if self.direction == "remove" else -lmin)

    def _ends(self) -> tuple[arb, arb]:
        """(Lmin, Lmax) of the remove orientation, exact for q = 1."""
        if self.q == 1:
            return ball(-1 / self.b), ball(1 / self.b)
        q, ib = ball(self.q), 1 / ball(self.b)
        return (1 - q + q * (-ib).exp()).log(), (1 - q + q * ib.exp()).log()

    def tails(self, eps: arb) -> tuple[arb, arb]:
        """(P(L > eps), Q(L > eps)) for any real ball ``eps`` (class docstring)."""
        from ..errors import Undecided

        lmin, lmax = self._ends()
        b, q = ball(self.b), ball(self.q)
        if self.direction == "remove":
            lo_end, hi_end = lmin, lmax
        else:
            lo_end, hi_end = -lmax, -lmin
        if eps >= hi_end:
            return arb(0), arb(0)
        if eps < lo_end:
            return arb(1), arb(1)
        if not (eps < hi_end and eps >= lo_end):
            raise Undecided("eps at an end of the Laplace loss support")
        s0 = lambda x: (-x / b).exp() / 2  # noqa: E731  (x >= 0)
        s1 = lambda x: 1 - ((x - 1) / b).exp() / 2  # noqa: E731  (x <= 1)
        if self.direction == "remove":
            t = (eps.expm1() + q) / q  # r(x) > t  iff  x > x_t, x_t in [0, 1)
            x = (b * t.log() + 1) / 2
            return (1 - q) * s0(x) + q * s1(x), s0(x)
        t = ((-eps).expm1() + q) / q  # r(x) < t  iff  x < x_t, x_t in (0, 1]
        x = (b * t.log() + 1) / 2
        f0, f1 = 1 - s0(x), 1 - s1(x)
        return f0, (1 - q) * f0 + q * f1


def swapped_pairs(steps: Sequence[Any], a: str, b: str) -> bool:
    """Whether every step's pair in direction ``b`` is its pair in direction ``a`` swapped,
    (P, Q) -> (Q, P): the remove and add directions of Poisson-subsampled Gaussian steps with
    q < 1 (:class:`SubsampledGaussianPair`: remove P = (1 - q) N(0, 1) + q N(mu, 1), Q = N(0, 1);
    add the reverse, the same sigma and q), or of any other pair class whose ``swap_key()``
    (not None) names the law of its remove direction's (P, Q) with add = the same law swapped (the
    mixture of Gaussians, :class:`dpverify.events.pairs.MixtureGaussianPair`: remove P = the
    mixture, Q = N(0, 1); add the reverse), compared between two pairs of the same class. Then
    b's composed curve is read off a's (:meth:`.queries.ComposedBounds.eps_upper_swapped`);
    ``steps`` are :class:`.refine.Step`."""
    if {str(a), str(b)} != {"remove", "add"}:
        return False
    for st in steps:
        pa, pb = st.make_pair(a), st.make_pair(b)
        if (str(getattr(pa, "direction", None)), str(getattr(pb, "direction", None))) != (str(a), str(b)):
            return False
        if isinstance(pa, SubsampledGaussianPair) and isinstance(pb, SubsampledGaussianPair):
            if not (pa.q < 1 and (pa.sigma, pa.q) == (pb.sigma, pb.q)):
                return False
        elif not (type(pa) is type(pb) and hasattr(pa, "swap_key") and pa.swap_key() is not None
                  and pa.swap_key() == pb.swap_key()):
            return False
    return True

"""Laplace-transform identities of LT Sec 3, evaluated with rigorous integration.

For a pair (P, Q) with privacy-loss variables Z ~ PLD(P||Q), Z' ~ PLD(Q||P):

* LT Thm 3.2, eq. (22): delta_{P|Q}(eps) = int_0^inf e^{-t} (1 - F_Z(t + eps)) dt;
* LT Thm 3.2, eq. (23): delta_{P|Q}(eps) = e^eps int_0^inf e^{t} F_{Z'}(-t - eps) dt;
* LT Thm 3.3, eq. (27): E_q(P||Q) = q (q-1) int_R e^{(q-1) t} delta_{P|Q}(t) dt
  (a bilateral Laplace transform at s = 1 - q), for complex q (LT Thm 3.5 view).

Every integral is python-flint's ``acb.integral`` (certified Gauss-Legendre
with error bounds) on pieces where the integrand is analytic, plus a
*certified tail bound* added as a ball radius; the bound used for each tail is
written next to it.

Where the transform of eq. (27) converges (the precise statement this module
checks, and LT p. 6 gets wrong): as t -> -inf, delta_{P|Q}(t) -> 1 for *every*
pair (take S = Omega in sup_S P(S) - e^t Q(S)), so
int_{-inf}^0 e^{(q-1)t} delta(t) dt converges only if Re q > 1. On the other
side delta(t) -> P(dP/dQ = inf), so with P << Q the region of convergence is
1 < Re q < q_max, q_max the supremum of orders with E_q(P||Q) < inf
(q_max = inf for the Gaussian, Laplace and (eps, 0)-randomized response).
LT p. 6 states that for Q << P the transform converges for all real q < 1
except q = 0; it diverges there (to +inf, since the integrand is positive):
see :func:`partial_transform` and the claim ``lt-thm3.3-roc-below-one``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from flint import acb, arb

from ..ball import ball, exact_str, fresh_integration_state, normal_cdf
from ..errors import InvalidParameter

__all__ = [
    "PLDPair",
    "gaussian_pld",
    "laplace_pld",
    "rr_pld",
    "profile_by_eq22",
    "profile_by_eq23",
    "renyi_moment",
    "renyi_moment_by_eq27",
    "partial_transform",
]

# A piece: on [lo, hi) (None = infinite) the function equals formula(x).
Piece = tuple["Fraction | None", "Fraction | None", Callable[[acb], acb]]


def _erfc_acb(z: acb) -> acb:
    return z.erfc()


def _Phi(x: acb) -> acb:
    return _erfc_acb(-x / acb(arb(2).sqrt())) / 2


@dataclass(frozen=True)
class PLDPair:
    """The privacy-loss distributions of a symmetric-or-not pair (P, Q).

    ``sf_Z`` gives 1 - F_Z and ``cdf_Zp`` gives F_{Z'} as lists of pieces whose
    formulas are analytic (entire) on each piece; ``profile`` gives
    delta_{P|Q}(t) the same way (the closed form the identities are checked
    against, or used inside the transform). ``upper_tail(c, B)`` bounds
    int_B^inf e^{c t} delta(t) dt for real c (None: delta vanishes beyond the
    last piece); ``moment(q)`` is E_q(P||Q) in closed form.
    """

    name: str
    params: dict[str, str]
    sf_Z: Sequence[Piece]
    cdf_Zp: Sequence[Piece]
    profile: Sequence[Piece]
    moment: Callable[[acb], acb]
    upper_tail: "Callable[[arb, arb], arb] | None"
    loss_bound: "Fraction | None"  # |Z| <= loss_bound, or None if unbounded
    gauss_mu: "Fraction | None" = None  # Gaussian only: where the upper tail bound applies


# --------------------------------------------------------------------------- mechanisms


def gaussian_pld(mu: Fraction) -> PLDPair:
    """Gaussian pair N(0,1) vs N(mu,1): Z ~ N(mu^2/2, mu^2) and, the pair being
    symmetric, Z' = log(Q/P)(theta), theta ~ Q, has the same law N(mu^2/2, mu^2)
    (both privacy losses have mean +KL);
    delta is GDPT eq. 2; E_q = exp(q (q-1) mu^2 / 2) (LT Thm 2.4 with kappa = mu^2/2)."""
    m = ball(mu)
    half = m * m / 2

    def sf(x: acb) -> acb:
        return _Phi((acb(half) - x) / acb(m))

    def cdf_p(y: acb) -> acb:
        return _Phi((y - acb(half)) / acb(m))

    def prof(t: acb) -> acb:
        mm = acb(m)
        return _Phi(-t / mm + mm / 2) - t.exp() * _Phi(-t / mm - mm / 2)

    def moment(q: acb) -> acb:
        return (q * (q - 1) * acb(half)).exp()

    def upper_tail(c: arb, B: arb) -> arb:
        # delta(t) <= Pr[Z > t] <= exp(-(t - h)^2 / (2 mu^2)) for t >= h = mu^2/2
        # (Chernoff bound of a normal), and int_B^inf e^{ct} e^{-(t-h)^2/(2 s^2)} dt
        # = e^{c h + c^2 s^2 / 2} s sqrt(2 pi) Phi(-(B - h - c s^2) / s), s = mu.
        s = m
        if not B >= half:  # the Chernoff form needs t - h >= 0 on the whole tail
            raise ValueError("Gaussian tail bound needs B >= mu^2/2")

        return (
            (c * half + c * c * s * s / 2).exp()
            * s
            * (2 * arb.pi()).sqrt()
            * normal_cdf(-(B - half - c * s * s) / s)
        )

    return PLDPair(
        "gaussian",
        {"mu": exact_str(mu)},
        [(None, None, sf)],
        [(None, None, cdf_p)],
        [(None, None, prof)],
        moment,
        upper_tail,
        None,
        Fraction(mu),
    )


def laplace_pld(s_ratio: Fraction) -> PLDPair:
    """Laplace pair Lap(0, b) vs Lap(D, b) with s = D / b.

    Derivation (theta ~ P, L(theta) = (|theta - D| - |theta|) / b): L = s on
    theta <= 0 (mass 1/2), L = -s on theta >= D (mass e^{-s}/2), and in between
    L = (D - 2 theta)/b, so F_Z(z) = e^{-(s - z)/2} / 2 on [-s, s), 0 below, 1 from s.
    The pair is symmetric under theta -> D - theta, so Z' has the same law.
    Profile (from eq. 30, delta = 1 - F_Z(eps) - e^eps F_Z'(-eps)):
    1 - e^eps for eps < -s; 1 - e^{(eps - s)/2} on [-s, s); 0 from s.
    E_q = q/(2q-1) e^{(q-1) s} + (q-1)/(2q-1) e^{-q s} (Mironov 2017, Prop 6).
    """
    s = Fraction(s_ratio)
    S = ball(s)

    def f_mid(x: acb) -> acb:
        return (-(acb(S) - x) / 2).exp() / 2

    sf = [(None, -s, lambda x: acb(1)), (-s, s, lambda x: 1 - f_mid(x)), (s, None, lambda x: acb(0))]
    cdf = [(None, -s, lambda x: acb(0)), (-s, s, f_mid), (s, None, lambda x: acb(1))]
    prof = [
        (None, -s, lambda t: 1 - t.exp()),
        (-s, s, lambda t: 1 - ((t - acb(S)) / 2).exp()),
        (s, None, lambda t: acb(0)),
    ]

    def moment(q: acb) -> acb:
        return q / (2 * q - 1) * ((q - 1) * acb(S)).exp() + (q - 1) / (2 * q - 1) * (-q * acb(S)).exp()

    return PLDPair("laplace", {"scale_ratio": exact_str(s)}, sf, cdf, prof, moment, None, s)


def rr_pld(eps0: Fraction) -> PLDPair:
    """(eps0, 0) randomized response, p = e^eps0 / (1 + e^eps0) (LT Thm 3.4, delta = 0):
    Z = +eps0 w.p. p, -eps0 w.p. 1 - p; Z' has the same law (symmetric pair).
    Profile: 1 - e^t for t < -eps0; (p - e^t (1-p)) ... written as
    (e^eps0 - e^t)/(1 + e^eps0) on [-eps0, eps0); 0 from eps0 (LT Thm 3.4).
    E_q = p^q (1-p)^{1-q} + (1-p)^q p^{1-q}."""
    e0 = Fraction(eps0)
    E = ball(e0)

    def p() -> acb:
        return acb(E.exp() / (1 + E.exp()))

    sf = [(None, -e0, lambda x: acb(1)), (-e0, e0, lambda x: p()), (e0, None, lambda x: acb(0))]
    cdf = [(None, -e0, lambda x: acb(0)), (-e0, e0, lambda x: 1 - p()), (e0, None, lambda x: acb(1))]
    prof = [
        (None, -e0, lambda t: 1 - t.exp()),
        (-e0, e0, lambda t: (acb(E.exp()) - t.exp()) / (1 + acb(E.exp()))),
        (e0, None, lambda t: acb(0)),
    ]

    def moment(q: acb) -> acb:
        pp = p()
        return pp**q * (1 - pp) ** (1 - q) + (1 - pp) ** q * pp ** (1 - q)

    return PLDPair("rr", {"eps0": exact_str(e0)}, sf, cdf, prof, moment, None, e0)


# --------------------------------------------------------------------------- integration


def _pieces_on(
    pieces: Sequence[Piece],
    shift: Fraction,
    sign: int,
    lo: Fraction,
    hi: Fraction,
    integrand: Callable[[acb, Callable[[acb], acb]], acb],
) -> acb:
    """int_lo^hi integrand(t, g) dt, where g(t) is the piece formula at
    x = sign * t + shift. The range is split at every breakpoint (exact
    rationals, so the order of the cuts is exact too) and each acb.integral
    call sees a single piece, on which the formula is analytic."""
    cuts = sorted(
        {(x - shift) * sign for a, b, _ in pieces for x in (a, b) if x is not None} | {lo, hi}
    )
    cuts = [t for t in cuts if lo <= t <= hi]
    total = acb(0)
    fresh_integration_state()
    for u, v in zip(cuts, cuts[1:]):
        formula = _piece_at(pieces, (u + v) / 2 * sign + shift)
        sh = acb(ball(shift))
        total += acb.integral(
            lambda t, _, g=formula: integrand(t, lambda z: g(z * sign + sh)), ball(u), ball(v)
        )
    return total


def _piece_at(pieces: Sequence[Piece], x: Fraction) -> Callable[[acb], acb]:
    for a, b, g in pieces:
        if (a is None or x >= a) and (b is None or x < b):
            return g
    raise AssertionError("point in no piece")


def profile_by_eq22(pair: PLDPair, eps: Fraction, tail: int = 80) -> arb:
    """delta(eps) via LT eq. (22): int_0^inf e^{-t} (1 - F_Z(t + eps)) dt.

    Tail: 0 <= 1 - F_Z <= 1, so int_T^inf <= e^{-T}; for a bounded loss
    (|Z| <= L) the integrand vanishes for t >= L - eps and there is no tail."""
    eps = Fraction(eps)
    if pair.loss_bound is not None:
        T = pair.loss_bound - eps
        if T <= 0:
            return arb(0)
        extra = arb(0)
    else:
        T = Fraction(tail)
        extra = arb(0, (-ball(T)).exp().upper())
    v = _pieces_on(pair.sf_Z, eps, 1, Fraction(0), T, lambda t, g: (-t).exp() * g(t))
    return v.real + extra


def profile_by_eq23(pair: PLDPair, eps: Fraction, tail: int = 80) -> arb:
    """delta(eps) via LT eq. (23): e^eps int_0^inf e^{t} F_{Z'}(-t - eps) dt.

    Tail: for a bounded loss F_{Z'}(-t - eps) = 0 once -t - eps < -L. For the
    Gaussian, F_{Z'}(-t-eps) = Phi(-(t + eps - h)/mu) <= exp(-(t+eps-h)^2/(2mu^2))
    for t + eps >= h = mu^2/2, and that times e^t integrates in closed form
    (completing the square, see ``upper_tail`` of :func:`gaussian_pld` with c = 1
    after the substitution t -> t + eps)."""
    eps = Fraction(eps)
    e = ball(eps)
    if pair.loss_bound is not None:
        T = pair.loss_bound - eps
        if T <= 0:
            return arb(0)
        v = _pieces_on(pair.cdf_Zp, -eps, -1, Fraction(0), T, lambda t, g: t.exp() * g(t))
        return e.exp() * v.real
    if pair.upper_tail is None:
        raise InvalidParameter("mechanism", f"no tail bound for {pair.name}")
    T = Fraction(tail)
    v = _pieces_on(pair.cdf_Zp, -eps, -1, Fraction(0), T, lambda t, g: t.exp() * g(t))
    # int_T^inf e^t F_Z'(-t-eps) dt = e^{-eps} int_{T+eps}^inf e^u Phi(-(u+h)/mu) du
    # and Phi(-(u+h)/mu) <= Phi(-(u-h)/mu) <= e^{-(u-h)^2/(2mu^2)} for u >= h, so it is
    # <= e^{-eps} * upper_tail(1, T + eps)
    tail_bound = (-e).exp() * pair.upper_tail(arb(1), ball(T + eps))
    return e.exp() * (v.real + arb(0, tail_bound.upper()))


def renyi_moment(pair: PLDPair, q: acb) -> acb:
    """E_q(P||Q) in closed form (the right-hand side of LT eq. 27)."""
    return pair.moment(q)


def renyi_moment_by_eq27(pair: PLDPair, q: acb, window: "int | None" = None) -> acb:
    """E_q(P||Q) via LT Thm 3.3, eq. (27): q (q-1) int_R e^{(q-1)t} delta(t) dt.

    Valid (the integral converges) exactly for Re q > 1 for these pairs: see
    the module docstring; other q raise InvalidParameter.
    Tails: lower, |int_{-inf}^{-A}| <= int e^{(Re q - 1) t} dt = e^{-(Re q-1) A}/(Re q - 1)
    since 0 <= delta <= 1; upper, zero for a bounded loss, else ``upper_tail``.
    """
    q = acb(q)
    c = q.real - 1
    if not c > 0:
        raise InvalidParameter(
            "q",
            f"q={q} must have Re q > 1: delta(t) -> 1 as t -> -inf, so the transform "
            "int e^(q-1)t delta(t) dt diverges for Re q <= 1",
        )
    if window is None:
        # lower tail e^{-(Re q - 1) A} / (Re q - 1) below 2^-(prec + 10) (relative to E_q ~ 1)
        from flint import ctx

        window = max(40, int((ctx.prec + 10) * 0.7 / float(c.lower())) + 1)
    A = Fraction(window)
    if pair.loss_bound is not None:
        B = pair.loss_bound
    else:
        # where the Gaussian upper tail bound is below 2^-(prec+10): the tail is
        # e^{ch + c^2 s^2/2} Phi(-(B - h - c s^2)/s); a far larger B would only feed
        # acb's erfc huge inexact arguments (and wide balls) for nothing.
        from flint import ctx

        B = Fraction(window)
        if pair.gauss_mu is not None:
            # any B >= mu^2/2 is sound (the tail is bounded for that B); this one
            # makes the bound negligible. Floats only choose the cut point.
            mu = pair.gauss_mu
            cu = Fraction(c.upper().str(10, radius=False))
            h = mu * mu / 2
            B = min(B, Fraction(int(h + cu * mu * mu + (mu + 1) * (1.4 * (ctx.prec + 10)) ** 0.5) + 2))
    core = _pieces_on(pair.profile, Fraction(0), 1, -A, B, lambda t, g: ((q - 1) * t).exp() * g(t))
    low = (-(c * ball(A))).exp() / c
    high = arb(0) if pair.loss_bound is not None else pair.upper_tail(c, ball(B))
    err = (low + high).upper()
    return q * (q - 1) * (core + acb(arb(0, err), arb(0, err)))


def partial_transform(pair: PLDPair, q: Fraction, A: int, B: int) -> arb:
    """q (q-1) int_{-A}^{B} e^{(q-1)t} delta(t) dt for real q (no tails): the
    partial integrals whose limit eq. (27) would need. For q < 1 the integrand
    is positive and the integral over [-A, -1] alone is at least
    delta(-1) (e^{(1-q)A} - e^{1-q}) / (1 - q), which tends to +inf."""
    qq = acb(ball(q))
    core = _pieces_on(
        pair.profile, Fraction(0), 1, Fraction(-A), Fraction(B), lambda t, g: ((qq - 1) * t).exp() * g(t)
    )
    return (qq * (qq - 1) * core).real

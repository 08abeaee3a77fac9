"""Second route for DP-SGD on fixed-size batches (sampling without
replacement, replace-one neighbours), in MPFR with directed rounding: nothing from the arb
side is imported. Used by :mod:`.calibrate` for ``dpsgd-wor``
brackets; registers no certificate kind of its own.

The pair re-derived here (the arb route is :class:`dpverify.events.pairs.MaxCurvePair`
around two ``SubsampledGaussianPair``; this is a second implementation):
per step, AFA Prop 30 bounds the profile of the subset-sampled Gaussian
under replace-one by H_remove for alpha >= 1 and H_add for alpha < 1, where
H_remove / H_add are the curves of the Poisson-subsampled Gaussian pairs at
rate g = B/N with shift 2/sigma (replace-one sensitivity 2C: noise sigma/2
at sensitivity 1); AFA Cor 32 (via Lemma 9) gives a pair (P~, Q~) whose curve
is max(H_remove, H_add) for every alpha >= 0. Its tails, from H(x) and its
right derivative H'(x+) = -Q~(L > eps) (x = e^eps): where one curve is
strictly larger they are that pair's tails; at eps = 0, where the two
curves meet (H_remove(1) = H_add(1): the base pair is symmetric, AFA Lemma
46), the maximum's right derivative is the larger one, i.e. the pair with
the smaller Q-tail.

The lower bound of the mechanism (the realised dataset pair of
:func:`dpverify.calibration.template.wor_template`) is Poisson add-remove
DP-SGD at (sigma/2, B/N, T): :func:`lower_inputs` gives its schedule in the
form of :mod:`.pld`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from mpmath import mpf

from . import pld as P

__all__ = ["wor_make", "lower_inputs", "max_curve_tails"]


def max_curve_tails(first: "P.IvTails", second: "P.IvTails") -> "P.IvTails":
    """Interval tails of the pair whose curve is max(H_first, H_second) (AFA Cor 32 via
    Lemma 9; both pairs without mass at +inf): at each e the tails of the pair whose
    curve H = P(L > e) - e^e Q(L > e) is proved larger; at e = 0 (the curves of the
    symmetric base pair meet, AFA Lemma 46) the pair with the proved smaller Q-tail (the
    larger right derivative of the maximum). Where the intervals decide neither, the
    hull of the two pairs' tails: the true tails are one of them, so the hull encloses
    them (sound, only looser). At the grid knots both pairs' tails come from their own
    one-loop evaluation (``IvTails.at_knots``) and the choice is made knot by knot, the
    same choice as at a single point."""
    def fn(A, e):
        return choose(A, e, first(A, e), second(A, e))

    def many(A, i0, n, m):
        return [choose(A, A.dyadic(i, m), a, b)
                for i, a, b in zip(range(i0, n + 1), first.at_knots(A, i0, n, m), second.at_knots(A, i0, n, m))]

    def choose(A, e, a, b):
        if e[0] == 0 and e[1] == 0:
            if a[1][1] < b[1][0]:
                return a
            if b[1][1] < a[1][0]:
                return b
        else:
            x = A.exp(e)
            d1 = A.sub(a[0], A.mul(x, a[1]))
            d2 = A.sub(b[0], A.mul(x, b[1]))
            if d1[0] > d2[1]:
                return a
            if d2[0] > d1[1]:
                return b
        return A.hull(a[0], b[0]), A.hull(a[1], b[1])

    return P.IvTails(fn, many=many)


def wor_make(sig: Fraction, batch: int, n: int) -> Callable[[str], tuple["P.IvTails", mpf]]:
    """``make(direction) -> (tails, inf mass)`` of the Cor 32 pair, in the
    form :mod:`.pld` discretises (one direction: the pair already is
    the maximum over the relation's two orientations), in directed rounding:
    the Poisson pairs at noise sigma/2, rate B/N (:func:`.pld.gauss_tails`)."""
    half, g = Fraction(sig) / 2, Fraction(batch, n)
    tails = max_curve_tails(P.gauss_tails(half, g, "remove"), P.gauss_tails(half, g, "add"))

    def make(_direction: str):
        return tails, mpf(0)

    return make


def lower_inputs(sig: Any, batch: int, n: int, steps: int) -> dict[str, Any]:
    """The realised lower pair's schedule: Poisson add-remove at (sigma/2, B/N, T)."""
    half = Fraction(sig) / 2
    return {"noise_multiplier": f"{half.numerator}/{half.denominator}", "sampling_rate": f"{batch}/{n}",
            "steps": steps, "neighboring": "add-remove"}

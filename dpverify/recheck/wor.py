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

from gmpy2 import mpfr
from mpmath import mpf

from . import pld as P

__all__ = ["wor_make", "lower_inputs", "max_curve_tails"]


#: knots per segment of :func:`max_curve_tails`' knot loop at first (doubled after each segment
#: proved for one pair, up to :data:`_SEGMENT_MAX`; back to this after one that is not): a choice only
_SEGMENT_MIN = 64
_SEGMENT_MAX = 1 << 14
_ONE, _ZERO = (mpfr(1), mpfr(1)), (mpfr(0), mpfr(0))
_FULL, _NONE = (_ONE, _ONE), (_ZERO, _ZERO)  # tails proved 1 (every outcome has L > e), or 0


def max_curve_tails(first: "P.IvTails", second: "P.IvTails") -> "P.IvTails":
    """Interval tails of the pair whose curve is max(H_first, H_second) (AFA Cor 32 via
    Lemma 9; both pairs without mass at +inf): at each e the tails of the pair whose
    curve H = P(L > e) - e^e Q(L > e) is proved larger; at e = 0 (the curves of the
    symmetric base pair meet, AFA Lemma 46) the pair with the proved smaller Q-tail (the
    larger right derivative of the maximum); where one pair's tails are proved 0 at e, the
    other's (the first's curve is 0, the least a curve can be, from e on). Where the intervals
    decide neither, the hull of the two pairs' tails: the true tails are one of them, so the hull encloses
    them (sound, only looser).

    On the grid (``many``, ``runs``) the choice is proved for a whole segment of knots
    a..b (a > 0 or b < 0: never at e = 0) at once: each curve d(e) = H(e^e) is nonincreasing
    in e (H(x) = E_Q (dP/dQ - x)_+ decreases in x), so d_X(e) >= d_X(e_b) > d_Y(e_a) >= d_Y(e)
    for every e in [e_a, e_b] once the lower end of d_X's enclosure at e_b exceeds the upper
    end of d_Y's at e_a: X's curve is strictly the larger on the segment, the maximum's tails
    there are X's (H = H_X near every such e, and so is its right derivative), and X's own
    enclosures, or X's own proved runs (:meth:`.pld.IvTails.knot_runs`: lists, or blocks whose
    masses are proved in integers, each within a..b), are the maximum's on a..b. Only X's
    knots are then evaluated; a segment not proved so (near e = 0, where the curves meet)
    goes knot by knot, both pairs' tails at each knot and the choice made there, as at a
    single point. Where the per-knot choice is decided the two routes give the same
    enclosures; a segment proof also covers knots whose per-knot intervals decide neither
    (there X's enclosures, narrower than the hull, are still the maximum's)."""
    def fn(A, e):
        return choose(A, e, first(A, e), second(A, e))

    def knot_by_knot(A, i0, n, m):
        return [choose(A, A.dyadic(i, m), a, b)
                for i, a, b in zip(range(i0, n + 1), first.at_knots(A, i0, n, m), second.at_knots(A, i0, n, m))]

    def curve(A, e, t):
        """d = P(L > e) - e^e Q(L > e) enclosed at the point e from the tails t there."""
        return A.sub(t[0], A.mul(A.exp(e), t[1]))

    def winner(A, a, b, m):
        """first or second where the maximum's tails are proved to be its own at every knot of
        a..b (see the docstring), else None."""
        if a <= 0 <= b:
            return None
        ea, eb, ec = A.dyadic(a, m), A.dyadic(b, m), A.dyadic(b + 1, m)
        ta, tb = (first(A, ea), second(A, ea)), (first(A, eb), second(A, eb))
        for k in (0, 1):
            # the other pair's tails proved 0 at e_a (its loss <= e_a almost surely: its curve is 0 on
            # [e_a, inf), the least a curve can be), or 1 at e_(b+1) (its loss > e_(b+1) almost surely:
            # its curve is 1 - e^e, the least a curve can be, on (-inf, e_(b+1)]): the maximum is this
            # pair's curve on a neighbourhood of every knot of a..b, right side included
            other = 1 - k
            if ta[other] == _NONE or (second if other else first)(A, ec) == _FULL:
                return second if k else first
        f_a, f_b = curve(A, ea, ta[0]), curve(A, eb, tb[0])
        s_a, s_b = curve(A, ea, ta[1]), curve(A, eb, tb[1])
        if f_b[0] > s_a[1]:
            return first
        if s_b[0] > f_a[1]:
            return second
        return None

    def segments(A, i0, n, m, K):
        out: list = []
        a, size = i0, _SEGMENT_MIN
        while a <= n:
            b = min(n, a + size - 1)
            if a < 0 <= b:  # segments end at -1 or start at 1: e = 0 alone goes knot by knot
                b = -1
            elif a == 0:
                b = 0
            X = winner(A, a, b, m)
            if X is None and b - a + 1 > _SEGMENT_MIN:
                size = (b - a + 1) // 2  # the first half is tried (the curves meet near e = 0)
                continue
            if X is None:
                run = knot_by_knot(A, a, b, m)
                out.append(run) if K is not None else out.extend(run)
                size = _SEGMENT_MIN
            else:
                if K is None:
                    out.extend(X.at_knots(A, a, b, m))
                else:
                    out.extend(X.knot_runs(A, a, b, m, K))
                size = min(2 * size, _SEGMENT_MAX)
            a = b + 1
        return out

    def many(A, i0, n, m):
        return segments(A, i0, n, m, None)

    def runs(A, i0, n, m, K):
        return segments(A, i0, n, m, K)

    def choose(A, e, a, b):
        # a pair whose tails are proved 0 at e has its loss <= e almost surely: its curve is 0, the
        # least a curve can be, on [e^e, inf), so the maximum is the other's there (tails included)
        if b == _NONE:
            return a
        if a == _NONE:
            return b
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

    return P.IvTails(fn, many=many, runs=runs)


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

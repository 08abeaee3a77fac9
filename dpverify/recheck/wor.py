"""Second route for DP-SGD on fixed-size batches (sampling without
replacement, replace-one neighbours), on mpmath only: nothing from the arb
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

import mpmath
from mpmath import mpf

from . import pld as P

__all__ = ["wor_tails", "wor_make", "lower_inputs"]


def wor_tails(sig: mpf, g: mpf, e: mpf) -> tuple[mpf, mpf]:
    """(P~(L > e), Q~(L > e)) of the AFA Cor 32 pair at noise ``sig``, rate ``g``."""
    half = sig / 2
    pr, qr = P._tails(half, g, "remove", e)
    pa, qa = P._tails(half, g, "add", e)
    if e == 0:
        # tie of the curves: the larger right derivative -H'(1+) is the smaller Q-tail
        return (pr, qr) if qr <= qa else (pa, qa)
    x = mpmath.exp(e)
    return (pr, qr) if pr - x * qr >= pa - x * qa else (pa, qa)


def wor_make(sig: Fraction, batch: int, n: int) -> Callable[[str], tuple[Callable[[mpf], tuple[mpf, mpf]], mpf]]:
    """``make(direction) -> (tails, inf mass)`` of the Cor 32 pair, in the
    form :mod:`.pld` discretises (one direction: the pair already is
    the maximum over the relation's two orientations)."""
    s = mpf(sig.numerator) / sig.denominator
    g = mpf(batch) / n

    def make(_direction: str):
        return (lambda e: wor_tails(s, g, e)), mpf(0)

    return make


def lower_inputs(sig: Any, batch: int, n: int, steps: int) -> dict[str, Any]:
    """The realised lower pair's schedule: Poisson add-remove at (sigma/2, B/N, T)."""
    half = Fraction(sig) / 2
    return {"noise_multiplier": f"{half.numerator}/{half.denominator}", "sampling_rate": f"{batch}/{n}",
            "steps": steps, "neighboring": "add-remove"}

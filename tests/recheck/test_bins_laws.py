"""The one-epoch balls-in-bins laws of the second route (:class:`dpverify.recheck.bins._Laws`) and the
edge logarithms they share with the E-epoch route (:func:`dpverify.recheck.bins._edge_logs`), against
mpmath at 60 digits (an independent evaluation of the same sums):

* sigma log(h k) at every edge encloses mpmath's value, for grids with h < 1, h = 1 and h > 1 (g < 0),
  logarithms of both signs and 0 (h k = 1), and an inexact sigma (1.1);
* the means E[Y_up] and E[Y_dn] of Y rounded to its cell's upper and lower edge: mpmath's sums
  sum_i h k_(i+1) (F(h k_(i+1)) - F(h k_i)) + E[Y; Y > top] (and with k_i) lie inside the enclosures,
  which are narrow; and E[Y] = 1 exactly (log Y ~ N(-1/(2 sigma^2), 1/sigma^2) under Q, so
  E[Y] = exp(-1/(2 sigma^2) + 1/(2 sigma^2)) = 1) lies between them. A mean scaled by 2^g instead of
  2^-g, or with the edges swapped, fails both.
"""

from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import bins as RB
from dpverify.recheck.core import arith

GRIDS = [
    {"g": 3, "fine": 20, "per": 4, "top": 300, "keep": 300},
    {"g": 0, "fine": 5, "per": 2, "top": 64, "keep": 64},
    {"g": -2, "fine": 3, "per": 3, "top": 40, "keep": 40},
]


def _mp_F(sig, y):
    """Phi(sigma log y + 1/(2 sigma)) in mpmath (the Q-law's cdf of Y)."""
    return mpmath.ncdf(sig * mpmath.log(y) + 1 / (2 * sig))


@pytest.mark.parametrize("g", GRIDS)
@pytest.mark.parametrize("sig", [Fraction(11, 10), Fraction(3)])
def test_edge_logs_enclose_mpmath(g, sig):
    A = arith(RB._PREC)
    ks = RB.edges(g)
    got = RB._edge_logs(A, A.q(sig), g)
    assert got[0] is None and len(got) == len(ks)
    with mpmath.workdps(120):
        for k, (lo, hi) in zip(ks[1:], got[1:]):
            y = mpmath.mpf(k) * mpmath.mpf(2) ** (-g["g"])
            ref = mpmath.mpf(sig.numerator) / sig.denominator * mpmath.log(y)
            assert mpmath.mpf(lo) <= ref <= mpmath.mpf(hi), (k, g)
            assert mpmath.mpf(hi) - mpmath.mpf(lo) <= mpmath.mpf(2) ** -300 * max(1, abs(ref)), (k, g)


@pytest.mark.parametrize("g", GRIDS)
@pytest.mark.parametrize("sig", [Fraction(11, 10), Fraction(1, 2)])
def test_means_enclose_mpmath_and_one(g, sig):
    L = RB._Laws({"sig": sig, "T": 4, "dirs": ("remove",)}, g)
    ks = RB.edges(g)
    with mpmath.workdps(60):
        s = mpmath.mpf(sig.numerator) / sig.denominator
        h = mpmath.mpf(2) ** (-g["g"])
        F = [mpmath.mpf(0)] + [_mp_F(s, h * k) for k in ks[1:]]
        lt = s * mpmath.log(h * ks[-1])
        tail_mean = mpmath.ncdf(1 / (2 * s) - lt)  # E[Y; Y > top] = Phi(1/(2 sigma) - sigma log top)
        up = mpmath.fsum(h * ks[i + 1] * (F[i + 1] - F[i]) for i in range(len(ks) - 1)) + tail_mean
        dn = mpmath.fsum(h * ks[i] * (F[i + 1] - F[i]) for i in range(len(ks) - 1)) + tail_mean
        tol = mpmath.mpf(2) ** -150
        m_up = [mpmath.mpf(v) for v in L.mean_up]
        m_dn = [mpmath.mpf(v) for v in L.mean_dn]
        assert m_up[0] - tol <= up <= m_up[1] + tol
        assert m_dn[0] - tol <= dn <= m_dn[1] + tol
        assert m_up[1] - m_up[0] < mpmath.mpf(2) ** -200 and m_dn[1] - m_dn[0] < mpmath.mpf(2) ** -200
        assert m_dn[1] <= 1 <= m_up[0]

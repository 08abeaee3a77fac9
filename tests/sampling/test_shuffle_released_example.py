"""The shuffled lower end at the setting of Chua et al.'s released example
(google-research dpsgd_batch_sampler_accounting/example.py: sigma 0.35, 1000 batches
per epoch, one epoch), against the hockey-stick divergence of the same statistic
evaluated independently in mpmath at 40 digits.

The pair (add-remove, fixed layout): every other record has gradient -1, x* has +1
in D and its slot is empty in D'. After subtracting the known batch sums and dividing
by sigma, x*'s batch is shifted by 2m under D and m under D' (m = 1/sigma), so one
epoch's statistic M = max_t Y_t has densities

  p(x) = phi(x - 2m) Phi(x)^(T-1) + (T-1) Phi(x - 2m) phi(x) Phi(x)^(T-2),
  q(x) = phi(x - m) Phi(x)^(T-1) + (T-1) Phi(x - m) phi(x) Phi(x)^(T-2).

Why the reference is exact and not just another lower bound: the divergence of the M
pair is sum over the intervals where p > e^eps q of P(M in I) - e^eps Q(M in I)
(and the same with p and q swapped), and each interval's masses are differences of the
closed-form CDFs. The interval ends are the roots of log p - log q = eps, found by a
sign scan on a grid of step 1/20 and mpmath.findroot; nothing assumes the likelihood
ratio is monotone (on this grid it is: one root per direction). The certified lower
end bins M and rounds P down, so it may not exceed that value, and with 1024 cells it
should sit within a small fraction of it.
"""

from fractions import Fraction

import mpmath as mp
import pytest

from dpverify.sampling import shuffle as S

SIGMA, T = Fraction(35, 100), 1000


def exact_max_divergence(eps, sigma, T, a=2, b=1):
    """delta(eps) of the one-epoch M pair with shifts (a m, b m), m = 1/sigma, the larger of
    the two directions, at 40 digits."""
    with mp.workdps(40):
        m, w = mp.mpf(sigma.denominator) / sigma.numerator, mp.e ** eps

        def cdf(x, k):
            return mp.ncdf(x - k * m) * mp.ncdf(x) ** (T - 1)

        def logdens(x, k):
            c = mp.ncdf(x)
            return mp.log(mp.npdf(x - k * m) * c + (T - 1) * mp.ncdf(x - k * m) * mp.npdf(x)) + (T - 2) * mp.log(c)

        best = mp.mpf(0)
        for u, v in ((a, b), (b, a)):
            g = lambda x: logdens(x, u) - logdens(x, v) - eps  # noqa: E731
            grid = [mp.mpf(k) / 20 for k in range(-200, 800)]
            vals = [g(x) for x in grid]
            roots = [mp.findroot(g, (grid[i], grid[i + 1]), solver="anderson")
                     for i in range(len(grid) - 1) if (vals[i] > 0) != (vals[i + 1] > 0)]
            ends = [-mp.inf] + roots + [mp.inf]
            total = mp.mpf(0)
            for lo, hi in zip(ends, ends[1:]):
                if lo == -mp.inf:
                    mid = 0 if hi == mp.inf else hi - 1
                else:
                    mid = lo + 1 if hi == mp.inf else (lo + hi) / 2
                if g(mid) > 0:
                    fu = (1 if hi == mp.inf else cdf(hi, u)) - (0 if lo == -mp.inf else cdf(lo, u))
                    fv = (1 if hi == mp.inf else cdf(hi, v)) - (0 if lo == -mp.inf else cdf(lo, v))
                    total += fu - w * fv
            best = max(best, total)
        return best


@pytest.mark.parametrize("eps", [1, 4, 8])
def test_certified_lower_end_is_just_below_the_exact_divergence_of_the_statistic(eps):
    r = S.run(SIGMA, 100_000, 100, 1, "shuffle")  # T = 1000 batches, add-remove (B does not divide n - 1)
    assert r.batches == T
    lo = Fraction(S.bracket_delta(r, eps)["lo"])
    ref = exact_max_divergence(eps, SIGMA, T)
    assert lo <= Fraction(str(mp.nstr(ref, 30)))  # a certified lower bound never passes the exact value
    assert float(lo) >= float(ref) * (1 - 1e-3)  # and the binning costs less than 0.1 %

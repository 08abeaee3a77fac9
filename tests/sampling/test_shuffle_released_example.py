"""The shuffled lower end at the setting of Chua et al.'s released example
(google-research dpsgd_batch_sampler_accounting/example.py: sigma 0.35, 1000 batches
per epoch, one epoch), against the hockey-stick divergence of the same statistic
evaluated independently in mpmath at 40 digits.

Why the reference is exact and not just another lower bound: one epoch's statistic
M = max_t Y_t has densities q(x) = T phi(x) Phi(x)^(T-1) and
p(x) = phi(x - mu) Phi(x)^(T-1) + (T-1) Phi(x - mu) phi(x) Phi(x)^(T-2), so
p/q = (exp(mu x - mu^2/2) + (T-1) Phi(x - mu)/Phi(x)) / T, increasing in x (the first
term plainly, the second because log Phi is concave). With a monotone likelihood
ratio the best set in sup_S P(S) - e^eps Q(S) is a half-line {M > C} (and {M <= C}
for the reverse direction), so maximising over the threshold C gives the divergence
of the M pair exactly. The certified lower end bins M and rounds P down, so it may
not exceed that value, and with 1024 cells it should sit within a small fraction of it.
"""

from fractions import Fraction

import mpmath as mp
import pytest

from dpverify.sampling import shuffle as S

SIGMA, T = Fraction(35, 100), 1000


def _exact_hockey_stick(eps):
    """max over both directions of sup_C of the threshold test, at 40 digits."""
    with mp.workdps(40):
        mu, w = 1 / mp.mpf("0.35"), mp.e ** eps  # mu = Delta / sigma, Delta = 1 (add-remove)

        def fwd(c):  # P(M > c) - e^eps Q(M > c)
            return (1 - mp.ncdf(c - mu) * mp.ncdf(c) ** (T - 1)) - w * (1 - mp.ncdf(c) ** T)

        def rev(c):  # Q(M <= c) - e^eps P(M <= c)
            return mp.ncdf(c) ** T - w * mp.ncdf(c - mu) * mp.ncdf(c) ** (T - 1)

        best = mp.mpf(0)
        for f in (fwd, rev):
            grid = [mp.mpf(k) / 50 for k in range(-100, 500)]
            c0 = max(grid, key=f)
            c1 = mp.findroot(lambda c: mp.diff(f, c), c0)  # the stationary point next to the best grid point
            best = max(best, f(c0), f(c1))
        return best


@pytest.mark.parametrize("eps", [1, 4, 8])
def test_certified_lower_end_is_just_below_the_exact_divergence_of_the_statistic(eps):
    r = S.run(SIGMA, 100_000, 100, 1, "shuffle")  # T = 1000 batches, add-remove (B does not divide n - 1)
    assert r.batches == T
    lo = Fraction(S.bracket_delta(r, eps)["lo"])
    ref = _exact_hockey_stick(eps)
    assert lo <= Fraction(str(mp.nstr(ref, 30)))  # a certified lower bound never passes the exact value
    assert float(lo) >= float(ref) * (1 - 1e-3)  # and the binning costs less than 0.1 %

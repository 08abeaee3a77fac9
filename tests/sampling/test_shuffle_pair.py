"""The shuffled lower end's dataset pair (every other record -1; x* +1 against an empty
slot under add-remove and replace-special), each piece against an independent route:

* the cell masses and the composed lower end at sigma 0.8, T = 10, E = 2 against mpmath at
  40 digits: the two-epoch hockey-stick divergence of the binned pair summed over every
  pair of cells (no grouping, no rounding), from M's closed-form CDFs
  P(M <= x) = Phi(x - 2m) Phi(x)^(T-1), Q(M <= x) = Phi(x - m) Phi(x)^(T-1), m = 1/sigma;
* the new lower end against the ones earlier releases certified with the pair "others 0"
  (numbers recorded in docs/guide/sampling.md and in the frozen certificates): never lower;
* a certificate of an earlier release whose lower end only the earlier pair proves
  (one cell edge at that pair's best threshold, where the new pair is weaker) still
  verifies, and a lower end that neither pair proves does not.
"""

from __future__ import annotations

import copy
import itertools
from fractions import Fraction

import mpmath as mp
import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.certificate import shuffle_cert as C
from dpverify.errors import CouldNotReprove
from dpverify.recheck import shuffle as RS
from dpverify.sampling import shuffle as S


def _mp(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


def _binned(sigma, T, hints, a, b):
    """Cell masses of M's pair with shifts (a m, b m), m = 1/sigma, at 40 digits."""
    m = 1 / _mp(sigma)
    xs = [_mp(hints.edge_from + i * hints.edge_step) for i in range(hints.cells - 1)]
    Fp = [mp.mpf(0)] + [mp.ncdf(x - a * m) * mp.ncdf(x) ** (T - 1) for x in xs] + [mp.mpf(1)]
    Fq = [mp.mpf(0)] + [mp.ncdf(x - b * m) * mp.ncdf(x) ** (T - 1) for x in xs] + [mp.mpf(1)]
    return ([Fp[k + 1] - Fp[k] for k in range(hints.cells)], [Fq[k + 1] - Fq[k] for k in range(hints.cells)])


def _two_epoch_delta(p, q, eps):
    """sum over every pair of cells (k, l) of (p_k p_l - e^eps q_k q_l)_+, both orientations."""
    w = mp.e ** eps
    best = mp.mpf(0)
    for u, v in ((p, q), (q, p)):
        best = max(best, mp.fsum(max(mp.mpf(0), u[k] * u[j] - w * v[k] * v[j])
                                 for k, j in itertools.product(range(len(u)), repeat=2)))
    return best


def test_cell_masses_and_two_epoch_lower_end_against_mpmath():
    sigma = Fraction(4, 5)
    r = S.run(sigma, 100, 10, 2, "shuffle", "add-remove")
    assert r.batches == 10
    hints = S.choose_hints(r, cells=48)
    with mp.workdps(40):
        p, q = _binned(sigma, 10, hints, 2, 1)
        bp, bq = S.cell_masses(r, hints)
        for got, want in itertools.chain(zip(bp, p), zip(bq, q)):
            assert abs(mp.mpf(got.mid().str(40, radius=False)) - want) <= mp.mpf(got.rad().str(10, radius=False)) * 2 + mp.mpf(10) ** -35
        eps = Fraction(3)
        exact = _two_epoch_delta(p, q, 3)
        lo, _ = S.lower_delta(r, eps, hints)
        got = mp.mpf(lo.str(40, radius=False))
        assert 0 < got <= exact  # grouped, P rounded down: never above the binned pair's divergence
        assert got >= exact * mp.mpf("0.99")  # and the grouping on 2^-grid loses under 1 % here
        # the second route's value for the same cells, computed without arb
        lo2 = RS._lower_delta(RS._run(S.run(sigma, 100, 10, 2, "shuffle").inputs()), {"shuffle_lower": hints.to_json()},
                              eps, (2, 1))
        assert 0 < lo2 <= exact and lo2 >= exact * mp.mpf("0.99")
        # the epsilon lower end at delta 1e-5: the binned pair's delta there exceeds 1e-5
        text, _ = S.lower_eps(r, Fraction(1, 10**5), hints)
        assert Fraction(text) > 0
        assert _two_epoch_delta(p, q, _mp(Fraction(text))) > mp.mpf("1e-5")


# (sigma, n, B, epochs, sampling, the lower end an earlier release certified at delta 1e-5 with the
# pair "others 0": docs/guide/sampling.md, tests/certificate/format2/shuffle-epsilon.json)
EARLIER = [
    ("1.1", 60000, 256, 60, "shuffle", "1.1262"),
    ("1.1", 60000, 256, 60, "shuffle-persistent", "48.4596"),
    ("1.3", 60000, 250, 3, "shuffle", "0.163557"),
    ("9/10", 1000, 100, 5, "shuffle", "4.99643"),
]


@pytest.mark.parametrize("sigma,n,B,E,samp,old", EARLIER)
def test_lower_end_is_at_least_the_earlier_pairs(sigma, n, B, E, samp, old):
    lo, _ = S.lower_eps(S.run(sigma, n, B, E, samp, "add-remove"), Fraction(1, 10**5))
    assert Fraction(lo) >= Fraction(old)


def _earlier_certificate(c: Fraction):
    """One epoch of one batch (T = 1, sigma 1, replace-special), cut at one edge c. The pair
    "others 0" (shifts 1, 0) is then the Gaussian threshold test at c; the new pair (2, 1)
    at the same edge is that test at c - 1, weaker when c is the first pair's best
    threshold. Returns the certificate with its lower end at the first pair's value."""
    r = S.run("1", 10, 10, 1, "shuffle", "replace-special")
    hints = S.LowerHints(c, Fraction(1), 2, 4)
    b = S.bracket_eps(r, "1e-5", hints)
    cert = C.bracket_certificate(r, b, delta="1e-5")
    with mp.workdps(40):
        x = _mp(c)

        def test_at(shift_p, shift_q, eps):  # P(M > c) - e^eps Q(M > c), the better orientation
            fwd = mp.ncdf(shift_p - x) - mp.e ** eps * mp.ncdf(shift_q - x)
            rev = mp.ncdf(x - shift_q) - mp.e ** eps * mp.ncdf(x - shift_p)
            return max(fwd, rev)

        # the largest eps (to 1e-6) where the earlier pair's test still exceeds delta
        lo_e, hi_e = mp.mpf(0), mp.mpf(20)
        for _ in range(80):
            mid = (lo_e + hi_e) / 2
            lo_e, hi_e = (mid, hi_e) if test_at(1, 0, mid) > mp.mpf("1e-5") else (lo_e, mid)
        old_lo = Fraction(mp.nstr(lo_e - mp.mpf("1e-6"), 12))
        assert test_at(1, 0, _mp(old_lo)) > mp.mpf("1e-5")
        assert test_at(2, 1, _mp(old_lo)) < mp.mpf("1e-5")  # the new pair alone cannot prove it here
    return cert, old_lo


def _reseal(cert, lo):
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"]["lo"] = str(lo) if lo.denominator == 1 else f"{float(lo):.10f}".rstrip("0")
    bad.pop("digest")
    bad["digest"] = compute_digest(bad)
    return bad


def test_an_earlier_releases_lower_end_still_verifies():
    # c = 4.25: the threshold test of N(1, 1) against N(0, 1) is best near eps/1 + 1/2 at delta 1e-5
    cert, old_lo = _earlier_certificate(Fraction(17, 4))
    assert "confirmed" in verify_certificate(_reseal(cert, Fraction(f"{float(old_lo):.10f}")))
    with pytest.raises(CouldNotReprove):  # proved by neither pair at this edge
        verify_certificate(_reseal(cert, old_lo + Fraction(1, 10)))

"""RDP claims: verdicts and independent re-verification of their certificates."""

from fractions import Fraction

import pytest

from dpverify.certificate import claim_certificate, verify_certificate
from dpverify.theorems import check, claims

EXPECTED = {
    "abc-eq23-sigma20-t1000": "holds",
    "abc-fig2-gain-0.75": "fails",  # certified gap 0.7588 at T = 1000
    "afa-fig1-gaussian-0.277-0.3": "holds",
    "afa-fig1-rr-needs-0.471": "holds",
    "abc-thm4-eq17-alpha-delta-ge-1": "holds",
    "abc-remark1-zero-eps": "holds",
}


@pytest.mark.parametrize("cid", sorted(EXPECTED))
def test_claim_verdicts_and_certificates(cid):
    claim = {c.id: c for c in claims()}[cid]
    enc, verdict = check(claim)
    assert verdict.outcome.value == EXPECTED[cid]
    assert "confirmed" in verify_certificate(claim_certificate(claim, enc, verdict))


@pytest.mark.slow
def test_extra_iterations_claim():
    claim = {c.id: c for c in claims()}["abc-fig2-100-more-iterations"]
    enc, verdict = check(claim)
    assert verdict.holds and enc.contains(102)


@pytest.mark.parametrize("T", [1000, 10**9])
def test_abc_gain_meets_its_digits_where_the_subtraction_cancels(T):
    """The gain eps_MA - eps_L2 is a difference of two numbers near rho T (1.25e6 at T = 10^9,
    sigma = 20) that differ by about 6.8: each conversion is asked for the digits the subtraction
    cancels. With the gain's own digits + 2 the enclosure was 8e-4 wide (relative) and verify
    refused it as wider than its recorded 1e-6. The reference is its lower end eps_MA - Balle_inf
    (Lemma 2's bound lies below Balle's), Balle's conversion minimised by golden-section search
    over alpha = 1 + e^t on mpmath at 60 digits."""
    import mpmath

    from dpverify.rdp.abc import abc_gain

    enc = abc_gain(Fraction(20), T, Fraction(1, 10**5), 6)
    with mpmath.workdps(60):
        rho_t, dm = mpmath.mpf(T) / 800, mpmath.mpf(10) ** -5

        def balle(t):
            a = 1 + mpmath.exp(t)
            return rho_t * a + mpmath.log1p(-1 / a) - (mpmath.log(dm) + mpmath.log(a)) / (a - 1)

        lo_t, hi_t = mpmath.mpf(-20), mpmath.mpf(5)
        g = (mpmath.sqrt(5) - 1) / 2
        for _ in range(300):
            m1, m2 = hi_t - g * (hi_t - lo_t), lo_t + g * (hi_t - lo_t)
            lo_t, hi_t = (lo_t, m2) if balle(m1) < balle(m2) else (m1, hi_t)
        ref = rho_t + mpmath.sqrt(4 * rho_t * mpmath.log(1 / dm)) - balle(lo_t)
        lo, hi = mpmath.mpf(enc.lo.lower().str(30, radius=False)), mpmath.mpf(enc.hi.upper().str(30, radius=False))
        assert lo - mpmath.mpf(10) ** -25 <= ref <= hi + mpmath.mpf(10) ** -25
        assert hi - lo <= mpmath.mpf(10) ** -6 * lo

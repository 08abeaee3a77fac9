"""delta(eps) of zCDP event trees (events/zcdp.py, CKS 2020 Prop 12 at
tau = xi + rho alpha, infimum over alpha certified by convexity) and its directed-
rounding re-check (recheck/events._zcdp_delta); the re-check's epsilon (ABC Thm 3 proved at
one order, recheck/events._zcdp_eps) against an mpmath search over orders."""

import copy
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.recheck import events as R
from dpverify.certificate.events_cert import answer_certificate, claim_certificate
from dpverify.recheck.verify import verify_certificate
from dpverify.certificate.writer import compute_digest
from dpverify.errors import CertificateRejected
from dpverify.events import api
from tests.reference import golden_min
from dpverify.events.zcdp import zcdp_delta


def _golden_inf(rho, xi, eps):
    """inf over alpha of the CKS bound by golden-section search on f itself in
    t = log(alpha - 1) at 50 digits (no derivative, no convexity used)."""
    with mpmath.workdps(50):
        r, x, e = (mpmath.mpf(v.numerator) / v.denominator for v in (rho, xi, eps))

        def f(t):
            a = 1 + mpmath.exp(t)
            return (a - 1) * (x + r * a - e) + (a - 1) * mpmath.log(1 - 1 / a) - mpmath.log(a)

        lo, hi = mpmath.mpf(-30), mpmath.mpf(30)
        g = (mpmath.sqrt(5) - 1) / 2
        for _ in range(400):
            m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
            if f(m1) < f(m2):
                hi = m2
            else:
                lo = m1
        return min(mpmath.mpf(1), mpmath.exp(f((lo + hi) / 2)))


@pytest.mark.parametrize("rho, xi, eps", [(F(1, 10), F(0), F(2)), (F(1, 2), F(1, 10), F(3)),
                                          (F(5), F(0), F(1)), (F(1, 1000), F(0), F(1, 2))])
def test_zcdp_delta_encloses_the_infimum(rho, xi, eps):
    enc = zcdp_delta(rho, xi, eps, digits=12)
    truth = _golden_inf(rho, xi, eps)  # >= the infimum, equal to ~1e-40 (flat minimum)
    with mpmath.workdps(50):
        lo, hi = mpmath.mpf(enc.to_json()["lo"]), mpmath.mpf(enc.to_json()["hi"])
        tol = truth * mpmath.mpf(10) ** -40  # the golden value is rounded at 50 digits
        assert lo <= truth + tol and truth - hi <= hi * mpmath.mpf(10) ** -15
        assert hi - lo <= hi * mpmath.mpf(10) ** -12
        # the mpmath second route agrees and encloses the same value
        rlo, rhi = R._zcdp_bounds(rho, xi, "delta", eps)
        assert rlo <= truth + tol and truth - rhi <= rhi * mpmath.mpf(10) ** -15 and rhi - rlo <= rhi * mpmath.mpf(10) ** -12


def test_pure_dp_is_tight():
    # rho = 0: (xi, 0)-zCDP is xi-DP; the bound is 1 - e^(eps - xi), the exact
    # delta of the pair (1, 0) vs (e^-xi, 1 - e^-xi) (derivation: H = 1 - e^eps e^-xi)
    enc = zcdp_delta(F(0), F(1), F(1, 2), digits=12)
    with mpmath.workdps(40):
        t = 1 - mpmath.exp(mpmath.mpf(-1) / 2)
        assert mpmath.mpf(enc.to_json()["lo"]) <= t <= mpmath.mpf(enc.to_json()["hi"])
    assert zcdp_delta(F(0), F(1, 2), F(1)).to_json() == {"lo": "0", "hi": "0"}


ZC = {"neighboring": "add-remove", "events": [
    {"type": "self_composed", "count": 10, "event": {"type": "zcdp", "rho": "0.01", "xi": "0"}},
    {"type": "gaussian", "noise_multiplier": "3"}]}


def _forge(cert, lo, hi):
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"] = {"lo": mpmath.nstr(lo, 25), "hi": mpmath.nstr(hi, 25)}
    bad["digest"] = compute_digest(bad)
    return bad


def test_zcdp_delta_certificate_verifies_and_moved_enclosures_are_refused():
    ans = api.delta(ZC, "1")
    # rho = 10 * 0.01 + (1/3)^2 / 2 (the Gaussian is (1/(2 z^2))-zCDP)
    assert ans.details["rho"] == str(F(1, 10) + F(1, 18))
    cert = answer_certificate(api.as_event(ZC)[0], ans, eps="1")
    assert "confirmed" in verify_certificate(cert)
    with mpmath.workdps(40):
        lo, hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
        w = mpmath.mpf("1e-6")
        forged = [_forge(cert, hi * (1 + w), hi * (1 + 2 * w)), _forge(cert, lo * (1 - 2 * w), lo * (1 - w))]
    for bad in forged:
        with pytest.raises(CertificateRejected):
            verify_certificate(bad)


@pytest.mark.parametrize("claimed, verdict", [("3", "holds"), ("0.5", "undecided")])
def test_zcdp_claims_never_fail_and_verify(claimed, verdict):
    v, ans = api.check_claim(ZC, claimed, "1e-5")
    assert v.outcome.value == verdict
    cert = claim_certificate(api.as_event(ZC)[0], v, ans, "add-remove", claimed_eps=claimed, delta="1e-5")
    assert "confirmed" in verify_certificate(cert)
    bad = copy.deepcopy(cert)
    bad["result"]["verdict"] = "fails"  # a zCDP bound cannot refute a claim
    bad["digest"] = compute_digest(bad)
    if verdict == "holds":
        with pytest.raises(CertificateRejected):
            verify_certificate(bad)


@pytest.mark.slow
def test_zcdp_epsilon_certificate_verifies():
    ans = api.epsilon(ZC, "1e-5")
    cert = answer_certificate(api.as_event(ZC)[0], ans, delta="1e-5")
    assert "confirmed" in verify_certificate(cert)
    with mpmath.workdps(40):
        lo = mpmath.mpf(cert["result"]["enclosure"]["lo"])
        bad = _forge(cert, lo * (1 - mpmath.mpf("2e-6")), lo * (1 - mpmath.mpf("1e-6")))
    with pytest.raises(CertificateRejected):
        verify_certificate(bad)


def _abc_eps_mp(rho, xi, delta):
    """inf over alpha of ABC Thm 3's conversion of (alpha, xi + rho alpha)-RDP, by mpmath at 20
    digits: gamma(e) = e + min_p log S(p)/(alpha - 1) with the minimum over a golden-section
    search in p itself (no convexity, no derivative), e by bisection, alpha by golden-section
    search in log(alpha - 1). An independent route (no floats, no MPFR)."""
    with mpmath.workdps(20):
        r, x, d = (mpmath.mpf(v.numerator) / v.denominator for v in (rho, xi, delta))

        def golden(h, lo, hi, n):
            return golden_min(h, lo, hi, n)[1]

        def eps_at(al):
            g = x + r * al

            def gamma(e):
                s = lambda t: (d + mpmath.exp(t)) ** al * mpmath.exp(t) ** (1 - al) + (  # noqa: E731
                    1 - d - mpmath.exp(t)) ** al * (mpmath.exp(e) - mpmath.exp(t)) ** (1 - al)
                return e + mpmath.log(golden(s, mpmath.log(d) - 30, mpmath.log(1 - d) - mpmath.mpf(10) ** -18, 80)) / (al - 1)

            lo, hi = mpmath.mpf(0), g + mpmath.log(1 / d) / (al - 1) + 1
            for _ in range(48):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if gamma(mid) >= g else (mid, hi)
            return hi

        t0 = mpmath.log(mpmath.sqrt(mpmath.log(1 / d) / r))
        return golden(lambda t: eps_at(1 + mpmath.exp(t)), t0 - 2, t0 + 2, 30)


@pytest.mark.slow
@pytest.mark.parametrize("rho, xi, delta", [(F(7, 45), F(0), F(1, 10**5)), (F(2), F(1, 10), F(1, 1000))])
def test_zcdp_epsilon_upper_end_is_the_optimal_conversion(rho, xi, delta):
    """The re-check's upper end is proved (ABC Thm 3 at one order) and must be within 1e-9
    (relative) of mpmath's search over orders: not below it by more than that search's own
    accuracy (a bound below the infimum would be unsound), not above (a loose bound)."""
    lo, hi = R._zcdp_bounds(rho, xi, "eps", delta)
    ref = _abc_eps_mp(rho, xi, delta)
    with mpmath.workdps(30):
        assert lo == 0
        assert ref * (1 - mpmath.mpf(10) ** -9) <= hi <= ref * (1 + mpmath.mpf(10) ** -9), (hi, ref)

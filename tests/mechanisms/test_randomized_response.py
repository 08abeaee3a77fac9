"""LT Thm 3.4: the piecewise RR profile = the 4-output pmfs' two finite routes =
GDPT's worst case (approx_dp), for all real t and both directions."""

import json
from fractions import Fraction as F

import mpmath
from flint import arb
from hypothesis import given, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.cli import main
from dpverify.mechanisms.approx_dp import approx_dp_delta_ball
from dpverify.mechanisms.randomized_response import RandomizedResponse

r_s = st.fractions(min_value=1, max_value=8, max_denominator=9)
d_s = st.fractions(min_value=0, max_value=1, max_denominator=20)


@given(r=r_s, d=d_s, exp_t=st.fractions(min_value=F(1, 9), max_value=12, max_denominator=9))
def test_piecewise_equals_exact_finite_routes(r, d, exp_t):
    rr = RandomizedResponse(None, d, r)
    m = rr.pmfs()
    exact = m.delta_exact(exp_t)
    assert exact == m.reversed().delta_exact(exp_t) == m.delta_enumerated_exact(exp_t)
    with working_precision(200):
        v = rr.delta_at(ball(exp_t).log())
        assert v.overlaps(arb(exact.numerator) / exact.denominator)


@given(e=st.fractions(min_value=0, max_value=3, max_denominator=10), d=d_s,
       t=st.fractions(min_value=-5, max_value=5, max_denominator=10))
def test_equals_gdpt_worst_case(e, d, t):
    with working_precision(200):
        a = RandomizedResponse(e, d).delta_at(ball(t))
        b = approx_dp_delta_ball(ball(e), ball(d), ball(t))
        assert a.overlaps(b) and a.rad() < 1e-40


def test_break_points_exact():
    # t = eps exactly: both adjacent pieces give delta
    with working_precision(100):
        v = RandomizedResponse(F(1), F(1, 10)).delta_at(ball(1))
        assert v.overlaps(arb(1) / 10) and v.rad() < 1e-25


def test_cli_rr(capsys):
    assert main(["dp", "profile", "--mechanism", "rr", "--p", "0.75", "--eps", "-2", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    with mpmath.workdps(40):
        ref = 1 - mpmath.exp(-2)  # t <= -eps = -log 3: 1 - e^t
        assert mpmath.mpf(cert["result"]["enclosure"]["lo"]) <= ref <= mpmath.mpf(cert["result"]["enclosure"]["hi"])
    assert main(["dp", "profile", "--mechanism", "rr", "--p", "1", "--eps", "0"]) == 2
    assert "--p" in capsys.readouterr().err


def test_rr_certificate_tamper(capsys):
    import copy

    import pytest

    from dpverify.certificate import compute_digest, verify_certificate
    from dpverify.errors import CertificateRejected

    assert main(["dp", "profile", "--mechanism", "rr", "--p", "0.75", "--eps", "0.5", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "0.338", "hi": "0.3380000000000001"}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(forged)


def test_worst_case_profile_exact_at_its_break_point():
    # eps = eps0 = 1/3 is not a dyadic number: a ball around it straddles the
    # break of (e^eps0 - e^eps)_+, yet the value is exactly delta0 (here 0)
    from dpverify.mechanisms import MechanismSpec, build_profile, profile_delta

    prof = build_profile(MechanismSpec("approx", {"eps0": "1/3", "delta0": "0"}))
    enc = profile_delta(prof, "1/3")
    assert enc.lo.is_zero() and enc.hi.is_zero()
    prof = build_profile(MechanismSpec("approx", {"eps0": "1/3", "delta0": "1/7"}))
    assert profile_delta(prof, "1/3").contains(__import__("fractions").Fraction(1, 7))

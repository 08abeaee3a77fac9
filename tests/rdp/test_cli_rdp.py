"""`dpverify rdp ...`: acceptance commands, bad input, certificates and tampering."""

import copy
import json
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.certificate import verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected

from ..certs import reseal


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _cert(capsys, *argv):
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_acceptance_classic_eq23(capsys):
    cert = _cert(capsys, "rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "20",
                 "--steps", "1000", "--delta", "1e-5", "--conversion", "classic")
    with mpmath.workdps(40):
        rho = mpmath.mpf(1) / 800
        ref = rho * 1000 + mpmath.sqrt(4 * rho * 1000 * mpmath.log(10**5))
        lo, hi = mpmath.mpf(cert["result"]["enclosure"]["lo"]), mpmath.mpf(cert["result"]["enclosure"]["hi"])
        assert lo <= ref <= hi and (hi - lo) / lo <= mpmath.mpf("1e-9")
    assert "confirmed" in verify_certificate(cert)


@pytest.mark.parametrize("argv", [
    ["rdp", "divergence", "--mechanism", "laplace", "--scale", "2", "--alpha", "3.5", "--steps", "3"],
    ["rdp", "divergence", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "2.5", "--sampling-rate", "0.01",
     "--alpha", "2.5", "--steps", "50"],
    ["rdp", "to-dp", "--alpha", "4", "--rdp", "1.25", "--delta", "1e-5", "--conversion", "balle"],
    ["rdp", "to-dp", "--alpha", "4", "--rdp", "1.25", "--eps", "8", "--conversion", "classic"],
    ["rdp", "to-dp", "--alpha", "3", "--rdp", "0.5", "--delta", "1e-3", "--conversion", "optimal", "--digits", "6"],
])
def test_certificates_verify_and_forgeries_are_rejected(capsys, argv):
    cert = _cert(capsys, *argv)
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    lo = mpmath.mpf(cert["result"]["enclosure"]["lo"])
    fake = lo * (1 + mpmath.mpf("1e-3"))
    forged["result"]["enclosure"] = {"lo": mpmath.nstr(fake, 20), "hi": mpmath.nstr(fake * (1 + mpmath.mpf("1e-16")), 20)}
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(forged))


def test_epsilon_forgery_rejected(capsys):
    cert = _cert(capsys, "rdp", "epsilon", "--mechanism", "gaussian", "--mu", "0.1", "--steps", "100",
                 "--delta", "1e-6", "--conversion", "balle", "--digits", "8")
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "1.5", "hi": "1.500000001"}
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(forged))
    # a lower end that is too low is not caught by containment, so it must keep the width promise
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"]["lo"] = "0.1"
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(forged))


@pytest.mark.parametrize("argv,opt", [
    (["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "-1", "--delta", "1e-5"], "--noise-multiplier"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "0"], "--delta"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1"], "--delta"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "abc", "--delta", "1e-5"], "--noise-multiplier"),
    (["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "0",
      "--delta", "1e-5"], "--sampling-rate"),
    (["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "1.5",
      "--delta", "1e-5"], "--sampling-rate"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--delta", "1e-5", "--conversion", "x"], "--conversion"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--delta", "1e-5", "--steps", "0"], "--steps"),
    (["rdp", "divergence", "--mechanism", "gaussian", "--mu", "1", "--alpha", "1"], "--alpha"),
    (["rdp", "divergence", "--mechanism", "rr", "--p", "1", "--alpha", "2"], "--p"),
    (["rdp", "divergence", "--mechanism", "nosuch", "--alpha", "2"], "--mechanism"),
    (["rdp", "to-dp", "--alpha", "0.5", "--rdp", "1", "--delta", "1e-5"], "--alpha"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--delta", "1e-300", "--conversion", "optimal"],
     "--delta"),
    (["rdp", "to-dp", "--alpha", "2", "--rdp", "1", "--eps", "inf"], "--eps"),
])
def test_bad_input_exit_2(capsys, argv, opt):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and opt in err and "Traceback" not in err


def test_billion_compositions_are_instant(capsys):
    code, out, err = _run(capsys, "rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1000",
                          "--steps", "1000000000", "--delta", "1e-5")
    assert code == 0, err


def test_fractional_subsampled_order_cap_is_exit_2(capsys):
    from dpverify.cli import main

    argv = ["rdp", "divergence", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1",
            "--sampling-rate", "0.01", "--alpha"]
    assert main([*argv, "10000.5"]) == 2
    assert "fractional orders" in capsys.readouterr().err


@pytest.mark.parametrize("alpha", ["1e309", "1e999"])
def test_an_order_beyond_the_float_range_is_answered_and_verified(capsys, alpha):
    # adv35 X3: float(alpha) in the optimal conversion's float proposal overflowed (exit 4). Here
    # D_alpha = 0.1 bounds the max-divergence, so TV <= (e^0.1 - 1)/(e^0.1 + 1) ~ 0.05 < delta = 0.3: eps = 0
    cert = _cert(capsys, "rdp", "to-dp", "--alpha", alpha, "--rdp", "0.1", "--delta", "0.3", "--conversion", "optimal")
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert "confirmed" in verify_certificate(cert)


def test_an_optimal_conversion_below_the_producers_delta_is_malformed(capsys):
    # adv35 R1: the producer refuses delta < 1e-50 for the optimal conversion (its precision grows with
    # log 1/delta); verify had no such cap and ran a forged 1e-3000 certificate to its budget
    from dpverify.errors import MalformedCertificate

    assert main(["rdp", "to-dp", "--alpha", "3", "--rdp", "0.5", "--delta", "1e-51", "--conversion", "optimal"]) == 2
    capsys.readouterr()
    cert = _cert(capsys, "rdp", "to-dp", "--alpha", "3", "--rdp", "0.5", "--delta", "1e-50", "--conversion", "optimal",
                 "--digits", "6")
    assert "confirmed" in verify_certificate(cert)
    cert["inputs"]["delta"] = "1e-3000"
    cert["result"]["quantity"] = cert["result"]["quantity"].replace("1e-50", "1e-3000")
    with pytest.raises(MalformedCertificate, match="1e-50"):
        verify_certificate(reseal(cert))


@pytest.mark.parametrize("delta", ["1e-320", "1e-400"])
def test_classic_infimum_below_the_float_range(capsys, delta):
    # adv35 Q1: the order search took log(1/float(delta)), and float(1e-400) is 0.0, so the producer
    # answered exit 3 where verify proves the value. Gaussian mu = 1, 10 steps, classic: the infimum
    # over alpha of c alpha + L/(alpha - 1), c = 10/2, is c + 2 sqrt(c L) with L = log(1/delta) (AM-GM)
    cert = _cert(capsys, "rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--steps", "10",
                 "--delta", delta, "--conversion", "classic")
    with mpmath.workdps(40):
        c, L = mpmath.mpf(5), -mpmath.log(mpmath.mpf(delta))
        truth = c + 2 * mpmath.sqrt(c * L)
        enc = cert["result"]["enclosure"]
        assert mpmath.mpf(enc["lo"]) <= truth <= mpmath.mpf(enc["hi"])
    assert "confirmed" in verify_certificate(cert)


_SSG = ["rdp", "divergence", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "0.01"]


@pytest.mark.parametrize("alpha", ["20001", "100000", "1000000000"])
def test_a_subsampled_order_above_the_cap_is_exit_2_on_both_sides(capsys, alpha):
    """Issue 22 (c): an order above limits.MAX_SUBSAMPLED_ORDER (20,000) at a sampling rate below 1
    was computed up to a PrecisionExhausted (exit 3) by the producer, and a certificate stating it
    went to verify's exit 3 too; both now refuse it before any work, exit 2, naming alpha and the
    cap, which --help states. At the cap itself the exact binomial sum answers, and verify accepts
    it; the rate 1 (the Gaussian's closed form, D_alpha = alpha / (2 s^2), Mironov 2017 Prop 7)
    has no such cap."""
    from dpverify.errors import InvalidParameter, MalformedCertificate
    from dpverify.limits import MAX_SUBSAMPLED_ORDER
    from dpverify.rdp import compose, renyi_divergence
    from dpverify.rdp.subsampled_gaussian import SubsampledGaussianCurve

    assert main([*_SSG, "--alpha", alpha]) == 2
    err = capsys.readouterr().err
    assert "--alpha" in err and f"<= {MAX_SUBSAMPLED_ORDER}" in err and "Traceback" not in err
    curve = SubsampledGaussianCurve(F(1), F(1, 100))
    for c in (curve, compose([curve], [7])):  # the library refuses it too, also composed
        with pytest.raises(InvalidParameter, match=f"alpha.*{MAX_SUBSAMPLED_ORDER}"):
            renyi_divergence(c, alpha)
    cert = _cert(capsys, *_SSG, "--alpha", str(MAX_SUBSAMPLED_ORDER), "--digits", "6")
    assert "confirmed" in verify_certificate(cert)
    cert["inputs"]["alpha"] = alpha
    cert["result"]["quantity"] = f"D_alpha (alpha={alpha})"
    with pytest.raises(MalformedCertificate, match=f"inputs.alpha.*{MAX_SUBSAMPLED_ORDER}"):
        verify_certificate(reseal(cert))
    g = _cert(capsys, "rdp", "divergence", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "2",
              "--sampling-rate", "1", "--alpha", alpha)
    lo, hi = F(g["result"]["enclosure"]["lo"]), F(g["result"]["enclosure"]["hi"])
    assert lo <= F(alpha) / 8 <= hi
    assert "confirmed" in verify_certificate(g)


def test_the_order_caps_are_stated_in_help(capsys):
    from dpverify.limits import MAX_RDP_ORDER, MAX_SUBSAMPLED_FRACTIONAL_ORDER, MAX_SUBSAMPLED_ORDER

    with pytest.raises(SystemExit):
        main(["rdp", "divergence", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for cap in (MAX_RDP_ORDER, MAX_SUBSAMPLED_ORDER, MAX_SUBSAMPLED_FRACTIONAL_ORDER):
        assert str(cap) in text


def test_rdp_epsilon_stops_at_its_time_budget(capsys):
    """budget2: the subsampled Gaussian at sigma 0.001 (q = 1/2, one step) searched its order through
    certified quadratures of up to 20,000 pieces each and ran past two minutes with no budget to stop
    it. With --time-budget 1 it is exit 3 naming the budget (one quadrature is seconds, so the run
    cannot complete within one second), and a run completed under a budget states the same bytes as
    one without (the clock only stops a run)."""
    code, _, err = _run(capsys, "rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier",
                        "0.001", "--sampling-rate", "0.5", "--steps", "1", "--delta", "1e-5", "--time-budget", "1")
    assert code == 3, err
    assert "time budget of 1 s" in err
    argv = ("rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "20", "--steps", "1000",
            "--delta", "1e-5")
    assert _cert(capsys, *argv, "--time-budget", "600") == _cert(capsys, *argv)

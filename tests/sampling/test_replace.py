"""Poisson-sampled DP-SGD under replace-one: the bracket and its certificates.

Independent routes: the PLD re-check (mpmath/GMP) re-proves both ends through
``verify``; the upper end is checked against the no-amplification Gaussian (mu =
2 sqrt(T)/sigma, by mpmath bisection), which it may not exceed by group privacy's
construction at these settings, and the lower end against the add/remove epsilon
(the remove direction is one of its two directions, so it may not exceed it)."""

import copy
import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected, CouldNotReprove
from dpverify.pld import dpsgd as S

BASE = ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "100",
        "--delta", "1e-5", "--neighboring", "replace-one"]


def _no_amplification_eps(mu, delta):
    with mpmath.workdps(30):
        f = lambda e: mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)  # noqa: E731
        a, b = mpf_(0), mpf_(400)  # f decreases: f(a) > delta > f(b)
        for _ in range(100):
            m = (a + b) / 2
            a, b = (m, b) if f(m) > delta else (a, m)
        return a


def mpf_(x):
    return mpmath.mpf(x)


def test_bracket_verifies_and_is_ordered(capsys):
    assert main(BASE + ["--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    lo, hi = (Fraction(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
    ar = S.epsilon([S.GaussianSteps.of("1", "0.01", 100)], "1e-5", digits=3).enclosure
    assert 0 < lo <= Fraction(ar.hi_str()) < hi
    assert hi < Fraction(str(_no_amplification_eps(mpf_(20), mpf_("1e-5"))))
    assert "confirmed" in verify_certificate(cert)
    for end, value, errors in (("lo", str(float(ar.hi_str()) * 1.05), (CouldNotReprove,)),
                               ("hi", str(float(hi) * 0.5), (CouldNotReprove, CertificateRejected))):
        bad = copy.deepcopy(cert)
        bad["result"]["enclosure"][end] = value
        bad["digest"] = compute_digest(bad)
        with pytest.raises(errors):
            verify_certificate(bad)


def test_claim_verdicts(capsys):
    assert main(BASE + ["--claimed-eps", "0.5", "--json"]) == 1  # below the zero-gradient replacement's eps
    claim = json.loads(capsys.readouterr().out)
    assert claim["result"]["verdict"] == "fails" and "confirmed" in verify_certificate(claim)
    assert main(BASE + ["--claimed-eps", "2"]) == 0
    assert main(BASE + ["--claimed-eps", "1"]) == 3
    assert main(BASE[:-2] + ["--neighboring", "replace-one", "--eps", "1"][:0] + ["--neighboring", "replace-one",
                "--statement", "md"]) == 2

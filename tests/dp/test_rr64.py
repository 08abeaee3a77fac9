"""GDPT's 4-output mechanism: the 64 rows, the exact supremum, the finite engine."""

import copy
from fractions import Fraction as F
import json

import mpmath
import pytest
from hypothesis import given, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.dp import rr64_check
from dpverify.errors import CertificateRejected
from dpverify.mechanisms.finite import FiniteMechanism

from ..reference import mpf_exact


@given(e0=st.fractions(0, 3, max_denominator=6), d0=st.fractions(0, 1, max_denominator=10),
       e=st.fractions(-4, 4, max_denominator=6))
def test_sup_equals_closed_form_and_finite_engine(e0, d0, e):
    res = rr64_check(e0, d0, e, digits=12)
    assert len(res.rows) == 64 and sum(r.neighbouring for r in res.rows) == 32
    assert any(r.attains_sup for r in res.rows)
    # independent: brute force over the 32 neighbouring rows in mpmath
    with mpmath.workdps(60):
        u, E = mpmath.exp(mpf_exact(e0)), mpmath.exp(mpf_exact(e))
        a0, d = u / (1 + u), mpf_exact(d0)
        P = {0: [d, 0, (1 - d) * a0, (1 - d) * (1 - a0)], 1: [0, d, (1 - d) * (1 - a0), (1 - d) * a0]}
        best = max(sum(P[s][i] - E * P[1 - s][i] for i in range(4) if m >> i & 1) for s in (0, 1) for m in range(16))
        j = res.supremum.to_json()
        tol = mpmath.mpf(10) ** -50  # the reference's own rounding at 60 digits
        assert mpmath.mpf(j["lo"]) - tol <= best <= mpmath.mpf(j["hi"]) + tol
    # the finite engine's two routes on the same pmfs (balls)
    with working_precision(200):
        u = ball(e0).exp()
        a0 = u / (1 + u)
        d = ball(d0)
        fm = FiniteMechanism((d, ball(0), (1 - d) * a0, (1 - d) * (1 - a0)), (ball(0), d, (1 - d) * (1 - a0), (1 - d) * a0))
        for m in (fm, fm.reversed()):
            assert m.delta(ball(e)).overlaps(res.supremum.as_ball())
            assert m.delta_enumerated(ball(e)).overlaps(res.supremum.as_ball())
    assert res.verdict.holds == (e + e0 >= 0 or d0 == 1)


def test_cli_table_and_certificate(capsys):
    assert main(["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps", "0.5"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 66 and "= sup" in out and "same input" in out
    assert main(["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps", "0.5", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "0.36", "hi": "0.3600000000000001"}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)
    forged = copy.deepcopy(cert)
    forged["result"]["verdict"] = "fails"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_cli_negative_eps_fails_and_bad_input(capsys):
    assert main(["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps=-2"]) == 1
    assert main(["check", "rr64", "--eps0", "1", "--delta0", "1.1", "--eps", "0"]) == 2
    assert "--delta0" in capsys.readouterr().err


@pytest.mark.parametrize("P,Q", [((True, False), (False, True)), ((float("nan"), 1), (F(1, 2), F(1, 2))),
                                 (("1/2", "1/2"), (F(1, 2), F(1, 2)))])
def test_finite_mechanism_refuses_what_is_not_a_probability(P, Q):
    """adv37 A4: bools were read as 0 and 1 and NaN ended in a ValueError; the constructor takes
    exact numbers or finite balls (``of`` reads text and floats)."""
    from dpverify.errors import InvalidParameter

    with pytest.raises(InvalidParameter):
        FiniteMechanism(P, Q)

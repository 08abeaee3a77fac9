"""GDPT Thm 3.1: the implication order, decided exactly; a partial order; tight."""

from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import assume, given, strategies as st

from dpverify.cli import main
from dpverify.dp import implies, worst_case_delta
from dpverify.errors import InvalidParameter

from ..reference import in_enclosure, mpf_exact

e_s = st.fractions(min_value=0, max_value=3, max_denominator=8)
d_s = st.fractions(min_value=0, max_value=1, max_denominator=16)
pair = st.tuples(e_s, d_s)


def W_ref(e0, d0, e):
    with mpmath.workdps(80):
        u, E = mpmath.exp(mpf_exact(e0)), mpmath.exp(mpf_exact(e))
        return mpf_exact(d0) + (1 - mpf_exact(d0)) * (max(u - E, 0) + max(1 - u * E, 0)) / (1 + u)


@given(a=pair, e=st.fractions(min_value=-3, max_value=3, max_denominator=8), d=d_s)
def test_verdict_matches_reference(a, e, d):
    v = implies(a, (e, d))
    ref = W_ref(a[0], a[1], e)
    assert in_enclosure(ref, v.enclosures["required_delta"])
    with mpmath.workdps(80):
        if mpf_exact(d) > ref + mpmath.mpf(10) ** -60:
            assert v.holds
        elif mpf_exact(d) < ref - mpmath.mpf(10) ** -60:
            assert v.fails


@given(a=pair)
def test_reflexive(a):
    assert implies(a, a).holds


@given(a=pair, b=pair, c=pair)
def test_transitive(a, b, c):
    if implies(a, b).holds and implies(b, c).holds:
        assert implies(a, c).holds


@given(e0=e_s, d0=d_s, e=e_s)
def test_weaker_delta_only_when_eps_below(e0, d0, e):
    # (eps0, delta0) implies (eps, delta0) for eps >= eps0, never (eps, delta') with delta' < delta0
    assume(d0 > 0)
    assert implies((e0, d0), (e0 + e, d0)).holds
    assert implies((e0, d0), (e0 + e, d0 - F(1, 10**6) if d0 > F(1, 10**6) else 0)).fails


def test_exact_ties_are_decided():
    # eps >= eps0, delta = delta0: equality, holds (no float could say so)
    assert implies(("1", "1/3"), ("1", "1/3")).details["sign"] == 0
    assert implies(("0", "0"), ("0", "0")).holds


def test_worst_case_values():
    assert worst_case_delta("1", "0", "2").hi == 0
    assert in_enclosure(W_ref(F(1), F(1, 10), F(1, 2)), worst_case_delta("1", "0.1", "0.5"))


def test_cli(capsys):
    assert main(["dp", "implies", "--from", "1,0.1", "--to", "0.5,0.4"]) == 0
    assert main(["dp", "implies", "--from", "1,0.1", "--to", "0.5,0.2"]) == 1
    capsys.readouterr()
    for argv, opt in ((["--from=-1,0.1", "--to", "0,0"], "--from"), (["--from", "1,2", "--to", "0,0"], "--from"),
                      (["--from", "1,0", "--to", "0,1.5"], "--to"), (["--from", "1", "--to", "0,0"], "--from"),
                      (["--from", "1,0", "--to", "x,0"], "--to")):
        assert main(["dp", "implies", *argv]) == 2
        assert opt in capsys.readouterr().err


def test_bad_library_input():
    with pytest.raises(InvalidParameter):
        implies(("1", "0"), ("0", "-0.1"))


def test_certificate_and_tamper(capsys):
    import copy
    import json

    from dpverify.certificate import compute_digest, verify_certificate
    from dpverify.errors import CertificateRejected

    assert main(["dp", "implies", "--from", "1,0.1", "--to", "0.5,0.2", "--json"]) == 1
    cert = json.loads(capsys.readouterr().out)
    assert cert["result"]["verdict"] == "fails"
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["verdict"] = "holds"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "0.3", "hi": "0.3000000000000001"}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


@pytest.mark.parametrize("digits", [float("nan"), float("inf"), 1e308, 10**5000, 0, 0.5, True, False, "3.0", None,
                                    [1], __import__("decimal").Decimal(3)],
                         ids=lambda v: f"int{v.bit_length()}" if isinstance(v, int) and v > 2**64 else repr(v))
def test_digits_is_refused_as_every_other_function_refuses_it(digits):
    # adv37 A4: implies read digits unchecked (TypeError, OverflowError, a plain ValueError, True as 1).
    # The rule is the one delta_mu applies (through _validate.digits), which is the oracle here.
    import dpverify

    with pytest.raises(InvalidParameter) as ref:
        dpverify.delta_mu(1, 1, digits=digits)
    for call in (lambda: implies((1, "1e-5"), (2, "1e-3"), digits=digits),
                 lambda: worst_case_delta(1, "1e-5", "1/2", digits=digits)):
        with pytest.raises(InvalidParameter) as exc:
            call()
        assert exc.value.name == "digits" and str(exc.value) == str(ref.value)

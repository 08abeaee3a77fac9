"""The library's answer for Poisson sampling under replace-one: ``dpverify.epsilon``,
``delta`` and ``check_claim`` return the certified group-privacy bracket (the rules of
:mod:`dpverify.sampling.replace`, the same as ``audit dpsgd --events``, ``audit corpus``
and the dp_accounting adapter), labelled end by end, and ``supports`` says so.

Independent routes: one Poisson-sampled Gaussian step's add/remove curves in closed
form (normal cdfs in mpmath at 40 digits) (the upper end must satisfy group privacy on them, the lower end
must lie below the remove curve's epsilon); dp_accounting's REPLACE_ONE PLD value (a
realisable replacement, so the truth is at least it) inside the bracket; ``verify``
(MPFR / GMP, nothing from the arb side) re-proves the certificate written from the
answer and refuses a forged end."""

import copy
from fractions import Fraction as F

import dp_accounting as dpa
import mpmath
import pytest

import dpverify
from dpverify.accountants.dp_accounting_adapter import CertifiedPLDAccountant
from dpverify.certificate import compute_digest, verify_certificate
from dpverify.certificate.events_cert import answer_certificate, claim_certificate
from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.events import model as E
from dpverify.events import plan
from dpverify.events.dispatch import Unsupported

Q, Z = F(1, 4), F(2)
ONE = E.PoissonSampled(Q, E.Gaussian(Z))
TREE = E.Composed((E.SelfComposed(ONE, 8), E.Gaussian(F(8))))
REFUSED = (CouldNotReprove, CertificateRejected, MalformedCertificate)


def _mp(x):
    x = F(x)
    return mpmath.mpf(x.numerator) / x.denominator


def _curves(eps):
    """delta_remove(eps), delta_add(eps) of one Poisson-sampled Gaussian step (rate Q, noise Z),
    in closed form (normal cdfs at 40 digits): P = (1-q) N(0, z^2) + q N(1, z^2) against Q = N(0, z^2) (AFA Thm 11 (1));
    remove is H_{e^eps}(P || Q), add H_{e^eps}(Q || P)."""
    mpmath.mp.dps = 40
    q, z, c = mpmath.mpf(Q.numerator) / Q.denominator, mpmath.mpf(Z.numerator) / Z.denominator, mpmath.e ** _mp(eps)

    # the likelihood ratio P/Q = (1-q) + q exp((2x - 1) / (2 z^2)) is increasing in x: each hinge
    # integrand is positive on one half-line, whose end solves P/Q = c (remove) or P/Q = 1/c (add)
    def sf(x, m):
        return 1 - mpmath.ncdf(x, m, z)

    def cut(ratio):
        return None if ratio <= 1 - q else mpmath.mpf(1) / 2 + z * z * mpmath.log((ratio - (1 - q)) / q)

    x1 = cut(c)
    rem = (1 - q) * sf(x1, 0) + q * sf(x1, 1) - c * sf(x1, 0)
    x2 = cut(1 / c)
    add = 0 if x2 is None else mpmath.ncdf(x2, 0, z) - c * ((1 - q) * mpmath.ncdf(x2, 0, z) + q * mpmath.ncdf(x2, 1, z))
    return rem, add


def test_one_step_bracket_against_closed_form():
    ans = dpverify.epsilon(ONE, "1e-3", neighboring="replace-one")
    assert ans.is_bracket and ans.rel_width is None
    assert "zero clipped gradient" in ans.lower_end and "Dwork and Roth 2014 Thm 2.2" in ans.upper_end
    lo, hi = ans.enclosure.lo_fraction, ans.enclosure.hi_fraction
    # upper end: group privacy at eps* = hi/2 holds on the closed-form curves
    rem, add = _curves(hi / 2)
    assert rem + mpmath.e ** _mp(hi / 2) * add <= mpmath.mpf("1e-3")
    # lower end: below the remove curve's epsilon, i.e. delta_remove(lo) >= 1e-3
    assert _curves(lo)[0] >= mpmath.mpf("1e-3")
    # and not vacuous: the remove curve's epsilon is within 1e-3 of lo
    assert _curves(lo * F(1001, 1000))[0] < mpmath.mpf("1e-3")
    # delta(eps): lo = delta_remove(eps), hi >= (1 + e^(eps/2)) delta_add-remove(eps/2)
    d = dpverify.delta(ONE, "1", neighboring="replace-one")
    rem1, _ = _curves(1)
    rem_half, add_half = _curves(0.5)
    assert d.is_bracket and _mp(d.enclosure.lo_fraction) <= rem1 <= _mp(d.enclosure.hi_fraction)
    assert _mp(d.enclosure.hi_fraction) >= (1 + mpmath.e ** mpmath.mpf(0.5)) * max(rem_half, add_half)


def test_tree_bracket_contains_dp_accountings_value_and_verifies():
    """dp_accounting's REPLACE_ONE pair is realised by replacing a record of gradient -e by one
    of +e: its value is one the mechanism attains (up to its float discretisation), so it lies
    in the bracket; the certificate the answer writes is replace.*, re-proved by verify."""
    ref = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4)
    ref.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.25, dpa.GaussianDpEvent(2.0)), 8))
    ref.compose(dpa.GaussianDpEvent(8.0))
    ans = dpverify.epsilon(TREE, "1e-5", neighboring="replace-one")
    assert ans.enclosure.lo_fraction < F(ref.get_epsilon(1e-5)) < ans.enclosure.hi_fraction
    d = dpverify.delta(TREE, "2", neighboring="replace-one")
    assert d.enclosure.lo_fraction < F(ref.get_delta(2.0)) < d.enclosure.hi_fraction
    for a, kw in ((ans, {"delta": "1e-5"}), (d, {"eps": "2"})):
        cert = answer_certificate(TREE, a, **kw)
        assert cert["claim"]["quantity"].startswith("replace.") and "confirmed" in verify_certificate(cert)
        # the enclosure's ends are the certificate's decimals rounded outward at 256 bits
        assert 0 <= F(cert["result"]["enclosure"]["lo"]) - a.enclosure.lo_fraction < F(1, 2**240)
        assert 0 <= a.enclosure.hi_fraction - F(cert["result"]["enclosure"]["hi"]) < F(1, 2**240)
        bad = copy.deepcopy(cert)
        bad["result"]["enclosure"]["lo"] = repr(float(cert["result"]["lower"]["hi"]) * 1.01)
        bad["digest"] = compute_digest(bad)
        with pytest.raises(REFUSED):
            verify_certificate(bad)
    # the dp_accounting adapter answers the very same bracket (one copy of the rules)
    acc = CertifiedPLDAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.25, dpa.GaussianDpEvent(2.0)), 8))
    acc.compose(dpa.GaussianDpEvent(8.0))
    assert acc.enclosure(delta="1e-5").to_json() == ans.enclosure.to_json()


def test_claims_on_the_bracket():
    ans = dpverify.epsilon(TREE, "1e-5", neighboring="replace-one")
    lo, hi = ans.enclosure.lo_fraction, ans.enclosure.hi_fraction
    for claimed, want in ((lo * F(9, 10), "fails"), (hi + F(1, 10**6), "holds"), ((lo + hi) / 2, "undecided")):
        text = f"{claimed.numerator}/{claimed.denominator}"
        verdict, a = dpverify.check_claim(TREE, text, "1e-5", neighboring="replace-one")
        assert verdict.outcome.value == want and a.is_bracket
        cert = claim_certificate(TREE, verdict, a, "replace-one", claimed_eps=text, delta="1e-5")
        assert cert["claim"]["quantity"] == "replace.claim" and cert["result"]["verdict"] == want
        assert "confirmed" in verify_certificate(cert)


def test_refusals_name_the_public_route():
    # the compiled plan has no pair; its refusal names the functions that answer the bracket
    with pytest.raises(Unsupported, match=r"dpverify\.epsilon / dpverify\.delta"):
        plan(ONE, "replace-one")
    # a tree neither route covers: refused by epsilon itself, with both reasons
    bad = E.Composed((ONE, E.ZCDp(F(1, 10), F(0))))
    with pytest.raises(Unsupported, match="does not cover the tree either"):
        dpverify.epsilon(bad, "1e-5", neighboring="replace-one")
    # add-remove is unchanged: the tight pair's enclosure, no bracket labels
    a = dpverify.epsilon(ONE, "1e-3", neighboring="add-remove")
    assert not a.is_bracket and a.lower_end is None

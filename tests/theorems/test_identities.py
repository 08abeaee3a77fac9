"""Reversal identities and LT Thm 5.1 / AFA Lemma 19 as exact property tests
over random rational pmfs (hypothesis); each checked statement also becomes a
certificate under DPVERIFY_CERT_DIR (re-checked on mpmath by `make test`)."""

from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpverify.certificate import verdict_certificate, verify_certificate
from dpverify.theorems.identities import IDENTITIES, residual, tradeoff
from dpverify.verdict import Outcome, Verdict

from ..certs import record


@st.composite
def pmf(draw, n, allow_zero=True):
    lo = 0 if allow_zero else 1
    w = draw(st.lists(st.integers(lo, 30), min_size=n, max_size=n))
    assume(sum(w) > 0)
    return [Fraction(x, sum(w)) for x in w]


@st.composite
def pairs(draw, allow_zero=True):
    n = draw(st.integers(1, 6))
    return draw(pmf(n, allow_zero)), draw(pmf(n, allow_zero))


ratios = st.fractions(min_value=Fraction(1, 50), max_value=50, max_denominator=50)


def _check(identity, P, Q, *args):
    r = residual(identity, P, Q, *args)
    assert r == 0, f"{identity}: residual {r}"
    cert = certificate(identity, P, Q, args)
    record(cert)
    return cert


def certificate(identity, P, Q, args):
    names = {"lt-thm5.1": ["r", "lam"], "lt-eq21": ["q"], "lt-eq12": ["beta"]}.get(identity, ["r"])
    return verdict_certificate(
        quantity="finite.identity",
        statement=f"{identity} holds exactly for these rational pmfs (residual 0)",
        source=IDENTITIES[identity][0],
        inputs={"identity": identity, "P": [str(x) for x in P], "Q": [str(x) for x in Q],
                **{k: str(v) for k, v in zip(names, args)}},
        verdict=Verdict(Outcome.HOLDS, "exact residual 0"),
        enclosure=None,
        algorithm="exact rational arithmetic on the pmfs",
    )


@given(pairs(), ratios)
def test_lt_eq7_profile_reversal(pq, r):
    _check("lt-eq7", *pq, r)


@given(pairs(), ratios)
def test_afa_lemma46_hockey_stick_reversal(pq, a):
    _check("afa-lemma46", *pq, a)


@given(pairs(), ratios)
def test_afa_lemma19_hockey_stick_from_pld_cdfs(pq, a):
    _check("afa-lemma19", *pq, a)


@given(pairs(), ratios)
def test_lt_eq19_pld_reversal(pq, r):
    _check("lt-eq19", *pq, r)


@given(pairs(allow_zero=False), st.integers(2, 6))
def test_lt_eq21_renyi_reversal(pq, q):
    _check("lt-eq21", *pq, Fraction(q))


@given(pairs(), st.fractions(min_value=0, max_value=1, max_denominator=60))
def test_lt_eq12_tradeoff_reversal(pq, beta):
    _check("lt-eq12", *pq, beta)


@given(pairs(), ratios, st.fractions(min_value=Fraction(1, 20), max_value=1, max_denominator=20))
def test_lt_thm51_poisson_subsampling(pq, r, lam):
    _check("lt-thm5.1", *pq, r, lam)


def test_tradeoff_known_values():
    # randomized response p = 3/4: f(alpha) = 1 - 3 alpha for alpha <= 1/4
    # (reject the outcome q favours, randomised), then (1 - alpha)/3
    P, Q = [Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]
    assert tradeoff(P, Q, Fraction(0)) == 1
    assert tradeoff(P, Q, Fraction(1, 8)) == Fraction(5, 8)
    assert tradeoff(P, Q, Fraction(1, 4)) == Fraction(1, 4)
    assert tradeoff(P, Q, Fraction(1)) == 0


def test_identity_checks_can_fail():
    # a wrong right-hand side must give a non-zero residual: LT eq. 7 with the
    # sign of e^eps flipped is false for this pair
    P, Q = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4)]
    r = Fraction(2)
    from dpverify.mechanisms.finite import FiniteMechanism

    m = FiniteMechanism.of(P, Q)
    assert m.reversed().delta_exact(r) != 1 + r - r * m.delta_exact(1 / r)
    assert residual("lt-eq7", P, Q, r) == 0


def test_identity_certificates_verify_and_reject_forgeries():
    import copy

    from dpverify.certificate import compute_digest
    from dpverify.errors import CertificateRejected

    P, Q = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4)]
    cert = certificate("lt-thm5.1", P, Q, (Fraction(3, 2), Fraction(1, 3)))
    assert "confirmed" in verify_certificate(cert)
    # a false statement dressed as 'holds': the identity with a wrong pmf sum
    bad = copy.deepcopy(cert)
    bad["inputs"]["identity"] = "lt-eq7-wrong-sign"
    bad["digest"] = compute_digest(bad)
    with pytest.raises(Exception):
        verify_certificate(bad)
    forged = copy.deepcopy(cert)
    forged["result"]["verdict"] = "fails"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_tradeoff_reversal_at_beta_zero_with_a_zero_mass_outcome():
    # found by the DPVERIFY_CERT_DIR run: the inverse at beta = 0 is P(Q > 0) = 39/41,
    # which the mpmath re-checker first missed by comparing f = 1e-60 with 0
    P = [Fraction(17, 41), Fraction(6, 41), Fraction(2, 41), Fraction(16, 41)]
    Q = [Fraction(17, 39), Fraction(2, 13), Fraction(0), Fraction(16, 39)]
    cert = _check("lt-eq12", P, Q, Fraction(0))
    assert "confirmed" in verify_certificate(cert)


@pytest.mark.parametrize("identity, args, verdict", [
    # afa-lemma19 at a = -1e-41: sum (p - a q)_+ = 1 + a/2 while the proof's F - a G (the classes
    # with a q <= p) gives 1 - a/2 + ... : residual -a/2 = 5e-42, outside the lemma (a = e^-eps > 0)
    ("afa-lemma19", (Fraction(-1, 10**41),), "holds"),
    ("lt-eq12", (Fraction(-1),), "fails"),  # beta = -1: "LT eq. 12 fails" would be a false refutation
    ("lt-eq12", (Fraction(2),), "holds"),
    ("lt-thm5.1", (Fraction(-5), Fraction(1, 2)), "holds"),
])
def test_identities_outside_their_sources_domain_are_refused(identity, args, verdict):
    """An adversarial review had verify accept these (a tolerance of 1e-40 on the residual and
    no domain checks). Each source states its identity for r = e^eps > 0, beta in [0, 1],
    lam in (0, 1]; the producer refuses such parameters too (exit 2), and so does verify (exit 2,
    certificate/ranges.py, naming the input and its range; exit 1 before issue 22's one contract)."""
    from dpverify.certificate import compute_digest
    from dpverify.errors import InvalidParameter, MalformedCertificate

    P, Q = [Fraction(1), Fraction(0)], [Fraction(1, 2), Fraction(1, 2)]
    with pytest.raises(InvalidParameter):
        residual(identity, P, Q, *args)
    cert = certificate(identity, P, Q, args)
    cert["result"]["verdict"] = verdict
    cert["digest"] = compute_digest(cert)
    with pytest.raises(MalformedCertificate, match="outside the producer's range"):
        verify_certificate(cert)


def test_gdp_thm51_at_a_negative_eps0_is_refused():
    """No mechanism is eps0-DP for eps0 < 0, and mu-GDP needs mu >= 0: the review's forged
    'eps0 = -1 implies mu = -1.232-GDP' (the genuine eps0 = 1 certificate with its signs
    flipped, no digits input) was accepted."""
    import json
    from pathlib import Path

    from dpverify.certificate import compute_digest
    from dpverify.errors import CertificateRejected

    cert = json.loads(Path("certificates/gdpt-thm5.1-eps1.json").read_text())
    cert["inputs"] = {"eps0": "-1"}
    cert["result"]["enclosure"] = {"lo": "-1.232035385344902204891058", "hi": "-1.232035385344899740820287"}
    cert["claim"]["relation"].update(lo="-1.232036387", hi="-1.232035385")
    cert["digest"] = compute_digest(cert)
    with pytest.raises(CertificateRejected, match="not the shipped claim"):
        verify_certificate(cert)  # the shipped record gdpt-thm5.1-eps1 is stated at eps0 = 1
    cert["claim"]["id"] = "a-claim-file-of-its-own"  # words not bound to the registry: the domain refuses
    cert["digest"] = compute_digest(cert)
    with pytest.raises(CertificateRejected, match="outside GDPT Thm 5.1"):
        verify_certificate(cert)


def test_reproduce_inputs_are_inputs_of_the_certificate_kind():
    """A claims record's inputs become its certificate's inputs: every key a reproduce quantity
    reads must be one its certificate kind takes (KIND_INPUTS), or the writer would refuse it."""
    from dpverify.certificate.format import ALL_MECHANISM_OPTIONS, KIND_INPUTS, MECHANISM_KINDS
    from dpverify.theorems.quantities import QUANTITIES

    for name, q in QUANTITIES.items():
        allowed = KIND_INPUTS[name] | (ALL_MECHANISM_OPTIONS if name in MECHANISM_KINDS else frozenset())
        assert set(q.required + q.optional) <= allowed, (name, set(q.required + q.optional) - allowed)

"""eps(delta) = inf of a tree whose composed pair keeps more than delta of P-mass at loss
+inf ((eps0, delta0) leaves): answered [inf, inf] without a grid and re-proved by verify.

The independent routes: the hockey-stick divergence of the composed randomized-response
pairs enumerated atom by atom in mpmath at 50 digits (the curve never drops below
1 - (1 - delta0)^T, so no finite eps meets a delta below it), and exact rationals for the
mass at +inf itself."""

from __future__ import annotations

import copy
import itertools
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.certificate.events_cert import answer_certificate
from dpverify.certificate.writer import compute_digest
from dpverify.errors import CertificateRejected, CouldNotReprove
from dpverify.events import api
from dpverify.events.dispatch import compile_event
from dpverify.recheck.verify import verify_certificate

LEAF = {"type": "epsilon_delta", "epsilon": "1/2", "delta": "1/10"}
THREE = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 3, "event": LEAF}}
WITH_GAUSS = {"neighboring": "add-remove", "events": [
    {"type": "epsilon_delta", "epsilon": "1", "delta": "1e-5"}, {"type": "gaussian", "noise_multiplier": "2"}]}
SAMPLED = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 10, "event": {
    "type": "poisson_sampled", "sampling_probability": "1/10",
    "event": {"type": "epsilon_delta", "epsilon": "1", "delta": "1e-5"}}}}


def _brute_delta(eps: mpmath.mpf, e0: mpmath.mpf, d0: mpmath.mpf, T: int) -> mpmath.mpf:
    """delta(eps) of T composed (eps0, delta0) pairs (LT Thm 4.5): P-masses (d0, (1-d0) s,
    (1-d0)(1-s), 0) at losses (+inf, e0, -e0, -inf), Q the mirror, s = e^e0 / (1 + e^e0);
    sup over events of P(S) - e^eps Q(S) = sum over outcomes of (p - e^eps q)_+."""
    s = mpmath.exp(e0) / (1 + mpmath.exp(e0))
    P = [d0, (1 - d0) * s, (1 - d0) * (1 - s), mpmath.mpf(0)]
    Q = P[::-1]
    total = mpmath.mpf(0)
    for idx in itertools.product(range(4), repeat=T):
        p = mpmath.fprod(P[i] for i in idx)
        q = mpmath.fprod(Q[i] for i in idx)
        total += max(p - mpmath.exp(eps) * q, 0)
    return total


def test_the_curve_stays_above_the_mass_at_infinity_by_enumeration():
    with mpmath.workdps(50):
        floor = 1 - (1 - mpmath.mpf(1) / 10) ** 3  # 0.271, the composed P(L = +inf)
        for eps in ("0", "1", "1.5", "10", "100"):
            d = _brute_delta(mpmath.mpf(eps), mpmath.mpf("0.5"), mpmath.mpf("0.1"), 3)
            assert d >= floor - mpmath.mpf(10) ** -45
        # at eps >= 3 eps0 the finite part is gone: delta(eps) = P(L = +inf) exactly, so
        # eps(0.271) = 1.5 is finite (the boundary case is not an infinite answer)
        assert abs(_brute_delta(mpmath.mpf("1.5"), mpmath.mpf("0.5"), mpmath.mpf("0.1"), 3) - floor) < \
            mpmath.mpf(10) ** -45


def test_mass_at_infinity_per_direction_is_the_exact_rational():
    # remove: each step keeps q delta0 at +inf; add: (1-q) P + q Q > 0 wherever P > 0, none
    exact = 1 - (1 - F(1, 10) * F(1, 10**5)) ** 10
    below, above = exact * (1 - F(1, 10**40)), exact * (1 + F(1, 10**40))
    plan = compile_event(*api.resolve(SAMPLED))
    assert api._infinite_mass_beyond(plan, below)[0] == "remove"
    assert api._infinite_mass_beyond(plan, above) is None
    add = compile_event(*api.resolve(dict(SAMPLED, neighboring="add")))
    assert api._infinite_mass_beyond(add, F(1, 10**300)) is None


def _cert(doc, delta):
    ans = api.epsilon(doc, delta, digits=4)
    return answer_certificate(api.as_event(doc)[0], ans, delta=delta, digits=4)


@pytest.mark.parametrize("doc, delta", [
    (THREE, "0.27"),                          # below 0.271 = 1 - 0.9^3
    (WITH_GAUSS, "0.000009999999999999999999999999"),  # 1e-30 relative below delta0
    (SAMPLED, "9.9999e-6"),                   # below 1 - (1 - 1e-6)^10 = 9.999955e-6
])
def test_infinite_answer_is_written_and_re_proved(doc, delta):
    cert = _cert(doc, delta)
    assert cert["result"]["enclosure"] == {"lo": "inf", "hi": "inf"}
    assert "grid" not in cert["result"] and "P(L = +inf)" in cert["result"]["note"]
    assert "confirmed (independent enclosure [+inf, +inf])" in verify_certificate(cert)


def test_finite_enclosure_where_eps_is_infinite_is_refused():
    cert = _cert(WITH_GAUSS, "2e-5")  # finite: delta above delta0
    assert cert["result"]["enclosure"]["hi"] != "inf"
    bad = copy.deepcopy(cert)
    bad["inputs"]["delta"] = "0.000001"
    bad["result"]["quantity"] = "epsilon(delta=0.000001)"
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(bad)


def test_infinite_enclosure_where_eps_is_finite_is_not_accepted():
    # 9.99999e-6 > 1 - (1 - 1e-6)^10: a finite eps meets it, so [inf, inf] is false
    cert = _cert(SAMPLED, "9.9999e-6")
    bad = copy.deepcopy(cert)
    bad["inputs"]["delta"] = "0.00000999999"
    bad["result"]["quantity"] = "epsilon(delta=0.00000999999)"
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected) as err:
        verify_certificate(bad, budget_seconds=60)
    assert isinstance(err.value, CouldNotReprove) or "disjoint" in str(err.value)

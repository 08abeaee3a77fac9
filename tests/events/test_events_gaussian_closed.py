"""Event trees whose every step is a Gaussian at sampling rate 1: the events re-check answers in
closed form (recheck.events._closed_bounds, through recheck.pld.gaussian_bounds).

T_i Gaussian steps of noise multiplier z_i compose to one Gaussian pair of shift mu,
mu^2 = sum T_i (c / z_i)^2 (c = 1 under add, remove and replace-special, 2 under replace-one),
whose curve is delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). The grid route
could not resolve it at large T: 10^6 x gaussian at sigma 1000, delta(1) to 4 digits (adv48 M4)
answered exit 3 after 62 CPU s. The references are mpmath at 130 digits (its own Phi, a bisection
of its own for eps(delta)).
"""

from __future__ import annotations

import copy
from fractions import Fraction

import mpmath
import pytest

from dpverify.certificate.events_cert import answer_certificate
from dpverify.events import api
from dpverify.recheck import events as R

from ..certs import outcome, reseal
from ..reference import gaussian_delta, gaussian_eps

G = {"type": "gaussian", "noise_multiplier": "100"}


def _ref_delta(mu2: Fraction, eps: Fraction) -> mpmath.mpf:
    return gaussian_delta(mu2, eps)


def _ref_eps(mu2: Fraction, delta: Fraction) -> mpmath.mpf:
    return gaussian_eps(mu2, delta, hi=200, steps=460)


# (document, query, mu^2 of the composed pair)
CASES = [
    # the reproducer's shape, smaller: 10^4 x gaussian sigma 100 (mu = 1), delta(1)
    ({"neighboring": "add-remove", "event": {"type": "self_composed", "count": 10**4, "event": G}},
     {"eps": "1"}, Fraction(1)),
    # a Poisson rate of 1 is no sampling; equal leaves met twice are one leaf repeated
    ({"neighboring": "add", "event": {"type": "composed", "events": [
        {"type": "self_composed", "count": 30, "event": {"type": "gaussian", "noise_multiplier": "5"}},
        {"type": "poisson_sampled", "sampling_probability": "1", "event": {"type": "gaussian", "noise_multiplier": "2"}},
        {"type": "gaussian", "noise_multiplier": "5"}]}},
     {"delta": "1e-6"}, Fraction(31, 25) + Fraction(1, 4)),
    # replace-one: the pair N(0, 1) vs N(2/z, 1); the whole dataset without replacement is the same pair
    ({"neighboring": "replace-one", "event": {"type": "composed", "events": [
        {"type": "self_composed", "count": 50, "event": {"type": "gaussian", "noise_multiplier": "20"}},
        {"type": "sampled_without_replacement", "source_dataset_size": 7, "sample_size": 7,
         "event": {"type": "gaussian", "noise_multiplier": "4"}}]}},
     {"delta": "1e-5"}, 50 * Fraction(2, 20) ** 2 + Fraction(2, 4) ** 2),
    ({"neighboring": "replace-special", "event": {"type": "self_composed", "count": 9, "event":
        {"type": "gaussian", "noise_multiplier": "3/2"}}},
     {"eps": "1/2"}, 9 * Fraction(2, 3) ** 2),
]


def _cert(doc: dict, query: dict) -> dict:
    ans = (api.epsilon if "delta" in query else api.delta)(doc, *query.values(), digits=4)
    return answer_certificate(api.as_event(doc)[0], ans, **query, digits=4)


def _grid(monkeypatch) -> None:
    """The producer as it was before it took the closed form (the grid route's certificates)."""
    monkeypatch.setattr(api, "closed_ends", lambda *a, **k: None)


def _with_ends(cert: dict, lo: mpmath.mpf, hi: mpmath.mpf) -> dict:
    """The certificate with enclosure [lo, hi] and a relative_width that fits it, re-sealed: what
    refuses it is the second route, not the width field."""
    bad = copy.deepcopy(cert)
    with mpmath.workdps(40):
        bad["result"]["enclosure"] = {"lo": mpmath.nstr(lo, 30), "hi": mpmath.nstr(hi, 30)}
        bad["result"]["relative_width"] = mpmath.nstr((mpmath.mpf(bad["result"]["enclosure"]["hi"])
                                                       - mpmath.mpf(bad["result"]["enclosure"]["lo"]))
                                                      / mpmath.mpf(bad["result"]["enclosure"]["lo"]), 3)
    return reseal(bad)


def _truth(query: dict, mu2: Fraction) -> mpmath.mpf:
    if "eps" in query:
        return _ref_delta(mu2, Fraction(query["eps"]))
    return _ref_eps(mu2, Fraction(query["delta"]))


@pytest.mark.parametrize("doc,query,mu2", CASES)
def test_the_route_answers_in_closed_form_around_mpmath(doc, query, mu2) -> None:
    """One call of the route's bounds at the coarsest grid (2^-8) encloses mpmath's value to 1e-30
    (a grid gives about 1e-3 there)."""
    kind, target = ("delta", query["eps"]) if "eps" in query else ("eps", query["delta"])
    inputs = {**doc, **query}
    with mpmath.workdps(40):
        t = mpmath.mpf(Fraction(target).numerator) / Fraction(target).denominator
        lo, hi = R._bounds(inputs, kind, t, t if kind == "eps" else mpmath.mpf(1), t, 8)
    ref = _truth(query, mu2)
    with mpmath.workdps(130):
        assert lo <= ref <= hi
        assert hi - lo <= ref * mpmath.mpf(10) ** -30


@pytest.mark.parametrize("doc,query,mu2", CASES)
@pytest.mark.parametrize("producer", ["closed", "grid"])
def test_genuine_certificates_confirm_and_ends_moved_1e_12_past_the_truth_are_refused(doc, query, mu2, producer,
                                                                                        monkeypatch) -> None:
    """The producer's certificate is confirmed, in closed form (method "closed form", the
    producer's answer now) and from the grid (its bytes before); an enclosure 1e-12 (relative) wide
    around the truth is confirmed too (the grid route could only answer exit 3 there); each end moved
    1e-12 past the truth is refused, exit 1."""
    if producer == "grid":
        _grid(monkeypatch)
    cert = _cert(doc, query)
    assert cert["result"]["method"] == ("closed form" if producer == "closed" else "pld")
    assert outcome(cert) == 0
    ref = _truth(query, mu2)
    with mpmath.workdps(130):
        lo, hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
        assert lo <= ref <= hi and hi - lo <= ref * mpmath.mpf(10) ** -4
    w = mpmath.mpf(10) ** -12
    with mpmath.workdps(40):
        assert outcome(_with_ends(cert, ref * (1 - w), ref * (1 + w))) == 0
        assert outcome(_with_ends(cert, ref * (1 + w), ref * (1 + 2 * w))) == 1
        assert outcome(_with_ends(cert, ref * (1 - 2 * w), ref * (1 - w))) == 1


@pytest.mark.parametrize("event", [
    # one leaf at q < 1
    {"type": "composed", "events": [G, {"type": "poisson_sampled", "sampling_probability": "1/2", "event": G}]},
    # a Laplace step
    {"type": "composed", "events": [G, {"type": "laplace", "noise_multiplier": "3"}]},
    # (eps, delta)-DP leaf
    {"type": "composed", "events": [G, {"type": "epsilon_delta", "epsilon": "1/10", "delta": "0"}]},
])
def test_a_tree_with_another_step_does_not_take_the_closed_form(event, monkeypatch) -> None:
    """Only a tree whose every step is a rate-1 Gaussian is answered in closed form: one other step
    (here a Poisson rate 1/2, a Laplace or an (eps, delta) leaf) leaves the grid route to answer."""
    tree = R._flat(event, "add-remove")
    assert tree.closed is None
    assert R._closed_bounds(tree, {"eps": "1"}, "delta", mpmath.mpf(1), ["remove", "add"]) is None

    def never(*a, **k):
        raise AssertionError("the closed form was taken")

    monkeypatch.setattr(R, "gaussian_bounds", never)
    with mpmath.workdps(40):
        lo, hi = R._bounds({"neighboring": "add-remove", "event": event, "eps": "1"}, "delta", mpmath.mpf(1),
                           mpmath.mpf(1), mpmath.mpf(1), 8)
    assert 0 <= lo <= hi


def test_the_closed_shifts_are_read_per_relation() -> None:
    """(1 / z, times) per rate-1 Gaussian step; the whole dataset without replacement is such a
    step under replace-one only (under add/remove it is refused, no theorem covers it)."""
    wor = {"type": "sampled_without_replacement", "source_dataset_size": 5, "sample_size": 5,
           "event": {"type": "gaussian", "noise_multiplier": "4"}}
    tree = R._flat({"type": "self_composed", "count": 3, "event": {"type": "composed", "events": [G, wor]}},
                   "replace-one")
    assert sorted(tree.closed) == [(Fraction(1, 100), 3), (Fraction(1, 4), 3)]
    laplace_wor = dict(wor, event={"type": "laplace", "noise_multiplier": "4"})
    assert R._flat({"type": "composed", "events": [G, laplace_wor]}, "replace-one").closed is None
    # a zCDP leaf or a non-private step is never a Gaussian pair
    assert R._flat({"type": "composed", "events": [G, {"type": "zcdp", "rho": "1", "xi": "0"}]},
                   "add-remove").closed is None


def test_the_rate_one_gaussian_steps_are_one_record_read_two_ways() -> None:
    """_Tree records each rate-1 Gaussian step once (rate_one); the zCDP sum (gauss) and the closed form
    (closed) read it. They differ on the whole dataset without replacement under replace-one only, which
    the closed form takes (shift 2 / z) and the zCDP sum leaves out (a sampled step: the zCDP route refuses
    the tree, tree.others)."""
    wor = {"type": "sampled_without_replacement", "source_dataset_size": 5, "sample_size": 5,
           "event": {"type": "gaussian", "noise_multiplier": "4"}}
    p1 = {"type": "poisson_sampled", "sampling_probability": "1", "event": {"type": "gaussian", "noise_multiplier": "2"}}
    tree = R._flat({"type": "composed", "events": [G, wor, p1]}, "replace-one")
    assert tree.rate_one == [(Fraction(100), 1, False), (Fraction(4), 1, True), (Fraction(2), 1, False)]
    assert tree.gauss == [(Fraction(100), 1), (Fraction(2), 1)] and tree.others
    assert tree.closed == [(Fraction(1, 100), 1), (Fraction(1, 4), 1), (Fraction(1, 2), 1)]
    zc = R._flat({"type": "composed", "events": [G, {"type": "zcdp", "rho": "1", "xi": "0"}]}, "add-remove")
    assert zc.gauss == [(Fraction(100), 1)] and zc.closed is None and not zc.others


@pytest.mark.parametrize("producer", ["closed", "grid"])
def test_claims_at_rate_one_are_decided_and_confirmed(producer, monkeypatch) -> None:
    """events.claim of 10^4 x gaussian sigma 100 (mu = 1) at delta 1e-5: eps(1e-5) = 4.37717809568...
    (mpmath below); a claim 1e-4 either side of it holds / fails, and verify confirms the verdict."""
    from dpverify.certificate.events_cert import claim_certificate

    if producer == "grid":
        _grid(monkeypatch)
    doc = CASES[0][0]
    ref = _ref_eps(Fraction(1), Fraction(1, 10**5))
    for shift, want in ((mpmath.mpf("1e-4"), "holds"), (-mpmath.mpf("1e-4"), "fails")):
        with mpmath.workdps(40):
            claimed = mpmath.nstr(ref + shift, 12)
        verdict, ans = api.check_claim(doc, claimed, "1e-5")
        assert verdict.outcome.value == want
        cert = claim_certificate(api.as_event(doc)[0], verdict, ans, "add-remove", claimed_eps=claimed, delta="1e-5")
        assert outcome(cert) == 0

"""CertifiedPLDAccountant against dp_accounting's own accountant interface
(the expectations of dp_accounting's privacy_accountant_test: supports on
self-composed events, compose with a count, get_epsilon / get_delta)."""

import math

import dp_accounting as dpa
import pytest
from dp_accounting import dp_event as dpe

from dpverify.accountants.dp_accounting_adapter import FLOAT_AFFORD_POINTS, CertifiedPLDAccountant

NR = dpa.NeighboringRelation


def test_is_a_real_privacy_accountant_and_supports_self_composed_events():
    acc = CertifiedPLDAccountant()
    assert isinstance(acc, dpa.PrivacyAccountant)
    ev = dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(2.0))
    assert acc.supports(ev) and acc.supports(dpa.SelfComposedDpEvent(ev, 10))
    assert acc.supports(dpa.ComposedDpEvent([ev, dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(3.0), 2)]))
    assert not acc.supports(dpe.SingleEpochTreeAggregationDpEvent(1.0, 3))
    assert not acc.supports(dpa.UnsupportedDpEvent())
    with pytest.raises(dpa.UnsupportedEventError):
        acc.compose(dpa.UnsupportedDpEvent())
    assert CertifiedPLDAccountant(NR.REPLACE_ONE).supports(ev)  # Poisson, replace-one: group privacy
    rr = dpa.ComposedDpEvent([ev, dpa.RandomizedResponseDpEvent(0.1, 3)])
    assert not CertifiedPLDAccountant(NR.REPLACE_ONE).supports(rr)  # no add/remove pair for RR: refused


def test_compose_count_equals_self_composed_and_epsilon_is_rounded_up():
    ev = dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(2.0))
    a, b = CertifiedPLDAccountant(), CertifiedPLDAccountant()
    a.compose(ev, 10)
    b.compose(dpa.SelfComposedDpEvent(ev, 10))
    ea, eb = a.get_epsilon(1e-5), b.get_epsilon(1e-5)
    assert ea == eb
    # the float is the upper end of the enclosure it was computed from (narrower than
    # rel_width where the grid is cheap: FLOAT_AFFORD_POINTS), rounded up to a float
    enc = a.answer(delta=1e-5, afford_length=FLOAT_AFFORD_POINTS).enclosure
    assert float(enc.hi.mid()) <= ea < float(enc.hi.mid()) * (1 + 1e-12)
    ref = dpa.pld.PLDAccountant()
    ref.compose(ev, 10)
    assert abs(ea - ref.get_epsilon(1e-5)) < 1e-3 * ea
    d = a.get_delta(ea)
    assert d <= 1e-5 * (1 + 1e-3)
    assert a.check(ea * 1.01, 1e-5).holds
    cert = a.certificate(delta=1e-5)
    assert cert["claim"]["quantity"] == "events.epsilon"
    assert "2C" in cert["inputs"]["sensitivity_convention"]


def test_a_certificate_verify_could_not_re_prove_is_not_handed_out(monkeypatch):
    # the library's certificate keeps the CLI's write-time contract (writer.handed_out): one verify
    # accepts is returned; with verify's work cap below the price of its grid (the writer's price,
    # recheck.pld / recheck.events recorded_grid_price), none is (before: returned all the same, and
    # verify answered exit 3)
    from dpverify.errors import PrecisionExhausted
    from dpverify.recheck import limits
    from dpverify.recheck.verify import confirm

    acc = CertifiedPLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(2.0)), 10)
    confirm(acc.certificate(delta=1e-5), budget_seconds=0)
    monkeypatch.setattr(limits, "PLD_MAX_GRID_WORK", 1)
    with pytest.raises(PrecisionExhausted, match="no events.epsilon certificate returned: it needs the grid 2"):
        acc.certificate(delta=1e-5)


def test_empty_and_non_private():
    acc = CertifiedPLDAccountant()
    assert acc.get_epsilon(1e-5) == 0
    acc.compose(dpa.NonPrivateDpEvent())
    assert acc.get_epsilon(1e-5) == math.inf and acc.get_delta(1.0) == 1.0


def test_randomized_response_count_is_honoured():
    """dp_accounting 0.6's PLDAccountant drops ``count`` for randomized response
    (it composes the PLD once); the certified accountant composes it 10 times:
    10 steps of RR(1/2, 4) at eps = log 5 give delta >= P(two 'x' outputs...) > 0."""
    ev = dpa.SelfComposedDpEvent(dpa.RandomizedResponseDpEvent(0.5, 4), 10)
    acc = CertifiedPLDAccountant(NR.REPLACE_ONE)
    acc.compose(ev)
    ref = dpa.pld.PLDAccountant(NR.REPLACE_ONE)
    ref.compose(ev)
    assert acc.get_epsilon(1e-5) > 9 * ref.get_epsilon(1e-5)


# ----------------------------------------------------------------- replace-one under Poisson sampling
# One Poisson-sampled Gaussian step (rate q, noise 1), checked in mpmath against closed forms:
# Phi-tails of the mixtures at the crossing point x* where the privacy loss equals a.

def _hockey(a, q):
    from mpmath import exp, findroot, log, mpf, ncdf

    q = mpf(q)
    # remove: P = (1-q) N(0,1) + q N(1,1), Q = N(0,1); loss log(1-q + q e^(x - 1/2)) increasing
    xr = mpf(1) / 2 + log((exp(a) - (1 - q)) / q)
    rem = (1 - q) * ncdf(-xr) + q * ncdf(1 - xr) - exp(a) * ncdf(-xr)
    # add: P = N(0,1), Q = the mixture; loss -log(1-q + q e^(x - 1/2)) decreasing
    add = mpf(0)
    if exp(-a) > 1 - q:
        xa = mpf(1) / 2 + log((exp(-a) - (1 - q)) / q)
        add = ncdf(xa) - exp(a) * ((1 - q) * ncdf(xa) + q * ncdf(xa - 1))
    # a realised replace pair (x = -1 replaced by x' = +1): P = (1-q) N(0) + q N(-1), Q = (1-q) N(0) + q N(1)
    loss = lambda x: log(1 - q + q * exp(-x - mpf(1) / 2)) - log(1 - q + q * exp(x - mpf(1) / 2))  # noqa: E731
    xs = findroot(lambda x: loss(x) - a, 0)
    rep = ((1 - q) * ncdf(xs) + q * ncdf(xs + 1)) - exp(a) * ((1 - q) * ncdf(xs) + q * ncdf(xs - 1))
    return rem, add, rep


def test_poisson_gaussian_under_replace_one_is_bracketed_by_group_privacy():
    """get_delta(eps) is the group-privacy bound (1 + e^(eps/2)) delta_AR(eps/2) (Dwork-Roth
    Thm 2.2 through D minus x), and at least the delta of a realised replace pair."""
    from mpmath import exp, mp, mpf

    mp.dps = 30
    acc = CertifiedPLDAccountant(NR.REPLACE_ONE)
    acc.compose(dpe.PoissonSampledDpEvent(0.25, dpe.GaussianDpEvent(1.0)))
    eps = mpf(1)
    rem, add, _ = _hockey(eps / 2, mpf(0.25))
    bound = (1 + exp(eps / 2)) * max(rem, add)
    got = acc.get_delta(1.0)
    assert bound <= got <= bound * (1 + 3e-3)
    assert got >= _hockey(eps, mpf(0.25))[2]  # the realised pair's delta is a lower bound of the truth
    enc = acc.enclosure(eps=1)
    rem1 = _hockey(eps, mpf(0.25))[0]
    assert float(enc.lo.mid()) <= rem1 <= float(enc.hi.mid())  # the lower end: the remove curve's


def test_poisson_gaussian_under_replace_one_epsilon_and_verdicts():
    acc = CertifiedPLDAccountant(NR.REPLACE_ONE)
    acc.compose(dpe.PoissonSampledDpEvent(0.25, dpe.GaussianDpEvent(1.0)))
    e = acc.get_epsilon(1e-3)
    # the upper end meets delta at half of it by group privacy: (1 + e^(e/2)) delta_AR(e/2) <= 1e-3
    from mpmath import exp, mpf

    rem, add, rep = _hockey(mpf(e) / 2, mpf(0.25))
    assert (1 + exp(mpf(e) / 2)) * max(rem, add) <= 1e-3
    assert _hockey(mpf(e), mpf(0.25))[2] <= 1e-3  # and the realised pair does not contradict it
    assert acc.check(e, 1e-3).outcome.value == "holds"
    lo = float(acc.enclosure(delta=1e-3).lo.mid())
    assert acc.check(lo * 0.99, 1e-3).outcome.value == "fails"
    from dpverify.certificate import verify_certificate

    cert = acc.certificate(delta=1e-3)  # the bracket as kind replace.epsilon, re-proved by verify
    assert cert["claim"]["quantity"] == "replace.epsilon" and "confirmed" in verify_certificate(cert)
    assert float(cert["result"]["enclosure"]["hi"]) <= e

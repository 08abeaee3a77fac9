"""CertifiedPLDAccountant against dp_accounting's own accountant interface
(the expectations of dp_accounting's privacy_accountant_test: supports on
self-composed events, compose with a count, get_epsilon / get_delta)."""

import math

import dp_accounting as dpa
import pytest
from dp_accounting import dp_event as dpe

from dpverify.accountants.dp_accounting_adapter import CertifiedPLDAccountant

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
    assert not CertifiedPLDAccountant(NR.REPLACE_ONE).supports(ev)  # Poisson, replace-one: refused


def test_compose_count_equals_self_composed_and_epsilon_is_rounded_up():
    ev = dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(2.0))
    a, b = CertifiedPLDAccountant(), CertifiedPLDAccountant()
    a.compose(ev, 10)
    b.compose(dpa.SelfComposedDpEvent(ev, 10))
    ea, eb = a.get_epsilon(1e-5), b.get_epsilon(1e-5)
    assert ea == eb
    enc = a.enclosure(delta=1e-5)
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

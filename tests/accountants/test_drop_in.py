"""The drop-in contract of CertifiedPLDAccountant beyond dp_accounting's own
tests: the ends of the domain (each against a closed form), the reading rule
for float probability vectors (against exact rationals), the unsupported leaf
and the host's wording, and every DpEvent class of dp_accounting either
certified or refused naming what is missing."""

import inspect
import math
import sys
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting import dp_event as d
from dp_accounting import privacy_accountant
from mpmath import log, mp, mpf

from dpverify.accountants.dp_accounting_adapter import CertifiedPLDAccountant, _fraction_float
from dpverify.errors import DpverifyError, InvalidParameter
from dpverify.events.convert import from_dp_event, probability_vector

NR = privacy_accountant.NeighboringRelation


# --------------------------------------------------------------------------- ends of the domain


def test_pure_tree_eps_at_delta_zero_is_the_summed_largest_loss():
    """Randomized response (p, k) under replace-one: the largest loss is
    log((1 - p + p/k) / (p/k)) (output = the true bucket); two RR events and
    three discrete Laplace (a, 1) events (loss at most 2a under replace-one)
    compose to the sum. mpmath at 50 digits on the exact binary inputs."""
    mp.dps = 50
    p, k, a = Fraction(0.3), 5, Fraction(0.25)
    acc = CertifiedPLDAccountant(NR.REPLACE_ONE)
    acc.compose(d.RandomizedResponseDpEvent(0.3, k), 2)
    acc.compose(d.DiscreteLaplaceDpEvent(0.25, 1), 3)
    keep, other = 1 - p + p / k, p / k
    truth = 2 * log(mpf(keep.numerator * other.denominator) / (keep.denominator * other.numerator)) \
        + 3 * 2 * mpf(a.numerator) / a.denominator
    eps0 = acc.get_epsilon(0)
    assert truth <= eps0 <= truth * (1 + mpf(2) ** -50)
    assert acc.get_delta(eps0) == 0.0 and acc.get_delta(eps0 - 0.5) > 0


def test_delta_one_and_eps_infinity():
    acc = CertifiedPLDAccountant()
    acc.compose(d.PoissonSampledDpEvent(0.1, d.GaussianDpEvent(1.0)), 10)
    assert acc.get_epsilon(1) == 0.0  # TV <= 1
    assert acc.get_epsilon(0) == float("inf")  # Gaussian loss is unbounded
    assert acc.get_delta(float("inf")) == 0.0  # P << Q: no mass at +inf
    acc.compose(d.NonPrivateDpEvent())
    assert acc.get_delta(float("inf")) == 1.0 and acc.get_epsilon(1) == float("inf")
    with pytest.raises(ValueError):
        acc.get_epsilon(-1e-9)


def test_an_end_past_the_float_range_is_rounded_in_its_direction_without_overflow():
    """_fraction_float against exact rationals: the smallest float >= f up, the largest
    float <= f down; past DBL_MAX (where float(Fraction) raises OverflowError) +inf up and
    DBL_MAX down, mirrored below -DBL_MAX."""
    big = Fraction(sys.float_info.max)
    for f in (Fraction(1, 3), Fraction(-2, 7), Fraction(1, 10**400), big, -big, Fraction(0)):
        up, down = _fraction_float(f, up=True), _fraction_float(f, up=False)
        assert Fraction(down) <= f <= Fraction(up)
        # adjacent floats (or equal at a float): no float lies strictly between them
        assert up == down if Fraction(up) == f else math.nextafter(down, math.inf) == up
    for f in (big + 1, 2 ** 1074, Fraction(10) ** 400):
        assert _fraction_float(f, up=True) == math.inf and _fraction_float(f, up=False) == sys.float_info.max
        assert _fraction_float(-f, up=True) == -sys.float_info.max and _fraction_float(-f, up=False) == -math.inf


def test_a_loss_supremum_past_the_float_range_is_inf():
    """Laplace of scale 5e-324 = 2^-1074 (sensitivity 1): the largest privacy loss is
    1/b = 2^1074 > DBL_MAX, and eps(0) is that supremum (AFA Lemma 37), so the smallest
    float >= it is +inf (adv39 A2: builtins OverflowError). At delta = 1e-5 the answer is
    inf or a dpverify error, never a builtins exception."""
    assert Fraction(5e-324) == Fraction(1, 2 ** 1074)
    acc = CertifiedPLDAccountant().compose(d.LaplaceDpEvent(5e-324), 1)
    assert acc.get_epsilon(0) == math.inf
    try:
        assert acc.get_epsilon(1e-5) == math.inf
    except DpverifyError:
        pass


def test_best_upper_end_instead_of_precision_exhausted():
    """A width the memory budget cannot reach (delta ~ 2e-8 just below the
    loss supremum, width 1e-4 asked): the upper end of the best enclosure, which
    is >= the closed-form lower bound of test_dp_accounting_suite."""
    acc = CertifiedPLDAccountant()
    acc.compose(d.PoissonSampledDpEvent(0.2, d.LaplaceDpEvent(0.5)), 3)
    assert acc.get_delta(2.46964) >= 1.82e-8


def test_replace_one_past_the_group_privacy_cap_answers_the_proved_supremum():
    """120 Poisson-sampled Laplace(0.5) steps at rate 0.95 under REPLACE_ONE: group
    privacy would need the add/remove curve at eps* ~ 236, past its cap, so the
    bracket has no upper end; the composed loss is at most 2 T lmax with
    lmax = log(1 - q + q e^(1/b)) (group privacy over pure DP), a bound at every
    delta, which get_epsilon returns instead of PrecisionExhausted. mpmath."""
    mp.dps = 40
    q = mpf(Fraction(0.95).numerator) / Fraction(0.95).denominator
    sup = 2 * 120 * log(1 - q + q * mp.e ** 2)
    acc = CertifiedPLDAccountant(NR.REPLACE_ONE)
    acc.compose(d.PoissonSampledDpEvent(0.95, d.LaplaceDpEvent(0.5)), 120)
    eps = acc.get_epsilon(1e-5)
    assert sup <= eps <= sup * (1 + mpf(2) ** -40)


# --------------------------------------------------------------------------- probability vectors


@pytest.mark.parametrize("floats, exact", [
    ([0.33, 0.34, 0.33], ("33/100", "34/100", "33/100")),
    ([0.99, 0.01], ("99/100", "1/100")),
    ([0.1] * 10, ("1/10",) * 10),
    ([0.5, 0.25, 0.25], ("1/2", "1/4", "1/4")),
    (list(np.float32([0.33, 0.34, 0.33])), ("33/100", "34/100", "33/100")),
    ([np.float64(0.7), np.float64(0.3)], ("7/10", "3/10")),
])
def test_probability_vectors_are_read_at_their_shortest_decimals(floats, exact):
    assert probability_vector(floats, "p") == tuple(Fraction(x) for x in exact)


def test_probability_vectors_that_do_not_sum_to_one_are_refused():
    # 3 x float(1/3) = 1 - 2^-54 rounds (to even) to 1.0, but neither the
    # decimals 0.3333333333333333 nor the binary values sum to exactly 1
    assert float(3 * Fraction(1 / 3)) == 1.0
    # the message says how far each reading is from 1 (not "sum to 1.0", which is what a
    # float sum prints): 1 - 2^-54 = 1 - 5.55e-17, and 3 x 0.3333333333333333 = 1 - 10^-16
    with pytest.raises(InvalidParameter, match=r"do not sum to exactly 1: their exact binary values sum to "
                       r"1 - 5\.55e-17 .*sum to 0\.9999999999999999;.*\"1/3\" is exact") as info:
        probability_vector([1 / 3] * 3, "p")
    assert "sum to 1.0 " not in str(info.value)
    with pytest.raises(InvalidParameter, match="sum to 0.8999999999999999, not 1"):
        probability_vector([0.3, 0.3, 0.3], "p")


def test_a_float32_mixture_is_certified_with_the_decimals_recorded():
    ev = d.MixtureOfGaussiansDpEvent(np.float32(1.5), [0.0, 1.0], list(np.float32([0.9, 0.1])))
    model = from_dp_event(ev)
    assert model.sampling_probs == (Fraction(9, 10), Fraction(1, 10)) and model.standard_deviation == Fraction(3, 2)
    acc = CertifiedPLDAccountant()
    acc.compose(ev, 2)
    cert = acc.certificate(delta=1e-5)
    assert cert["inputs"]["event"]["events"][0]["event"]["sampling_probs"] == ["0.9", "0.1"]


# --------------------------------------------------------------------------- refusals


def test_the_unsupported_leaf_is_reported_in_the_hosts_exception():
    leaf = d.TruncatedSubsampledGaussianDpEvent(4, 0.5, 2, 1.0)
    tree = d.ComposedDpEvent([d.GaussianDpEvent(1.0), d.SelfComposedDpEvent(leaf, 2)])
    acc = CertifiedPLDAccountant()
    err = acc._maybe_compose(tree, 1, False)
    assert err.invalid_event == leaf
    with pytest.raises(privacy_accountant.UnsupportedEventError, match="caused by subevent TruncatedSub"):
        acc.compose(tree)
    # a bad parameter is a ValueError, as in dp_accounting
    with pytest.raises(ValueError, match="must be >= 0"):
        acc.compose(d.GaussianDpEvent(-1.0))
    assert not acc.supports(d.GaussianDpEvent(-1.0))


def test_a_leaf_inside_a_sampling_wrapper_is_the_one_named():
    """Poisson sampling of a composition holding tree aggregation: the tree
    aggregation is the event no theorem covers, not the Poisson wrapper."""
    leaf = d.SingleEpochTreeAggregationDpEvent(1.0, 8)
    for wrap in (lambda e: d.PoissonSampledDpEvent(0.1, e),
                 lambda e: d.SampledWithoutReplacementDpEvent(100, 10, e),
                 lambda e: d.RepeatAndSelectDpEvent(e, 2.0, 1.0)):
        tree = d.ComposedDpEvent([d.GaussianDpEvent(1.0),
                                  d.SelfComposedDpEvent(wrap(d.ComposedDpEvent([d.GaussianDpEvent(2.0), leaf])), 3)])
        assert CertifiedPLDAccountant()._maybe_compose(tree, 1, False).invalid_event == leaf
    # a wrapper refused around a supported event is named itself
    swr = d.SampledWithReplacementDpEvent(100, 10, d.GaussianDpEvent(1.0))
    assert CertifiedPLDAccountant()._maybe_compose(d.ComposedDpEvent([swr]), 1, False).invalid_event == swr


def test_numpy_scalars_as_delta_and_epsilon():
    """dp_accounting's accountants take numpy scalars; a numpy float is read at
    its exact binary value, as a Python float is: np.float32(1e-5) is the
    binary32 value, so eps at it equals eps at float(np.float32(1e-5))."""
    acc = CertifiedPLDAccountant()
    acc.compose(d.GaussianDpEvent(1.0), 3)
    assert acc.get_epsilon(np.float32(1e-5)) == acc.get_epsilon(float(np.float32(1e-5)))
    assert acc.get_delta(np.float32(3.0)) == acc.get_delta(3.0)
    assert acc.get_delta(np.float32("inf")) == 0.0  # Gaussian: no mass at +inf
    assert acc.get_epsilon(np.int64(1)) == 0.0
    with pytest.raises(ValueError, match="target_delta"):
        acc.get_epsilon(np.float32("nan"))


def test_the_hosts_wording_under_an_unsupported_relation():
    acc = CertifiedPLDAccountant(NR.REPLACE_ONE)
    with pytest.raises(privacy_accountant.UnsupportedEventError,
                       match="neighboring_relation must be `ADD_OR_REMOVE_ONE` or `REPLACE_SPECIAL` for "
                             "`MixtureOfGaussiansDpEvent`. Found NeighboringRelation.REPLACE_ONE. dpverify: "):
        acc.compose(d.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5]))


EXAMPLES = {
    "NoOpDpEvent": d.NoOpDpEvent(),
    "NonPrivateDpEvent": d.NonPrivateDpEvent(),
    "UnsupportedDpEvent": d.UnsupportedDpEvent(),
    "RandomizedResponseDpEvent": d.RandomizedResponseDpEvent(0.5, 4),
    "GaussianDpEvent": d.GaussianDpEvent(1.0),
    "LaplaceDpEvent": d.LaplaceDpEvent(1.0),
    "DiscreteLaplaceDpEvent": d.DiscreteLaplaceDpEvent(0.5, 1),
    "SelfComposedDpEvent": d.SelfComposedDpEvent(d.GaussianDpEvent(1.0), 3),
    "ComposedDpEvent": d.ComposedDpEvent([d.GaussianDpEvent(1.0), d.LaplaceDpEvent(2.0)]),
    "PoissonSampledDpEvent": d.PoissonSampledDpEvent(0.1, d.LaplaceDpEvent(1.0)),
    "SampledWithReplacementDpEvent": d.SampledWithReplacementDpEvent(100, 10, d.GaussianDpEvent(1.0)),
    "SampledWithoutReplacementDpEvent": d.SampledWithoutReplacementDpEvent(100, 10, d.GaussianDpEvent(1.0)),
    "SingleEpochTreeAggregationDpEvent": d.SingleEpochTreeAggregationDpEvent(1.0, 8),
    "RepeatAndSelectDpEvent": d.RepeatAndSelectDpEvent(d.GaussianDpEvent(1.0), 2.0, 1.0),
    "MixtureOfGaussiansDpEvent": d.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5]),
    "ZCDpEvent": d.ZCDpEvent(0.5),
    "TruncatedSubsampledGaussianDpEvent": d.TruncatedSubsampledGaussianDpEvent(4, 0.5, 2, 1.0),
}

#: what a refusal must name: a theorem, a paper, or the author's own marking
CITES = ("AFA", "arXiv", "Thm", "Def", "Prop", "marked unsupported", "local randomiser")


def test_every_dp_event_class_is_certified_or_refused_naming_what_is_missing():
    classes = {n for n, c in inspect.getmembers(d, inspect.isclass)
               if issubclass(c, d.DpEvent) and c is not d.DpEvent}
    assert classes == set(EXAMPLES), "a DpEvent class without a row: add it here and to docs/guide/ecosystem.md"
    certified = 0
    for name, ev in EXAMPLES.items():
        for rel in NR:
            acc = CertifiedPLDAccountant(rel)
            err = acc._maybe_compose(ev, 1, False)
            if err is None:
                certified += 1
                continue
            assert any(c in err.error_message for c in CITES), (name, rel, err.error_message)
    assert certified >= 30


# --------------------------------------------------------------------------- dp_accounting's calibration


def test_mechanism_calibration_runs_on_the_certified_accountant():
    """dp_accounting.mechanism_calibration with CertifiedPLDAccountant as the
    fresh accountant: the largest number of Gaussian(5) steps whose certified
    epsilon(1e-5) is at most 1. Independent route: T Gaussian(sigma) steps are
    one Gaussian with mu = sqrt(T) / sigma (Dong, Roth, Su 2019, Cor 3.3) and
    delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Cor 2.13),
    in mpmath: delta_mu(1) <= 1e-5 at the returned T and > 1e-5 at T + 1."""
    from dp_accounting import mechanism_calibration as mc
    from mpmath import erfc, exp, sqrt

    def delta_mu(t):
        mp.dps = 40
        mu = sqrt(t) / 5
        phi = lambda x: erfc(-x / sqrt(2)) / 2  # noqa: E731
        return phi(-1 / mu + mu / 2) - exp(1) * phi(-1 / mu - mu / 2)

    t = mc.calibrate_dp_mechanism(CertifiedPLDAccountant, lambda n: d.SelfComposedDpEvent(d.GaussianDpEvent(5.0), int(n)),
                                  1.0, 1e-5, mc.ExplicitBracketInterval(1, 100), discrete=True)
    assert delta_mu(t) <= mpf("1e-5") < delta_mu(t + 1)

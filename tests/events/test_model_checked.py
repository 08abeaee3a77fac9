"""Model event trees handed to the library are read by the JSON format's rules.

The dataclasses of ``dpverify.events.model`` check nothing when built; before, a tree with a
negative count was answered ("holds", delta <= 4.4e-3613 for -100 Poisson-Gaussian steps) and
negative counts were added to positive ones (adv37 A1). Each case below is refused with the
node's path, exactly as the same document is refused by ``parse_document``.
"""

from fractions import Fraction as F

import pytest

import dpverify
from dpverify.errors import InvalidParameter
from dpverify.events import model as E
from dpverify.events.json_format import check_model, event_to_json, parse_document

G = E.Gaussian(F(1))
P = E.PoissonSampled(F(1, 100), G)

BAD = [
    (E.SelfComposed(P, -100), "event.count"),
    (E.Composed((E.SelfComposed(P, 200), E.SelfComposed(P, -100))), "event.events[1].count"),
    (E.DiscreteGaussian(F(-1), 1), "event.sigma"),
    (E.MixtureOfGaussians(F(1), (F(1), F(1)), (F(1), F(1))), "event.sampling_probs"),
    (E.ZCDp(F(-1), F(0)), "event.rho"),
    (E.ZCDp(F(1), F(-1)), "event.xi"),
    (E.Gaussian(True), "event.noise_multiplier"),  # bool is not a number
    (E.SelfComposed(G, True), "event.count"),
    (E.Gaussian(float("nan")), "event.noise_multiplier"),
    (E.Gaussian(0.5), "event.noise_multiplier"),  # a float is not exact: Fraction(1, 2) is
    (E.Gaussian("abc"), "event.noise_multiplier"),  # type: ignore[arg-type]
    (E.SelfComposed(G, 2.5), "event.count"),  # type: ignore[arg-type]
    (E.SelfComposed(G, "3"), "event.count"),  # type: ignore[arg-type]
    (E.RandomizedResponse(F(1, 2), 0), "event.num_buckets"),
    (E.SampledWithoutReplacement(-5, -1, G), "event.source_dataset_size"),
    (E.SampledWithoutReplacement(5, 6, G), "event.sample_size"),
    (E.Composed(5), "event.events"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("tree,path", BAD, ids=[p + ":" + type(t).__name__ for t, p in BAD])
def test_invalid_model_tree_refused_with_its_path(tree, path):
    with pytest.raises(InvalidParameter) as exc:
        dpverify.epsilon(tree, "1e-5")
    assert exc.value.message.startswith(path + ":"), exc.value.message
    with pytest.raises(InvalidParameter):
        dpverify.delta(tree, "1")
    with pytest.raises(InvalidParameter):
        dpverify.check_claim(tree, "1", "1e-5")


def test_deep_model_tree_refused():
    tree: object = G
    for _ in range(100):
        tree = E.SelfComposed(tree, 1)
    with pytest.raises(InvalidParameter, match="nested deeper"):
        dpverify.epsilon(tree, "1e-5")


def test_valid_model_tree_answers_as_its_document():
    # the independent route: the same tree written as a JSON document and read by the parser
    tree = E.Composed((E.SelfComposed(P, 60), E.SelfComposed(E.PoissonSampled(F(1, 50), E.Laplace(F(3))), 5)))
    doc = {"event": event_to_json(tree)}
    assert parse_document(doc)[0] == tree
    a = dpverify.epsilon(tree, "1e-5").enclosure
    b = dpverify.epsilon(doc, "1e-5").enclosure
    assert (a.lo, a.hi) == (b.lo, b.hi)
    # ints where the model says Fraction are exact and read as the same tree
    c = dpverify.epsilon(E.SelfComposed(E.PoissonSampled(F(1, 100), E.Gaussian(1)), 60), "1e-5").enclosure
    d = dpverify.epsilon(E.SelfComposed(P, 60), "1e-5").enclosure
    assert (c.lo, c.hi) == (d.lo, d.hi)


@pytest.mark.parametrize("tree,path", [(E.Gaussian(10**5000), "event.noise_multiplier"),
                                       (E.SelfComposed(G, 10**5000), "event.count")])
def test_a_5000_digit_number_in_a_model_tree_is_refused_not_a_traceback(tree, path):
    """adv38 A1: str() of a 5000-digit int raised ValueError inside the check."""
    with pytest.raises(InvalidParameter) as exc:
        dpverify.epsilon(tree, "1e-5")
    assert exc.value.message.startswith(path + ":")


@pytest.mark.parametrize("k", [1001, 1500, 3000])
def test_a_number_the_json_format_takes_is_taken_in_a_model_tree(k):
    """adv55 L1: the model check named a number by its digits past 4,000 bits, so 1e-1500, which a
    document may hold (7 characters, exponent within +-3000), was refused as "a number of 1501 digits".
    The model tree is read as its document is (the independent route: parse_document of the text)."""
    m = E.MixtureOfGaussians(F(1), (F(0), F(1, 10**k)), (F(1, 2), F(1, 2)))
    doc = {"event": {"type": "mixture_of_gaussians", "standard_deviation": "1",
                     "sensitivities": ["0", f"1e-{k}"], "sampling_probs": ["1/2", "1/2"]}}
    assert check_model(m) == parse_document(doc)[0] == m


def test_a_number_past_the_exponent_cap_in_a_model_tree_is_refused_by_the_document_rule():
    with pytest.raises(InvalidParameter, match=r"event.noise_multiplier: '1e-3001': decimal exponent must be within \+-3000"):
        check_model(E.Gaussian(F(1, 10**3001)))

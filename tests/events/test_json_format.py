"""The strict JSON event format: every mistake is refused with the path, a
hint and the allowed keys; the shipped JSON Schema agrees with the parser."""

import json
from fractions import Fraction

import jsonschema
import pytest

from dpverify.errors import InvalidParameter
from dpverify.events import load_schema, parse_document, event_to_json, model as E

GOOD = [
    {"neighboring": "replace-one", "event": {"type": "self_composed", "count": 1000, "event": {
        "type": "sampled_without_replacement", "source_dataset_size": 60000, "sample_size": 256,
        "event": {"type": "gaussian", "noise_multiplier": "1.1"}}}},
    {"events": [{"type": "poisson_sampled", "sampling_probability": "256/60000",
                 "event": {"type": "laplace", "noise_multiplier": 2}},
                {"type": "mixture_of_gaussians", "standard_deviation": "1", "sensitivities": ["0", "1"],
                 "sampling_probs": ["0.9", "0.1"]},
                {"type": "discrete_gaussian", "sigma": "2", "sensitivity": 1},
                {"type": "zcdp", "rho": "0.1", "xi": "0"}, {"type": "no_op"}, {"type": "non_private"}]},
    {"events": [{"noise_multiplier": "1", "sampling_rate": "1/20", "count": 20},
                {"mechanism": "approx", "exp_eps0": "2", "delta0": "1e-8", "sampling_rate": "0.5", "count": 3}]},
]

BAD = [
    ('{"events":[{"steps":1000,"noise_multiplier":"1","sampling_rate":"0.01"}]}',
     "events[0].steps: unknown key; did you mean count?"),
    ('{"events":[{"type":"self_composed","steps":10,"event":{"type":"no_op"}}]}',
     "events[0].steps: unknown key; did you mean count? (allowed keys: type, count, event)"),
    ('{"events":[{"type":"poisson_sampled","q":"0.1","event":{"type":"no_op"}}]}',
     "events[0].q: unknown key; did you mean sampling_probability?"),
    ('{"events":[{"noise_multiplier":"1","sampling_rate":"0.01"}]}', "missing key 'count'"),
    ('{"events":[{"mechanism":"laplace","scale":"1","count":3}]}', "missing key 'sampling_rate'"),
    # legacy (untyped) items are as strict as the typed ones
    ('{"events":[{"mechanism":"laplace","scal":"1","sampling_rate":"1","count":3}]}',
     "events[0].scal: unknown key; did you mean scale?"),
    ('{"events":[{"mechanism":"approx","exp_eps0":"2","delta0":"0","sampling_rate":"1","count":3,"q":"0.1"}]}',
     "events[0].q: unknown key"),
    ('{"events":[{"mechanism":"approx","exp_eps0":"2","delta0":"0","sampling_rate":"1"}]}', "missing key 'count'"),
    ('{"event":{"type":"gausian","noise_multiplier":"1"}}', "did you mean gaussian?"),
    ('{"event":{"type":"gaussian","noise_multiplier":"-1"}}', "event.noise_multiplier: -1 must be in (0, 1e100]"),
    ('{"event":{"type":"gaussian","noise_multiplier":"abc"}}', "event.noise_multiplier"),
    ('{"event":{"type":"poisson_sampled","sampling_probability":"1.5","event":{"type":"no_op"}}}', "must be in [0, 1]"),
    ('{"event":{"type":"mixture_of_gaussians","standard_deviation":"1","sensitivities":["0","1"],'
     '"sampling_probs":["0.9","0.2"]}}', "must sum to exactly 1"),
    ('{"event":{"type":"self_composed","count":1.5,"event":{"type":"no_op"}}}', "must be an integer"),
    ('{"event":{"type":"self_composed","count":"\u0663","event":{"type":"no_op"}}}', "must be an integer"),
    ('{"event":{"type":"gaussian","noise_multiplier":"1"},"events":[]}', "exactly one of"),
    ('{"evnts":[]}', "did you mean events?"),
    ("{", "not valid JSON"),
    ('{"event":{"type":"gaussian","noise_multiplier":"1e-999999"}}', "exponent"),
    ('{"event":{"type":"self_composed","count":' + "9" * 5000 + ',"event":{"type":"no_op"}}}', "integer"),
]


@pytest.mark.parametrize("doc", GOOD)
def test_good_documents_parse_and_match_the_schema(doc):
    jsonschema.validate(doc, load_schema())
    tree, _ = parse_document(json.dumps(doc))
    assert tree is not None


@pytest.mark.parametrize("text, needle", BAD)
def test_bad_documents_are_refused_naming_the_path(text, needle):
    with pytest.raises(InvalidParameter) as exc:
        parse_document(text, where="f.json: ")
    assert needle in str(exc.value) and str(exc.value).startswith("f.json: ")


@pytest.mark.parametrize("text, needle", BAD[:13])
def test_schema_refuses_what_the_parser_refuses(text, needle):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return
    if "must be > 0" in needle or "must be in (0, " in needle or "sum to exactly" in needle or "[0, 1]" in needle:
        return  # value ranges are checked by the parser, not the schema
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, load_schema())


def test_numbers_are_exact_and_round_trip():
    tree, rel = parse_document('{"neighboring":"add","event":{"type":"poisson_sampled",'
                               '"sampling_probability":0.1,"event":{"type":"gaussian","noise_multiplier":"1/3"}}}')
    assert rel == "add"
    assert tree == E.PoissonSampled(Fraction(1, 10), E.Gaussian(Fraction(1, 3)))
    again, _ = parse_document({"event": event_to_json(tree)})
    assert again == tree


def test_the_library_path_is_as_strict_as_the_cli():
    # dpverify.epsilon on a legacy document: the misspelled key is refused, not defaulted
    from dpverify.events import epsilon

    with pytest.raises(InvalidParameter) as exc:
        epsilon({"events": [{"steps": 1000, "noise_multiplier": "1", "sampling_rate": "0.01"}]}, "1e-5")
    assert "events[0].steps: unknown key; did you mean count?" in str(exc.value)


_LONG = "9" * 5000


@pytest.mark.parametrize("node, path", [
    ('{"type":"gaussian","noise_multiplier":"' + _LONG + '"}', "event.noise_multiplier"),
    ('{"type":"gaussian","noise_multiplier":' + _LONG + '}', "event.noise_multiplier"),
    ('{"type":"self_composed","count":' + _LONG + ',"event":{"type":"no_op"}}', "event.count"),
])
def test_a_5000_digit_number_is_named_by_its_length_at_its_path(node, path):
    """Issue 22: the message names the file, the JSON path once, what was wrong ("a number of
    5000 digits") and the allowed form; it repeated the path, or quoted the rule as the input."""
    with pytest.raises(InvalidParameter) as exc:
        parse_document('{"event":' + node + '}', where="f.json: ")
    msg = str(exc.value)
    assert msg.startswith(f"f.json: {path}: a number of 5000 digits is too long (a number has at most 1000 "
                          "characters: a decimal like 0.1 or 1e-5, or a fraction a/b)"), msg
    assert msg.count(path) == 1 and "999" not in msg, msg


@pytest.mark.parametrize("tree, path, digits", [(E.Gaussian(10**5000), "event.noise_multiplier", 5001),
                                                (E.Gaussian(Fraction(1, 3 * 10**4999)), "event.noise_multiplier", 5000),
                                                (E.PoissonSampled(Fraction(1, 10**4500), E.Gaussian(1)),
                                                 "event.sampling_probability", 4501)])
def test_a_long_number_in_a_model_tree_is_named_by_its_digits(tree, path, digits):
    """A model tree's number past the cap was refused as if the rule's text were the input: "'a number
    of more than 1000 digits' is not a number (use a decimal like 0.1 ...)"."""
    from dpverify.events.json_format import check_model

    with pytest.raises(InvalidParameter) as exc:
        check_model(tree)
    msg = exc.value.message
    assert msg.startswith(f"{path}: a number of {digits} digits is too long (a number has at most 1000 characters"), msg
    assert "is not a number" not in msg


@pytest.mark.parametrize("n", [0, 1, 9, 10, 99, 100, 10**17 - 1, 10**17, 2**64, 10**4000 - 1, 10**4000, -(10**50)])
def test_digit_count_is_the_length_of_the_decimal_text(n):
    import sys

    from dpverify.numtext import digit_count

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert digit_count(n) == len(str(abs(n)))
    finally:
        sys.set_int_max_str_digits(old)

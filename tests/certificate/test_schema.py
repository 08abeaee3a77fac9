"""Every certificate kind validates against the committed JSON Schema."""

import json
from importlib import resources
from pathlib import Path

import pytest

from dpverify.cli import main

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads(resources.files("dpverify.certificate").joinpath("schema.json").read_text())
SCHEMA2 = json.loads(resources.files("dpverify.certificate").joinpath("schema-2.json").read_text())
ROOT = Path(__file__).resolve().parents[2]


def _validate(cert):
    schema = SCHEMA2 if cert.get("format") == "dpverify-certificate/2" else SCHEMA
    jsonschema.Draft202012Validator(schema).validate(cert)


def test_schema_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator.check_schema(SCHEMA2)


@pytest.mark.parametrize(
    "argv",
    [
        ["gdp", "delta", "--mu", "0.5", "--eps", "50"],
        ["gdp", "mu", "--eps", "1", "--delta", "1e-5"],
        ["dp", "profile", "--mechanism", "approx", "--eps0", "1", "--delta0", "1e-5", "--eps", "-2"],
    ],
)
def test_quantity_certificates_validate(argv, capsys):
    assert main([*argv, "--json"]) == 0
    _validate(json.loads(capsys.readouterr().out))


def test_claim_certificates_validate(capsys):
    assert main(["reproduce", "--json"]) == 0
    for cert in json.loads(capsys.readouterr().out):
        _validate(cert)


def test_committed_certificates_validate():
    files = sorted((ROOT / "certificates").glob("*.json"))
    assert files, "certificates/ holds the curated claim set"
    for f in files:
        _validate(json.loads(f.read_text()))


def test_schema_rejects_a_broken_certificate(capsys):
    assert main(["gdp", "delta", "--mu", "1", "--eps", "1", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    cert["result"]["enclosure"]["lo"] = "0x1p-3"
    with pytest.raises(jsonschema.ValidationError):
        _validate(cert)


@pytest.mark.parametrize("where", ["lo", "hi"])
def test_a_trailing_newline_is_no_decimal(where, capsys):
    # adv35 G1: Python's re `$` matches before a final "\n", so plain jsonschema passes "0.5\n" against the
    # schema's ECMA-262 pattern (where `$` is the end of the text only). dpverify checks with ECMA's anchor
    from dpverify.certificate.format import schema_errors

    assert main(["gdp", "delta", "--mu", "1", "--eps", "1", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert schema_errors(cert) == []
    cert["result"]["enclosure"][where] += "\n"
    errors = schema_errors(cert)
    assert errors and errors[0].startswith(f"result.enclosure.{where}:"), errors


@pytest.mark.parametrize("where,grammar", [("result.enclosure.hi", '"0.1", "1e-5" or "inf"'),
                                           ("inputs.delta", 'or a fraction "1/3"')])
def test_a_bad_number_is_refused_in_words_not_as_a_regular_expression(where, grammar, capsys):
    # adv52 L1: an enclosure end ($defs/decimal, no fractions) was refused with the schema's regular
    # expression; each number grammar is said in words, the one the key takes
    from dpverify.certificate.format import schema_errors

    assert main(["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "1", "--steps", "3",
                 "--delta", "1e-5", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    part, *path = where.split(".")
    node = cert[part]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = "1e-5x"
    errors = schema_errors(cert)
    assert errors == [f"{where}: '1e-5x' is not a number as a certificate writes one (a decimal string such as "
                      + ('"0.1", "1e-5" or "inf")' if "inf" in grammar else '"0.1" or "1e-5", or a fraction "1/3")')]

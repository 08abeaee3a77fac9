"""Oracle rows (parsing, row-numbered errors) and classification (exact)."""

from fractions import Fraction

import pytest
from flint import arb

from dpverify.ball import ball, working_precision
from dpverify.errors import InvalidParameter
from dpverify.oracle.classify import classify
from dpverify.oracle.rows import parse_rows
from dpverify.verdict import Enclosure

HEADER = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"


def test_csv_rows_are_exact():
    rows = parse_rows(HEADER + "opacus-gdp,subsampled-gaussian,1,256/60000,1000,1e-5,1.6177\n", "csv")
    (r,) = rows
    assert r.config.sampling_rate == Fraction(256, 60000)
    assert r.config.delta == Fraction(1, 10**5)
    assert r.reported == Fraction(16177, 10000)


def test_json_numbers_are_exact_from_their_text_like_csv_cells():
    # a JSON number is text: 0.1 in a file means 1/10, as the same cell in a CSV
    # file does (the same rows in either format give the same verdicts)
    (r,) = parse_rows(
        '[{"accountant": "a", "mechanism": "subsampled-gaussian", "noise_multiplier": 1.1, '
        '"sampling_rate": "0.01", "steps": 10, "delta": "1e-5", "reported_eps": 0.1}]',
        "json",
    )
    assert r.config.noise_multiplier == Fraction(11, 10)
    assert r.reported == Fraction(1, 10) != Fraction(0.1)
    (c,) = parse_rows(HEADER + "a,subsampled-gaussian,1.1,0.01,10,1e-5,0.1\n", "csv")
    assert c.config == r.config and c.reported == r.reported


@pytest.mark.parametrize(
    "line, needle",
    [
        ("a,subsampled-gaussian,-1,0.01,1000,1e-5,1", "rows[1].noise_multiplier: noise_multiplier='-1' must be > 0"),
        ("a,subsampled-gaussian,1,1.5,1000,1e-5,1", "rows[1].sampling_rate: sampling_rate='1.5' must be in (0, 1]"),
        ("a,subsampled-gaussian,1,0,1000,1e-5,1", "rows[1].sampling_rate: sampling_rate='0'"),
        ("a,subsampled-gaussian,1,0.01,0,1e-5,1", "rows[1].steps: steps='0'"),
        ("a,subsampled-gaussian,1,0.01,1000000000,1e-5,1", "rows[1].steps: steps="),
        ("a,subsampled-gaussian,1,0.01,10.5,1e-5,1", "rows[1].steps: must be an integer"),
        ("a,subsampled-gaussian,1,0.01,1000,0,1", "rows[1].delta: delta='0' must be in (0, 1)"),
        ("a,subsampled-gaussian,1,0.01,1000,1e-5,abc", "rows[1].reported_eps: reported_eps='abc'"),
        ("a,laplace,1,0.01,1000,1e-5,1", "rows[1].mechanism: the string 'laplace' is not allowed"),
        ("a,subsampled-gaussian,1,0.01,1000,1e-5,", "rows[1].reported_eps: must not be empty"),
        ("a,subsampled-gaussian,1,0.01,1000,1e-5", "line 3: rows[1]: 6 cells, but the header has 7"),
        ("a,subsampled-gaussian,1,0.01,1000,1e-5,1,7", "line 3: rows[1]: 8 cells, but the header has 7"),
    ],
)
def test_malformed_rows_name_the_row(line, needle):
    good = "a,subsampled-gaussian,1,0.01,1000,1e-5,1\n"
    with pytest.raises(InvalidParameter) as info:
        parse_rows(HEADER + good + line + "\n", "csv", file="rows.csv")
    assert f"rows.csv{' ' if needle.startswith('line') else ': '}{needle}" in str(info.value)


@pytest.mark.parametrize(
    "text, fmt, needle",
    [
        ("accountant,mechanism\nx,y\n", "csv", "header: missing required column(s) noise_multiplier"),
        (HEADER.replace("steps", "step") + "x\n", "csv", "unknown column 'step'; did you mean steps?"),
        (HEADER.strip() + ",note\n", "csv", "unknown column 'note'"),
        (HEADER.strip() + ",delta\n", "csv", "column 'delta' appears twice"),
        ("", "csv", "empty"),
        ("{not json", "json", "not JSON"),
        ('{"a": 1}', "json", "f: rows: must be a list, not an object"),
        ("[]", "json", "f: rows: must have at least 1 entries (it has 0)"),
        ('[{"a": 1}]', "json", "rows[0].a: unknown key"),
        ("[1]", "json", "rows[0]: must be an object, not the number 1"),
        ('[{"accountant": "a"}] ', "json", "rows[0].mechanism: missing required key"),
    ],
)
def test_malformed_files(text, fmt, needle):
    with pytest.raises(InvalidParameter) as info:
        parse_rows(text, fmt, file="f")
    assert needle in str(info.value)


def _enc(lo, hi):
    with working_precision(200):
        return Enclosure(arb(lo), arb(hi)) if isinstance(lo, int) else Enclosure.from_bounds(ball(lo), ball(hi))


def _dyadic(x: Fraction, up: bool) -> Fraction:
    """The multiple of 2^-80 next to x, on the side ``up`` says: its 17-digit decimal rounded
    toward x is x itself (1.82824 is printed for a binary end 1e-24 above it)."""
    n = x * 2**80
    return Fraction(-((-n.numerator) // n.denominator) if up else n.numerator // n.denominator, 2**80)


@pytest.mark.parametrize(
    "reported, verdict",
    [
        (Fraction(182823, 100000), "unsafe"),  # just below lo = 1.82824
        (Fraction(182824, 100000) - Fraction(1, 10**30), "unsafe"),
        (Fraction(182824, 100000), "consistent"),  # the printed lo itself (below the binary end: 'unsafe' before)
        (Fraction(182825, 100000), "consistent"),  # inside
        (Fraction(182826, 100000), "consistent"),  # the printed hi
        (Fraction(182830, 100000), "consistent"),  # above hi, within tolerance 1%
        (Fraction(182826, 100000) * Fraction(101, 100), "consistent"),  # hi (1 + tolerance) exactly
        (Fraction(182826, 100000) * Fraction(101, 100) + Fraction(1, 10**30), "loose"),
        (Fraction(21, 10), "loose"),  # far above hi
    ],
)
def test_classify(reported, verdict):
    # certified binary ends just inside 1.82824 and 1.82826, which the row prints: the comparison
    # is exact, against the printed decimals
    with working_precision(200):
        enc = Enclosure(ball(_dyadic(Fraction(182824, 100000), True)), ball(_dyadic(Fraction(182826, 100000), False)))
    assert enc.to_json() == {"lo": "1.82824", "hi": "1.82826"} and enc.lo_fraction > Fraction(182824, 100000)
    assert classify(reported, enc, Fraction(1, 100)).verdict == verdict


def test_classify_on_the_printed_decimals():
    """The rule of docs/reference/certificates.md, "Oracle rows": a row is classified on the
    decimals it records, which verify re-reads. Before, the producer used the binary ends (inside
    the printed ones), so a reported number equal to a printed end was 'unsafe' / 'loose' here
    and 'consistent' in verify (a genuine certificate refused at tolerance 0). Independent route:
    the exact rationals of the printed strings, compared by hand."""
    with working_precision(200):
        enc = Enclosure.from_bounds(ball(Fraction(1, 3)), ball(Fraction(2, 3)))
    lo, hi = (Fraction(t) for t in enc.to_json().values())
    assert lo < enc.lo_fraction and hi > enc.hi_fraction  # printed outward, so strictly outside here
    zero, tiny = Fraction(0), Fraction(1, 10**40)
    for reported, tol, verdict in [(lo, zero, "consistent"), (lo - tiny, zero, "unsafe"),
                                   ((lo + enc.lo_fraction) / 2, zero, "consistent"),  # inside the print only
                                   (hi, zero, "consistent"), (hi + tiny, zero, "loose"),
                                   ((hi + enc.hi_fraction) / 2, zero, "consistent"),
                                   (hi * Fraction(11, 10), Fraction(1, 10), "consistent"),
                                   (hi * Fraction(11, 10) + tiny, Fraction(1, 10), "loose")]:
        assert classify(reported, enc, tol).verdict == verdict, (reported, tol)


def test_zero_epsilon_loose_row_has_no_relative_excess():
    """eps* = 0 exactly ([0, 0]): a positive report is loose and no finite relative excess states
    by how much (it was (r - 0) / 0, which stopped the whole run, exit 3)."""
    enc = Enclosure(arb(0), arb(0))
    c = classify(Fraction(1, 10), enc, Fraction(0))
    assert (c.verdict, c.excess) == ("loose", None)
    assert classify(Fraction(0), enc, Fraction(0)).verdict == "consistent"


def test_dpsgd_is_an_alias_of_the_subsampled_gaussian():
    # one vocabulary with sweep grids: a row written "dpsgd" is the same configuration
    # (same key, so computed once) as "subsampled-gaussian"
    head = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
    a, b = parse_rows(head + "x,dpsgd,1,0.01,1000,1e-5,1.83\n"
                      "y,subsampled-gaussian,1,0.01,1000,1e-5,1.83\n", "csv")
    assert a.config == b.config and a.config.key() == b.config.key()
    assert a.config.mechanism == "subsampled-gaussian"


@pytest.mark.parametrize("text", ["inf", "+inf", "Infinity", "INF"])
def test_reported_inf_is_a_returned_inf_row_not_a_refusal(text):
    # before: the help says an accountant returning +inf is a "returned-inf" row, but
    # the row parser refused reported_eps=inf ("must be a finite real number")
    (c,) = parse_rows(HEADER + f"a,subsampled-gaussian,1,0.01,10,1e-5,{text}\n", "csv")
    (j,) = parse_rows('[{"accountant": "a", "mechanism": "subsampled-gaussian", "noise_multiplier": 1, '
                      f'"sampling_rate": "0.01", "steps": 10, "delta": "1e-5", "reported_eps": "{text}"}}]',
                      "json")
    for r in (c, j):
        assert r.reported is None and r.reported_text == "inf"


@pytest.mark.parametrize("text", ["-inf", "nan", "infx"])
def test_other_non_finite_reported_eps_is_still_refused(text):
    with pytest.raises(InvalidParameter) as info:
        parse_rows(HEADER + f"a,subsampled-gaussian,1,0.01,10,1e-5,{text}\n", "csv", file="f")
    assert "rows[0].reported_eps" in str(info.value)


@pytest.mark.parametrize("excess, accepted", [("-0.1643", True), ("-0.1644", True), ("0.0", False),
                                              ("-0.1653", False), ("-0.5", False)])
def test_a_rows_relative_excess_is_recomputed(excess, accepted):
    """Before, a row's excess was confirmed unread (a forged 0.0 beside an unsafe -0.45 was
    accepted). It is (reported - lo) / lo of the recorded enclosure, recomputed exactly; the
    printed four digits may be off by one unit of their last digit. Independent route:
    the exact rational from the certificate's own decimals, here."""
    import copy
    import json
    from fractions import Fraction
    from pathlib import Path

    from dpverify.certificate import verify_certificate
    from dpverify.errors import CertificateRejected

    from ..certs import reseal

    cert = json.loads((Path(__file__).parents[1] / "certificate" / "format2" / "oracle-input.json").read_text())
    row = cert["result"]["rows"][0]
    lo, rep = Fraction(row["certified"]["lo"]), Fraction(row.get("reported_exact", row["reported"]))
    assert abs((rep - lo) / lo - Fraction("-0.1643")) < Fraction(1, 10**4)  # the fixture's own value
    forged = copy.deepcopy(cert)
    forged["result"]["rows"][0]["excess"] = excess
    if accepted:
        assert "confirmed" in verify_certificate(reseal(forged))
    else:
        with pytest.raises(CertificateRejected, match="excess"):
            verify_certificate(reseal(forged))


def test_one_list_of_oracle_mechanisms():
    """The CSV/JSON reader, the shipped rows schema and the re-check name the same mechanisms:
    the tuple in certificate/format.py, read by both sides (the re-check cannot import the oracle)."""
    import json
    from importlib import resources

    from dpverify.certificate.format import ORACLE_MECHANISMS
    from dpverify.oracle import rows

    schema = json.loads(resources.files("dpverify.schemas").joinpath("oracle_rows.schema.json").read_text())
    text = json.dumps(schema)
    assert rows.MECHANISMS is ORACLE_MECHANISMS
    assert f'"enum": {json.dumps(list(ORACLE_MECHANISMS))}' in text

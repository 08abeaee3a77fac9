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


def test_json_rows_take_floats_at_their_binary_value():
    (r,) = parse_rows(
        '[{"accountant": "a", "mechanism": "subsampled-gaussian", "noise_multiplier": 1.1, '
        '"sampling_rate": "0.01", "steps": 10, "delta": "1e-5", "reported_eps": 0.1}]',
        "json",
    )
    assert r.config.noise_multiplier == Fraction(1.1)
    assert r.reported == Fraction(0.1) != Fraction(1, 10)


@pytest.mark.parametrize(
    "line, needle",
    [
        ("a,subsampled-gaussian,-1,0.01,1000,1e-5,1", "row 2: noise_multiplier='-1' must be > 0"),
        ("a,subsampled-gaussian,1,1.5,1000,1e-5,1", "row 2: sampling_rate='1.5' must be in (0, 1]"),
        ("a,subsampled-gaussian,1,0,1000,1e-5,1", "row 2: sampling_rate='0'"),
        ("a,subsampled-gaussian,1,0.01,0,1e-5,1", "row 2: steps='0'"),
        ("a,subsampled-gaussian,1,0.01,1000000000,1e-5,1", "row 2: steps="),
        ("a,subsampled-gaussian,1,0.01,1000,0,1", "row 2: delta='0' must be in (0, 1)"),
        ("a,subsampled-gaussian,1,0.01,1000,1e-5,abc", "row 2: reported_eps='abc'"),
        ("a,laplace,1,0.01,1000,1e-5,1", "row 2: mechanism='laplace'"),
        ("a,subsampled-gaussian,1,0.01,1000,1e-5,", "row 2: missing column(s) reported_eps"),
    ],
)
def test_malformed_rows_name_the_row(line, needle):
    good = "a,subsampled-gaussian,1,0.01,1000,1e-5,1\n"
    with pytest.raises(InvalidParameter) as info:
        parse_rows(HEADER + good + line + "\n", "csv")
    assert needle in str(info.value)


@pytest.mark.parametrize(
    "text, fmt, needle",
    [
        ("accountant,mechanism\nx,y\n", "csv", "lacks column"),
        ("", "csv", "empty"),
        ("{not json", "json", "not JSON"),
        ('{"a": 1}', "json", "list of objects"),
        ("[]", "json", "no rows"),
    ],
)
def test_malformed_files(text, fmt, needle):
    with pytest.raises(InvalidParameter, match=needle):
        parse_rows(text, fmt)


def _enc(lo, hi):
    with working_precision(200):
        return Enclosure(arb(lo), arb(hi)) if isinstance(lo, int) else Enclosure.from_bounds(ball(lo), ball(hi))


@pytest.mark.parametrize(
    "reported, verdict",
    [
        (Fraction(182823, 100000), "unsafe"),  # just below lo = 1.82824
        (Fraction(182824, 100000) - Fraction(1, 10**30), "unsafe"),
        (Fraction(182825, 100000), "consistent"),  # inside
        (Fraction(182830, 100000), "consistent"),  # above hi, within tolerance 1%
        (Fraction(21, 10), "loose"),  # far above hi
    ],
)
def test_classify(reported, verdict):
    # certified [lo, hi] as exact rationals: the comparison must be exact
    enc = _enc(Fraction(182824, 100000), Fraction(182826, 100000))
    assert classify(reported, enc, Fraction(1, 100)).verdict == verdict

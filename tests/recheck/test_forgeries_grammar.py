"""One number grammar for every input a certificate states (adv44 H1).

The input-range table (``certificate/ranges.py``) reads a text by the producer's grammar
(``dpverify.numtext``), and skipped what it could not read, while the routes read inputs with
Python's ``Fraction(text)``, which also takes inner spaces, ``_`` separators and non-ASCII digits.
So ``alpha = "1/ 2"`` passed the row alpha > 1 unread, and a format-1 ``rdp.to_dp_eps`` whose
enclosure is the classic conversion at alpha = 1/2 was confirmed. It is false: for P = Q every
D_alpha is 0 <= rdp, and (eps, 0.3)-DP with eps = 0.1 + log(1/0.3) / (1/2 - 1) = -2.308 fails on
the whole space (1 <= e^-2.308 + 0.3 = 0.40 is false).
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, strategies as st

from dpverify.errors import InvalidParameter, MalformedCertificate
from dpverify.numtext import read_exact_text
from dpverify.recheck.gdp import exact_input

from ..certs import outcome, reseal, reword

FORMAT1 = Path(__file__).parents[1] / "certificate" / "format1"


def _alpha_half(spelled: str) -> dict:
    cert = json.loads((FORMAT1 / "cli-rdp-todp-eps.json").read_text())
    inputs = cert["inputs"]
    assert (inputs["rdp"], inputs["delta"]) == ("0.1", "0.3")
    inputs["alpha"] = spelled
    with mpmath.workdps(60):
        v = mpmath.mpf("0.1") + mpmath.log(1 / mpmath.mpf("0.3")) / (mpmath.mpf(1) / 2 - 1)
        lo, hi = mpmath.nstr(v - mpmath.mpf("1e-40"), 45), mpmath.nstr(v + mpmath.mpf("1e-40"), 45)
    cert["result"]["enclosure"] = {"lo": lo, "hi": hi}
    return reseal(reword(cert))


@pytest.mark.parametrize("spelled", ["1/ 2", "\u0660.\u0665", "0.5_0", " 1 /2", "\uff10.5", "1/-2"])
def test_an_input_outside_the_grammar_is_malformed(spelled: str) -> None:
    assert outcome(_alpha_half(spelled)) == 2


def test_the_same_input_in_the_grammar_is_outside_the_range() -> None:
    # the row alpha > 1 reads "0.5" and "1/2": exit 2 there too, so the spelling changes nothing
    assert outcome(_alpha_half("0.5")) == 2 and outcome(_alpha_half("1/2")) == 2


def test_the_genuine_certificate_is_confirmed() -> None:
    cert = json.loads((FORMAT1 / "cli-rdp-todp-eps.json").read_text())
    assert outcome(copy.deepcopy(cert)) == 0


_TEXTS = st.one_of(
    st.text(alphabet="0123456789+-./eE _\u0660\u0665\uff10", max_size=12),
    st.builds(lambda a, b: f"{a}/{b}", st.integers(-10**6, 10**6), st.integers(-5, 10**6)),
    st.builds(lambda x, e: f"{x}e{e}", st.decimals(allow_nan=False, allow_infinity=False, places=3), st.integers(-40, 40)),
)


@given(_TEXTS)
def test_the_routes_read_what_the_producer_reads(text: str) -> None:
    """The verifier's reader (recheck.gdp.exact_input) and the producer's (numtext) agree on every
    text: the same Fraction, or both refuse."""
    try:
        want: "Fraction | None" = read_exact_text(text, "x")
    except InvalidParameter:
        want = None
    try:
        got: "Fraction | None" = exact_input({"x": text}, "x")
    except MalformedCertificate:
        got = None
    assert got == want


@pytest.mark.parametrize("name, key, spelled", [
    ("cli-pld-eps.json", "steps", "\u0661\u0660"),  # Arabic-Indic "10": int() reads it as 10
    ("cli-pld-eps.json", "steps", "\u00b9\u2070"),  # superscript "10": int() raised, a crash of the route
    ("main-pld-epsilon-epochs.json", "dataset_size", "\u0666\u0660\u0660\u0660\u0660"),
])
def test_a_count_is_spelled_in_ascii_digits(name, key, spelled):
    """adv45 L1: counts were read by str.isdigit, which is true for every Unicode digit, superscripts
    included; the same certificate with the count in ASCII is genuine (exit 0), so what refuses it is
    the spelling alone (numtext.is_digits)."""
    cert = json.loads((FORMAT1 / name).read_text())
    assert key in cert["inputs"]
    cert["inputs"][key] = spelled
    assert outcome(reseal(cert)) == 2

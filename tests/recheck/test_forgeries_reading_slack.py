"""A recorded decimal end is read into binary, and its reading is not the decimal (a decimal that is
not dyadic lies strictly between two binary numbers). The acceptance rule compared the independent
enclosure with the ends read outward (lo rounded down, hi up, at 256 bits or more), so a truth
between a recorded end and its outward reading confirmed a false enclosure.

Here: the composed delta(0) of the (0, 1/10)- and (0, 10^-101)-DP guarantees is
1 - (9/10)(1 - 10^-101) = 1/10 + 9 10^-102 (exact rationals below: TV composes so at eps = 0, LT
Thm 4.6), and a recorded [0.1, 0.1] states it is exactly 1/10. verify confirmed it. Acceptance now
asks for the ends read inward (decimals.Ends.inner); a refusal still uses the outward reading, so
this certificate is not decided (exit 3): never an accept."""

from __future__ import annotations

import json
from fractions import Fraction

from dpverify.cli import main

from ..certs import outcome, reseal


def test_a_point_enclosure_just_off_the_truth_is_not_accepted(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["compose", "--mech", "0,0.1", "--mech", "0,1e-101", "--eps", "0", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert outcome(json.loads(out.read_text())) == 0  # the genuine certificate
    truth = 1 - (1 - Fraction(1, 10)) * (1 - Fraction(1, 10**101))
    assert truth > Fraction(1, 10) and truth - Fraction(1, 10) < Fraction(1, 10**100)
    cert["result"]["enclosure"] = {"lo": "0.1", "hi": "0.1"}
    assert outcome(reseal(cert)) == 3


def test_a_bracket_is_decided_at_the_recorded_decimal():
    """recheck.gdp.bracket_root_iv (gdp eps, gdp mu, composed eps) proved its root >= lo by f at lo's
    binary reading, rounded down from the decimal: a root between that reading and the decimal was
    confirmed as >= the decimal. Here f(x) = x and the root is the midpoint of 0.1 and its 256-bit
    reading below, so the recorded [0.1, 0.2] is false (exact rationals); it is refused now, as f at
    0.1 itself is past the target."""
    import mpmath
    import pytest

    from dpverify.errors import CertificateRejected
    from dpverify.recheck.core import mpf_to_fraction
    from dpverify.recheck.decimals import parse_bound
    from dpverify.recheck.gdp import bracket_root_iv

    below = mpf_to_fraction(parse_bound("0.1", "lo", 60, "f"))
    root = (below + Fraction(1, 10)) / 2
    assert below < root < Fraction(1, 10)
    with mpmath.workdps(60), pytest.raises(CertificateRejected, match="root is below"):
        bracket_root_iv(lambda A, x: A.q(x), root, {"enclosure": {"lo": "0.1", "hi": "0.2"}}, True, "x")


def test_a_huge_exponent_in_an_exact_end_is_not_expanded(tmp_path):
    """The routes that compare with a recorded decimal itself expanded it with Fraction(text): a
    replace.delta certificate with hi = "1e999999999999" (a few bytes) held verify for its whole
    budget while Python built 10^999999999999. One reader now (recheck.decimals.exact_decimal)
    refuses to expand past 1e+-100000 (exit 3, said as such, not the clock's words)."""
    from pathlib import Path

    from dpverify.recheck.decimals import MAX_EXACT_EXPONENT, exact_decimal
    from dpverify.recheck.verify import verify_file

    assert exact_decimal("0.1", "x") == Fraction(1, 10) and exact_decimal(f"1e-{MAX_EXACT_EXPONENT}", "x") > 0
    cert = json.loads((Path(__file__).parents[1] / "certificate" / "format2" / "replace-delta.json").read_text())
    cert["result"]["enclosure"]["hi"] = "1e999999999999"
    out = tmp_path / "c.json"
    out.write_text(json.dumps(reseal(cert)))
    code, msg = verify_file(out, budget_seconds=60)
    assert code == 3 and "not expanded" in msg, msg

"""A recorded decimal end is read into binary, and its reading is not the decimal (a decimal that is
not dyadic lies strictly between two binary numbers). The acceptance rule compared the independent
enclosure with the ends read outward (lo rounded down, hi up, at 256 bits or more), so a truth
between a recorded end and its outward reading confirmed a false enclosure.

Here: the composed delta(0) of the (0, 1/10)- and (0, 10^-101)-DP guarantees is
1 - (9/10)(1 - 10^-101) = 1/10 + 9 10^-102 (exact rationals below: TV composes so at eps = 0, LT
Thm 4.6), and a recorded [0.1, 0.1] states it is exactly 1/10. verify confirmed it. Acceptance now
asks for the ends read inward (decimals.Ends.inner), and the composed delta at eps >= sum eps_i is the
exact rational 1 - prod (1 - delta_i)^k_i, compared with the recorded decimals exactly: refused (exit 1;
it was exit 3, not decided, before that comparison)."""

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
    assert outcome(reseal(cert)) == 1


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


def test_gdp_certify_proves_its_upper_end_at_the_decimal_read_inward():
    """gdp.certify and gdp.optimal_mu proved sup G_f <= hi at hi's reading rounded up (outward), so a
    sup between the recorded decimal and that reading was confirmed. The cells are now proved at the
    reading rounded down, which is at most the decimal: the route's upper end lies inside the recorded
    ends read inward (it was the outward reading itself before)."""
    from pathlib import Path

    import mpmath

    from dpverify.recheck.decimals import enclosure_of
    from dpverify.recheck.gdpt import recheck_certify

    cert = json.loads((Path(__file__).parents[1] / "certificate" / "format2" / "gdp-certify-laplace.json").read_text())
    ends = enclosure_of(cert["result"]["enclosure"], "e", 40)
    re = recheck_certify(cert["inputs"], cert["result"])
    assert ends.inner[0] <= re.lo and re.hi <= ends.inner[1] < ends[1]
    assert mpmath.isfinite(re.lo) and re.verdict == "holds"


def test_a_cell_refusal_is_sought_past_the_decimal_read_outward():
    """The other half of that rule: proving at the reading rounded down must not refuse at it. The
    Gaussian profile f = delta_1 has G_f = 1 everywhere (GDPT Def 4.1): at mu = 1 - 2^-200 no cell is
    proved, and G_f(0) = 1 > mu is refuted there, but 1 < 1 + 2^-200 = refute_above, so with that
    level the cells answer 'could not re-prove', never a refusal of a true end."""
    import mpmath
    import pytest

    from dpverify.errors import CertificateRejected, CouldNotReprove
    from dpverify.recheck import gdpt

    inputs = {"mechanism": "gaussian", "mu": "1", "eps_h": "5"}
    f = gdpt._iv_profile("gaussian", inputs, gdpt._bits(80))
    fb = gdpt._cell_bound_iv("gaussian", inputs, f)
    with mpmath.workdps(80):
        below, above = 1 - mpmath.mpf(2) ** -200, 1 + mpmath.mpf(2) ** -200
        with pytest.raises(CertificateRejected):
            gdpt._prove_cells_iv(f, fb, Fraction(0), Fraction(5), below, None, "head", 80)
        with pytest.raises(CouldNotReprove):
            gdpt._prove_cells_iv(f, fb, Fraction(0), Fraction(5), below, None, "head", 80, refute_above=above)


def test_an_end_equal_to_the_outward_reading_is_not_taken_as_proved():
    """The rule took an independent end equal to a recorded end's outward reading as a route's own
    bracket at that end. A route that re-proved nothing but the reading (gdp.certify's cells at hi
    rounded up) was accepted by that exception. Every route now states such an end read inward, and
    the rule has no exception: the outward readings of [0.1, 0.1] are not inside [0.1, 0.1] read
    inward (0.1 is not dyadic, so its readings differ), and they overlap it: exit 3."""
    import pytest

    from dpverify.errors import CouldNotReprove
    from dpverify.recheck.decimals import enclosure_of
    from dpverify.recheck.verify import accept_enclosure

    ends = enclosure_of({"lo": "0.1", "hi": "0.1"}, "e", 40)
    assert ends[0] == ends.inner[1] < ends.inner[0] == ends[1]
    with pytest.raises(CouldNotReprove):
        accept_enclosure(ends, (ends[0], ends[1]), "x")
    accept_enclosure(enclosure_of({"lo": "0.1", "hi": "0.2"}, "e", 40), (ends.inner[0], ends.inner[0]), "x")


def _up256(text: str) -> Fraction:
    from dpverify.recheck.core import mpf_to_fraction
    from dpverify.recheck.decimals import parse_bound

    return mpf_to_fraction(parse_bound(text, "x", 60, "c"))


def test_an_exact_value_just_past_a_short_decimal_is_refused():
    """adv45 H1: a route whose value is an exact rational (here D_alpha of N(1, 1) against N(0, 1), which
    is alpha / 2 exactly, Mironov 2017 Prop 7) returned it rounded outward, and an input alpha = 2 D with D
    the 256-bit reading of "1.3" rounded up made that value equal to the recorded end's outward reading:
    [1.3, 1.3] was confirmed for a truth 1.3 + 1.04e-77 (exact rationals below). The value is now
    compared with the recorded decimals exactly: exit 1. The same certificate with the true decimal
    ends (the value printed to 80 digits, rounded outward) is confirmed."""
    import copy
    from pathlib import Path

    from ..certs import reword

    src = json.loads((Path(__file__).parents[1] / "certificate" / "format2" / "rdp-divergence.json").read_text())
    D = _up256("1.3")
    assert 0 < D - Fraction(13, 10) < Fraction(1, 10**76)
    cert = copy.deepcopy(src)
    cert["inputs"].update(noise_multiplier="1", alpha=f"{(2 * D).numerator}/{(2 * D).denominator}")
    cert["result"]["enclosure"] = {"lo": "1.3", "hi": "1.3"}
    from dpverify.certificate import prose

    cert["result"]["quantity"] = prose._fill(prose.encloses_template("rdp.divergence", cert["result"]), cert["inputs"])
    assert outcome(reseal(reword(cert))) == 1
    lo = f"{float(13 / 10):.17}"  # below 1.3
    hi = "1." + "3" + "0" * 75 + "2"  # 1.3 + 2e-77, above D
    assert Fraction(lo) < D < Fraction(hi)
    cert["result"]["enclosure"] = {"lo": lo, "hi": hi}
    assert outcome(reseal(reword(cert))) == 0


def test_a_true_point_enclosure_of_an_exact_value_is_accepted(tmp_path):
    """The other side of the exact comparison (adv46 L1): at eps >= eps0 the 64-row sup of check rr64 is
    delta0 exactly (GDPT's 4-output mechanism), so [0.1, 0.1] for delta0 = 1/10 is true; it was exit 3
    where the route rebuilt its result without the exact value. A [0.1, 0.1] for delta0 = 0.1 + 1e-80 is
    refused."""
    out = tmp_path / "c.json"
    assert main(["check", "rr64", "--eps0", "0.5", "--delta0", "0.1", "--eps", "1", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    for key in ("enclosure", "gdpt_formula"):
        cert["result"][key] = {"lo": "0.1", "hi": "0.1"}
    assert outcome(reseal(cert)) == 0
    cert["inputs"]["delta0"] = "0." + "1" + "0" * 78 + "1"  # 0.1 + 1e-80
    from ..certs import reword

    assert outcome(reseal(reword(cert))) == 1


def test_a_refutation_shows_its_ends_apart():
    """ref52: an enclosure 1e-40 past a recorded end was refused with a message whose two enclosures,
    shown to 24 digits, read the same; the ends are shown to as many digits as tell them apart."""
    import re

    import mpmath
    import pytest

    from dpverify.errors import CertificateRejected
    from dpverify.recheck.decimals import enclosure_of
    from dpverify.recheck.verify import accept_enclosure

    with mpmath.workdps(60):
        rec = enclosure_of({"lo": "6.5", "hi": "6.54792406686495100581928943695883616839"}, "e", 60)
        x = mpmath.mpf("6.54792406686495100581928943695883616839") * (1 + mpmath.mpf(10) ** -40 * 2)
        with pytest.raises(CertificateRejected) as got:
            accept_enclosure(rec, (x, x), "result.enclosure")
    shown = re.findall(r"\[([^,]+), ([^\]]+)\]", str(got.value))
    assert shown[0][0] != shown[1][1], got.value  # the refuted end and the recorded hi read apart

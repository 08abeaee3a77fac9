"""Oracle rows on the edges of their enclosure: the rule of docs/reference/certificates.md,
"Oracle rows" (producer and verify each implement it; neither imports the other).

adv47 M2: the producer classified on its unprinted binary ends and verify on the printed
decimals, and verify also demanded each verdict on its own narrower enclosure [a, b]; a
genuine certificate whose reported number equals a printed end (tolerance 0), or lies
between the printed lo and a, was refused (exit 1 / 3). Every certificate here is written by
the real CLI; every forgery changes one thing and re-seals the digest, so only the re-check
can catch it. Ground truth: lo <= a <= epsilon* <= b <= hi, the exact rationals of the
printed decimals and of verify's own independent enclosure (recheck.pld), compared by hand.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

from dpverify.ball import exact_str
from dpverify.recheck.verify import verify_certificate

from ..certs import outcome, reseal

HEADER = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
CONFIG = {"noise_multiplier": "1", "sampling_rate": "0.01", "steps": 100, "delta": "1e-5"}
TINY = Fraction(1, 10**25)


def _row(name: str, reported: Fraction) -> str:
    return f"{name},subsampled-gaussian,1,0.01,100,1e-5,{exact_str(reported)}\n"


def _decimal_between(x: Fraction, y: Fraction) -> Fraction:
    """A short decimal strictly between x < y."""
    n = 1
    while True:
        m = Fraction(round((x + y) / 2 * 10**n), 10**n)
        if x < m < y:
            return m
        n += 1


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    """(certificate, printed (lo, hi), independent (a, b)) of a genuine run at tolerance 0 whose
    rows sit on and between every end."""
    import mpmath

    from dpverify.cli import main
    from dpverify.pld import dpsgd_epsilon
    from dpverify.recheck.core import mpf_to_fraction
    from dpverify.recheck.pld import recheck_epsilon

    printed = dpsgd_epsilon("1", "0.01", 100, "1e-5", digits=4).enclosure.to_json()
    lo, hi = Fraction(printed["lo"]), Fraction(printed["hi"])
    with mpmath.workdps(50):
        re = recheck_epsilon({**CONFIG, "delta": "0.00001", "neighboring": "add-remove"}, {"enclosure": printed})
        a, b = (mpf_to_fraction(v) for v in re.enclosure())
    assert lo < a < b < hi  # the independent enclosure lies strictly inside: the cases below exist
    rows = [("at-lo", lo, "consistent"), ("at-hi", hi, "consistent"),
            ("lo-to-a", _decimal_between(lo, a), "consistent"), ("b-to-hi", _decimal_between(b, hi), "consistent"),
            ("mid", _decimal_between(a, b), "consistent"),
            ("below-lo", lo - TINY, "unsafe"), ("above-hi", hi + TINY, "loose")]
    d = tmp_path_factory.mktemp("edges")
    (d / "in.csv").write_text(HEADER + "".join(_row(n, r) for n, r, _ in rows))
    out = d / "o.json"
    assert main(["oracle", "--input", str(d / "in.csv"), "--tolerance", "0", "--digits", "4",
                 "--certificate", str(out)]) == 1  # below-lo is unsafe
    cert = json.loads(out.read_text())
    assert cert["result"]["configs"][0]["certified"] == printed  # the producer's enclosure is the API's
    assert [r["verdict"] for r in cert["result"]["rows"]] == [v for _, _, v in rows]
    return cert, (lo, hi), (a, b)


def _rows(cert: dict) -> dict:
    return {r["accountant"]: r for r in cert["result"]["rows"]}


def test_genuine_edge_rows_verify(edges):
    """Reported on the printed lo and hi at tolerance 0, and between a printed end and the
    independent one: consistent, and confirmed (exit 1 and exit 3 before)."""
    cert, _, _ = edges
    assert outcome(copy.deepcopy(cert)) == 0


def test_genuine_edge_rows_at_a_large_tolerance_verify(tmp_path):
    """Tolerance 10: hi (1 + 10) is consistent, one more 1e-25 loose; both confirmed."""
    from dpverify.cli import main
    from dpverify.pld import dpsgd_epsilon

    hi = Fraction(dpsgd_epsilon("1", "0.01", 100, "1e-5", digits=4).enclosure.to_json()["hi"])
    (tmp_path / "in.csv").write_text(HEADER + _row("edge", 11 * hi) + _row("past", 11 * hi + TINY))
    out = tmp_path / "o.json"
    assert main(["oracle", "--input", str(tmp_path / "in.csv"), "--tolerance", "10", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert [r["verdict"] for r in cert["result"]["rows"]] == ["consistent", "loose"]
    assert outcome(cert) == 0


def test_an_earlier_writers_binary_end_rows_verify(edges):
    """Writers before this release classified on the binary ends, which lie inside the printed
    decimals: a report on the printed lo was 'unsafe' with an excess of about -1e-17, one on the
    printed hi 'loose'. Both statements are true (lo < a, b < hi): the independent enclosure
    decides them, and the excess measured from the binary end is allowed its last printed digit."""
    from dpverify.pld import dpsgd_epsilon

    cert, (lo, hi), _ = edges
    enc = dpsgd_epsilon("1", "0.01", 100, "1e-5", digits=4).enclosure
    old = copy.deepcopy(cert)
    rows = _rows(old)
    blo, bhi = enc.lo_fraction, enc.hi_fraction
    assert lo < blo and bhi < hi
    rows["at-lo"].update(verdict="unsafe", excess=f"{float((lo - blo) / blo):.4g}")
    rows["at-hi"].update(verdict="loose", excess=f"{float((hi - bhi) / bhi):.4g}")
    old["result"]["verdict"] = "fails"
    assert outcome(reseal(old)) == 0
    # an excess off by more than that is still refused
    rows["at-lo"]["excess"] = "-0.0002"
    assert outcome(reseal(old)) == 1


@pytest.mark.parametrize("name, verdict, code", [
    ("mid", "unsafe", 1),         # inside [a, b]: neither enclosure decides it
    ("mid", "loose", 1),
    ("below-lo", "consistent", 1),  # the recorded decimals decide it unsafe
    ("above-hi", "consistent", 1),  # ... and loose
    ("below-lo", "loose", 1),
    ("lo-to-a", "unsafe", 0),     # true: reported < a <= epsilon*, which the independent enclosure proves
    ("b-to-hi", "loose", 0),      # true at tolerance 0: reported > b >= epsilon*
])
def test_flipped_verdicts(edges, name, verdict, code):
    """A relabelled row is refused unless its new verdict is proved; the two accepted ones are
    true statements about epsilon* (the certificate then says 'fails' where a row is unsafe)."""
    cert, (lo, hi), _ = edges
    c = copy.deepcopy(cert)
    row = _rows(c)[name]
    reported = Fraction(row["reported"])
    row["verdict"] = verdict
    row["excess"] = None
    any_unsafe = any(r["verdict"] == "unsafe" for r in c["result"]["rows"])
    c["result"]["verdict"] = "fails" if any_unsafe else "holds"
    assert outcome(reseal(c)) == code, (name, verdict, float(reported))


def _vacuous(cert: dict, band: dict) -> dict:
    c = copy.deepcopy(cert)
    for cfg in c["result"]["configs"]:
        cfg["certified"] = dict(band)
    for r in c["result"]["rows"]:
        r["certified"] = dict(band)
        r["verdict"], r["excess"] = "consistent", "0"
    c["result"]["verdict"] = "holds"
    return reseal(c)


def test_vacuous_enclosure_is_refused_by_its_width(edges):
    """[0, 100] contains epsilon* and decides no row: every row would read consistent. It is far
    wider than digits 4 allow, and the refusal names the width and the accuracy."""
    from dpverify.errors import CertificateRejected

    cert, _, _ = edges
    with pytest.raises(CertificateRejected, match=r"\[0, 100\] \(width 100(\.0)?\) is wider than its recorded "
                       r"accuracy 1e-4 \(x 10"):
        verify_certificate(_vacuous(cert, {"lo": "0", "hi": "100"}))


def test_vacuous_enclosure_is_refused_even_where_the_independent_one_agrees(tmp_path):
    """A single row inside [a, b]: consistent on the independent enclosure too, which the old
    guard (the verdict must hold on [a, b]) accepted under [0, 100]. A consistent row is a
    statement at the stated accuracy, which [0, 100] is not."""
    from dpverify.cli import main

    (tmp_path / "in.csv").write_text(HEADER + "mid,subsampled-gaussian,1,0.01,100,1e-5,0.71804\n")
    out = tmp_path / "o.json"
    assert main(["oracle", "--input", str(tmp_path / "in.csv"), "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert outcome(copy.deepcopy(cert)) == 0
    for band in ({"lo": "0", "hi": "100"}, {"lo": "0.7", "hi": "0.75"}, {"lo": "0.718", "hi": "inf"}):
        assert outcome(_vacuous(cert, band)) == 1, band


def test_widened_within_the_stated_accuracy_is_a_consistent_statement(edges):
    """lo lowered by 2e-5 relative (the enclosure stays within the stated 1e-4): still a true enclosure
    at the stated accuracy, so a row 1e-25 below the old lo reads consistent, as a genuine run at
    digits 4 could state. Lowered by 5e-4 (within only the x10 narrowly missed allowance, which does not
    extend to a row): verify's own enclosure, refined only until it fits inside the recorded one, is too
    wide to confirm a consistent row at 1e-4, so not confirmed (exit 3; it was accepted, and the same
    allowance hid an unsafe row: the next tests). Lowered by 2e-3 (past every allowance) it is refused."""
    cert, (lo, hi), _ = edges
    for shift, code in ((Fraction(2, 10**5), 0), (Fraction(5, 10**4), 3), (Fraction(2, 10**3), 1)):
        c = copy.deepcopy(cert)
        band = {"lo": exact_str(lo * (1 - shift)), "hi": c["result"]["configs"][0]["certified"]["hi"]}
        c["result"]["configs"][0]["certified"] = dict(band)
        for r in c["result"]["rows"]:
            r["certified"] = dict(band)
        below = _rows(c)["below-lo"]
        below["verdict"], below["excess"] = "consistent", "0"
        c["result"]["verdict"] = "holds"
        assert outcome(reseal(c)) == code, shift


@pytest.mark.parametrize("change, code", [
    ({"digits": 8}, 1),     # the enclosure (5e-5 relative) is not what digits 8 promise
    ({"digits": None}, 2),  # no accuracy to judge a consistent row at: every writer records it
    ({"tolerance": "100"}, 1),  # above-hi is no longer loose on either enclosure
    ({"tolerance": "-1"}, 2),
])
def test_forged_inputs(edges, change, code):
    cert, _, _ = edges
    c = copy.deepcopy(cert)
    for k, v in change.items():
        if v is None:
            del c["inputs"][k]
        else:
            c["inputs"][k] = v
    assert outcome(reseal(c)) == code


def test_shifted_enclosures_are_refused(edges):
    """Moved past epsilon*: disjoint from the independent enclosure (exit 1); moved by half its
    width, it no longer contains [a, b]: not re-proved (exit 3, never an accept), or refused where
    the route proves a moved end false (down: epsilon* > the new hi) or a row's verdict now
    contradicts the moved decimals."""
    cert, (lo, hi), _ = edges
    for delta, code in ((hi - lo + TINY, {1}), ((hi - lo) / 2, {1, 3}), (-(hi - lo) / 2, {1, 3})):
        c = copy.deepcopy(cert)
        band = {"lo": exact_str(lo + delta), "hi": exact_str(hi + delta)}
        c["result"]["configs"][0]["certified"] = dict(band)
        for r in c["result"]["rows"]:
            r["certified"] = dict(band)
        assert outcome(reseal(c)) in code, delta


def test_zero_epsilon_rows_verify_and_an_excess_against_zero_is_refused(tmp_path):
    """sigma 100, q 0.001, one step, delta 1/2: delta(0) is at most (2/5) q / sigma = 4e-6 <= delta,
    so epsilon* = 0 exactly and the enclosure is [0, 0]. A report of 0.1 is loose with no finite
    relative excess (the producer stopped, exit 3, on (0.1 - 0) / 0); one of 0 is consistent. A
    forged excess beside the loose row is refused (verify raised ZeroDivisionError)."""
    from dpverify.cli import main

    (tmp_path / "in.csv").write_text(HEADER + "z,subsampled-gaussian,100,0.001,1,0.5,0.1\n"
                                     "zz,subsampled-gaussian,100,0.001,1,0.5,0\n")
    out = tmp_path / "o.json"
    assert main(["oracle", "--input", str(tmp_path / "in.csv"), "--tolerance", "0", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert cert["result"]["configs"][0]["certified"] == {"lo": "0", "hi": "0"}
    assert [(r["verdict"], r["excess"]) for r in cert["result"]["rows"]] == [("loose", None), ("consistent", "0")]
    assert outcome(copy.deepcopy(cert)) == 0
    cert["result"]["rows"][0]["excess"] = "5"
    assert outcome(reseal(cert)) == 1


def test_an_enclosure_reaching_zero_at_a_small_stated_digits_cannot_hide_an_unsafe_row(tmp_path):
    """An enclosure [0, hi] is measured absolutely (hi <= 10 x 10^-digits): at digits 1, [0, 1] passed
    the width rule, and rows below epsilon* = 0.718 read 'consistent', the verdict 'holds' (ref48
    HIGH-2). The independent enclosure proves those rows unsafe: refused (exit 1)."""
    from dpverify.cli import main

    (tmp_path / "in.csv").write_text(HEADER + "a,subsampled-gaussian,1,0.01,100,1e-5,0.6\n"
                                     "b,subsampled-gaussian,1,0.01,100,1e-5,0.1\n")
    out = tmp_path / "o.json"
    assert main(["oracle", "--input", str(tmp_path / "in.csv"), "--certificate", str(out)]) == 1
    cert = json.loads(out.read_text())
    assert outcome(copy.deepcopy(cert)) == 0 and cert["result"]["verdict"] == "fails"
    cert["inputs"]["digits"] = 1
    assert outcome(_vacuous(cert, {"lo": "0", "hi": "1"})) == 1


def test_le_is_exact_for_a_bound_of_zero_or_below() -> None:
    """recheck.calibrate._le decides v <= delta by binary magnitudes for delta > 0 only: at a forged
    delta_at_target.hi of 0 they said 2^-100 <= 0 (ref48 HIGH-1); now exact there."""
    import mpmath

    from dpverify.recheck.calibrate import _le

    tiny = mpmath.ldexp(mpmath.mpf(1), -100)
    assert not _le(tiny, Fraction(0)) and not _le(tiny, Fraction(-1, 3))
    assert _le(mpmath.mpf(0), Fraction(0)) and not _le(mpmath.mpf(0), Fraction(-1))
    assert _le(-tiny, Fraction(0)) and not _le(-tiny, Fraction(-1))


def test_a_widened_enclosure_cannot_hide_a_row_the_independent_one_proves_unsafe(tmp_path):
    """adv48b: one row at 4.36 against epsilon* in [4.37718, 4.37752] (the Gaussian at sigma 1, delta
    1e-5; unsafe). The enclosure widened to [4.34, 4.383] (relative width 0.0099, inside 10 x 1e-3)
    with the row 'consistent' and the verdict 'holds' was confirmed; the independent enclosure proves
    the row unsafe, and the x10 allowance no longer covers a row: exit 1."""
    from dpverify.cli import main

    (tmp_path / "in.csv").write_text(HEADER + "A,gaussian,1,1,1,1e-5,4.36\n")
    out = tmp_path / "o.json"
    assert main(["oracle", "--input", str(tmp_path / "in.csv"), "--digits", "3", "--certificate", str(out)]) == 1
    cert = json.loads(out.read_text())
    assert outcome(copy.deepcopy(cert)) == 0
    c = _vacuous(cert, {"lo": "4.34", "hi": "4.383"})
    for r in c["result"]["rows"]:
        r.pop("excess", None)
    assert outcome(reseal(c)) == 1


@pytest.mark.parametrize("side", ["unsafe", "loose"])
def test_the_narrowly_missed_allowance_cannot_hide_a_row_the_independent_enclosure_leaves_open(side, tmp_path):
    """Issue 22 (adv48b's open end): a row 2e-4 below epsilon* (unsafe at the stated digits 4: the producer
    says so, verdict 'fails'), under an enclosure widened to 9.8e-4 (inside only the x10 allowance) with the
    row 'consistent' and the verdict 'holds', was confirmed: verify's own enclosure [a, b], refined only until
    it fits inside the recorded one, has a below the row and decided nothing. Likewise a row 3e-4 above
    epsilon* at tolerance 0 (loose) under an upper end raised to 9.8e-4. A consistent row on an enclosure
    wider than 10^-digits now needs [a, b] itself within 10^-digits (exit 3 otherwise; exit 1 where [a, b]
    decides the row)."""
    cert, (lo, hi), (a, b) = _edges_at(tmp_path, side)
    assert outcome(copy.deepcopy(cert)) == 0 and cert["result"]["rows"][0]["verdict"] == side
    mid = (a + b) / 2
    band = ({"lo": exact_str(_short(mid * (1 - Fraction(93, 10**5)))), "hi": exact_str(hi)} if side == "unsafe"
            else {"lo": exact_str(lo), "hi": exact_str(_short(mid * (1 + Fraction(93, 10**5)), up=True))})
    c = _vacuous(cert, band)
    w = (Fraction(band["hi"]) - Fraction(band["lo"])) / Fraction(band["lo"])
    assert Fraction(1, 10**4) < w < Fraction(10, 10**4)  # inside the allowance, past the stated accuracy
    assert outcome(c) in (1, 3)


def _short(x: Fraction, up: bool = False) -> Fraction:
    import math

    return Fraction((math.ceil if up else math.floor)(x * 10**9), 10**9)


def _edges_at(tmp_path, side):
    """A genuine certificate of one row 2e-4 below (unsafe) or 3e-4 above (loose, tolerance 0) the
    midpoint of verify's own enclosure, with that enclosure's ends (a, b)."""
    import mpmath

    from dpverify.cli import main
    from dpverify.pld import dpsgd_epsilon
    from dpverify.recheck.core import mpf_to_fraction
    from dpverify.recheck.pld import recheck_epsilon

    printed = dpsgd_epsilon("1", "0.01", 100, "1e-5", digits=4).enclosure.to_json()
    with mpmath.workdps(50):
        re = recheck_epsilon({**CONFIG, "delta": "0.00001", "neighboring": "add-remove"}, {"enclosure": printed})
        a, b = (mpf_to_fraction(v) for v in re.enclosure())
    r = _short((a + b) / 2 * (1 - Fraction(2, 10**4) if side == "unsafe" else 1 + Fraction(3, 10**4)))
    (tmp_path / "in.csv").write_text(HEADER + _row("A", r))
    out = tmp_path / "o.json"
    main(["oracle", "--input", str(tmp_path / "in.csv"), "--tolerance", "0", "--digits", "4",
          "--certificate", str(out)])
    return json.loads(out.read_text()), (Fraction(printed["lo"]), Fraction(printed["hi"])), (a, b)


def test_a_recorded_input_with_a_key_twice_is_refused():
    """The producer reads its input file through files.json_loads, which refuses a key given twice; the
    re-check read the recorded input_text with last-wins json.loads, so a text the producer would refuse
    (row b's reported_eps 9, then 0.1) re-read as the certificate's rows and was accepted. One parse now
    serves both: exit 1."""
    import hashlib
    from pathlib import Path

    cert = json.loads((Path(__file__).resolve().parents[1] / "certificate" / "format2" / "oracle-input.json").read_text())
    text = cert["inputs"]["input_text"]
    forged = text.replace('"accountant": "b",', '"accountant": "b", "reported_eps": "9",')
    assert forged != text and json.loads(forged) == json.loads(text)  # last-wins: the same rows
    cert["inputs"]["input_text"] = forged
    cert["inputs"]["input_sha256"] = hashlib.sha256(forged.encode("utf-8")).hexdigest()
    assert outcome(reseal(cert)) == 1


def test_a_battery_certificate_names_a_battery_the_oracle_runs():
    """adv50 L4: a battery certificate naming a battery no `oracle --battery` runs was confirmed (its rows
    named as not confirmed); the names verify allows are the oracle's own (one tuple, stdlib side)."""
    from pathlib import Path

    from dpverify.certificate.format import ORACLE_BATTERIES
    from dpverify.oracle.run import BATTERIES

    assert tuple(BATTERIES) == ORACLE_BATTERIES
    cert = json.loads((Path(__file__).resolve().parents[1] / "certificate" / "format2" / "oracle-battery-smoke.json")
                      .read_text())
    assert outcome(cert) == 0
    cert["inputs"]["battery"] = "smoke2"
    assert outcome(reseal(cert)) == 2

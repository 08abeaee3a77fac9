"""Forgery classes that used to answer exit 0 or exit 3 where the statement is provably
false: a kind relabelled under a format that never defined it, oracle rows that say what
the input file does not, and brackets moved off verify's own proved enclosure.

Every forgery starts from a genuine certificate (a committed fixture or one the CLI
writes here), changes what its class changes and recomputes the digest, so only the
second route can catch it. The ground truth is stated beside each case.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ..certs import outcome, reseal

ROOT = Path(__file__).resolve().parents[2]
F1 = ROOT / "tests" / "certificate" / "format1"


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


# --------------------------------------------------------------------------- kinds per format


@pytest.mark.parametrize("name", ["main-shuffle-epsilon", "main-shuffle-delta", "main-replace-claim"])
def test_a_format_two_kind_relabelled_format_one_is_refused(name):
    """shuffle.*, bins.* and replace.* came after the last format-1 writer (dpverify 0.1.0,
    b158129 / d387c9f^: its re-checker registry has none of them, and no frozen format-1
    certificate is one), so a format-1 certificate of such a kind is relabelled: exit 2.
    The genuine format-2 certificate it came from verifies."""
    genuine = _load(F1 / f"{name}.json")
    assert genuine["format"] == "dpverify-certificate/2"
    assert outcome(copy.deepcopy(genuine), budget=240) == 0
    forged = copy.deepcopy(genuine)
    forged["format"] = "dpverify-certificate/1"
    assert outcome(reseal(forged)) == 2


def test_every_frozen_format_one_kind_is_a_format_one_kind():
    """The structural rule refuses no committed format-1 certificate: every kind found in a
    frozen format-1 file is one the table dates to format 1."""
    from dpverify.recheck.kinds import KINDS

    seen = set()
    for p in [*F1.glob("*.json"), *(ROOT / "certificates").glob("*.json"),
              ROOT / "docs" / "reports" / "oracle-battery.json"]:
        c = _load(p)
        if c.get("format") == "dpverify-certificate/1":
            seen.add(c["claim"]["quantity"])
    assert seen and all(KINDS[k].since == 1 for k in seen)
    assert {k for k, v in KINDS.items() if v.since == 2} == {
        f"{p}.{s}" for p in ("shuffle", "bins") for s in ("epsilon", "delta", "claim")} | {
        "replace.epsilon", "replace.delta", "replace.claim"}


# --------------------------------------------------------------------------- oracle rows and their input file

#: the file the user holds: mine2's 0.3 is below eps(1e-5) of sigma 1.1, q 0.01, T 100, whose
#: certified lower end is 0.5496 (the certificate written here): an unsafe row; mine3's 10 for
#: one Gaussian step at sigma 2 (eps(1e-5) in [1.9928, 1.9939]) is loose
CSV = ("accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
       "mine,subsampled-gaussian,1.1,0.01,100,1e-5,0.55\n"
       "mine2,subsampled-gaussian,1.1,0.01,100,1e-5,0.3\n"
       "mine3,gaussian,2,1,1,1e-5,10\n")


@pytest.fixture(scope="module")
def oracle_cert(tmp_path_factory) -> dict:
    from dpverify.cli import main

    d = tmp_path_factory.mktemp("oracle")
    (d / "in.csv").write_text(CSV)
    out = d / "o.json"
    assert main(["oracle", "--input", str(d / "in.csv"), "--digits", "3", "--certificate", str(out)]) == 1
    cert = json.loads(out.read_text())
    import hashlib

    # the user's check: the recorded hash is the hash of their file, and its text travels with it
    assert cert["inputs"]["input_sha256"] == hashlib.sha256(CSV.encode()).hexdigest()
    assert cert["inputs"]["input_text"] == CSV
    assert [r["verdict"] for r in cert["result"]["rows"]] == ["consistent", "unsafe", "loose"]
    return cert


def _holds(c: dict) -> dict:
    c["result"]["verdict"] = "holds"
    return reseal(c)


def test_genuine_oracle_certificate_binds_its_rows(oracle_cert):
    from dpverify.recheck.verify import verify_certificate

    summary = verify_certificate(copy.deepcopy(oracle_cert), budget_seconds=240)
    assert "not part of what is confirmed" not in summary


def test_oracle_unsafe_row_rewritten_consistent_is_refused(oracle_cert):
    """The file says mine2 reported 0.3 (line 3 of CSV); the forged row says 0.5498, inside
    the certified enclosure, so its classification alone is consistent."""
    c = copy.deepcopy(oracle_cert)
    row = c["result"]["rows"][1]
    row.update(reported="0.5498", verdict="consistent", excess="0")
    assert outcome(_holds(c), budget=240) == 1


def test_oracle_unsafe_row_dropped_with_the_row_count_is_refused(oracle_cert):
    """The file has 3 rows; the forgery keeps 2 and says row_count 2."""
    c = copy.deepcopy(oracle_cert)
    del c["result"]["rows"][1]
    c["inputs"]["row_count"] = 2
    assert outcome(_holds(c), budget=240) == 1


def test_oracle_loose_row_rewritten_as_returned_inf_is_refused(oracle_cert):
    """The file says mine3 reported 10, not +inf."""
    c = copy.deepcopy(oracle_cert)
    row = c["result"]["rows"][2]
    row.update(reported="inf", verdict="returned-inf")
    row.pop("excess", None)
    assert outcome(reseal(c), budget=240) == 1


def test_oracle_input_text_edited_without_its_hash_is_refused(oracle_cert):
    """The text must be the one input_sha256 names (the hash the user compares with their file)."""
    c = copy.deepcopy(oracle_cert)
    c["inputs"]["input_text"] = CSV.replace(",0.3\n", ",0.5498\n")
    c["result"]["rows"][1].update(reported="0.5498", verdict="consistent", excess="0")
    assert outcome(_holds(c), budget=240) == 1


def test_oracle_certificate_stripped_of_its_input_text_is_refused(oracle_cert):
    """adv34 F1: a certificate that names its file by sha256 and drops the text could say
    anything of the rows. Stripped alone it is refused (exit 2, the missing key named), and so is
    the attack: text deleted, the unsafe row (0.3 in the file) rewritten consistent, verdict holds."""
    from dpverify.errors import MalformedCertificate
    from dpverify.recheck.verify import verify_certificate

    c = copy.deepcopy(oracle_cert)
    del c["inputs"]["input_text"]
    with pytest.raises(MalformedCertificate, match="input_text"):
        verify_certificate(reseal(c), budget_seconds=240)
    c["result"]["rows"][1].update(reported="0.5498", verdict="consistent", excess="0")
    assert outcome(_holds(c), budget=240) == 2


def test_oracle_certificate_stripped_of_its_text_and_hash_says_what_is_missing(oracle_cert):
    """adv48b: stripped of both input_text and input_sha256, a format-2 --input certificate was read as a
    format-1 one ("this format-1 certificate names its input file only by its name", rows unbound) and
    confirmed, the unsafe row rewritten consistent included. Its inputs.row_count, which only the
    format-2 writer writes beside the text, names it: exit 2, naming the missing keys. Without any
    source (neither inputs.input nor inputs.battery) it was read the same way: exit 2, naming both."""
    from dpverify.errors import MalformedCertificate
    from dpverify.recheck.verify import verify_certificate

    c = copy.deepcopy(oracle_cert)
    del c["inputs"]["input_text"], c["inputs"]["input_sha256"]
    # format 2's schema requires the text beside inputs.input (with or without row_count: mend49's
    # leftover, a format-2 certificate stripped of all three was read as unbound)
    for keep_count in (True, False):
        d = copy.deepcopy(c)
        if not keep_count:
            del d["inputs"]["row_count"]
        with pytest.raises(MalformedCertificate, match=r"inputs: 'input_text' is a dependency of 'input'"):
            verify_certificate(reseal(d), budget_seconds=240)
    # relabelled format 1 (no such schema rule), inputs.row_count still names the format-2 writer
    d = copy.deepcopy(c)
    d["format"] = "dpverify-certificate/1"
    with pytest.raises(MalformedCertificate, match=r"inputs\.input_text and inputs\.input_sha256: missing\. This "
                       r"--input certificate records inputs\.row_count"):
        verify_certificate(reseal(d), budget_seconds=240)
    c["result"]["rows"][1].update(reported="0.5498", verdict="consistent", excess="0")
    assert outcome(_holds(c), budget=240) == 2
    for source in ("input", "battery"):
        f1 = _load(F1 / ("cli-oracle-input.json" if source == "input" else "oracle-battery.json"))
        del f1["inputs"][source]
        with pytest.raises(MalformedCertificate, match="inputs.battery .* or inputs.input .* this one names neither"):
            verify_certificate(reseal(f1), budget_seconds=240)


def test_format_one_oracle_certificate_says_its_rows_are_unbound():
    """0.1.0 named the input file only by its name (no hash, no text): such a certificate
    stays verifiable, and verify says what it cannot confirm."""
    from dpverify.recheck.verify import verify_certificate

    c = _load(F1 / "cli-oracle-input.json")
    assert "input_sha256" not in c["inputs"]
    summary = verify_certificate(c, budget_seconds=240)
    assert "not part of what is confirmed: result.rows' accountants and reported numbers" in summary
    assert "this certificate names its input file only by its name, as the format-1 writer" in summary


# --------------------------------------------------------------------------- brackets moved off the truth


def _cli(argv: list, tmp_path: Path) -> dict:
    from dpverify.cli import main

    out = tmp_path / "c.json"
    assert main([*argv, "--certificate", str(out)]) in (0, 1)
    return json.loads(out.read_text())


def _moved(cert: dict, lo: str, hi: str) -> dict:
    c = copy.deepcopy(cert)
    c["result"]["enclosure"] = {"lo": lo, "hi": hi}
    c["result"].pop("relative_width", None)
    return reseal(c)


def _above(cert: dict) -> dict:
    """[hi (1 + 1e-12), hi (1 + 2e-12)]: just above the recorded (true) upper end."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        hi = Decimal(cert["result"]["enclosure"]["hi"])
        return _moved(cert, str(hi * (1 + Decimal("1e-12"))), str(hi * (1 + Decimal("2e-12"))))


def _below(cert: dict) -> dict:
    """[lo (1 - 2e-12), lo (1 - 1e-12)]: just below the recorded (true) lower end."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        lo = Decimal(cert["result"]["enclosure"]["lo"])
        return _moved(cert, str(lo * (1 - Decimal("2e-12"))), str(lo * (1 - Decimal("1e-12"))))


SHUFFLE = ["audit", "dpsgd", "--noise-multiplier", "1.1", "--dataset-size", "1000", "--batch-size", "100",
           "--epochs", "2", "--sampling", "shuffle", "--delta", "1e-5"]


def test_shuffle_epsilon_moved_above_the_gaussian_bound_is_refused(tmp_path):
    """Independent bound: shuffled DP-SGD is no worse than E = 2 Gaussian steps without
    amplification, mu = sqrt(2) / 1.1 (AFA Thm 10); by mpmath at 50 digits delta_mu(lo') < 1e-5
    at the forged lower end lo', so eps(1e-5) < lo': the forged bracket is false."""
    import mpmath

    genuine = _cli(SHUFFLE, tmp_path)
    assert outcome(copy.deepcopy(genuine)) == 0
    forged = _above(genuine)
    with mpmath.workdps(50):
        mu = mpmath.sqrt(2) / mpmath.mpf("1.1")
        e = mpmath.mpf(forged["result"]["enclosure"]["lo"])
        d = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
        assert d < mpmath.mpf("1e-5")
    assert outcome(forged) == 1


def test_shuffle_epsilon_moved_below_its_lower_end_is_refused(tmp_path):
    """The forged upper end lies below the genuine certificate's lower end, which verify
    re-proves (the max-of-batch-sums pair): false. Exit 3 before, exit 1 now."""
    from fractions import Fraction

    genuine = _cli(SHUFFLE, tmp_path)
    forged = _below(genuine)
    assert Fraction(forged["result"]["enclosure"]["hi"]) < Fraction(genuine["result"]["enclosure"]["lo"])
    assert outcome(forged) == 1


@pytest.mark.parametrize("move", [_above, _below])
def test_balls_in_bins_epsilon_moved_off_is_refused(move, tmp_path):
    """One epoch of balls-in-bins: the forged bracket is disjoint from the genuine one, whose
    ends verify re-proves on the recorded grid (exit 0 below)."""
    genuine = _cli([*SHUFFLE[:-6], "--epochs", "1", "--sampling", "balls-in-bins", "--delta", "1e-5"], tmp_path)
    assert genuine["claim"]["quantity"] == "bins.epsilon"
    assert outcome(copy.deepcopy(genuine)) == 0
    assert outcome(move(genuine)) == 1


def _laplace_rdp_eps(b: str, k: int, delta: str, alpha: str) -> "object":
    """Classic RDP conversion of k Laplace(b) steps at one order (Mironov 2017 Prop 6 and Prop 3):
    k D_alpha + log(1/delta) / (alpha - 1), an upper bound of the infimum over alpha."""
    import mpmath

    a, lam = mpmath.mpf(alpha), 1 / mpmath.mpf(b)
    D = mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * lam) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * lam)) / (a - 1)
    return k * D + mpmath.log(1 / mpmath.mpf(delta)) / (a - 1)


def test_rdp_epsilon_moved_above_the_value_at_an_order_is_refused(tmp_path):
    """Independent bound: the conversion at any one order is an upper end of the infimum; at the
    recorded order (mpmath, 50 digits) it is below the forged lower end: false."""
    import mpmath

    genuine = _cli(["rdp", "epsilon", "--mechanism", "laplace", "--scale", "2", "--steps", "10", "--delta", "1e-5"],
                   tmp_path)
    assert outcome(copy.deepcopy(genuine)) == 0
    forged = _above(genuine)
    with mpmath.workdps(50):
        v = _laplace_rdp_eps("2", 10, "1e-5", genuine["result"]["alpha"])
        assert v < mpmath.mpf(forged["result"]["enclosure"]["lo"])
    assert outcome(forged) == 1


def test_rdp_epsilon_moved_below_its_lower_end_is_refused(tmp_path):
    """The subsampled Gaussian (no closed form): the forged upper end is below the genuine lower
    end, which verify re-proves on its cells of orders."""
    genuine = _cli(["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1.1",
                    "--sampling-rate", "0.01", "--steps", "100", "--delta", "1e-5"], tmp_path)
    assert outcome(copy.deepcopy(genuine)) == 0
    assert outcome(_below(genuine)) == 1


def test_replace_epsilon_moved_above_its_group_privacy_bound_is_refused(tmp_path):
    """Poisson sampling under replace-one: group privacy bounds eps by the recorded (true) upper
    end, below the forged lower end (exit 3 before: the lower end was only compared, never
    refuted)."""
    genuine = _cli(["audit", "dpsgd", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "100",
                    "--neighboring", "replace-one", "--delta", "1e-5"], tmp_path)
    assert genuine["claim"]["quantity"] == "replace.epsilon"
    assert outcome(copy.deepcopy(genuine)) == 0
    assert outcome(_above(genuine)) == 1


def test_oracle_row_showing_another_number_than_its_exact_value_is_refused():
    """adv34 F3: a battery row records the accountant's double twice, as its repr
    (``reported``) and, where the repr is not the value, exactly (``reported_exact``); the
    row is judged on the exact one. Shown 1.5 beside the exact value of 0.45750586700486845
    (an unsafe row) showed a consistent-looking number: exit 1. The genuine row verifies."""
    from fractions import Fraction

    c = _load(ROOT / "tests" / "certificate" / "format2" / "oracle-battery-smoke.json")
    row = next(r for r in c["result"]["rows"] if "reported_exact" in r)
    assert Fraction(float(row["reported"])) == Fraction(row["reported_exact"])  # the writer's rule
    assert outcome(copy.deepcopy(c), budget=240) == 0
    row["reported"] = "1.5"
    assert outcome(reseal(c), budget=240) == 1

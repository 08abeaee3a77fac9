"""Work bounds of the sampling brackets' second route (replace-one under Poisson sampling,
shuffling, event trees): a small forged certificate is answered after bounded work, with
exit 1 (refused), 2 (beyond a cap the producer shares) or 3 (not re-proved), never an accept.

No timed assertions (speed is in scripts/bench_verify.py); each forgery is false for a
reason stated at the test, which is the independent route:

* a delta curve of a Gaussian step is > 0 at every finite eps (the pair N(0,1), N(mu,1) has
  delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) > 0), so a recorded [0, 0]
  is false; these cost 33-39 s of CPU before the curve was first enclosed at the route's own
  scale (the forged [0, 0] sized the unit to 1e-300);
* the caps are the producer's (dpverify.certificate.format), checked on both sides;
* the mass of a shuffled run's max statistic below one unit 2^-128 is 0 (rounded down) or 1
  (rounded up) units, checked against exact rationals.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from fractions import Fraction

import pytest
from gmpy2 import mpfr

from dpverify.certificate.format import EVENT_MAX_LEAVES, REPLACE_MAX_EPS
from dpverify.cli import main
from dpverify.recheck import shuffle as RS
from dpverify.recheck.core import arith
from ..certs import outcome, reseal

REPLACE = ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "100",
           "--neighboring", "replace-one", "--json"]


def _cert(capsys, argv, code=0):
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def replace_certs():
    """A replace.delta and a replace.epsilon certificate of the same run (module scope: written once)."""
    out = {}
    for name, extra in (("delta", ["--eps", "1"]), ("epsilon", ["--delta", "1e-5"])):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(REPLACE + extra) == 0
        out[name] = json.loads(buf.getvalue())
    return out


@pytest.mark.parametrize("kind,detail", [("delta", "upper"), ("delta", "lower"), ("epsilon", "upper")])
def test_a_zero_delta_curve_is_refused(replace_certs, kind, detail):
    cert = copy.deepcopy(replace_certs[kind])
    assert outcome(cert) == 0
    cert["result"][detail] = {"lo": "0", "hi": "0"}  # false: a Gaussian step's delta curve is > 0
    assert outcome(reseal(cert)) == 1


def test_replace_one_curves_beyond_the_cap_are_refused_on_both_sides(replace_certs, capsys):
    cert = copy.deepcopy(replace_certs["epsilon"])
    cert["result"]["enclosure"]["hi"] = "1000000"  # a true but loose upper end: the curve at 5e5
    assert outcome(reseal(cert)) == 2
    cert = copy.deepcopy(replace_certs["delta"])
    big = str(REPLACE_MAX_EPS + 1)
    cert["inputs"]["eps"] = big
    cert["result"]["quantity"] = f"delta(eps={big})"
    assert outcome(reseal(cert)) == 2
    assert main(REPLACE + ["--eps", big]) == 2
    assert "--eps" in capsys.readouterr().err


def _poisson(z, count):
    return {"type": "self_composed", "count": count, "event": {
        "type": "poisson_sampled", "sampling_probability": "0.01",
        "event": {"type": "gaussian", "noise_multiplier": z}}}


def test_replace_one_tree_with_ten_million_steps_is_answered_without_accept(tmp_path):
    doc = {"neighboring": "replace-one", "event": {"type": "composed", "events": [_poisson("1", 100)]}}
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(doc))
    cert_path = tmp_path / "cert.json"
    assert main(["audit", "dpsgd", "--events", str(path), "--delta", "1e-5", "--certificate", str(cert_path)]) == 0
    cert = json.loads(cert_path.read_text())
    assert outcome(cert) == 0
    # two step types of 4,999,999 steps each: the recorded bracket is that of 100 steps
    cert["inputs"]["event"]["events"] = [_poisson("1", 4_999_999), _poisson("3/2", 4_999_999)]
    assert outcome(reseal(cert)) in (1, 3)


def test_event_trees_beyond_the_leaf_cap_are_refused_on_both_sides(tmp_path, capsys):
    def tree(k):
        return {"neighboring": "add-remove", "event": {"type": "composed", "events": [
            {"type": "poisson_sampled", "sampling_probability": "0.01",
             "event": {"type": "gaussian", "noise_multiplier": str(1 + Fraction(i, 1000))}} for i in range(k)]}}

    path = tmp_path / "tree.json"
    path.write_text(json.dumps(tree(EVENT_MAX_LEAVES + 1)))
    assert main(["audit", "dpsgd", "--events", str(path), "--delta", "1e-5"]) == 2
    assert "--events" in capsys.readouterr().err
    path.write_text(json.dumps(tree(2)))
    cert_path = tmp_path / "cert.json"
    assert main(["audit", "dpsgd", "--events", str(path), "--delta", "1e-5", "--certificate", str(cert_path)]) == 0
    cert = json.loads(cert_path.read_text())
    assert outcome(cert) == 0
    cert["inputs"]["event"] = tree(EVENT_MAX_LEAVES + 1)["event"]
    assert outcome(reseal(cert)) == 2


def test_leaves_of_one_kind_anywhere_in_the_tree_are_one_step_on_both_sides(tmp_path):
    """40 leaves of one kind with 40 different counts (beyond the cap of 32 kinds, which they
    once counted as 40 leaves and refused), interleaved with leaves of a second kind under other
    nesting: one step per kind on both sides. Independent route: the same total counts written as
    two self_composed nodes give the same certified enclosure (composition commutes, AFA Thm 10;
    the product is the same power of each pair). A forged enclosure is refused."""
    from dpverify.events import epsilon

    step = {"type": "poisson_sampled", "sampling_probability": "0.01",
            "event": {"type": "gaussian", "noise_multiplier": "1"}}
    other = {"type": "laplace", "noise_multiplier": "40"}
    leaves = [{"type": "self_composed", "count": k, "event": step} for k in range(1, 41)]
    leaves += [{"type": "composed", "events": [other, {"type": "self_composed", "count": 2, "event": other}]}] * 3
    doc = {"neighboring": "add-remove", "event": {"type": "composed", "events": leaves}}
    code, cert = _tree_cert(tmp_path, doc, "--delta", "1e-5")
    assert code == 0 and outcome(cert) == 0
    total = sum(range(1, 41))
    flat = {"neighboring": "add-remove", "event": {"type": "composed", "events": [
        {"type": "self_composed", "count": total, "event": step},
        {"type": "self_composed", "count": 9, "event": other}]}}
    a, b = epsilon(doc, "1e-5"), epsilon(flat, "1e-5")
    assert (a.enclosure.lo_str(), a.enclosure.hi_str()) == (b.enclosure.lo_str(), b.enclosure.hi_str())
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"] = {"lo": "0.1", "hi": "0.2"}  # far below the true eps (about 1.5)
    assert outcome(reseal(bad)) == 1


def test_event_kinds_with_equal_pairs_are_one_power():
    """Sampling 600 of 60000 records without replacement at noise 2 has, under add/remove, the
    Poisson pair at rate 1/100 and noise 1 (AFA Thm 11 (2): the replace-one shift 2C at noise 2),
    so a tree of both is one power of that pair: the same enclosure as the Poisson steps alone
    (independent route: the count written once)."""
    from dpverify.events import epsilon, model as E

    q = Fraction(1, 100)
    poisson = E.PoissonSampled(q, E.Gaussian(Fraction(1)))
    wor = E.SampledWithoutReplacement(60000, 600, E.Gaussian(Fraction(2)))
    both = E.Composed((E.SelfComposed(poisson, 300), E.SelfComposed(wor, 200)))
    a, b = epsilon(both, "1e-5"), epsilon(E.SelfComposed(poisson, 500), "1e-5")
    assert (a.enclosure.lo_str(), a.enclosure.hi_str()) == (b.enclosure.lo_str(), b.enclosure.hi_str())


def test_shuffle_forged_to_a_trillion_records_is_not_accepted(capsys):
    cert = _cert(capsys, ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "1.1", "--dataset-size",
                          "60000", "--batch-size", "256", "--epochs", "5", "--delta", "1e-5", "--json"])
    assert outcome(cert) == 0
    for n, b in ((10**12, 256), (10**12, 1)):
        bad = copy.deepcopy(cert)
        bad["inputs"]["dataset_size"], bad["inputs"]["batch_size"] = n, b
        # T = n / b batches: the max statistic's law moves far out, the recorded lower end is not re-proved
        assert outcome(reseal(bad)) in (1, 3)


@pytest.mark.parametrize("x", [mpfr(2) ** -(10**8), mpfr(2) ** -129, mpfr(2) ** -128, mpfr("3e-30"), mpfr("0.7")])
def test_units_of_a_cell_mass_match_exact_rationals(x):
    A = arith(192)
    exact = Fraction(*x.as_integer_ratio()) * 2**128 if x > mpfr(2) ** -200 else Fraction(0)
    down, up = RS._to_units(A, x, False), RS._to_units(A, x, True)
    if x < mpfr(2) ** -200:  # far below a unit: 0 rounded down, 1 rounded up
        assert (down, up) == (0, 1)
    else:
        assert down == exact.numerator // exact.denominator
        assert up == -((-exact.numerator) // exact.denominator)


def _tree_cert(tmp_path, doc, *query):
    path, cert_path = tmp_path / "tree.json", tmp_path / "cert.json"
    path.write_text(json.dumps(doc))
    code = main(["audit", "dpsgd", "--events", str(path), *query, "--certificate", str(cert_path)])
    return code, (json.loads(cert_path.read_text()) if cert_path.exists() else None)


def test_events_delta_forged_to_zero_and_claims_beyond_the_eps_cap(tmp_path, capsys):
    doc = {"neighboring": "add-remove", "event": {"type": "composed", "events": [
        _poisson("1", 100), {"type": "gaussian", "noise_multiplier": "8"}]}}
    code, cert = _tree_cert(tmp_path, doc, "--eps", "1")
    assert code == 0 and cert["claim"]["quantity"] == "events.delta" and outcome(cert) == 0
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"] = {"lo": "0", "hi": "0"}  # false: the Gaussian step alone has delta(1) > 0
    assert outcome(reseal(bad)) == 1
    big = str(REPLACE_MAX_EPS + 100)
    assert _tree_cert(tmp_path, doc, "--delta", "1e-5", "--claimed-eps", big)[0] == 2
    assert "--claimed-eps" in capsys.readouterr().err
    code, claim = _tree_cert(tmp_path, doc, "--delta", "1e-5", "--claimed-eps", "3")
    assert code == 0 and outcome(claim) == 0
    claim["inputs"]["claimed_eps"] = big
    claim["result"]["quantity"] = f"delta(eps={big})"
    assert outcome(reseal(claim)) == 2


def test_events_grid_hint_forged_fine_is_a_hint_only(tmp_path):
    doc = {"neighboring": "add-remove", "event": _poisson("1", 100)}
    code, cert = _tree_cert(tmp_path, doc, "--delta", "1e-5")
    assert code == 0 and outcome(cert) == 0
    cert["result"]["grid"] = "2^-19"  # once started the search at 2^-15 (past 40 s): the numbers stay true
    assert outcome(reseal(cert)) == 0


def test_shuffle_delta_at_a_huge_eps_is_refused(capsys):
    cert = _cert(capsys, ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "1.1", "--dataset-size",
                          "60000", "--batch-size", "256", "--epochs", "5", "--eps", "2", "--json"])
    assert outcome(cert) == 0
    cert["inputs"]["eps"] = "1000000"  # delta_mu(1e6) is below 1e-300000: the recorded enclosure is false
    cert["result"]["quantity"] = "delta(eps=1000000)"
    assert outcome(reseal(cert)) == 1


def test_events_epsilon_forged_to_a_tiny_delta_is_refused_from_a_cheap_bound(tmp_path):
    doc = {"neighboring": "add-remove", "event": _poisson("1", 100)}
    code, cert = _tree_cert(tmp_path, doc, "--delta", "1e-5")
    assert code == 0 and outcome(cert) == 0
    # eps(1e-100) >= eps(1e-10) > the recorded eps(1e-5) enclosure (eps does not increase in delta)
    cert["inputs"]["delta"] = "1e-100"
    cert["result"]["quantity"] = "epsilon(delta=1e-100)"
    assert outcome(reseal(cert)) == 1


def test_a_one_epoch_bins_grid_beyond_the_producers_rule_is_refused_before_any_product():
    """adv40 B1: a 1.3 KB one-epoch certificate with keep = top = 1,100,000 (the producer's rule,
    sampling.balls.choose_grid, keeps about T c_max / h + 2 <= BINS_ONE_EPOCH_DEGREE + 2 degrees) cost
    verify 42 CPU s and 461 MB before exit 1; it is exit 2 before any product. The genuine fixture,
    keep far below the cap, still verifies."""
    from pathlib import Path

    from dpverify.certificate.format import BINS_ONE_EPOCH_DEGREE

    src = Path(__file__).resolve().parents[1] / "certificate" / "format2" / "bins-epsilon.json"
    cert = json.loads(src.read_text())
    assert cert["result"]["bins_grid"]["keep"] <= BINS_ONE_EPOCH_DEGREE + 2
    assert outcome(copy.deepcopy(cert)) == 0
    forged = copy.deepcopy(cert)
    forged["result"]["bins_grid"].update(top=1_100_000, keep=1_100_000)
    assert outcome(reseal(forged)) == 2

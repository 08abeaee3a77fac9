"""Issue 22, work is bounded before it starts: an `audit dpsgd` enclosure whose certificate the writer
would refuse (its grid priced past verify's work cap or knot cap, `certificate.writer.grid_past_cap`) is
refused, exit 2 naming the digits, before that grid is computed, not after the run (the MNIST delta
query `--eps 2.38 --digits 6` computed 2^-17 and 2^-18 for minutes; `--delta 1e-300 --digits 5` at
T = 10^4 ran 2^-10, 2^-11 and 2^-12 for 260 CPU s; both then refused by the writer). Where the
width model already puts the grid past the cap, a probe level 4 halvings coarser comes first
(refine.PROBE_HALVINGS: the same query, 2^-10 and 40 CPU s before the refusal, now 2^-6 and 2^-8, 19)."""

from __future__ import annotations

import json
from fractions import Fraction
import pytest

from dpverify.certificate.writer import grid_past_cap, unverifiable
from dpverify.cli import main
from dpverify.pld import refine

MNIST = ["audit", "dpsgd", "--noise-multiplier", "1.1", "--dataset-size", "60000", "--batch-size", "256",
         "--epochs", "60"]
INPUTS = {"noise_multiplier": "1.1", "sampling_rate": "256/60000", "steps": 14063, "neighboring": "add-remove",
          "eps": "2.38", "digits": 6}


def _no_grid(*args, **kwargs):
    raise AssertionError("a grid level was computed")


@pytest.mark.parametrize("out", ["--json", "--certificate"])
def test_a_delta_query_past_the_cap_is_refused_before_any_grid(monkeypatch, tmp_path, capsys, out) -> None:
    monkeypatch.setattr(refine, "_direction", _no_grid)
    argv = MNIST + ["--eps", "2.38", "--digits", "6", out] + ([str(tmp_path / "c.json")] if out != "--json" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--digits: 6 needs the grid 2^-18" in err and "refused before that grid was computed" in err
    assert not (tmp_path / "c.json").exists()


def test_the_refusal_is_the_writers_price_of_that_grid() -> None:
    # the same words as the writer's refusal after the run, for a certificate recording that grid
    result = {"grid": "2^-18", "enclosure": {"lo": "1.0e-5", "hi": "1.00001e-5"}}
    why = grid_past_cap("pld.delta", INPUTS, result)
    assert why is not None and why.startswith("the grid 2^-18, which `dpverify verify` cannot re-prove")
    cert = {"claim": {"quantity": "pld.delta"}, "inputs": INPUTS, "result": result}
    assert unverifiable(cert) == why
    # a grid the writer re-proves or passes is not refused by the price
    assert grid_past_cap("pld.delta", INPUTS, dict(result, grid="2^-14")) is None
    claim = {k: v for k, v in INPUTS.items() if k not in ("eps", "digits")}
    claim.update(claimed_eps="2.38169", delta="1e-5")
    # a claim is priced too (its producer does not compute such a grid); the writer re-proves it instead
    assert grid_past_cap("pld.claim", claim, result).startswith("the grid 2^-18")
    assert grid_past_cap("pld.claim", claim, dict(result, grid="2^-16")) is None
    assert grid_past_cap("calibrate.bracket", claim, result) is None


def test_every_level_is_priced_before_it_is_computed(monkeypatch) -> None:
    # each level's check comes before its grids, with the plan's float estimate first and the
    # certified enclosure so far after a level; a refusal stops the run before the level's grids
    from dpverify.pld import dpsgd as S

    events: list = []
    real = refine._direction

    def spy(steps, d, kind, target, m, *args, **kwargs):
        events.append(("grid", m))
        return real(steps, d, kind, target, m, *args, **kwargs)

    monkeypatch.setattr(refine, "_direction", spy)

    def check(m, lo, hi):
        events.append(("check", m, lo, hi))

    ans = S.epsilon([S.GaussianSteps.of("1", "0.01", 1000)], "1e-5", digits=3, check_grid=check)
    # first: a range about the plan's float eps, its lower end below the answer (a price no higher)
    assert events[0][0] == "check" and 0.9 < float(events[0][2]) / float(ans.enclosure.lo) < 1
    assert float(events[0][3]) > float(ans.enclosure.hi)
    last = None
    for e in events:
        if e[0] == "check":
            last = e[1]
            if e is not events[0]:
                assert e[2] is not None and e[2] > 0  # a certified lower end, not a guess
        else:
            assert last is not None and e[1] <= last
    assert f"2^-{last}" == ans.details()["grid"]

    def refuse(m, lo, hi):
        raise RuntimeError(f"refused 2^-{m}")

    events.clear()
    with pytest.raises(RuntimeError, match="refused"):
        S.epsilon([S.GaussianSteps.of("1", "0.01", 1000)], "1e-5", digits=3, check_grid=refuse)
    assert events == []


def test_a_certificate_within_the_cap_is_written(capsys) -> None:
    code = main(["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.05", "--steps", "50",
                 "--delta", "1e-5", "--digits", "4", "--json"])
    assert code == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["result"]["grid"].startswith("2^-")


def test_a_claims_level_past_the_cap_becomes_the_halving_below_it_then_undecided() -> None:
    # the claim of the issue (MNIST, claimed eps 2.38169, decided "holds" on 2^-18 in 128 CPU s and then
    # not written: verify's meter prices 2^-18 past its cap): 2^-18 is not computed; 2^-17, within the
    # cap, is, once; past it the run answers undecided without computing (exit 3)
    import argparse

    from dpverify.errors import Undecided
    from dpverify.cli._common import grid_check

    claim = {"noise_multiplier": "1.1", "sampling_rate": "256/60000", "steps": 14063, "neighboring": "add-remove",
             "claimed_eps": "2.38169", "delta": "1e-5"}
    assert grid_check(argparse.Namespace(certificate=None, json=False), "pld.claim", claim, None) is None
    check = grid_check(argparse.Namespace(certificate=None, json=True), "pld.claim", claim, None)
    lo, hi = Fraction(99999, 10**10), Fraction(100001, 10**10)  # 2^-16's enclosure straddles 1e-5
    assert check(14, Fraction(1, 10**5), Fraction(1, 10**5)) is None
    assert check(16, lo, hi) is None
    assert check(18, lo, hi) == 17
    assert check(17, lo, hi) is None
    with pytest.raises(Undecided, match="the verdict needs the grid 2\\^-19.*on 2\\^-17, which does not decide it"):
        check(19, lo, hi)


def test_a_calibration_end_on_the_recheck_finest_grid_is_re_proved_before_it_is_written(monkeypatch) -> None:
    # `calibrate dpsgd --target-eps 3 --delta 1e-5 --sampling-rate 256/60000 --steps 14063 --digits 6`
    # (102 CPU s) wrote a safe end on 2^-16 that verify could not re-prove (exit 3, 58 CPU s): such an
    # end is re-proved first by the writer (the re-proof is stubbed here), and emit refuses it naming
    # --digits; an end on a coarser grid is not re-proved
    import argparse

    from dpverify.certificate.writer import unverifiable
    from dpverify.cli._common import emit
    from dpverify.errors import CouldNotReprove, InvalidParameter, Undecided
    from dpverify.recheck import verify as RV

    calls: list = []

    def confirm(cert, budget_seconds=None):
        calls.append(cert["result"]["ends"]["safe"]["grid"])
        raise CouldNotReprove("could not re-prove the safe end on the grid 2^-16")

    monkeypatch.setattr(RV, "confirm", confirm)
    cert = {"claim": {"quantity": "calibrate.bracket"}, "inputs": {},
            "result": {"ends": {"safe": {"grid": "2^-16"}, "unsafe": {"grid": "2^-15"}}}}
    assert "an end on the grid 2^-16, the finest `dpverify verify` tries" in unverifiable(cert)
    assert calls == ["2^-16"]
    with pytest.raises(InvalidParameter, match="^6 needs an end on the grid 2\\^-16"):
        emit(argparse.Namespace(certificate=None, json=True, digits=6, rel_width=None), cert, "line")
    with pytest.raises(Undecided, match="no certificate written"):  # --rel-width: no digits to name
        emit(argparse.Namespace(certificate=None, json=True, digits=3, rel_width="1e-6"), cert, "line")
    cert["result"]["ends"]["safe"]["grid"] = "2^-15"
    assert unverifiable(cert) is None
    assert calls == ["2^-16"] * 3


# ---- sweeps and oracle writes (issue 22, deliverable 4): the same price before each level ------------

def _cap(monkeypatch, work: int) -> None:
    """The work cap as the writer's price test reads it (recheck.limits, read on use by writer._past_cap)."""
    from dpverify.recheck import limits

    monkeypatch.setattr(limits, "PLD_MAX_GRID_WORK", work)


SMALL = {"noise_multiplier": "1", "sampling_rate": "0.01", "steps": 100, "delta": "1e-5", "digits": 3}


def _spy_levels(monkeypatch) -> list:
    real = refine._direction
    grids: list = []

    def spy(steps, d, kind, target, m, *args, **kwargs):
        grids.append(m)
        return real(steps, d, kind, target, m, *args, **kwargs)

    monkeypatch.setattr(refine, "_direction", spy)
    return grids


def test_a_sweep_row_past_the_cap_is_undecided_before_any_grid(monkeypatch) -> None:
    # every sweep row's certificate is written: the row was computed, then refused by the writer in the
    # worker (worker._run: unverifiable); now priced before each level, the same outcome (undecided)
    from dpverify.sweep.task_audit import TASK
    from dpverify.sweep.worker import Job, _run

    params = dict(SMALL)
    plan = TASK.plan(params)
    grids = _spy_levels(monkeypatch)
    _cap(monkeypatch, 1)
    out = _run(Job("audit", params, plan))
    assert out.status == "undecided" and grids == []
    assert out.message.startswith("no certificate written: it needs the grid 2^-")
    assert "refused before that grid was computed" in out.message


def test_a_sweep_row_priced_at_its_own_price_is_computed_as_before(monkeypatch) -> None:
    # the boundary: with the cap at the row's final price exactly, no level is refused (each level is
    # priced at most at the final price), and the certificate is the one the unpriced run writes
    from dpverify.pld import dpsgd as S
    from dpverify.recheck.pld import recorded_grid_price
    from dpverify.recheck.verify import confirm
    from dpverify.sweep.task_audit import TASK
    from dpverify.sweep.worker import Job, _run

    params = dict(SMALL)
    plan = TASK.plan(params)
    cert = TASK.compute(params, plan)
    work, m = recorded_grid_price(cert["inputs"], "pld.epsilon", cert["result"])
    assert cert["result"]["grid"] == f"2^-{m}"
    seen: list = []
    real = S.epsilon

    def spy(*args, **kwargs):
        seen.append(kwargs.get("check_grid"))
        return real(*args, **kwargs)

    monkeypatch.setattr(S, "epsilon", spy)
    _cap(monkeypatch, work)
    again = TASK.compute(params, plan)
    assert seen and seen[0] is not None  # the row's levels were priced
    assert again == cert
    monkeypatch.undo()
    out = _run(Job("audit", params, plan))
    assert out.status == "ok" and out.cert == cert
    assert not confirm(dict(cert)).unconfirmed


def _rows(sigma: str = "1") -> list:
    from dpverify.oracle.rows import parse_rows

    text = ("accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
            f"x,subsampled-gaussian,{sigma},0.01,100,1e-5,0.5\n")
    return parse_rows(text, "csv", file="rows.csv", option="input")


def test_an_oracle_configuration_past_the_cap_is_refused_before_any_grid(monkeypatch, tmp_path, capsys) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
                    "x,subsampled-gaussian,1,0.01,100,1e-5,0.5\n")
    grids = _spy_levels(monkeypatch)
    _cap(monkeypatch, 1)
    assert main(["oracle", "--input", str(rows), "--digits", "3", "--json"]) == 2
    err = capsys.readouterr().err
    assert "--digits: 3 needs the grid 2^-" in err and "refused before that grid was computed" in err
    assert grids == []
    # without a certificate nothing is priced: the rows are computed and printed (0.5 is below the
    # certified lower end 0.7178: an unsafe row, exit 1)
    assert main(["oracle", "--input", str(rows), "--digits", "3"]) == 1
    assert grids


def test_an_oracle_configuration_at_its_own_price_is_written_as_before(monkeypatch) -> None:
    # the price before each level is the writer's price of the same pld.epsilon query (priced_inputs,
    # recheck.oracle.config_query); at the cap equal to the final price nothing is refused, and the
    # enclosure and grid are the unpriced run's
    from dpverify.oracle.run import priced_inputs, run_rows
    from dpverify.recheck.oracle import config_query
    from dpverify.recheck.pld import recorded_grid_price
    from dpverify.cli._common import grid_check

    import argparse

    plain = run_rows(_rows(), digits=3)
    (m,) = plain.grids()
    config = plain.configs_json()[0]
    q_inputs, q_result = config_query(config)
    cfg = _rows()[0].config
    assert priced_inputs(cfg) == q_inputs
    work, _ = recorded_grid_price(q_inputs, "pld.epsilon", dict(q_result, grid=f"2^-{m}"))
    asked: list = []

    def check(inputs):
        asked.append(inputs)
        return grid_check(argparse.Namespace(certificate=None, json=True), "pld.epsilon", inputs, 3)

    _cap(monkeypatch, work)
    priced = run_rows(_rows(), digits=3, check_grid=check)
    assert asked == [q_inputs]
    assert priced.configs_json() == plain.configs_json() and priced.grids() == plain.grids()


EVENTS7 = {"event": {"type": "self_composed", "count": 14063, "event": {
    "type": "poisson_sampled", "sampling_probability": "8/1875", "event": {"type": "gaussian", "noise_multiplier": "1.1"}}}}


def test_an_event_tree_past_the_knot_cap_is_refused_before_any_grid(monkeypatch, tmp_path, capsys) -> None:
    # adv50: the MNIST schedule as an event tree at --digits 7 ran for minutes, then the writer refused
    # it (one leaf spans more than 2^19 knots of 2^-18, the events re-check's cap): now priced first
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(EVENTS7))
    grids = _spy_levels(monkeypatch)
    assert main(["audit", "dpsgd", "--events", str(path), "--delta", "1e-5", "--digits", "7", "--json"]) == 2
    err = capsys.readouterr().err
    assert "--digits: 7 needs a grid `dpverify verify` cannot re-prove within its caps" in err
    assert "refused before that grid was computed" in err and grids == []


def test_an_event_tree_at_its_own_price_is_written_as_before(monkeypatch, tmp_path, capsys) -> None:
    # tests/certificate/format2/events-delta.json (2^-10): with the cap at its final price no level is
    # refused and the same certificate is written, and verify accepts it
    from dpverify.recheck import events as E
    from dpverify.recheck.verify import confirm

    fixture = json.loads((__import__("pathlib").Path(__file__).parents[1] / "certificate" / "format2"
                          / "events-delta.json").read_text())
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"event": fixture["inputs"]["event"], "neighboring": "add-remove"}))
    argv = ["audit", "dpsgd", "--events", str(path), "--eps", "1", "--digits", "3", "--json"]
    assert main(argv) == 0
    cert = json.loads(capsys.readouterr().out)
    work, m = E.recorded_grid_price(cert["inputs"], "events.delta", cert["result"])
    assert cert["result"]["grid"] == f"2^-{m}" == "2^-10"
    _cap(monkeypatch, work)
    grids = _spy_levels(monkeypatch)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == cert and grids  # computed, the same bytes
    monkeypatch.undo()
    assert not confirm(dict(cert)).unconfirmed
    _cap(monkeypatch, work - 1)
    grids.clear()
    assert main(argv) == 2  # one unit below its price: refused (before its grid, or by the writer)


# ---- the grid the digits need, predicted past the cap: a cheap probe level first (issue 22) ---------

#: sigma 1.1, q 0.01, eps(1e-300): a plan no float law confirms (its central-limit eps 13.8 against 69.4),
#: which starts 4 halvings below the width model's 2^-12, on 2^-8 (7.5 CPU s at T = 1000, K = 1047)
TINY = ["audit", "dpsgd", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "1000",
        "--delta", "1e-300", "--digits", "4", "--json"]


def test_a_grid_the_model_puts_past_the_cap_is_refused_after_a_probe_not_the_planned_level(monkeypatch, capsys) -> None:
    # the class of `--steps 10000 --delta 1e-300 --digits 5` (2^-10 computed, 40 CPU s, then 2^-13 refused:
    # now 2^-6 and 2^-8, 19 CPU s), scaled down by the cap: at 4e8 the planned first level 2^-8 (2.5e8) is
    # within it and 2^-10, the model's grid less PROBE_MARGIN, past it. The old code computed 2^-8 before
    # refusing 2^-10; now a probe 4 halvings coarser (its floor: plan.coarsest_grid) and the level after it
    # measure the width, and the level the h^2 law then asks is priced past the cap: exit 2 naming --digits, no level at
    # 2^-8 or finer computed. Counted by the spy, never timed.
    from dpverify.pld.plan import coarsest_grid

    grids: list = []
    real = refine._direction

    def finer(steps, d, kind, target, m, *args, **kwargs):
        if m >= 8:
            raise AssertionError(f"the planned level 2^-{m} was computed")
        grids.append(m)
        return real(steps, d, kind, target, m, *args, **kwargs)

    monkeypatch.setattr(refine, "_direction", finer)
    _cap(monkeypatch, 4 * 10**8)
    assert main(TINY) == 2
    err = capsys.readouterr().err
    assert "--digits: 4 needs the grid 2^-" in err and "refused before that grid was computed" in err
    probe = max(4, coarsest_grid(1000), 8 - refine.PROBE_HALVINGS)
    # the probe's maximum (remove) has no lower end on 2^-5, so the next level is two halvings finer
    # (no h^2 extrapolation from another direction's lower end), whose width asks for 2^-10
    assert grids[0] == probe and set(grids) == {probe, probe + 2}
    assert "--digits: 4 needs the grid 2^-10," in err


def test_the_probe_is_a_choice_of_the_first_grid_only() -> None:
    # LevelCheck.past_cap is the writer's price of a certificate recording that grid (any enclosure:
    # the least price), False for a claim; without a certificate asked for there is no check at all
    import argparse

    from dpverify.cli._common import grid_check

    inputs = {"noise_multiplier": "1.1", "sampling_rate": "0.01", "steps": 1000, "neighboring": "add-remove",
              "delta": "1e-300", "digits": 4}
    check = grid_check(argparse.Namespace(certificate=None, json=True), "pld.epsilon", inputs, 4)
    assert not check.past_cap(10) and check.past_cap(12)  # 1.0e9 and 4.1e9 against the cap 3e9
    assert (check.past_cap(12) is True) == (grid_past_cap("pld.epsilon", inputs, {"grid": "2^-12"}) is not None)
    claim = {k: v for k, v in inputs.items() if k != "digits"}
    claim["claimed_eps"] = "70"
    assert not grid_check(argparse.Namespace(certificate=None, json=True), "pld.claim", claim, None).past_cap(20)

"""What dpverify writes, verify accepts (issue 22, the write-time contract's second half): a certificate
whose recorded PLD grid the re-check cannot reach within its work cap is not written by any writer
(`emit` of every CLI command: exit 3 with the answer in the message; a sweep row: undecided). adv50 M2:
a claim at claimed_eps 2.381689 on sigma 1.1, q 256/60000, T = 14063 (delta(eps) a hair from 1e-5)
was refined to 2^-18 to decide 'fails' (260 s) and written; verify answered exit 3 at its cap. The
certificate is kept as data (it takes minutes to produce); its price is the verifier's own meter
(recheck.pld.recorded_grid_price, tested against the meter in tests/recheck/test_pld_recorded_grid_price.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dpverify.certificate.writer import unverifiable
from dpverify.cli._common import emit
from dpverify.errors import Undecided

ROOT = Path(__file__).parents[2]
NEAR = ROOT / "tests" / "recheck" / "data" / "pld-claim-near-boundary-2-18-unverifiable.json"


def test_a_claim_refined_past_verify_cap_is_not_written(tmp_path, capsys) -> None:
    cert = json.loads(NEAR.read_text())
    assert cert["result"]["grid"] == "2^-18" and "2^-18" in unverifiable(cert)
    out = tmp_path / "c.json"
    for args in (argparse.Namespace(certificate=str(out), json=False), argparse.Namespace(certificate=None, json=True)):
        with pytest.raises(Undecided, match="fails.*no certificate written: it needs the grid 2\\^-18"):
            emit(args, cert, "(2.381689, 1e-5)-DP: fails")
    assert not out.exists() and capsys.readouterr().out == ""
    # without a certificate asked for, the answer is printed as before
    emit(argparse.Namespace(certificate=None, json=False), cert, "(2.381689, 1e-5)-DP: fails")
    assert capsys.readouterr().out == "(2.381689, 1e-5)-DP: fails\n"


@pytest.mark.parametrize("name", ["pld-claim", "pld-epsilon", "pld-delta", "events-epsilon", "gdp-delta"])
def test_certificates_verify_re_proves_are_written(name) -> None:
    cert = json.loads((ROOT / "tests" / "certificate" / "format2" / f"{name}.json").read_text())
    assert unverifiable(cert) is None


# --- issue 22: the same contract for event trees and oracle rows ------------------------------------
# adv50: `audit dpsgd --events ev.json --delta 1e-5 --digits 7` (sigma 1.1, q 8/1875, T = 14063 as an
# event tree) and `oracle --input rows.csv --digits 7` (the same configuration as a row) wrote
# certificates that verify answered exit 3: the events route stops where one leaf spans 2^19 knots of
# 2^-18, the oracle's pld.epsilon re-check at its work cap. Both are kept as data (minutes to produce).

EVENTS7 = ROOT / "tests" / "recheck" / "data" / "events-mnist-digits7-unverifiable.json"
ORACLE7 = ROOT / "tests" / "recheck" / "data" / "oracle-mnist-digits7-unverifiable.json"
EVENTS_DELTA = ROOT / "tests" / "certificate" / "format2" / "events-delta.json"  # --digits 3, 2^-10


def _json_args() -> argparse.Namespace:
    return argparse.Namespace(certificate=None, json=True)


def test_an_event_tree_past_verify_knot_cap_is_refused_naming_the_digits(capsys) -> None:
    from dpverify.errors import CouldNotReprove, InvalidParameter
    from dpverify.recheck.verify import confirm

    cert = json.loads(EVENTS7.read_text())
    with pytest.raises(CouldNotReprove, match="spans more than 524288 points of the grid 2\\^-18"):
        confirm(dict(cert))  # what verify answers (exit 3), read from the same route the writer prices
    with pytest.raises(InvalidParameter, match="7 needs a grid `dpverify verify` cannot re-prove within its caps "
                                               "\\(one step's privacy loss spans more than 524288 points of the "
                                               "grid 2\\^-18\\).*ask for fewer digits"):
        emit(_json_args(), cert, "")
    assert capsys.readouterr().out == ""


def test_events_price_is_the_pld_price_of_the_same_configuration() -> None:
    """One meter: the event tree and the pld.epsilon schedule of the same steps compose the same step law
    (AFA Thm 11 (1)) on the same units, so the two routes' prices agree exactly on a grid both reach."""
    from dpverify.recheck import events as E
    from dpverify.recheck import pld as P

    cert = json.loads(EVENTS7.read_text())
    res = dict(cert["result"], grid="2^-17")
    pld_inputs = {"noise_multiplier": "1.1", "sampling_rate": "8/1875", "steps": 14063, "delta": "0.00001",
                  "neighboring": "add-remove"}
    got = E.recorded_grid_price(cert["inputs"], "events.epsilon", res)
    assert got == P.recorded_grid_price(pld_inputs, "pld.epsilon", res) and got[1] == 17 and got[0] > 10**9


def test_an_oracle_row_past_verify_cap_is_refused_naming_the_digits() -> None:
    from dpverify.errors import InvalidParameter
    from dpverify.recheck.limits import PLD_MAX_GRID_WORK

    cert = json.loads(ORACLE7.read_text())
    # the kind records no grid: the producer's grid per configuration (oracle.run.OracleResult.grids) prices it
    assert unverifiable(cert) is None
    why = unverifiable(cert, [18])
    assert why is not None and "2^-18" in why and f"{PLD_MAX_GRID_WORK:.1e}" in why
    with pytest.raises(InvalidParameter, match="7 needs the grid 2\\^-18, which `dpverify verify` cannot re-prove"):
        emit(_json_args(), cert, "", [18])


def _cap(monkeypatch, work: int) -> None:
    """The work cap as both sides read it: the writer (limits) and the re-check's meter (pld)."""
    from dpverify.recheck import limits, pld

    monkeypatch.setattr(limits, "PLD_MAX_GRID_WORK", work)
    monkeypatch.setattr(pld, "PLD_MAX_GRID_WORK", work)


def test_an_event_tree_just_inside_the_cap_is_written_and_verifies(monkeypatch, tmp_path) -> None:
    """The cap moved to the fixture's own price: one unit below it the writer refuses at once (exit 2,
    naming --digits 3) and verify, under the same cap, cannot re-prove it either (the price is a lower
    bound of verify's spend); inside, above 1 / PLD_PRICE_SPREAD of it, the writer asks the verifier,
    which accepts, and the certificate is written and verifies. Inside is 4x the price: verify's
    search (the probe, both directions) and its exact products past half of each grid's price charge
    2.2x the recorded grid's price here (session 52; 2x sufficed before the products were metered)."""
    from dpverify.errors import CouldNotReprove, InvalidParameter
    from dpverify.recheck import events as E
    from dpverify.recheck.verify import confirm

    cert = json.loads(EVENTS_DELTA.read_text())
    work, m = E.recorded_grid_price(cert["inputs"], "events.delta", cert["result"])
    assert m == 10
    _cap(monkeypatch, work - 1)
    with pytest.raises(InvalidParameter, match="3 needs the grid 2\\^-10, which `dpverify verify` cannot re-prove"):
        emit(_json_args(), cert, "")
    with pytest.raises(CouldNotReprove, match="work cap"):
        confirm(dict(cert))
    _cap(monkeypatch, 4 * work)
    out = tmp_path / "c.json"
    emit(argparse.Namespace(certificate=str(out), json=False), cert, "delta")
    again = json.loads(out.read_text())
    assert again == cert and not confirm(again).unconfirmed


def test_the_knot_budget_is_shared_by_the_leaves(monkeypatch) -> None:
    """The events route caps each leaf at KNOT_BUDGET / leaves knots (:func:`events._knot_cap`), the
    writer prices at the same cap (verify's answer at its real cap: the test above)."""
    from dpverify.recheck import events as E

    cert = json.loads(EVENTS_DELTA.read_text())
    monkeypatch.setattr(E, "KNOT_BUDGET", 1 << 11)  # 2 leaves: 2^10 knots each, the floor of _knot_cap
    why = unverifiable(cert)
    assert why is not None and "spans more than 1024 points of the grid 2^-10" in why
    monkeypatch.setattr(E, "KNOT_BUDGET", 1 << 19)
    assert unverifiable(cert) is None


def test_an_oracle_run_prices_its_configurations_on_the_producers_grids(monkeypatch) -> None:
    """End to end on the producer: `oracle` hands each configuration's grid to the writer; with the cap
    below its price the certificate is refused (exit 2, --digits), at the default cap it is written."""
    from dpverify.errors import InvalidParameter
    from dpverify.oracle.rows import parse_rows
    from dpverify.oracle.run import run_rows
    from dpverify.recheck.oracle import config_query
    from dpverify.recheck.pld import recorded_grid_price

    text = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\nx,subsampled-gaussian,1,0.01,100,1e-5,0.5\n"
    result = run_rows(parse_rows(text, "csv", file="rows.csv", option="input"), digits=3)
    (m,) = result.grids()
    assert m > 0
    cert = {"claim": {"quantity": "oracle.rows"}, "inputs": {"digits": 3},
            "result": {"configs": result.configs_json()}}
    q_inputs, q_result = config_query(cert["result"]["configs"][0])
    work, _ = recorded_grid_price(q_inputs, "pld.epsilon", dict(q_result, grid=f"2^-{m}"))
    assert unverifiable(cert, result.grids()) is None
    _cap(monkeypatch, work - 1)
    with pytest.raises(InvalidParameter, match=f"3 needs the grid 2\\^-{m}"):
        emit(_json_args(), cert, "", result.grids())


def test_a_registry_pld_claim_is_re_proved_before_it_is_written() -> None:
    """A registry claim of a PLD kind records no grid, so nothing priced it: `reproduce` wrote an MNIST
    pld.epsilon claim at digits 7 that verify answered exit 3 (adv51 M1, 66 CPU s to produce, so not
    re-run here). Now it is re-proved by verify's own route before it is written: a genuine one passes,
    and one whose enclosure is moved past the truth (as a producer bug would) is an internal error,
    never a file. The truth (verify's independent enclosure of prv-accountant-17-bracket) is about
    0.0672138."""
    from dpverify.errors import InternalError

    root = Path(__file__).resolve().parents[2] / "certificates"
    cert = json.loads((root / "prv-accountant-17-bracket.json").read_text())
    assert "grid" not in cert["result"] and cert["claim"]["quantity"] == "pld.epsilon"
    assert unverifiable(cert) is None
    from tests.certs import reseal

    moved = json.loads(json.dumps(cert))
    moved["result"]["enclosure"] = {"lo": "0.0673", "hi": "0.0674"}
    with pytest.raises(InternalError, match="refuses a pld.epsilon certificate dpverify wrote"):
        unverifiable(reseal(moved))


def test_a_claim_priced_past_the_knot_cap_that_verify_decides_coarser_is_written() -> None:
    """A claim's re-check starts 4 halvings coarser than its recorded grid and may decide there, so
    the price on the recorded grid is no lower bound of verify's work (ref51b MEDIUM-2): the
    events-claim fixture with its grid moved to 2^-18 is priced past the events route's knot cap,
    yet verify accepts it (at 2^-14). Past the cap a claim is re-proved, not refused at once."""
    from tests.certs import outcome, reseal

    f2 = Path(__file__).resolve().parents[1] / "certificate" / "format2" / "events-claim.json"
    cert = json.loads(f2.read_text())
    cert["result"]["grid"] = "2^-18"
    reseal(cert)
    assert outcome(cert) == 0  # verify's own answer
    assert unverifiable(cert) is None


def test_at_one_digit_the_refusal_does_not_ask_for_fewer():
    """adv56 LOW: at digits 1 the unit's bits (delta 1e-1000: mass units 2^-3379) set the grid, and
    "ask for fewer digits" named a remedy that does not exist."""
    from dpverify.certificate.writer import fewer_digits

    assert fewer_digits(1, "a grid").endswith("even one digit needs this work, which the inputs themselves set")
    assert fewer_digits(4, "a grid").endswith("ask for fewer digits")

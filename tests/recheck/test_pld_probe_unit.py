"""A first grid whose unit was capped below the recorded eps is computed again at the recorded eps's
unit before the search reads the h^2 law from its gap (adv54 M1, :func:`dpverify.recheck.pld._grid_search`).

Until a grid has proved a lower end, an eps(delta) query sizes its mass unit for eps
:data:`~dpverify.recheck.pld._EPS_HINT_PROBE` (64) at most, so that an absurd recorded end cannot buy a
huge unit before a first grid refutes it (adv43 F3). At eps(1e-5) = 160.18 (sigma 0.1, q 0.01, T = 10,
written by ``audit dpsgd`` in about a second, recorded on 2^-7) that capped unit left the remove
direction [97.9, 243.3] on 2^-7 (the upper scan cancels about 1.45 eps bits); the search read a 145-nat
gap as the grid's and asked for 2^-18: exit 3. At the recorded eps's unit 2^-7 proves
[160.181239724, 160.181310261], inside the record. The certificate is the producer's (the arb route),
the re-derivation the second route's; what each grid computes is seen by a spy, not a clock."""

from __future__ import annotations

import json

import mpmath
import pytest

from dpverify.cli import main
from dpverify.recheck import pld as P

from ..certs import outcome, reseal

AUDIT = ["audit", "dpsgd", "--noise-multiplier", "0.1", "--sampling-rate", "0.01", "--steps", "10",
         "--delta", "1e-5"]


@pytest.fixture(scope="module")
def cert(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("m1") / "cert.json"
    assert main([*AUDIT, "--certificate", str(out)]) == 0
    c = json.loads(out.read_text())
    lo, hi = (mpmath.mpf(c["result"]["enclosure"][k]) for k in ("lo", "hi"))
    assert c["result"]["grid"] == "2^-7" and 160 < lo < hi < 161  # past _EPS_HINT_PROBE
    return c


def _units(monkeypatch) -> list:
    """[K]: the unit 2^-K of every grid the queries price or compute (not those remembered from before)."""
    seen: list = []
    real = P.direction_bounds

    def spy(events, d, kind, target, exact, K, *args, **kw):
        seen.append(K)
        return real(events, d, kind, target, exact, K, *args, **kw)

    monkeypatch.setattr(P, "direction_bounds", spy)
    return seen


def test_the_genuine_certificate_past_the_probe_eps_verifies_on_its_own_grid(cert, monkeypatch) -> None:
    units = _units(monkeypatch)
    got = _charges(monkeypatch)
    assert outcome(cert) == 0
    # the probe on 2^-7, both directions at the capped unit; then remove again on 2^-7 at the recorded
    # eps's unit, which settles it: no finer grid
    assert [(m, d, r) for m, d, _, r in got] == [(7, "remove", False), (7, "add", False), (7, "remove", False)]
    # the two units: 1.45 bits a nat of eps (:func:`_units`), for 64 and for the recorded upper end
    hi = mpmath.mpf(cert["result"]["enclosure"]["hi"])
    bits = int(mpmath.ceil(mpmath.mpf("1.45") * hi)) - int(mpmath.ceil(mpmath.mpf("1.45") * 64))
    assert sorted(set(units)) == [min(units), min(units) + bits] and units[-1] == min(units) + bits


def test_a_forged_end_above_the_truth_is_refuted_on_the_probe_grid(cert, monkeypatch) -> None:
    # [200, 200.0001]: within the capped probe's [97.9, 243.3], so only the recompute at its unit
    # decides it (before: the h^2 law asked for a grid past the cap, exit 3)
    forged = json.loads(json.dumps(cert))
    forged["result"]["enclosure"] = {"lo": "200", "hi": "200.0001"}
    forged["result"]["relative_width"] = "5.00e-07"
    got = _charges(monkeypatch)
    assert outcome(reseal(forged)) == 1
    assert [(m, d, r) for m, d, _, r in got] == [(7, "remove", False), (7, "add", False), (7, "remove", False)]


def _charges(monkeypatch) -> list:
    """[(m, d, spent after, refused)] per grid the search computes or is refused, from the query's meter."""
    out: list = []
    real = P._grid_search

    def search(compute, dirs, result):
        meter = P._METER.get()

        def run(m, sides, d, floor):
            if meter.cap < 0:  # a dry price (:func:`_dry_price`), not a grid
                return compute(m, sides, d, floor)
            try:
                got = compute(m, sides, d, floor)
            except P._OverCap:
                out.append((m, d, meter.spent, True))
                raise
            out.append((m, d, meter.spent, False))
            return got

        return real(P._ProbeQuery(run, compute.capped), dirs, result)

    monkeypatch.setattr(P, "_grid_search", search)
    return out


def test_the_recompute_is_priced_before_its_work(cert, monkeypatch) -> None:
    # the probe round (remove, add) and the recompute, with their charges; then a cap half way into the
    # recompute's price: it is refused at that price (exit 3, naming 2^-7), after the probe round, before
    # its masses (a charge comes before the work, tests/recheck/test_pld_work_cap.py): the recorded end
    # buys no unit past the cap
    got = _charges(monkeypatch)
    assert outcome(cert) == 0
    assert [(m, d, r) for m, d, _, r in got] == [(7, "remove", False), (7, "add", False), (7, "remove", False)]
    probe, recompute = got[1][2], got[2][2]
    monkeypatch.setattr(P, "PLD_MAX_GRID_WORK", (probe + recompute) // 2)
    got.clear()
    assert outcome(cert) == 3
    assert [(m, d, r) for m, d, _, r in got] == [(7, "remove", False), (7, "add", False), (7, "remove", True)]
    assert got[2][2] == recompute  # charged its whole price, refused by it

"""The forgery classes of the format-2 adversarial review, one test each.

Every forgery starts from a genuine certificate (a frozen format-2 fixture, a
committed claim certificate, or one the CLI writes here), changes what the
class changes and recomputes the digest, so only the second route can catch
it. Ground truth for each case is stated beside it (a closed form, an exact
rational criterion, or the genuine certificate the forgery was made from).
Stalls run ``dpverify verify`` in a subprocess whose timeout bounds a hang; it
is not a speed assertion.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.certificate.format import compute_digest
from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.recheck.kinds import KINDS, PROVING
from dpverify.recheck.verify import RECHECKERS, _load_recheckers, verify_certificate

ROOT = Path(__file__).resolve().parents[2]
F2 = ROOT / "tests" / "certificate" / "format2"
CLAIMS = ROOT / "certificates"


def fixture(name: str) -> dict:
    return json.loads((F2 / f"{name}.json").read_text())


def reseal(c: dict) -> dict:
    c["digest"] = compute_digest(c)
    return c


def outcome(cert: dict, budget: float = 120) -> int:
    try:
        verify_certificate(cert, budget_seconds=budget)
        return 0
    except CouldNotReprove:  # a CertificateRejected subclass: first
        return 3
    except CertificateRejected:
        return 1
    except MalformedCertificate:
        return 2


def cli_cert(argv: list, tmp_path: Path) -> dict:
    from dpverify.cli import main

    out = tmp_path / "c.json"
    assert main([*argv, "--certificate", str(out)]) in (0, 1)
    return json.loads(out.read_text())


# --------------------------------------------------------------------------- the kind table


def test_every_kind_has_a_proving_route_for_each_end():
    """The table is the acceptance rule's source: a kind with an end that is only
    consistency-checked (or has no route) could never accept, and every registered
    re-checker must have a row."""
    _load_recheckers()
    missing = sorted(set(RECHECKERS) - set(KINDS))
    assert not missing, f"re-checkers without a row in the kind table: {missing}"
    weak = []
    for name, kind in KINDS.items():
        routes = kind.routes()
        if kind.lower is None and kind.upper is None and kind.verdict is None:
            weak.append((name, "no route"))
        if (kind.lower is None) != (kind.upper is None):
            weak.append((name, "one end without a route"))
        weak += [(name, f"{end}: {r.status}") for end, r in routes.items() if r.status not in PROVING]
    assert not weak, weak


def test_a_consistency_route_cannot_accept(monkeypatch):
    """Turning one end of a kind into a consistency check makes its genuine certificate exit 3."""
    from dpverify.recheck import kinds

    row = kinds.KINDS["gdp.delta"]
    monkeypatch.setitem(kinds.KINDS, "gdp.delta",
                        kinds.Kind(row.name, row.lower, kinds.Route("consistency", "recorded argmax only"),
                                   verdict=row.verdict, info=row.info))
    assert outcome(fixture("gdp-delta")) == 3


# --------------------------------------------------------------------------- false verdicts


def _not_gdp(cert: dict) -> dict:
    c = copy.deepcopy(cert)
    r = c["result"]
    r.update(verdict="fails", status="not GDP", enclosure={"lo": "inf", "hi": "inf"})
    r["head"].update(unbounded=True, argmax="0", enclosure={"lo": "inf", "hi": "inf"})
    r["head"].pop("mu_hi_exact", None)
    r["tail"] = {"status": "not GDP", "kind": "head", "reason": "the head is unbounded"}
    return reseal(c)


@pytest.mark.parametrize("name", ["gdp-certify-laplace", "gdp-certify-pure"])
def test_not_gdp_forged_for_a_gdp_mechanism_is_refused(name):
    """Laplace and pure eps0 have f(0) = 1 - e^(-1/(2b)) and tanh(eps0/2), both < 1
    exactly: G_f is finite on the head, "unbounded" is false (exit 1)."""
    assert outcome(_not_gdp(fixture(name))) == 1


def test_not_gdp_forged_for_an_expression_just_below_one_is_not_accepted():
    """exp(-eps) * (1 - 1e-40): f(0) = 1 - 1e-40 < 1, so the head is bounded; the
    interval enclosure at 0 is below 1, the claim f(argmax) = 1 is not re-proved."""
    c = fixture("gdp-certify-expr")
    c["inputs"]["profile"] = "(1 - 1e-40)*exp(-eps)"
    assert outcome(reseal(c)) != 0


def test_rr64_holds_just_below_minus_eps0_is_refused(tmp_path):
    """At eps = -eps0 - 1e-70 the sup is W = formula + (1-delta0)(1 - e^(eps+eps0))/(1+e^eps0)
    with a second term of about 0.9 * 1e-70 / (1 + e) > 0: the formula misses it, the
    verdict is "fails" (exact: eps + eps0 < 0 and delta0 < 1)."""
    eps = "-1.0000000000000000000000000000000000000000000000000000000000000000000001"
    c = cli_cert(["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps", eps], tmp_path)
    assert c["result"]["verdict"] == "fails" and outcome(c) == 0
    c["result"]["verdict"] = "holds"
    assert outcome(reseal(c)) == 1


def test_oracle_row_made_consistent_by_a_vacuous_enclosure_is_refused():
    """Reported 0.6 and 0.1 are below the certified lower end 0.718 of epsilon (the
    genuine fixture): with [0, 100] recorded they read "consistent", on the
    independent enclosure they are unsafe."""
    c = fixture("oracle-input")
    vac = {"lo": "0", "hi": "100"}
    for cfg in c["result"]["configs"]:
        cfg["certified"] = dict(vac)
    for row in c["result"]["rows"]:
        row["certified"] = dict(vac)
        row["verdict"] = "consistent"
        row.pop("excess", None)
    c["result"]["verdict"] = "holds"
    assert outcome(reseal(c), budget=240) == 1


# --------------------------------------------------------------------------- details shown as certified


def test_head_enclosure_forged_is_refused():
    """Laplace(1) head sup is 1.8009 (GDPT Fig. 1); [2, 3] is disjoint from the re-proved head."""
    c = fixture("gdp-certify-laplace")
    c["result"]["head"]["enclosure"] = {"lo": "2", "hi": "3"}
    assert outcome(reseal(c)) == 1


def test_tail_limit_forged_is_refused():
    """A profile that vanishes beyond the largest loss has GDPT Thm 4.4 limit 0."""
    c = fixture("gdp-certify-laplace")
    c["result"]["tail"]["limit"] = {"lo": "1", "hi": "2"}
    assert outcome(reseal(c)) == 1


def test_gdpt_formula_forged_is_refused():
    """delta0 + (1 - delta0)(e - e^0.5)/(1 + e) = 0.35888... at eps0 = 1, delta0 = 0.1, eps = 0.5."""
    c = fixture("dp-rr64")
    c["result"]["gdpt_formula"] = {"lo": "0.4", "hi": "0.5"}
    assert outcome(reseal(c)) == 1


@pytest.mark.parametrize("name", ["pld-delta", "events-delta"])
def test_per_direction_enclosures_are_refused(name):
    """A per-direction enclosure is not re-provable at the quantity's scale: format 2 refuses it."""
    c = fixture(name)
    c["result"]["directions"] = {"add": {"lo": "0.5", "hi": "0.6"}}
    assert outcome(reseal(c)) in (1, 2)


def test_dominating_pair_lower_end_is_refused():
    c = fixture("events-delta")
    c["result"]["dominating_pair_lower_end"] = "0.001"
    assert outcome(reseal(c)) in (1, 2)


def test_zcdp_rho_forged_is_refused(tmp_path):
    """rho of a zcdp leaf composed 10 times is 10 rho exactly (BS16 Lemma 2.3)."""
    tree = tmp_path / "t.json"
    tree.write_text(json.dumps({"neighboring": "add-remove", "events": [
        {"type": "self_composed", "count": 10, "event": {"type": "zcdp", "rho": "0.01", "xi": "0"}}]}))
    c = cli_cert(["audit", "dpsgd", "--events", str(tree), "--eps", "1"], tmp_path)
    assert c["result"]["rho"] in ("1/10", "0.1") and outcome(c) == 0
    c["result"]["rho"] = "0.05"
    assert outcome(reseal(c)) == 1


def test_delta_at_target_forged_is_refused():
    """The safe end's delta(2) at noise 6.331 is 9.2611e-6 (the genuine fixture); a
    recorded [1e-7, 2e-7] is refuted by the lower curve."""
    c = fixture("calibrate-bracket")
    c["result"]["ends"]["safe"]["delta_at_target"] = {"lo": "1e-7", "hi": "2e-7"}
    assert outcome(reseal(c), budget=240) == 1


def test_optimal_mu_upper_end_is_proved():
    """Laplace(b = 0.5) has mu* = 1.8009 (GDPT Fig. 1, the committed certificate); a
    recorded [1.1, 1.2] with an argmax where G_f is 1.15 must fail the head's cells."""
    c = json.loads((CLAIMS / "gdpt-fig1-laplace-2gdp.json").read_text())
    c["result"]["enclosure"] = {"lo": "1.1", "hi": "1.2"}
    c["claim"]["printed"] = "1.2"
    c["claim"]["relation"] = {"kind": "le", "bound": "1.2"}
    c["result"]["verdict"] = "holds"
    c["inputs"]["argmax"] = "2"
    assert outcome(reseal(c)) == 1


def test_rdp_to_dp_delta_floor_is_not_confirmed(tmp_path):
    """Classic conversion delta = exp((alpha - 1)(rdp - eps)) = e^-720.9 ~ 1e-313 at
    alpha = 2, rdp = 0.1, eps = 721: an enclosure near 1e-300 is false."""
    c = cli_cert(["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--eps", "721"], tmp_path)
    assert outcome(c) == 0
    c["result"]["enclosure"] = {"lo": "1e-300", "hi": "1.0000000000000001e-300"}
    assert outcome(reseal(c)) in (1, 3)


# --------------------------------------------------------------------------- inputs that do not define the claim


def test_gaussian_with_mu_and_noise_multiplier_is_refused():
    c = fixture("dp-profile-gaussian")
    c["inputs"]["noise_multiplier"] = "1"
    assert outcome(reseal(c)) == 2


def test_gaussian_with_mu_and_sensitivity_is_refused():
    c = fixture("dp-profile-gaussian")
    c["inputs"]["sensitivity"] = "2"
    assert outcome(reseal(c)) == 2


@pytest.mark.parametrize("key,value", [("count", 3), ("steps", 3), ("sensitivity", "2")])
def test_extra_key_on_an_event_node_is_refused(key, value):
    c = fixture("events-delta")
    c["inputs"]["event"]["events"][0]["event"]["event"][key] = value
    assert outcome(reseal(c)) == 2


def test_result_quantity_naming_another_delta_is_refused():
    c = fixture("events-epsilon")
    c["result"]["quantity"] = "epsilon(delta=0.001)"
    assert outcome(reseal(c)) == 1


@pytest.mark.parametrize("key,value", [("epochs", "1"), ("batch_size", 10)])
def test_calibrate_bracket_with_extra_schedule_keys_is_refused(key, value):
    c = fixture("calibrate-bracket")
    c["inputs"][key] = value
    assert outcome(reseal(c)) in (1, 2)


def test_rewritten_sensitivity_convention_is_refused():
    c = fixture("events-delta")
    c["inputs"]["sensitivity_convention"] = "noise_multiplier z = sigma (sensitivity 1 under every relation)"
    assert outcome(reseal(c)) in (1, 2)


# --------------------------------------------------------------------------- crashes become clean answers


def test_five_thousand_digit_exponent_is_malformed():
    c = fixture("gdp-delta")
    c["result"]["enclosure"]["lo"] = "1e" + "9" * 5000
    assert outcome(reseal(c)) == 2


def test_lone_surrogate_is_malformed():
    c = fixture("gdp-delta")
    c["claim"]["statement"] = "delta \ud800"
    c["digest"] = "0" * 64  # no digest exists for text that is not Unicode
    assert outcome(c) == 2


def test_division_by_zero_in_a_relation_bound_is_malformed():
    c = json.loads((CLAIMS / "gdpt-fig1-laplace-2gdp.json").read_text())
    c["claim"]["relation"] = {"kind": "le", "bound": "1/0"}
    assert outcome(reseal(c)) == 2


def test_rr_with_p_above_one_is_malformed():
    c = fixture("dp-profile-rr")
    c["inputs"]["p"] = "1.5"
    assert outcome(reseal(c)) == 2


def _run_verify(files: list, timeout: float, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "dpverify", "verify", *extra, *map(str, files)],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_multi_file_run_reports_every_file(tmp_path):
    """A refused file, a malformed (surrogate) file and a genuine one: all three are
    reported and the worst outcome (1) wins."""
    bad = fixture("gdp-delta")
    bad["result"]["enclosure"] = {"lo": "0.6", "hi": "0.7"}
    (tmp_path / "a.json").write_text(json.dumps(reseal(bad)))
    (tmp_path / "b.json").write_text('{"format": "dpverify-certificate/2", "claim": "\\ud800"}')
    (tmp_path / "c.json").write_text((F2 / "gdp-mu.json").read_text())
    p = _run_verify([tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"], 120)
    assert p.returncode == 1, p.stderr
    out = p.stdout + p.stderr
    assert all(n in out for n in ("a.json: REFUSED", "b.json: malformed", "c.json: gdp.mu: confirmed")), out


# --------------------------------------------------------------------------- stalls: bounded before work


def _stall(tmp_path: Path, cert: dict, *extra: str) -> int:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(reseal(cert), ensure_ascii=False))
    # the timeout bounds a hang (the stalls ran past 300 s); not a speed assertion
    p = _run_verify([path], 90, *extra)
    return p.returncode


def test_gdp_delta_at_eps_5e99999_is_answered(tmp_path):
    c = fixture("gdp-delta")
    c["inputs"]["eps"] = "5e99999"
    assert _stall(tmp_path, c) in (1, 2, 3)


@pytest.mark.parametrize("profile", ["10**10**10**10*eps", "9**9**9**9**9**9*eps"])
def test_power_tower_profiles_are_answered(tmp_path, profile):
    c = fixture("gdp-certify-expr")
    c["inputs"]["profile"] = profile
    assert _stall(tmp_path, c) in (1, 2, 3)


def test_huge_relation_bound_is_answered_within_the_budget(tmp_path):
    c = json.loads((CLAIMS / "gdpt-fig1-laplace-2gdp.json").read_text())
    c["claim"]["relation"] = {"kind": "rounds_to", "printed": "1e999999999999999999"}
    c["claim"]["printed"] = "1e999999999999999999"
    assert _stall(tmp_path, c, "--budget", "5") in (1, 2, 3)


def test_composition_with_forty_distinct_eps_is_answered(tmp_path):
    c = fixture("compose-delta")
    c["inputs"]["mechs"] = [f"0.{i + 10},1e-8" for i in range(40)]
    c["inputs"]["k"] = 1
    assert _stall(tmp_path, c) in (1, 2, 3)


# --------------------------------------------------------------------------- genuine certificates that answered exit 3


@pytest.mark.parametrize("argv", [
    ["gdp", "mu", "--eps", "-1", "--delta", "0.7"],
    ["gdp", "certify", "--mechanism", "laplace", "--scale", "1/140", "--eps-h", "5", "--margin", "1e-3"],
    ["gdp", "certify", "--mechanism", "pure", "--eps0", "72", "--eps-h", "80", "--margin", "1e-3"],
], ids=["gdp-mu-negative-eps", "laplace-1/140", "pure-72"])
def test_genuine_certificates_verify(argv, tmp_path):
    assert outcome(cli_cert(argv, tmp_path), budget=300) == 0

"""adv35 P1: a (claimed_eps, delta) claim of `audit dpsgd` decided at once (here on the Renyi tail:
delta(1) <= 1.6e-1782 <= 1e-1700) printed an informational eps(delta) line that then ran to the whole
time budget (608 s wall). The line now has a static work cap (limits.SUPPLEMENTARY_EPS_MAX_WORK): what
it prints is a function of the inputs, never of the clock, and the certificate is the claim's.

No speed is asserted: the tests check what is written. The time budget given is only there so that the
code before the fix (which waited for the clock) fails in minutes rather than ten."""

import json
from fractions import Fraction

import pytest

from dpverify.cli import main
from dpverify.errors import PrecisionExhausted
from dpverify.pld.dpsgd import GaussianSteps
from dpverify.pld.refine import refine_query
from dpverify.recheck.verify import verify_file


def test_a_decided_claim_reports_its_eps_line_within_the_static_work_cap(tmp_path, capsys):
    p = tmp_path / "c.json"
    code = main(["audit", "dpsgd", "--noise-multiplier", "1e6", "--sampling-rate", "0.01", "--steps", "100",
                 "--claimed-eps", "1", "--delta", "1e-1700", "--time-budget", "120", "--certificate", str(p)])
    out = capsys.readouterr().out
    assert code == 0
    assert "certified eps(1e-1700): not resolved" in out and "work cap" in out and "time budget" not in out, out
    cert = json.loads(p.read_text())
    assert cert["result"]["verdict"] == "holds"
    # the reason's delta is printed as the exact fraction 1/10^1700 (a 1701-digit denominator): it is read
    # and re-derived, not named as unread text
    code, msg = verify_file(p)
    assert code == 0 and "result.reason" not in msg, msg


def test_the_work_cap_stops_a_refinement_without_a_clock():
    # the same query as the line above: after the first level (201 points at the unit 2^-5698), the next
    # grid's planned work is past a cap of 10^6 points x (2K + 32); the stop names the cap
    steps = [GaussianSteps.of("1e6", "0.01", 100).step()]
    with pytest.raises(PrecisionExhausted, match="work cap"):
        refine_query(steps, ("remove", "add"), kind="eps", target=Fraction(1, 10**1700), rel_width=1e-3,
                     time_budget=3600, max_work=10**6)


def test_a_claim_the_clock_stops_writes_no_certificate_and_starts_no_eps_line(tmp_path, capsys):
    """Issue 22 (d): the line had a whole --time-budget of its own after the claim had spent one (a 5 s
    budget ran 11 s). adv43 D1: a claim the clock stopped was then written as an 'undecided' certificate
    whose reason (the enclosure reached, [1e-5, inf] on a quiet machine, [0, inf] under a CPU hog) followed
    the load. With a budget the claim spends at its first look at the clock (1e-9 s) the run is exit 3 with
    no file, for the Poisson route and the event-tree route alike, and the line does not start. (The
    tree is Poisson-sampled: a tree of rate-1 Gaussians is decided in closed form, no grid, no clock.)"""
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps({"event": {"type": "self_composed", "count": 10, "event": {
        "type": "poisson_sampled", "sampling_probability": "1/2",
        "event": {"type": "gaussian", "noise_multiplier": "1"}}}}))
    for schedule in (["--noise-multiplier", "0.5", "--sampling-rate", "0.001", "--steps", "1000"],
                     ["--events", str(ev)]):
        p = tmp_path / "c.json"
        code = main(["audit", "dpsgd", *schedule, "--claimed-eps", "1", "--delta", "1e-5",
                     "--time-budget", "1e-9", "--certificate", str(p)])
        cap = capsys.readouterr()
        assert code == 3, (schedule, cap)
        assert "time budget of 1e-09 s ran out" in cap.err, (schedule, cap.err)
        assert not p.exists() and "certified eps(" not in cap.out, (schedule, cap.out)

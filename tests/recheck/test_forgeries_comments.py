"""The writer's comments (adv36 F3): ``result.reason`` in a writers' form is re-derived from the
re-proved enclosure, verdict and inputs, and any other free text is named on the verify line.

Before dpverify/certificate/comments.py each forgery below was accepted (exit 0) and the verify line
did not name the field: a reader quoting the reason or note quoted a false sentence. Each expected
answer follows from the fixture's own recorded numbers (written beside the case)."""

import copy
import json
from pathlib import Path

import pytest

from dpverify.certificate.format import compute_digest
from dpverify.recheck.verify import verify_file

F1 = Path(__file__).resolve().parents[1] / "certificate" / "format1"
F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"
FALSE = "this run is (0.01, 1e-9)-DP (certified)"


def _forged(tmp_path, src: Path, change) -> tuple[int, str]:
    cert = json.loads(src.read_text())
    c = copy.deepcopy(cert)
    change(c["result"])
    c["digest"] = compute_digest(c)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(c))
    return verify_file(p)


@pytest.mark.parametrize("name,path,value", [
    ("pld-epsilon", "note", FALSE),
    ("pld-epsilon", "reason", FALSE),
    # a reason in no writers' form on a claim certificate: named, not confirmed
    ("pld-claim", "reason", FALSE),
    # adv38 C1: another kind's form, whose ends would be read against this kind's enclosure
    ("shuffle-claim", "reason", "certified delta(1) >= 2 > 1/100000"),  # an epsilon bracket, not delta(1)
    ("pld-claim", "reason", "certified upper end 1.3e-13 <= claimed 2"),  # delta(2), not an epsilon
    ("bins-claim", "reason", "certified upper end 2.23263 <= claimed 2.5 (group privacy)"),  # replace-one's clause
])
def test_free_text_that_is_no_writers_form_is_named_on_the_line(tmp_path, name, path, value):
    # the numbers are genuine, so the certificate is confirmed; the text is not part of it
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: r.__setitem__(path, value))
    assert code == 0, msg
    assert f"result.{path}" in msg.split("not re-proved and not part of what is confirmed:")[1]


def test_an_events_theorem_list_is_re_derived_not_named(tmp_path):
    """events.* theorems were named as the writer's text; they are now rebuilt from inputs.event
    (issue 22 item 3, tests/recheck/test_event_theorems.py): a citation of no step is exit 1."""
    code, msg = _forged(tmp_path, F2 / "events-delta.json", lambda r: r.__setitem__(
        "theorems", ["this mechanism is (0, 0)-DP (Dwork and Roth 2014 Thm 1)"]))
    assert code == 1, msg


@pytest.mark.parametrize("name,reason", [
    # pld-claim records delta(2) in [1.2103929949134165e-13, 1.2103948472652284e-13], delta 1e-5, claimed_eps 2
    ("pld-claim", "certified delta(2) <= 1e-20 <= 1/100000"),  # 1e-20 is below the re-proved upper end
    ("pld-claim", "certified delta(3) <= 1.2103948472652284e-13 <= 1/100000"),  # not the claimed eps 2
    ("pld-claim", "certified delta(2) <= 1.2103948472652284e-13 <= 1/1000000000000000"),  # not inputs.delta
    ("pld-claim", "certified delta(2) >= 1.2103929949134165e-13 > 1/100000"),  # a fails form on a holds verdict
    # bins-claim records [2.23218..., 2.23263] against claimed 2.5
    ("bins-claim", "certified upper end 2.2 <= claimed 2.5"),
    ("bins-claim", "claimed 2.5 lies in the certified bracket [2.2, 2.6]"),  # the verdict word: undecided
])
def test_a_false_reason_in_a_writers_form_is_refused(tmp_path, name, reason):
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: r.__setitem__("reason", reason))
    assert code == 1, msg


@pytest.mark.parametrize("reason", [
    # the registry claim's value is delta(0.277) = 0.2998896724368168 (recorded to 18 digits)
    "the certified value [0.2, 0.25] satisfies the printed claim",  # excludes the value
    "the certified value [0.299889, 0.29989] contradicts the printed claim",  # verdict holds
])
def test_a_false_registry_reason_is_refused_in_format_1(tmp_path, reason):
    code, msg = _forged(tmp_path, F1 / "afa-fig1-gaussian-0.277-0.3.json", lambda r: r.__setitem__("reason", reason))
    assert code == 1, msg


def test_genuine_reasons_are_bound_not_named():
    for src in (F2 / "pld-claim.json", F2 / "bins-claim.json", F1 / "afa-fig1-gaussian-0.277-0.3.json"):
        code, msg = verify_file(src)
        assert code == 0 and "result.reason" not in msg, msg


@pytest.mark.parametrize("name,path,value", [
    # calibrate-steps: template dpsgd, free parameter steps; its writer states "nondecreasing in the steps"
    ("calibrate-steps", "monotonicity", "eps is nonincreasing in the steps: T steps are a marginal "
                                        "(post-processing) of T+1"),
    # another parameter's argument (noise multiplier) on a steps calibration
    ("calibrate-steps", "monotonicity", "eps is nonincreasing in the noise multiplier: adding independent Gaussian "
                                        "noise is a post-processing of the pair (data processing for the "
                                        "hockey-stick divergence, both directions, preserved by composition)"),
    # a pairs text on a Poisson calibration, whose writer writes none
    ("calibrate-steps", "pairs", "both ends: a pair realised by a concrete dataset pair (tight)"),
    # the balls-in-bins argument on a shuffled calibration
    ("calibrate-shuffle-sigma", "pairs", json.loads((F2 / "calibrate-bins-sigma.json").read_text())["result"]["pairs"]),
])
def test_a_calibration_argument_other_than_its_writers_is_refused(tmp_path, name, path, value):
    # before the tables moved to prose.py these were named on the line and the certificate confirmed (exit 0)
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: r.__setitem__(path, value))
    assert code == 1, msg
    assert f"result.{path}" in msg


@pytest.mark.parametrize("name", ["calibrate-steps", "calibrate-shuffle-sigma", "calibrate-bins-epochs"])
def test_a_calibration_argument_as_its_writer_states_it_is_bound_not_named(tmp_path, name):
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: None)
    assert code == 0, msg
    assert "result.monotonicity" not in msg and "result.pairs" not in msg, msg


_NOT_GDP = (" for large eps, which delta_mu(eps) ~ exp(-eps^2/(2 mu^2)) falls below for every mu (GDPT Lemma A.1); "
            "Thm 4.4 limit = +inf, so not GDP (Thm 4.3)")


@pytest.mark.parametrize("name,reason", [
    # Laplace of scale 1: the privacy loss is at most D/b = 1, so f = 0 exactly from eps = 1 on; eps_h = 5
    ("gdp-certify-laplace", "the profile is 0 for eps >= 0.5 <= eps_h and delta_mu(eps) > 0"),  # f(0.5) > 0
    ("gdp-certify-laplace", "the profile is 0 for eps >= 6 <= eps_h and delta_mu(eps) > 0"),  # 6 > eps_h = 5
    ("gdp-certify-laplace", "the profile is K/eps, K = 4 e^-2" + _NOT_GDP),  # a not-GDP tail on a certified one
    ("gdp-certify-laplace", "mu is below the mechanism's mu0"),  # another kind's (gaussian) unknown tail
    ("gdp-certify-laplace", "mu was not proved >= the mechanism's mu0"),  # the same, as this release words it
    # randomized response p = 3/4: f = 0 from log(p / (1 - p)) = log 3 = 1.0986... on, not from 1
    ("gdp-certify-rr", "the profile is 0 for eps >= 1 <= eps_h and delta_mu(eps) > 0"),
    # approx DP records delta0 = 0.1: its large-eps model is the constant 0.1, not 0.01
    ("gdp-certify-approx", "the profile is delta0 = 0.01 for eps >= eps0" + _NOT_GDP),
    ("gdp-certify-approx", "the profile is K/eps, K = 4 e^-2" + _NOT_GDP),  # ICEA's model, not approx DP's
    # ICEA's head is unbounded at head.argmax = 0, not at 2
    ("gdp-certify-icea", "the profile is >= 1 at eps = 2: no mu-GDP bound holds there (delta_mu < 1)"),
])
def test_a_false_tail_reason_in_the_writers_form_is_refused(tmp_path, name, reason):
    # before gdpt._tail_reason_bound these were named on the line and the certificate confirmed (exit 0)
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: r["tail"].__setitem__("reason", reason))
    assert code == 1, msg
    assert "result.tail.reason" in msg


@pytest.mark.parametrize("name", ["gdp-certify-laplace", "gdp-certify-rr", "gdp-certify-approx", "gdp-certify-icea",
                                  "gdp-certify-gaussian", "gdp-certify-sgd-refined", "gdp-certify-subsampled"])
def test_the_writers_tail_reason_is_bound_not_named(tmp_path, name):
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: None)
    assert code == 0, msg
    assert "result.tail.reason" not in msg, msg
    # text in no writer's form stays named, the numbers confirmed
    code, msg = _forged(tmp_path, F2 / f"{name}.json", lambda r: r["tail"].__setitem__("reason", FALSE))
    assert code == 0, msg
    assert "result.tail.reason" in msg.split("not re-proved and not part of what is confirmed:")[1]


def test_a_tail_reason_saying_why_the_writer_stopped_is_named_not_bound(tmp_path):
    """adv40 T1: the 'unknown' forms ("eps_h is below where the tail model holds", "the profile vanishes
    only from eps = z ...") say why the writer's route stopped, which no number re-proves; on a certified
    tail relabelled 'head only' they were confirmed as re-derived. They are named as the writer's text."""
    from dpverify.certificate.prose import statement

    def relabel(r):
        r["status"], r["verdict"] = "head only", "undecided"
        r["tail"]["status"] = "unknown"
        r["tail"]["reason"] = "eps_h is below where the tail model holds"

    cert = json.loads((F2 / "gdp-certify-sgd-refined.json").read_text())
    relabel(cert["result"])
    cert["claim"]["statement"] = statement("gdp.certify", cert["inputs"], cert["result"])
    cert["digest"] = compute_digest(cert)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(cert))
    code, msg = verify_file(p)
    assert code in (0, 1), msg
    if code == 0:
        assert "result.tail.reason" in msg.split("not re-proved and not part of what is confirmed:")[1], msg


def test_no_tail_model_is_re_derived_from_the_mechanism(tmp_path):
    """Issue 22 item 3: "no closed-form tail known for this profile" is a function of the mechanism
    (its tail kind, re-derived), so where the mechanism has no tail model (an expression profile) it
    is bound, not named. Independent route: gdp/tail.py's tail_model has closed forms for the listed
    mechanisms only, so an expr profile has none. A 0.1.0 randomized-response certificate wrote it when
    that release had no rr model: now rr has one (zero past log(p/(1-p))), so that text is named."""
    from dpverify.cli import main
    from dpverify.recheck.verify import confirm

    out = tmp_path / "c.json"
    assert main(["gdp", "certify", "--mechanism", "expr", "--profile", "0.5*exp(-eps)", "--eps-h", "2",
                 "--certificate", str(out)]) == 3  # head only
    cert = json.loads(out.read_text())
    assert cert["result"]["tail"]["kind"] == "unknown"
    assert "result.tail.reason" not in " ".join(confirm(cert).unconfirmed)
    old = json.loads((F2.parent / "format1" / "v010-gdp-certify-rr-shuffled.json").read_text())
    assert old["result"]["tail"]["reason"] == cert["result"]["tail"]["reason"]
    assert any("result.tail.reason" in u for u in confirm(old).unconfirmed)

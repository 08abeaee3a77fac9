"""Issue 22: inputs the producer would refuse are refused by verify (exit 2), by one rule.

``certificate/ranges.py`` declares the producer's input ranges once (kind, input key, range, the
producer's option); verify applies them to every certificate before any route runs. The
independent side of each test is the producer itself: for every row, a value just outside the
range is given to the command that writes that kind, which must refuse it (exit 2), and a genuine
certificate of the kind, restated at that value (statement, quantity, relation bound, digest, as a
consistent forger leaves it), must be refused by verify (exit 2) too. The named cases (adv42 F3,
S1, the inf spelling; adv41 C3) were exit 0, 1 or 3 before.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from dpverify.certificate import prose
from dpverify.certificate.format import compute_digest
from dpverify.certificate.ranges import INPUT_NAMES, INPUT_RANGES, Range
from dpverify.cli import main
from dpverify.recheck.verify import verify_file

ROOT = Path(__file__).resolve().parents[2]
F1, F2, CERTS = ROOT / "tests/certificate/format1", ROOT / "tests/certificate/format2", ROOT / "certificates"


def restated(c: dict, path: tuple, value: Any) -> dict:
    """``c`` with the input at ``path`` (keys under ``inputs``) set to ``value`` and every word that
    follows from the inputs re-made (result.quantity, claim.relation.bound when it was that input,
    claim.statement), the digest recomputed."""
    d = copy.deepcopy(c)
    obj = d["inputs"]
    for p in path[:-1]:
        obj = obj[p]
    old, obj[path[-1]] = obj[path[-1]], value
    kind, r = d["claim"]["quantity"], d["result"]
    template = prose.encloses_template(kind, r)
    if "quantity" in r and template:
        r["quantity"] = prose._fill(template, prose._fields(d["inputs"], r)) or r["quantity"]
    rel = d["claim"].get("relation")
    if len(path) == 1 and isinstance(rel, dict) and rel.get("bound") == old:
        rel["bound"] = value
    if "id" not in d["claim"]:
        d["claim"]["statement"] = prose.statement(kind, d["inputs"], r)
    d["digest"] = compute_digest(d)
    return d


def _verify(c: dict, tmp_path: Path) -> tuple[int, str]:
    p = tmp_path / "f.json"
    p.write_text(json.dumps(c))
    return verify_file(p, budget_seconds=60)


# --------------------------------------------------------------------------- the named cases

CASES = [
    # adv42 F3: dp implies --to E,D takes D in [0, 1] (the verdicts were true, and confirmed)
    *[(F2 / "dp-implies-fails.json", ("delta",), v) for v in ("-0.1", "-1e-30")],
    *[(F2 / "dp-implies-holds.json", ("delta",), v) for v in ("2", "1e300")],
    (F2 / "rdp-divergence-rr.json", ("alpha",), "1e300"),  # rdp divergence: alpha <= 1e9
    (F2 / "rdp-divergence-laplace.json", ("alpha",), "1e300"),
    *[(F2 / f"shuffle-{k}.json", ("noise_multiplier",), "1e300") for k in ("epsilon", "delta", "claim")],
    (F2 / "shuffle-delta.json", ("eps",), "-2"),  # one rule for audit dpsgd --eps: >= 0 on every sampling
    # event trees: a Gaussian sigma past 1e100 and non-positive WOR sizes were exit 3 after work
    (F2 / "events-delta.json", ("event", "events", 0, "event", "event", "noise_multiplier"), "1e300"),
    (F2 / "events-epsilon-wor.json", ("event", "event", "source_dataset_size"), -60000),
    (F2 / "events-epsilon-wor.json", ("event", "event", "source_dataset_size"), 0),
    (F2 / "events-epsilon-wor.json", ("event", "event", "sample_size"), -256),
    # a legacy approx step with e^eps0 < 1 was exit 1 (pld/pairs.py: exp_eps0 >= 1)
    (F2 / "pld-epsilon-legacy-events.json", ("events", 3, "exp_eps0"), "0.5"),
    # ... and past e^eps0 = 1e86 (limits.MAX_APPROX_EXP_EPS0): at 1e300 exit 3 (the second route's work cap)
    (F2 / "pld-epsilon-legacy-events.json", ("events", 3, "exp_eps0"), "1e300"),
    # inputs the route never read: gdp certify's margin and eps_h (the route reads result.head's)
    *[(F2 / "gdp-certify-laplace.json", ("margin",), v) for v in ("-1e-3", "0", "1e300", "inf")],
    (F2 / "gdp-certify-laplace.json", ("eps_h",), "1"),  # result.head.eps_h is 5
    *[(F1 / "api-gdp-clip-rectify.json", ("mu",), v) for v in ("-1.5", "0", "inf")],
    *[(CERTS / "gdpt-fig1-icea-not-4gdp.json", ("argmax",), v) for v in ("-1e-30", "1e300", "-inf")],
    # "inf": exit 1 with "result.quantity='delta(eps=inf)' is not what ... encloses ('delta(eps=inf)')"
    (F2 / "pld-delta.json", ("eps",), "inf"),
    (F2 / "pld-epsilon-add.json", ("delta",), "inf"),
    (F2 / "rdp-divergence-rr.json", ("alpha",), "inf"),
    (F2 / "gdp-delta-tiny.json", ("eps",), "inf"),
    # compose --delta 0 answered [inf, inf] (exit 0) where every other delta budget is refused; now
    # refused as they are, and verify of such a certificate (exit 1 before) likewise
    *[(F2 / "compose-eps.json", ("delta",), v) for v in ("0", "-1e-30")],
    (F2 / "compose-grid.json", ("delta",), "0"),
    # check rr64 --eps0 1e300: e^eps0 overflowed the second route (exit 3); now beyond the stated cap
    *[(F2 / f"dp-rr64{s}.json", ("eps0",), "1e300") for s in ("", "-fails")],
    # Laplace(b) of sensitivity D is (D/b)-DP: the builder refuses D/b > 1e6 (exit 2); verify read
    # only b > 0 and answered exit 1
    (F2 / "dp-profile.json", ("scale",), "1e-7"),
    (F2 / "rdp-divergence-laplace.json", ("scale",), "1e-400"),
    (F2 / "gdp-certify-laplace.json", ("scale",), "1e-7"),
    # the subsampled Gaussian's RDP curve: sigma in (0, 1e100] as every sampled Gaussian (exit 1 before)
    *[(F2 / f, ("noise_multiplier",), "1e300") for f in ("rdp-epsilon-balle-ssg.json", "rdp-divergence-ssg.json")],
    # a mixture of Gaussians whose shift c_i / s exceeds 1e100 (events/pairs.py refuses it): exit 3 before
    (F2 / "events-epsilon-mog.json", ("event", "event", "standard_deviation"), "1e-400"),
    (F2 / "events-epsilon-mog.json", ("event", "event", "sensitivities", 2), "1e300"),
]


@pytest.mark.parametrize("file,path,value", CASES, ids=[f"{f.stem}:{'.'.join(map(str, p))}={v}" for f, p, v in CASES])
def test_an_input_the_producer_refuses_is_exit_2(file, path, value, tmp_path):
    code, msg = _verify(restated(json.loads(file.read_text()), path, value), tmp_path)
    assert code == 2, msg
    assert f"inputs.{path[0]}" in msg, msg


@pytest.mark.parametrize("argv", [["compose", "--mech", "1,1e-6", "--steps", "3", "--delta", d] for d in ("0", "-1e-30")]
                         + [["compose", "--mech", "0.5,0", "--mech", "0.25,0", "--delta", "0"]])
def test_compose_refuses_a_delta_budget_of_0_as_the_others_do(argv, capsys):
    """The same refusal (the shared validator's words) as gdp mu --delta 0; compose answered
    '[inf, inf]' (or, for pure guarantees, their sum) with exit 0."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert main(["gdp", "mu", "--eps", "1", "--delta", argv[-1]]) == 2
    other = capsys.readouterr().err
    assert f"--delta: delta='{argv[-1]}' must be in (0, 1" in err and "Traceback" not in err, err
    assert err.split(" must be")[0] == other.split(" must be")[0], (err, other)


@pytest.mark.parametrize("eps", ["0", "0.5", "-1e300", "1e300"])
def test_rr64_refuses_eps0_beyond_its_stated_cap(eps, tmp_path, capsys):
    """check rr64 --eps0 1e300 wrote a certificate at eps = 0 (verify: exit 3, e^eps0 overflowed)
    and refused eps = 0.5 only because a row left the printable range. One cap now, stated in
    --help, refused by both sides; at the cap the producer's certificate verifies. At eps = -+1e300
    the rows -e^eps P(E|s_ref) of events with P(E|s) = 0 leave the printable range, but the certified
    sup does not (1 - e^eps P(.) and delta0): the table names those rows and the check answers (it
    refused with exit 2, for an input verify accepts and a certificate verify confirms)."""
    from dpverify.limits import MAX_EPS0

    argv = ["check", "rr64", "--delta0", "0.1", "--eps", eps]
    assert main([*argv, "--eps0", "1e300"]) == 2
    err = capsys.readouterr().err
    assert "--eps0" in err and str(MAX_EPS0) in err and "Traceback" not in err, err
    try:
        main(["check", "rr64", "--help"])
    except SystemExit:
        pass
    assert f"eps0 in [0, {MAX_EPS0}]" in " ".join(capsys.readouterr().out.split())
    cert = tmp_path / "c.json"
    # the verdict: GDPT's formula holds iff eps >= -eps0 (GDPT Cor 3.2), so eps = -1e300 fails
    assert main([*argv, "--eps0", str(MAX_EPS0), "--certificate", str(cert)]) == (1 if eps == "-1e300" else 0)
    assert verify_file(cert)[0] == 0, verify_file(cert)
    assert main([*argv, "--eps0", "1"]) == (1 if eps == "-1e300" else 0)
    out = capsys.readouterr().out
    assert ("magnitude outside 10^(+-10^17)" in out) == (eps in ("-1e300", "1e300")), out
    # W(eps) = delta0 + (1-delta0)[(e^eps0 - e^eps)_+ + (1 - e^(eps+eps0))_+]/(1+e^eps0) (GDPT Cor 3.2):
    # W(1e300) = delta0 exactly, and W(-1e300) = 1 - e^-1e300, within 10^-17 of 1
    lo, hi = (Fraction(v) for v in json.loads(cert.read_text())["result"]["enclosure"].values())
    if eps == "1e300":
        assert lo <= Fraction(1, 10) <= hi, (lo, hi)
    elif eps == "-1e300":
        assert lo <= 1 and hi >= 1 - Fraction(1, 10**17), (lo, hi)


#: (argv, a genuine certificate of its kind, the inputs restated, the input the refusal names): results past the
#: printable range 10^(+-10^17) (or past the exponent range verify's MPFR route evaluates in) were refused by the
#: producer only when printed (exit 2, or exit 0 with a delta verify could not enclose: exit 3), while verify read
#: such inputs as in range (exit 1 on the restated certificate); now one stated rule on two inputs, both sides
_PAST_PRINTABLE = [
    (["gdp", "delta", "--mu", "1e-400", "--eps", "1"], F2 / "gdp-delta.json", {"mu": "1e-400", "eps": "1"}, "mu"),
    (["gdp", "delta", "--mu", "1", "--eps", "1e300"], F2 / "gdp-delta.json", {"mu": "1", "eps": "1e300"}, "mu"),
    (["rdp", "to-dp", "--alpha", "2", "--rdp", "1", "--eps", "1e300"], F2 / "rdp-to-dp-delta.json",
     {"alpha": "2", "rdp": "1", "eps": "1e300"}, "alpha"),
    (["rdp", "to-dp", "--alpha", "1e300", "--rdp", "0", "--eps", "1"], F2 / "rdp-to-dp-delta.json",
     {"alpha": "1e300", "rdp": "0", "eps": "1"}, "alpha"),
    (["rdp", "to-dp", "--alpha", "1e9", "--rdp", "0", "--eps", "1e6", "--conversion", "balle"],
     F2 / "rdp-to-dp-balle-delta.json", {"alpha": "1e9", "rdp": "0", "eps": "1e6"}, "alpha"),
]


@pytest.mark.parametrize("argv,file,values,named", _PAST_PRINTABLE, ids=[" ".join(a[:2] + a[3::2]) for a, *_ in _PAST_PRINTABLE])
def test_a_result_past_the_printable_range_is_a_stated_input_range(argv, file, values, named, tmp_path, capsys):
    from dpverify.limits import MAX_CONVERSION_ALPHA_EPS, MAX_GDP_EPS_OVER_MU

    assert main(argv) == 2
    err = capsys.readouterr().err
    cap = MAX_GDP_EPS_OVER_MU if argv[0] == "gdp" else MAX_CONVERSION_ALPHA_EPS
    assert "--eps" in err and str(cap) in err and "printable range: its magnitude" not in err, err
    c = json.loads(file.read_text())
    for key, v in values.items():
        c = restated(c, (key,), v)
    code, msg = _verify(c, tmp_path)
    assert code == 2 and f"inputs.{named}" in msg and "inputs.eps" in msg and str(cap) in msg, msg


@pytest.mark.parametrize("argv", [
    # at the caps: eps / mu = 1e8 (delta_mu about 10^(-2.2e15)), alpha * eps = 1e8 (delta about e^-(10^8))
    ["gdp", "delta", "--mu", "1", "--eps", "1e8"], ["gdp", "delta", "--mu", "1e-3000", "--eps", "1e-2992"],
    ["rdp", "to-dp", "--alpha", "1e4", "--rdp", "0", "--eps", "1e4"],
    ["rdp", "to-dp", "--alpha", "1e3000", "--rdp", "0", "--eps", "1e-2992", "--conversion", "balle"],
])
def test_at_the_printable_caps_the_producers_certificate_verifies(argv, tmp_path):
    """Inside the stated rule every delta is printed and re-proved: verify's own MPFR route confirms it."""
    cert = tmp_path / "c.json"
    assert main([*argv, "--certificate", str(cert)]) == 0
    assert verify_file(cert)[0] == 0, verify_file(cert)
    lo = json.loads(cert.read_text())["result"]["enclosure"]["lo"]
    # the decimal exponent, against the closed forms: log10 delta_mu(eps) ~ -x^2 / (2 ln 10) with x = eps/mu
    # (-2.17e15); the classic conversion's (alpha - 1)(-eps) / ln 10 = -43425106 (alpha 1e4, eps 1e4)
    exp10 = int(lo.split("e")[1])
    if argv[0] == "gdp":
        assert -2.2e15 < exp10 < -2.1e15, lo
    elif argv[3] == "1e4":
        assert exp10 == -43425106, lo


_EPS0_PAST_THE_CAP = [
    (["dp", "profile", "--mechanism", "approx", "--eps0", "1e300", "--delta0", "0.1", "--eps", "1"], "--eps0"),
    (["dp", "profile", "--mechanism", "pure", "--eps0", "1000001", "--eps", "1"], "--eps0"),
    (["gdp", "certify", "--mechanism", "approx", "--eps0", "2e6", "--delta0", "0.1", "--eps-h", "3"], "--eps0"),
    (["dp", "profile", "--mechanism", "laplace", "--scale", "1e-7", "--eps", "1"], "--scale"),
    (["rdp", "divergence", "--mechanism", "laplace", "--scale", "1e-400", "--alpha", "2"], "--scale"),
]


@pytest.mark.parametrize("argv,option", _EPS0_PAST_THE_CAP, ids=[" ".join(a[:4] + a[5:6]) for a, _ in _EPS0_PAST_THE_CAP])
def test_an_eps0_past_the_one_cap_is_refused_by_the_producer(argv, option, capsys):
    """dp profile --mechanism approx / pure --eps0 1e300 wrote certificates that verify refused (the
    mechanism option range eps0 <= 1e6, exit 2): the builders now read eps0 by the one validator
    (_validate.eps0, limits.MAX_EPS0), as subsampled, rdp pure and Laplace's D/b already capped it."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err, err


@pytest.mark.parametrize("argv", [["dp", "profile", "--mechanism", "approx", "--eps0", "1e6", "--delta0", "0.1", "--eps", "1"],
                                  ["dp", "profile", "--mechanism", "laplace", "--scale", "1e-6", "--eps", "1"]])
def test_at_the_eps0_cap_the_producers_certificate_verifies(argv, tmp_path):
    cert = tmp_path / "c.json"
    assert main([*argv, "--certificate", str(cert)]) == 0
    assert verify_file(cert)[0] == 0, verify_file(cert)


_SSG = ["--mechanism", "subsampled-gaussian", "--sampling-rate", "0.01"]


@pytest.mark.parametrize("argv,code", [
    (["rdp", "epsilon", *_SSG, "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1e1000"], 2),
    (["rdp", "divergence", *_SSG, "--alpha", "2", "--noise-multiplier", "1e300"], 2),
    # below the doubles the quadrature's plan has no pieces to give: undecided, as at 1e-300
    (["rdp", "epsilon", *_SSG, "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1e-308"], 3),
    (["rdp", "epsilon", *_SSG, "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1e-400"], 3),
])
def test_the_subsampled_gaussian_rdp_sigma_is_read_as_every_sampled_sigma(argv, code, capsys):
    """rdp's subsampled Gaussian read sigma as any positive number: 1e1000 and 1e-308 / 1e-400 were
    internal errors (exit 4), 1e300 ran past 120 s. Its range is now (0, 1e100], the accountants'
    (_validate.noise_multiplier), and verify's mechanism option check holds it there too."""
    assert main(argv) == code
    err = capsys.readouterr().err
    assert "internal error" not in err and (code != 2 or "--noise-multiplier" in err), err


@pytest.mark.parametrize("e0", ["1e300", "1e87", "1e86"])
def test_a_legacy_approx_step_past_its_stated_cap_is_refused_by_the_producer(e0, tmp_path, capsys):
    """e^eps0 = 1e300 (q = 1, 3 steps): the producer answered in 5 CPU s a certificate whose step the second
    route could not discretise within its work cap (verify exit 3); past 1e86 (eps0 198, beyond the largest
    eps event trees state) it is refused by both; at the cap (q = 1) it is answered and verifies."""
    from dpverify.limits import MAX_APPROX_EXP_EPS0

    events = tmp_path / "ev.json"
    events.write_text(json.dumps({"neighboring": "add-remove", "events": [
        {"mechanism": "approx", "exp_eps0": e0, "delta0": "1e-9", "sampling_rate": "1", "count": 3}]}))
    cert = tmp_path / "c.json"
    code = main(["audit", "dpsgd", "--events", str(events), "--delta", "1e-5", "--certificate", str(cert)])
    err = capsys.readouterr().err
    if Fraction(e0) > MAX_APPROX_EXP_EPS0:
        assert code == 2 and "--events" in err and "exp_eps0" in err and "1e86" in err, err
    else:
        assert code == 0, err
        assert verify_file(cert)[0] == 0, verify_file(cert)


@pytest.mark.parametrize("sd,sens", [("1e-400", "1"), ("2", "1e300"), ("1e-99", "1")])
def test_a_mixture_whose_shift_is_past_1e100_is_refused_by_the_producer(sd, sens, tmp_path, capsys):
    """The producer's side of the two mixture cases above (and 1 / 1e-99 = 1e99, inside: answered)."""
    events = tmp_path / "ev.json"
    events.write_text(json.dumps({"neighboring": "add-remove", "event": {
        "type": "mixture_of_gaussians", "standard_deviation": sd, "sensitivities": ["0", sens],
        "sampling_probs": ["0.5", "0.5"]}}))
    inside = Fraction(sens) <= Fraction(sd) * 10**100
    code = main(["audit", "dpsgd", "--events", str(events), "--delta", "1e-5", "--time-budget", "5"])
    err = capsys.readouterr().err
    assert (code != 2 and "internal error" not in err) if inside else (code == 2 and "--events" in err), (code, err)


def test_the_genuine_values_of_those_fields_still_verify(tmp_path):
    """The same certificates as written (argmax 0 inside [0, eps_h], margin = head.margin 1e-3 read as
    0.001, mu 1.5): the rule refuses only what lies outside."""
    for f in (F2 / "gdp-certify-laplace.json", F1 / "api-gdp-clip-rectify.json", CERTS / "gdpt-fig1-icea-not-4gdp.json",
              F2 / "events-epsilon-wor.json", F2 / "pld-epsilon-legacy-events.json"):
        assert verify_file(f)[0] == 0, f


def test_a_verdict_on_a_kind_without_a_claim_is_exit_2(tmp_path):
    """adv41 C3: a verdict added to a claim-less pld.epsilon was exit 3 ("could not decide"); its
    converse, a relation without a verdict, was already exit 2."""
    c = json.loads((F2 / "pld-epsilon-add.json").read_text())
    assert "relation" not in c["claim"]
    c["result"]["verdict"] = "holds"
    c["digest"] = compute_digest(c)
    code, msg = _verify(c, tmp_path)
    assert code == 2 and "result.verdict" in msg, msg


def test_an_event_type_that_is_not_a_name_is_exit_2(tmp_path):
    """The tree walker and the events route read a node's type as a name: a list there was an
    unhashable TypeError in the route (exit 3, 'the re-derivation failed')."""
    c = json.loads((F2 / "events-delta.json").read_text())
    c["inputs"]["event"]["events"][1] = {"type": ["epsilon_delta"]}
    c["digest"] = compute_digest(c)
    code, msg = _verify(c, tmp_path)
    assert code == 2 and "inputs.event.events[1].type" in msg, msg


# --------------------------------------------------------------------------- every row, both sides

_SCHED = ["--noise-multiplier", "{noise_multiplier}", "--sampling-rate", "{sampling_rate}", "--steps", "{steps}"]
_EPOCHS = ["--noise-multiplier", "{noise_multiplier}", "--dataset-size", "{dataset_size}", "--batch-size", "{batch_size}",
           "--epochs", "{epochs}"]
_QUERY = {"epsilon": ["--delta", "{delta}"], "delta": ["--eps", "{eps}"],
          "claim": ["--delta", "{delta}", "--claimed-eps", "{claimed_eps}"]}
_DIGITS = ["--digits", "{digits}"]  # the PLD accountant's (vocabulary.DIGITS_PLD), for an enclosure (not a claim)
#: kind -> the producer's command line that writes it, with each row's key as a placeholder
PRODUCER: dict[str, list[str]] = {
    **{f"pld.{q}": ["audit", "dpsgd", *_SCHED, *a, *(_DIGITS if q != "claim" else [])] for q, a in _QUERY.items()},
    **{f"replace.{q}": ["audit", "dpsgd", "--neighboring", "replace-one", *_SCHED, *a] for q, a in _QUERY.items()},
    **{f"events.{q}": ["audit", "dpsgd", "--events", "{EVENTS}", *a, *(_DIGITS if q != "claim" else [])] for q, a in _QUERY.items()},
    **{f"shuffle.{q}": ["audit", "dpsgd", "--sampling", "shuffle", *_EPOCHS, *a] for q, a in _QUERY.items()},
    **{f"bins.{q}": ["audit", "dpsgd", "--sampling", "balls-in-bins", *_EPOCHS, *a] for q, a in _QUERY.items()},
    **{f"composition.{q}": ["compose", "--mech", "1,0", "--mech", "0.5,0", "--grid", "0.25", f"--{a}", "{%s}" % a,
                            "--digits", "{accuracy_digits}", "--steps", "{k}"] for q, a in (("eps", "delta"), ("delta", "eps"))},
    "gdp.delta": ["gdp", "delta", "--mu", "{mu}", "--eps", "{eps}", *_DIGITS],
    "gdp.mu": ["gdp", "mu", "--eps", "{eps}", "--delta", "{delta}", *_DIGITS],
    "dp.implies": ["dp", "implies", "--from", "{eps0},{delta0}", "--to", "{eps},{delta}", *_DIGITS],
    "dp.rr64": ["check", "rr64", "--eps0", "{eps0}", "--delta0", "{delta0}", "--eps", "{eps}", *_DIGITS],
    "dp.profile": ["dp", "profile", "--mechanism", "laplace", "--scale", "1", "--eps", "1", *_DIGITS],
    "rdp.epsilon": ["rdp", "epsilon", "--mechanism", "laplace", "--scale", "1", "--steps", "{compositions}", "--delta",
                    "{delta}", *_DIGITS],
    **{f"rdp.to_dp_{q}": ["rdp", "to-dp", "--alpha", "{alpha}", "--rdp", "{rdp}", f"--{a}", "{%s}" % a, *_DIGITS]
       for q, a in (("eps", "delta"), ("delta", "eps"))},
    "rdp.divergence": ["rdp", "divergence", "--mechanism", "laplace", "--scale", "1", "--alpha", "{alpha}",
                       "--steps", "{compositions}", *_DIGITS],
    "oracle.rows": ["oracle", "--battery", "smoke", "--tolerance", "{tolerance}", *_DIGITS],
    "gdp.certify": ["gdp", "certify", "--mechanism", "laplace", "--scale", "1", "--eps-h", "{eps_h}",
                    "--margin", "{margin}"],
    "gdp.optimal_mu": ["gdp", "certify", "--mechanism", "laplace", "--scale", "1", "--eps-h", "{eps_h}",
                       "--margin", "{margin}"],
}
#: an in-range value of every placeholder (the producer answers each of these quickly)
GOOD = {"accuracy_digits": "6", "digits": "2", "steps": "10", "compositions": "10", "k": "3", "epochs": "2", "dataset_size": "1000", "batch_size": "100", "mu": "1", "rdp": "0.05", "noise_multiplier": "1", "sampling_rate": "0.1", "delta": "0.00001", "eps": "1", "claimed_eps": "1",
        "eps0": "1", "delta0": "0.1", "alpha": "2", "tolerance": "0.01", "eps_h": "3", "margin": "0.01"}
#: rows no command line gives: the producer writes them itself (a hint, a 0.1.0 library call)
NO_OPTION = {("gdp.optimal_mu", "argmax"), ("gdp.clip_rectify", "mu"), ("gdp.clip_rectify", "eps_h"),
             *(("finite.identity", k) for k in INPUT_RANGES["finite.identity"]),
             ("oracle.rows", "row_count"),  # the length of --input's list, or of the battery's rows
             # a composition's claim records (and format 1) spell compose --digits "digits"; format 2 writes
             # accuracy_digits, whose row is driven through --digits above
             *(("composition." + q, "digits") for q in ("eps", "delta")),
             # kinds only claim records produce (reproduce): tests/theorems/test_claims_data.py reads a
             # record past each row
             *((k, "digits") for k in ("gdp.mills_scaled", "gdp.refinement_point", "gdp.thm51",
                                       "dp.sigma_refinement", "rdp.abc_gain")),
             ("rdp.abc_gain", "compositions")}


def _outside(rng: Range) -> list[str]:
    """Values just outside ``rng`` (its ends are numbers here), and inf."""
    out = ["inf"]
    if isinstance(rng.lo, (int, Fraction)):
        out += [str(Fraction(rng.lo))] if not rng.lo_closed else [str(Fraction(rng.lo) - 1), "-1e-30"]
    if isinstance(rng.hi, (int, Fraction)):
        out += [str(Fraction(rng.hi))] if not rng.hi_closed else [str(2 * Fraction(rng.hi))]
    return out


ROWS = [(kind, key, v) for kind, rows in sorted(INPUT_RANGES.items()) for key, (rng, _) in sorted(rows.items())
        if (kind, key) not in NO_OPTION for v in _outside(rng)]


def test_every_row_has_a_producer_or_a_reason():
    for kind, rows in INPUT_RANGES.items():
        for key in rows:
            assert (kind, key) in NO_OPTION or "{" + key + "}" in " ".join(PRODUCER[kind]), (kind, key)


@pytest.mark.parametrize("kind,key,value", ROWS, ids=[f"{k}:{key}={v[:12]}" for k, key, v in ROWS])
def test_the_producer_refuses_every_value_outside_a_row(kind, key, value, tmp_path, capsys):
    events = tmp_path / "ev.json"
    events.write_text(json.dumps({"neighboring": "add-remove", "event": {"type": "gaussian", "noise_multiplier": "2"}}))
    values = {**GOOD, key: value, "EVENTS": str(events)}
    argv = [a.format(**values) for a in PRODUCER[kind]]
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    # refused for this value: the message names the row's option (not another option's complaint)
    flag = next(t for t in INPUT_RANGES[kind][key][1].split() if t.startswith("--"))
    assert flag in err and "Traceback" not in err, err


def _genuine(kind: str, key: str) -> "Path | None":
    for d in (F2, CERTS, F1):
        for f in sorted(d.glob("*.json")):
            c = json.loads(f.read_text())
            if c.get("claim", {}).get("quantity") == kind and key in c.get("inputs", {}):
                return f
    return None


@pytest.mark.parametrize("kind,key,value", ROWS, ids=[f"{k}:{key}={v[:12]}" for k, key, v in ROWS])
def test_verify_refuses_every_value_outside_a_row(kind, key, value, tmp_path):
    f = _genuine(kind, key)
    if f is None:
        pytest.skip(f"no frozen {kind} certificate carries inputs.{key}")
    rng = INPUT_RANGES[kind][key][0]
    # a count is a JSON integer in a certificate (another type is the schema's to refuse)
    v: Any = int(value) if rng.integer and value.lstrip("-").isdigit() else value
    code, msg = _verify(restated(json.loads(f.read_text()), (key,), v), tmp_path)
    assert code == 2 and f"inputs.{key}" in msg, msg


# --------------------------------------------------------------------------- finite.identity (the Python API)

#: an input key of finite.identity -> an identity that takes it and its genuine arguments (r, lam, beta, q)
_IDENTITY = {"r": ("lt-eq7", ("r",), ("3/2",)), "lam": ("lt-thm5.1", ("r", "lam"), ("3/2", "1/3")),
             "beta": ("lt-eq12", ("beta",), ("1/3",)), "q": ("lt-eq21", ("q",), ("3",))}
IDENTITY_ROWS = [(key, v) for key, (rng, _) in sorted(INPUT_RANGES["finite.identity"].items())
                 for v in _outside(rng) + (["5/2"] if rng.integer else [])]


@pytest.mark.parametrize("key,value", IDENTITY_ROWS, ids=[f"{k}={v}" for k, v in IDENTITY_ROWS])
def test_an_identity_parameter_the_producer_refuses_is_exit_2(key, value, tmp_path):
    """No command writes finite.identity: its producer is ``theorems.identities.residual``, which
    refuses r <= 0, lam outside (0, 1], beta outside [0, 1] and orders q that are not integers >= 2
    (InvalidParameter, exit 2). verify answered r <= 0 and beta outside [0, 1] with exit 1, a
    non-integer q with exit 3; now exit 2 by the table, naming the input and the range."""
    from dpverify.errors import InvalidParameter
    from dpverify.theorems.identities import residual
    from tests.theorems.test_identities import certificate

    ident, names, args = _IDENTITY[key]
    P, Q = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4)]
    genuine = certificate(ident, P, Q, tuple(Fraction(a) for a in args))
    assert _verify(genuine, tmp_path)[0] == 0
    if value != "inf":  # the producer's reader refuses "inf" before the identity sees it
        with pytest.raises(InvalidParameter):
            residual(ident, P, Q, *(Fraction(value) if n == key else Fraction(a) for n, a in zip(names, args)))
    code, msg = _verify(restated(genuine, (key,), value), tmp_path)
    assert code == 2 and f"inputs.{key}" in msg, msg


def test_an_identity_on_a_pair_the_producer_refuses_is_exit_2(tmp_path):
    """lt-eq21 needs P << Q: the producer refuses a pair with q_i = 0 < p_i (InvalidParameter "pmf",
    exit 2); verify answered exit 1."""
    from dpverify.errors import InvalidParameter
    from dpverify.theorems.identities import residual
    from tests.theorems.test_identities import certificate

    P, Q = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1), Fraction(0)]
    with pytest.raises(InvalidParameter):
        residual("lt-eq21", P, Q, Fraction(3))
    good = certificate("lt-eq21", [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4)], (Fraction(3),))
    good["inputs"]["Q"] = ["1", "0"]
    good["digest"] = compute_digest(good)
    code, msg = _verify(good, tmp_path)
    assert code == 2 and "inputs.P" in msg, msg


# --------------------------------------------------------------------------- oracle.rows: at least one row

@pytest.mark.parametrize("count", [0, -1, 1.5, True, "0", "2", "inf"])
def test_an_oracle_certificate_without_rows_is_exit_2(count, tmp_path, capsys):
    """The producer refuses an --input file with no rows (exit 2) and a battery always has rows, so
    a row_count of 0 (rows emptied, the input text '[]', digest resealed) states a run the producer
    never makes: exit 2, as the other types and signs of a count were (the schema's). It was exit 1
    (verdict 'fails' re-derived 'holds'), or exit 0 with the verdict set to 'holds'."""
    import hashlib

    empty = tmp_path / "rows.json"
    empty.write_text("[]")
    assert main(["oracle", "--input", str(empty)]) == 2
    assert "--input" in capsys.readouterr().err
    c = json.loads((F2 / "oracle-input.json").read_text())
    c["inputs"].update(input_text="[]", input_sha256=hashlib.sha256(b"[]").hexdigest(), row_count=count)
    c["result"].update(rows=[], verdict="holds")
    c["digest"] = compute_digest(c)
    code, msg = _verify(c, tmp_path)
    assert code == 2 and "inputs.row_count" in msg, msg
    del c["inputs"]["row_count"]  # without the count (format 1 has none): the empty rows themselves
    c["digest"] = compute_digest(c)
    code, msg = _verify(c, tmp_path)
    assert code == 2 and "result.rows" in msg, msg


# --------------------------------------------------------------------------- names (ranges.INPUT_NAMES)

def test_the_name_tables_are_the_producers_registries():
    """INPUT_NAMES reads format.py's name tuples (stdlib, so verify can); each is the registry the
    producer dispatches on, so a new mechanism or conversion is named in one place."""
    from dpverify.certificate.format import CONVERSIONS, PROFILE_MECHANISM_NAMES, RDP_MECHANISM_NAMES
    from dpverify.mechanisms import profile_names
    from dpverify.rdp import CONVERSIONS as PRODUCER_CONVERSIONS
    from dpverify.rdp.specs import RDP_MECHANISMS

    assert list(PROFILE_MECHANISM_NAMES) == profile_names()
    assert set(RDP_MECHANISM_NAMES) == set(RDP_MECHANISMS)
    assert PRODUCER_CONVERSIONS is CONVERSIONS


NAME_ROWS = [(kind, key) for kind, rows in sorted(INPUT_NAMES.items()) for key in sorted(rows)]


@pytest.mark.parametrize("kind,key", NAME_ROWS, ids=[f"{k}:{key}" for k, key in NAME_ROWS])
def test_a_name_the_producer_does_not_read_is_exit_2_on_both_sides(kind, key, tmp_path, capsys):
    """A misspelled mechanism or conversion: the producer's option refuses it (exit 2), and verify
    refuses a genuine certificate of the kind restated with it (exit 2, the path, the allowed names
    and the closest one; 'no RDP re-checker' was exit 1, a profile kind's route named it later)."""
    names, says = INPUT_NAMES[kind][key]
    f = _genuine(kind, key)
    if f is None:
        pytest.skip(f"no frozen {kind} certificate carries inputs.{key}")
    c = json.loads(f.read_text())
    wrong = c["inputs"][key][:-1] + ("y" if c["inputs"][key].endswith("x") else "x")
    command = says.split(" --")[0].split()
    flag = "--" + says.split(" --")[1]
    argv = {"mechanism": [*command, "--mechanism", wrong, "--eps", "1"],
            "conversion": ["rdp", "to-dp", "--alpha", "2", "--rdp", "1", "--delta", "1e-5", "--conversion", wrong]}[key]
    if command[0] == "rdp" and key == "mechanism":
        argv = [*command, "--mechanism", wrong, "--alpha", "2"] if command[1] == "divergence" else \
            [*command, "--mechanism", wrong, "--delta", "1e-5"]
    if command[0] == "gdp":
        argv = [*command, "--mechanism", wrong, "--eps-h", "3"]
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert wrong in err and "Traceback" not in err, err
    code, msg = _verify(restated(c, (key,), wrong), tmp_path)
    assert code == 2 and f"inputs.{key}={wrong!r}" in msg and f"did you mean {c['inputs'][key]}?" in msg, msg
    assert ", ".join(names) in msg and flag in msg, msg

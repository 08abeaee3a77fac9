"""Round trip over the whole CLI surface: every command and mode that writes a
certificate, drawn by hypothesis with small (fast) parameters, writes a file that
validates against the shipped schema and that the independent verifier accepts
(exit 0). The second route is the re-check package (mpmath/gmpy2, never
python-flint), so a certificate accepted here was re-derived independently.

The surface is read from the argparse parsers: a new command, a new mechanism, a
new relation, a new conversion or event type without a strategy here fails
``test_every_writer_has_a_strategy`` / ``test_every_mode_is_drawn``. Cost is bounded
by a per-command example cap (below the profile's max_examples).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
import re

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from dpverify.cli import build_parser, main
from dpverify.events.json_format import TYPES as EVENT_TYPES
from dpverify.mechanisms import profile_names
from dpverify.recheck.verify import check_schema, verify_file
from dpverify.relation import SCHEDULE_RELATIONS, Relation

#: leaf commands that write no certificate (a plot, the verifier, a corpus report)
NO_CERTIFICATE = {"gdp plot", "verify", "audit corpus"}


def leaves(parser: argparse.ArgumentParser | None = None, path: tuple = ()) -> dict[str, argparse.ArgumentParser]:
    """Every leaf command of the CLI, by its words ("gdp certify")."""
    parser = parser or build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {" ".join(path): parser}
    out: dict = {}
    for a in subs:
        for name, sp in a.choices.items():
            out.update(leaves(sp, (*path, name)))
    return out


def _option_choices(command: str, option: str) -> tuple:
    for a in leaves()[command]._actions:
        if option in a.option_strings:
            return tuple(a.choices)
    raise AssertionError(f"{command} has no {option}")


# ----------------------------------------------------------------------- numbers
def dec(lo: int, hi: int, scale: int = 100) -> st.SearchStrategy[str]:
    """A decimal string k/scale for k in [lo, hi], written exactly (no float)."""
    def show(k: int) -> str:
        from decimal import Decimal

        return format(Decimal(k) / Decimal(scale), "f")

    return st.integers(lo, hi).map(show)


DIGITS = st.sampled_from(["2", "3", "4"])


# ----------------------------------------------------------------------- mechanisms
def mechanism(name: str, *, for_rdp: bool = False) -> st.SearchStrategy[list]:
    """Options of one mechanism of the profile registry (fast regimes)."""
    m = ["--mechanism", name]
    if name == "gaussian":
        return st.one_of(
            st.tuples(dec(50, 300)).map(lambda t: m + ["--mu", t[0]]),
            st.tuples(dec(50, 300), dec(50, 200)).map(lambda t: m + ["--noise-multiplier", t[0], "--sensitivity", t[1]]),
        )
    if name == "laplace":
        return st.tuples(dec(30, 300), st.booleans()).map(
            lambda t: m + ["--scale", t[0]] + (["--sensitivity", "1"] if t[1] else []))
    if name == "pure":
        return dec(10, 300).map(lambda e: m + ["--eps0", e])
    if name == "approx":
        return st.tuples(dec(10, 200), dec(0, 20, 1000)).map(lambda t: m + ["--eps0", t[0], "--delta0", t[1]])
    if name == "rr":
        return dec(55, 95).map(lambda p: m + ["--p", p])
    if name == "subsampled":
        return st.tuples(dec(1, 50), dec(10, 200), dec(0, 10, 10**5)).map(
            lambda t: m + ["--rate", t[0], "--eps0", t[1], "--delta0", t[2]])
    if name == "subsampled-gaussian":
        return st.tuples(dec(1, 50), dec(100, 300)).map(
            lambda t: m + ["--rate", t[0], "--noise-multiplier", t[1]])
    if name == "expr":
        return st.sampled_from(["0.5*exp(-eps)", "exp(-eps**2/2)/2", "0.25*exp(-2*eps)"]).map(
            lambda e: m + ["--profile", e])
    if name in ("sgd-example", "icea-example"):
        return st.booleans().map(lambda r: m + (["--refined"] if r else []))
    raise AssertionError(f"no strategy for mechanism {name!r}: add one here")


PROFILE_MECHS = profile_names()


def rdp_mechanisms() -> list[str]:
    from dpverify.cli.rdp import RDP_MECHANISMS

    return sorted(RDP_MECHANISMS)


# ----------------------------------------------------------------------- commands
@st.composite
def gdp_delta(draw, tmp):
    return ["gdp", "delta", "--mu", draw(dec(10, 400)), "--eps", draw(dec(-200, 600)), "--digits", draw(DIGITS)]


@st.composite
def gdp_mu(draw, tmp):
    eps = draw(dec(-100, 400))
    # at eps < 0 a mu-GDP mechanism has delta > 1 - e^eps (>= 0.63 at eps = -1): the producer refuses less
    delta = draw(dec(91, 99, 100)) if eps.startswith("-") else draw(dec(1, 90, 100))
    return ["gdp", "mu", "--eps", eps, "--delta", delta, "--digits", draw(DIGITS)]


@st.composite
def gdp_certify(draw, tmp):
    name = draw(st.sampled_from(PROFILE_MECHS))
    algo = draw(st.sampled_from(_option_choices("gdp certify", "--algorithm")))
    return ["gdp", "certify", *draw(mechanism(name)), "--eps-h", draw(dec(100, 400)),
            "--margin", draw(st.sampled_from(["1e-2", "1e-3"])), "--algorithm", algo]


@st.composite
def dp_profile(draw, tmp):
    name = draw(st.sampled_from(PROFILE_MECHS))
    # eps > 0: at eps = 0 an expr profile such as 0.5*exp(-eps) is recorded as the exact
    # point [0.5, 0.5], which the mpmath route cannot prove exact (exit 3; left to the
    # verifier's exact-point rule)
    return ["dp", "profile", *draw(mechanism(name)), "--eps", draw(dec(1, 300)), "--digits", draw(DIGITS)]


@st.composite
def dp_implies(draw, tmp):
    return ["dp", "implies", "--from", f"{draw(dec(0, 300))},{draw(dec(0, 50))}",
            "--to", f"{draw(dec(0, 300))},{draw(dec(0, 100))}"]


@st.composite
def check_rr64(draw, tmp):
    return ["check", "rr64", "--eps0", draw(dec(0, 300)), "--delta0", draw(dec(0, 50)), "--eps", draw(dec(-300, 300))]


@st.composite
def compose(draw, tmp):
    mechs = draw(st.lists(st.tuples(dec(1, 50), st.sampled_from(["0", "1e-8", "1e-5"])), min_size=1, max_size=2))
    argv = ["compose"]
    for e, d in mechs:
        argv += ["--mech", f"{e},{d}"]
    if draw(st.booleans()):
        argv += ["--k", str(draw(st.integers(1, 5)))]
    if draw(st.booleans()):
        argv += ["--delta", draw(st.sampled_from(["1e-6", "1e-4", "0.01"]))]
    else:
        argv += ["--eps", draw(dec(10, 200))]
    mode = draw(st.sampled_from(["auto", "grid", "exact"]))
    if mode == "grid":
        argv += ["--grid", "0.01"]
    elif mode == "exact" and len(mechs) == 1:
        argv += ["--exact"]
    return argv


@st.composite
def rdp_divergence(draw, tmp):
    name = draw(st.sampled_from(rdp_mechanisms()))
    alpha = draw(st.sampled_from(["2", "3", "1.5", "0.5"] if name != "subsampled-gaussian" else ["2", "3"]))
    return ["rdp", "divergence", *draw(mechanism(name, for_rdp=True)), "--alpha", alpha,
            "--compositions", str(draw(st.integers(1, 10))), "--digits", draw(DIGITS)]


@st.composite
def rdp_epsilon(draw, tmp):
    from dpverify.rdp import CONVERSIONS

    name = draw(st.sampled_from(rdp_mechanisms()))
    return ["rdp", "epsilon", *draw(mechanism(name, for_rdp=True)), "--compositions", str(draw(st.integers(1, 10))),
            "--delta", draw(st.sampled_from(["1e-5", "1e-3"])), "--conversion", draw(st.sampled_from(CONVERSIONS)),
            "--digits", "2"]  # the re-check's cover of every order costs minutes at 4 digits


@st.composite
def rdp_to_dp(draw, tmp):
    from dpverify.rdp import CONVERSIONS

    argv = ["rdp", "to-dp", "--alpha", draw(dec(110, 1000)), "--rdp", draw(dec(1, 100)),
            "--conversion", draw(st.sampled_from(CONVERSIONS))]
    if draw(st.booleans()):
        argv += ["--delta", draw(st.sampled_from(["1e-5", "1e-3"]))]
    else:
        argv += ["--eps", draw(dec(10, 300))]
    return argv


def _event(draw, depth: int = 0) -> dict:
    """One event tree node of a drawn type (every type of the event format can occur)."""
    leaves_ = ["gaussian", "laplace", "discrete_laplace", "discrete_gaussian", "randomized_response",
               "epsilon_delta", "mixture_of_gaussians", "zcdp", "no_op"]
    # balls_in_bins: answered (bins.* kinds) as the whole tree, refused inside one (by design)
    inner = ["poisson_sampled", "sampled_without_replacement", "self_composed", "composed", "balls_in_bins"]
    return _event_of_type(draw, draw(st.sampled_from(leaves_ + (inner if depth < 2 else []))), depth)


def _event_of_type(draw, t: str, depth: int = 0) -> dict:
    if t in ("gaussian", "laplace"):
        return {"type": t, "noise_multiplier": draw(dec(100, 400))}
    if t == "discrete_laplace":
        return {"type": t, "noise_parameter": draw(dec(30, 200)), "sensitivity": 1}
    if t == "discrete_gaussian":
        return {"type": t, "sigma": draw(dec(150, 400)), "sensitivity": 1}
    if t == "randomized_response":
        return {"type": t, "noise_parameter": draw(dec(30, 90)), "num_buckets": draw(st.integers(2, 4))}
    if t == "epsilon_delta":
        return {"type": t, "epsilon": draw(dec(0, 100)), "delta": draw(st.sampled_from(["0", "1e-7"]))}
    if t == "mixture_of_gaussians":
        return {"type": t, "standard_deviation": draw(dec(150, 300)), "sensitivities": ["0", "1"],
                "sampling_probs": ["0.9", "0.1"]}
    if t == "zcdp":
        return {"type": t, "rho": draw(dec(0, 5)), "xi": "0"}
    if t == "no_op":
        return {"type": t}
    if t == "poisson_sampled":
        return {"type": t, "sampling_probability": draw(dec(1, 20)), "event": _event(draw, depth + 1)}
    if t == "sampled_without_replacement":
        return {"type": t, "source_dataset_size": 1000, "sample_size": draw(st.integers(1, 50)),
                "event": {"type": "gaussian", "noise_multiplier": draw(dec(100, 300))}}
    if t == "self_composed":
        return {"type": t, "count": draw(st.integers(1, 10)), "event": _event(draw, depth + 1)}
    if t == "balls_in_bins":  # T <= 4 batches for two epochs, <= 12 for one, so that an example stays seconds
        b, e = draw(st.integers(1, 50)), draw(st.integers(1, 2))
        return {"type": t, "dataset_size": b * draw(st.integers(2, 4 if e == 2 else 12)), "batch_size": b,
                "epochs": e, "event": {"type": "gaussian", "noise_multiplier": draw(dec(100, 300))}}
    return {"type": "composed", "events": [_event(draw, depth + 1) for _ in range(draw(st.integers(1, 2)))]}


#: event types the drawn trees never contain, with the reason
EVENT_TYPES_NOT_DRAWN = {"non_private": "infinite epsilon: a certificate of an unbounded loss has no enclosure to verify"}


#: audit's --sampling schemes drawn by the epochs form (the shuffled brackets write shuffle.* kinds)
AUDIT_SAMPLING_DRAWN = ("poisson", "shuffle", "shuffle-persistent", "balls-in-bins")
#: schemes not drawn, with the reason
AUDIT_SAMPLING_NOT_DRAWN = {"without-replacement": "an --events tree (sampled_without_replacement) is drawn instead"}


def _additive_step(draw, poisson: bool) -> dict:
    """A Gaussian or Laplace step, Poisson-sampled when ``poisson``, repeated a few times."""
    ev = {"type": draw(st.sampled_from(["gaussian", "laplace"])), "noise_multiplier": draw(dec(100, 400))}
    if poisson:
        ev = {"type": "poisson_sampled", "sampling_probability": draw(dec(1, 20)), "event": ev}
    count = draw(st.integers(1, 10))
    return ev if count == 1 else {"type": "self_composed", "count": count, "event": ev}


AUDIT_FORMS = ("steps", "epochs", "events", "events-replace", "events-bins")


@st.composite
def audit_dpsgd(draw, tmp, forms=AUDIT_FORMS):
    # events-replace: Poisson sampling under replace-one in an event tree, the group-privacy
    # bracket (replace.* kinds with inputs.event); the random trees of "events" reach it rarely
    form = draw(st.sampled_from(forms))
    if form == "steps":
        argv = ["--noise-multiplier", draw(dec(80, 300)), "--sampling-rate", draw(dec(1, 100, 1000)),
                "--steps", str(draw(st.integers(1, 20)))]
    elif form == "epochs":
        n = draw(st.integers(100, 2000))
        argv = ["--noise-multiplier", draw(dec(80, 300)), "--dataset-size", str(n),
                "--batch-size", str(draw(st.integers(1, n // 10))), "--epochs", str(draw(st.integers(1, 2)))]
        schemes = _option_choices("audit dpsgd", "--sampling")
        assert set(schemes) == set(AUDIT_SAMPLING_DRAWN) | set(AUDIT_SAMPLING_NOT_DRAWN), \
            "a new sampling scheme needs a draw here"
        argv += ["--sampling", draw(st.sampled_from(AUDIT_SAMPLING_DRAWN))]
        if argv[-1] == "balls-in-bins":  # T = N/B batches, B dividing N (bins.* kinds); two epochs are the
            # E-fold composition (result.bins_epochs), kept to T <= 4 so that an example stays seconds
            b, t, e = draw(st.integers(1, 50)), draw(st.integers(2, 12)), draw(st.integers(1, 2))
            argv[3], argv[5], argv[7] = str(b * min(t, 4) if e == 2 else b * t), str(b), str(e)
    elif form == "events-bins":  # a balls_in_bins document (bins.* kinds), under a relation its pair covers
        doc = {"event": _event_of_type(draw, "balls_in_bins"),
               "neighboring": draw(st.sampled_from(["add-remove", "add", "remove", "replace-special"]))}
        path = Path(tmp) / "events.json"
        path.write_text(json.dumps(doc))
        argv = ["--events", str(path)]
    elif form == "events-replace":
        steps = [_additive_step(draw, True)] + [_additive_step(draw, draw(st.booleans()))
                                                for _ in range(draw(st.integers(0, 2)))]
        doc = {"neighboring": "replace-one",
               "event": steps[0] if len(steps) == 1 else {"type": "composed", "events": steps}}
        path = Path(tmp) / "events.json"
        path.write_text(json.dumps(doc))
        argv = ["--events", str(path)]
    else:
        doc = {"event": _event(draw)}
        rel = draw(st.sampled_from([r.value for r in Relation]))
        doc["neighboring"] = rel
        path = Path(tmp) / "events.json"
        path.write_text(json.dumps(doc))
        argv = ["--events", str(path)]
    if form in ("steps", "epochs"):
        # replace-special is an event-tree relation (dpverify.relation.SCHEDULE_RELATIONS)
        rel = draw(st.sampled_from([r.value for r in SCHEDULE_RELATIONS]))
        if "balls-in-bins" in argv and rel == "replace-one":
            rel = "add-remove"  # the balls-in-bins pair covers add/remove (refusal tested in test_balls.py)
        if rel == "replace-one" and form == "steps" and draw(st.booleans()):
            argv[3] = "1"  # full batches: the replace-one pair (pld.*); else the group-privacy bracket (replace.*)
        argv += ["--neighboring", rel]
    target = draw(st.sampled_from(["delta", "eps", "claim"]))
    if target == "delta":
        argv += ["--delta", draw(st.sampled_from(["1e-5", "1e-3"])), "--digits", draw(st.sampled_from(["2", "3"]))]
    elif target == "eps":
        argv += ["--eps", draw(dec(50, 300)), "--digits", draw(st.sampled_from(["2", "3"]))]
    else:
        argv += ["--delta", "1e-5", "--claimed-eps", draw(dec(50, 800))]
    return ["audit", "dpsgd", *argv, "--time-budget", "30"]


ORACLE_CSV = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"


@st.composite
def oracle(draw, tmp):
    form = draw(st.sampled_from(["input", "accountant"]))
    if form == "input":
        sigma, q, t = draw(dec(100, 300)), draw(dec(1, 50, 1000)), draw(st.integers(1, 30))
        mech = draw(st.sampled_from(["subsampled-gaussian", "gaussian"]))
        if mech == "gaussian":
            q = "1"
        rows = [f"mine,{mech},{sigma},{q},{t},1e-5,{draw(dec(1, 900))}" for _ in range(draw(st.integers(1, 3)))]
        path = Path(tmp) / "rows.csv"
        path.write_text(ORACLE_CSV + "\n".join(rows) + "\n")
        argv = ["--input", str(path)]
    else:
        argv = ["--battery", "smoke", "--accountant", "tests.cli.test_round_trip:fixed_accountant"]
    return ["oracle", *argv, "--digits", "2", "--time-budget", "120"]


def fixed_accountant(event, delta):
    """A user accountant for ``oracle --accountant``: reports 1.0 whatever the event."""
    return 1.0


#: calibrate's shuffled and balls-in-bins modes, each free parameter, in regimes of a few seconds
#: (T = 2 or 10 batches, one or two epochs): draw -> argv
CALIBRATE_SAMPLED = {
    "shuffle-sigma": lambda draw: [
        "calibrate", "dpsgd", "--sampling", draw(st.sampled_from(["shuffle", "shuffle-persistent"])),
        "--target-eps", draw(dec(100, 300)), "--delta", "1e-5", "--digits", "2", "--dataset-size", "100",
        "--batch-size", "10", "--epochs", str(draw(st.integers(1, 2))), "--neighboring",
        draw(st.sampled_from(["replace-one", "replace-special"])), "--time-budget", "120"],
    "shuffle-epochs": lambda draw: [
        "calibrate", "dpsgd", "--sampling", draw(st.sampled_from(["shuffle", "shuffle-persistent"])),
        "--target-eps", draw(dec(200, 300)), "--delta", "1e-5", "--digits", "2", "--dataset-size", "100",
        "--batch-size", "10", "--noise-multiplier", draw(dec(300, 500)), "--neighboring", "replace-special",
        "--time-budget", "120"],
    "bins-sigma": lambda draw: [
        "calibrate", "dpsgd", "--sampling", "balls-in-bins", "--target-eps", draw(dec(100, 300)),
        "--delta", "1e-5", "--digits", "2", "--dataset-size", "20", "--batch-size", "10", "--epochs", "1",
        "--time-budget", "120"],
    "bins-epochs": lambda draw: [
        "calibrate", "dpsgd", "--sampling", "balls-in-bins", "--target-eps", draw(dec(150, 250)),
        "--delta", "1e-5", "--digits", "2", "--dataset-size", "20", "--batch-size", "10",
        "--noise-multiplier", draw(dec(200, 250)), "--time-budget", "120"],
}


@st.composite
def calibrate_dpsgd(draw, tmp):
    """Each free parameter in a regime of a few PLD evaluations: full batches or a few
    steps, noise 2-4, so that the bracket's ends are seconds to audit."""
    sampling = _option_choices("calibrate dpsgd", "--sampling")
    assert set(sampling) == {"poisson", "without-replacement", "shuffle", "shuffle-persistent", "balls-in-bins"}, \
        "a new sampling scheme needs a draw here"
    free = draw(st.sampled_from(["noise-multiplier", "steps", "sampling-rate", "epochs", "batch-size", "wor",
                                 *CALIBRATE_SAMPLED]))
    if free in CALIBRATE_SAMPLED:
        return CALIBRATE_SAMPLED[free](draw)
    sigma, steps = draw(dec(200, 400)), str(draw(st.integers(1, 10)))
    fixed = {"noise-multiplier": {"sampling-rate": "1", "steps": steps},
             "steps": {"sampling-rate": "1", "noise-multiplier": sigma},
             "sampling-rate": {"steps": steps, "noise-multiplier": sigma},
             "epochs": {"dataset-size": "100", "batch-size": "100", "noise-multiplier": sigma},
             # with the batch size free the step count is given (with --epochs it would move with B,
             # and the CLI refuses that: eps is not monotone in B at fixed epochs)
             "batch-size": {"dataset-size": "100", "steps": steps, "noise-multiplier": sigma},
             # fixed-size batches without replacement: the noise is calibrated
             "wor": {"dataset-size": "100", "batch-size": "50", "epochs": "1", "sampling": "without-replacement"},
             }[free]
    argv = ["calibrate", "dpsgd", "--target-eps", draw(dec(100, 300)), "--delta", "1e-5", "--digits", "2"]
    for k, v in fixed.items():
        argv += [f"--{k}", v]
    return argv + ["--time-budget", "60"]


@st.composite
def sweep(draw, tmp, tasks=("audit", "oracle"), targets=("digits", "claim")):
    task = draw(st.sampled_from(tasks))
    if task == "audit":
        # the audit task's two certificates: an enclosure (digits) and a claim (claimed_eps), at a
        # rate below 1 (the grid) or 1 (the closed form); the claim's was never drawn here, and its
        # certificate failed the schema on every configuration (adv49)
        fixed: dict = {"delta": "1e-5", "sampling_rate": draw(st.sampled_from(["0.01", "1"]))}
        if draw(st.sampled_from(targets)) == "digits":
            fixed["digits"] = 2
        else:
            fixed["claimed_eps"] = draw(dec(10, 800))
        grid = {"task": "audit", "fixed": fixed,
                "product": {"noise_multiplier": [draw(dec(100, 200)), "2"], "steps": [draw(st.integers(1, 20))]}}
    else:
        grid = {"task": "oracle", "fixed": {"accountant": "dp_accounting-rdp", "mechanism": "subsampled-gaussian",
                                            "sampling_rate": "0.01", "delta": "1e-5", "digits": 2,
                                            "tolerance": "0.5"},  # required (exit 2 without it, unseen here)
                "product": {"noise_multiplier": [draw(dec(100, 200))], "steps": [draw(st.integers(1, 20))]}}
    path = Path(tmp) / "grid.json"
    path.write_text(json.dumps(grid))
    return ["sweep", str(path), "--workers", "1", "--out", str(Path(tmp) / "sweep"), "--no-cache"]


#: reproduce claims whose computation takes seconds (one per claims file)
FAST_CLAIMS = ["afa-fig1-gaussian-0.277-0.3", "gdpt-sec3-eps2", "lt-thm3.2-eq22-gaussian",
               "abc-remark1-zero-eps", "gdpt-fig1-laplace-2gdp"]


@st.composite
def reproduce(draw, tmp):
    ids = draw(st.lists(st.sampled_from(FAST_CLAIMS), min_size=1, max_size=2, unique=True))
    return ["reproduce", "--out", str(Path(tmp) / "out"), "--only", *ids]


#: leaf command -> (strategy of argv given a temp folder, example cap)
STRATEGIES = {
    "gdp delta": (gdp_delta, 6),
    "gdp mu": (gdp_mu, 6),
    "gdp certify": (gdp_certify, 8),
    "dp profile": (dp_profile, 12),
    "dp implies": (dp_implies, 6),
    "check rr64": (check_rr64, 6),
    "compose": (compose, 8),
    "rdp divergence": (rdp_divergence, 8),
    "rdp epsilon": (rdp_epsilon, 3),
    "rdp to-dp": (rdp_to_dp, 4),
    "audit dpsgd": (audit_dpsgd, 6),
    "oracle": (oracle, 2),
    "calibrate dpsgd": (calibrate_dpsgd, 3),
    "sweep": (sweep, 2),
    "reproduce": (reproduce, 2),
}


#: the producer's refusal of a (mechanism, relation) pair it has no proved dominating pair for
_NO_PAIR = re.compile(r"dominating pair|pair is proved|defines its pair|pair established|not for add/remove|"
                      r"has no pair here|no theorem carries it")  # the last: a zcdp event under replace-special


def run(argv: list) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    run.stderr = err.getvalue()  # type: ignore[attr-defined]
    return code


def written(argv: list, tmp: Path) -> list[Path]:
    """Run one command so that it writes its certificates; return their paths."""
    if argv[0] == "sweep":
        # every configuration writes its certificate: an error row (exit 3) is a failure here, not
        # a run without files (a claim sweep whose every row failed the schema passed this way: adv49)
        out = Path(argv[argv.index("--out") + 1])
        shutil.rmtree(out, ignore_errors=True)  # the previous example's files are not this one's
        code = run(argv)
        assert code in (0, 1), (argv, code, run.stderr)  # type: ignore[attr-defined]
        rows = json.loads((out / "results.json").read_text())["rows"]
        certs = sorted((out / "certificates").glob("*.json"))
        assert len(certs) == len(rows) > 0, (argv, run.stderr)
        return certs
    if argv[0] == "reproduce":
        code = run(argv)
        return sorted(Path(argv[argv.index("--out") + 1]).glob("*.json")) if code in (0, 1) else []
    path = tmp / "cert.json"
    path.unlink(missing_ok=True)
    code = run([*argv, "--certificate", str(path)])
    if code == 2 and "--digits does not apply" in run.stderr and "--digits" in argv:  # type: ignore[attr-defined]
        # the bracket routes (shuffling, balls-in-bins, Poisson under replace-one) refuse a requested
        # accuracy they would not read; the draw cannot always tell (an event tree may reach one)
        i = argv.index("--digits")
        argv = argv[:i] + argv[i + 2:]
        code = run([*argv, "--certificate", str(path)])
    if code == 2 and ("--events" in argv or "--neighboring" in argv) and _NO_PAIR.search(run.stderr):
        reject()  # an event / relation pair without a proved dominating pair: refused by design
    if code == 2 and "--sampling" in argv and "changes the number of batches" in run.stderr:
        reject()  # shuffling under add-remove when B divides n - 1: refused as ambiguous, by design
    if code == 2 and argv[:2] == ["gdp", "certify"] and "verify can re-prove within its cap" in run.stderr:
        # a head proof finer than verify's cell cap (a first-order profile such as the refined
        # sgd-example at margin 1e-3): refused before writing, by design (work bounded, named)
        reject()
    assert code in (0, 1, 3), (argv, code, run.stderr)  # type: ignore[attr-defined]
    assert code == 3 or path.exists(), (argv, "no certificate written")
    return [path] if path.exists() else []


def test_every_writer_has_a_strategy():
    """Every leaf command either writes certificates (and is drawn here) or is listed as not writing one."""
    surface = leaves()
    writers = {c for c, p in surface.items() if any("--certificate" in a.option_strings for a in p._actions)}
    writers |= {"sweep", "reproduce"}  # they write files of certificates into --out
    assert writers <= set(STRATEGIES), sorted(writers - set(STRATEGIES))
    assert set(surface) == set(STRATEGIES) | NO_CERTIFICATE, sorted(set(surface) ^ (set(STRATEGIES) | NO_CERTIFICATE))


def test_every_mode_is_drawn():
    """Mechanisms, relations, event types and tasks of the registries all have a strategy."""
    for name in PROFILE_MECHS + rdp_mechanisms():
        mechanism(name)  # raises for a mechanism without a strategy
    covered = {"gaussian", "laplace", "discrete_laplace", "discrete_gaussian", "randomized_response",
               "epsilon_delta", "mixture_of_gaussians", "zcdp", "no_op", "poisson_sampled",
               "sampled_without_replacement", "self_composed", "composed", "balls_in_bins"}
    assert set(EVENT_TYPES) == covered | set(EVENT_TYPES_NOT_DRAWN), sorted(set(EVENT_TYPES) ^ covered)
    from dpverify.sweep.tasks import task_table

    assert set(task_table()) == {"audit", "oracle"}, "a new sweep task needs a grid in the sweep strategy"


#: modes drawn on their own too (a mode one command's cap could leave undrawn): id -> (strategy, cap)
MODES = {
    "audit dpsgd events-replace": (lambda tmp: audit_dpsgd(tmp, forms=("events-replace",)), 3),
    "audit dpsgd events-bins": (lambda tmp: audit_dpsgd(tmp, forms=("events-bins",)), 2),
    "sweep audit claim": (lambda tmp: sweep(tmp, tasks=("audit",), targets=("claim",)), 2),
}


@pytest.mark.parametrize("command", sorted(STRATEGIES) + sorted(MODES))
def test_written_certificates_validate_and_verify(command):
    strategy, cap = STRATEGIES[command] if command in STRATEGIES else MODES[command]
    examples = min(cap, settings.default.max_examples)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    with tempfile.TemporaryDirectory() as tmp:
        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.filter_too_much])
        @given(st.data())
        def check(data):
            argv = data.draw(strategy(tmp), label="argv")
            for path in written(argv, Path(tmp)):
                cert = json.loads(path.read_text())
                check_schema(cert)
                code, message = verify_file(path, budget_seconds=1800)  # genuine: no timer decides
                assert code == 0, (argv, path.name, message)

        check()


@pytest.mark.parametrize("mode", sorted(CALIBRATE_SAMPLED))
def test_calibrate_sampled_modes_round_trip(mode):
    """Every shuffled / balls-in-bins calibrate mode once (the drawn test above samples three
    of eleven modes): the certificate validates and the second route re-proves every end."""
    with tempfile.TemporaryDirectory() as tmp:
        @settings(max_examples=1, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
        @given(st.data())
        def check(data):
            argv = CALIBRATE_SAMPLED[mode](data.draw)
            paths = written(argv, Path(tmp))
            assert paths, (argv, "no certificate written")
            cert = json.loads(paths[0].read_text())
            check_schema(cert)
            assert cert["inputs"]["template"] in ("dpsgd-shuffle", "dpsgd-bins")
            code, message = verify_file(paths[0], budget_seconds=1800)
            assert code == 0, (argv, message)

        check()


#: draws of the audit dpsgd strategy kept as plain cases, so that CI (derandomized) covers them on
#: every run: (id, argv after "audit dpsgd", the --events document or None). Found by rt50, drawing
#: the strategy with random seeds (about 1,000 draws, each producer and verify a child process with a
#: timeout): the slowest round trip (8 CPU s of verify) and two genuine certificates verify could not
#: re-prove (exit 3 until issue 22: a claim's tight lower end, a replace-one curve detail)
AUDIT_DRAWS = [
    ("poisson-replace-one-epochs", ["--noise-multiplier", "2.98", "--dataset-size", "200", "--batch-size", "2",
                                    "--epochs", "2", "--sampling", "poisson", "--neighboring", "replace-one",
                                    "--eps", "1.49"], None),
    # delta(0.5)'s lower end was recorded 2.5e-18 below the exact 0.8292116582559108224703 (the binomial
    # of +-0.3 losses), past what verify's route, priced for the claimed delta, proves (exit 3): a
    # claim's ends now keep 2^-16 of the width outside (issue 22; pld.refine.claim_margin,
    # tests/pld/test_claim_margin.py)
    ("dlap-100-claim", ["--delta", "1e-5", "--claimed-eps", "0.5"],
     {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 10, "event": {
         "type": "self_composed", "count": 10, "event": {
             "type": "discrete_laplace", "noise_parameter": "0.3", "sensitivity": 1}}}}),
    # result.lower (the remove curve's eps(1e-5), 0.0103903785795507..., closed form) was answered
    # exit 3: the route's search stopped at 2^-13, one grid short of the detail's width (issue 22;
    # recheck/replace.py _refined, tests/recheck/test_replace_lower_detail.py)
    ("replace-one-poisson-laplace-claim", ["--delta", "1e-5", "--claimed-eps", "1.73"],
     {"neighboring": "replace-one", "event": {"type": "poisson_sampled", "sampling_probability": "0.03",
                                              "event": {"type": "laplace", "noise_multiplier": "3.34"}}}),
]


@pytest.mark.parametrize("name,argv,doc", AUDIT_DRAWS)
def test_audit_dpsgd_kept_draws_round_trip(name, argv, doc, tmp_path):
    if doc is not None:
        (tmp_path / "events.json").write_text(json.dumps(doc))
        argv = ["--events", str(tmp_path / "events.json"), *argv]
    paths = written(["audit", "dpsgd", *argv, "--time-budget", "30"], tmp_path)
    assert paths, (argv, "no certificate written")
    check_schema(json.loads(paths[0].read_text()))
    code, message = verify_file(paths[0], budget_seconds=1800)
    assert code == 0, (argv, message)

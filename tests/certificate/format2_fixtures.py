"""Format-2 fixtures: one certificate of every kind as today's CLI (or API) writes it.

``python tests/certificate/format2_fixtures.py`` (from the repository root, with
PYTHONPATH set) writes the fixtures that are missing from ``tests/certificate/format2/``;
it never rewrites one: they are frozen, and every later release must accept them
(as tests/certificate/format1/ holds the 0.1.0 certificates). One was rewritten before any
release of format 2: ``oracle-input`` named its file by sha256 without the file's text, a
form verify now refuses (a stripped certificate could say anything of the rows, adv34 F1). The tests read
the frozen files (so a forgery is always tried against a known-genuine
certificate) and :data:`CLI` lets a test re-run the cheap command lines to check
that the writer still emits what the schema and the verifier accept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "format2"

#: events file of the events.* fixtures: every leaf family the second route covers
TREE = {"neighboring": "add-remove", "events": [
    {"type": "self_composed", "count": 10, "event": {"type": "poisson_sampled", "sampling_probability": "0.1",
                                                      "event": {"type": "gaussian", "noise_multiplier": "2"}}},
    {"type": "epsilon_delta", "epsilon": "0.1", "delta": "1e-8"}]}

#: events file of the replace-one fixture: Poisson-sampled and whole-dataset Gaussian and Laplace steps
REPLACE_TREE = {"neighboring": "replace-one", "event": {"type": "composed", "events": [
    {"type": "self_composed", "count": 10, "event": {"type": "poisson_sampled", "sampling_probability": "0.1",
                                                      "event": {"type": "gaussian", "noise_multiplier": "2"}}},
    {"type": "poisson_sampled", "sampling_probability": "0.1", "event": {"type": "laplace", "noise_multiplier": "3"}},
    {"type": "gaussian", "noise_multiplier": "10"}]}}

#: a legacy list of steps (``{"mechanism": ...}`` items, pld.* with ``inputs.events``): one item of
#: each legacy mechanism (the unsampled ``gaussian`` is recorded as a subsampled one at rate 1)
LEGACY_LIST = {"neighboring": "add-remove", "events": [
    {"mechanism": "laplace", "scale": "2", "sampling_rate": "0.1", "count": 5},
    {"mechanism": "subsampled-gaussian", "noise_multiplier": "1.1", "sampling_rate": "0.01", "count": 50},
    {"mechanism": "gaussian", "noise_multiplier": "20", "count": 2},
    {"mechanism": "approx", "exp_eps0": "1.5", "delta0": "1e-9", "sampling_rate": "0.01", "count": 3}]}

#: oracle rows read from a file: one consistent, one unsafe
ROWS = [
    {"accountant": "a", "mechanism": "subsampled-gaussian", "noise_multiplier": "1", "sampling_rate": "0.01",
     "steps": 100, "delta": "1e-5", "reported_eps": "0.6"},
    {"accountant": "b", "mechanism": "subsampled-gaussian", "noise_multiplier": "1", "sampling_rate": "0.01",
     "steps": 100, "delta": "1e-5", "reported_eps": "0.1"},
]

#: fixture name -> command line (``{tree}`` / ``{rows}``: the files above)
CLI = {
    "gdp-delta": ["gdp", "delta", "--mu", "2", "--eps", "1"],
    "gdp-mu": ["gdp", "mu", "--eps", "1", "--delta", "1e-3"],
    "gdp-certify-pure": ["gdp", "certify", "--mechanism", "pure", "--eps0", "1", "--eps-h", "5", "--margin", "1e-3"],
    "gdp-certify-laplace": ["gdp", "certify", "--mechanism", "laplace", "--scale", "1", "--eps-h", "5",
                            "--margin", "1e-3"],
    "gdp-certify-gaussian": ["gdp", "certify", "--mechanism", "gaussian", "--mu", "1", "--eps-h", "5",
                             "--margin", "1e-3"],
    "gdp-certify-expr": ["gdp", "certify", "--mechanism", "expr", "--profile", "exp(-eps)", "--eps-h", "3",
                         "--margin", "1e-2"],
    "gdp-certify-icea": ["gdp", "certify", "--mechanism", "icea-example", "--eps-h", "3", "--margin", "1e-3"],
    "gdp-certify-sgd": ["gdp", "certify", "--mechanism", "sgd-example", "--eps-h", "3", "--margin", "1e-3"],
    "gdp-delta-tiny": ["gdp", "delta", "--mu", "0.5", "--eps", "50"],
    "dp-profile-gaussian": ["dp", "profile", "--mechanism", "gaussian", "--mu", "1", "--eps", "0.5"],
    "dp-profile-rr": ["dp", "profile", "--mechanism", "rr", "--p", "0.7", "--eps", "0.1"],
    "compose-grid": ["compose", "--mech", "0.1,1e-8", "--steps", "10", "--delta", "1e-6", "--grid", "0.03"],
    "compose-auto-grid": ["compose", "--mech", "0.1,1e-5", "--mech", "0.123456789,0", "--steps", "40", "--eps", "1"],
    "compose-hetero": ["compose", "--mech", "0.1,1e-8", "--mech", "0.2,0", "--steps", "3", "--delta", "1e-6"],
    "rdp-epsilon-balle-ssg": ["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1",
                              "--sampling-rate", "0.01", "--steps", "100", "--delta", "1e-5", "--conversion", "balle"],
    "rdp-to-dp-optimal": ["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--delta", "0.3", "--conversion",
                          "optimal"],
    "dp-profile": ["dp", "profile", "--mechanism", "laplace", "--scale", "1", "--eps", "0.5"],
    "dp-implies-holds": ["dp", "implies", "--from", "0.5,0.1", "--to", "1,0.1"],
    "dp-implies-fails": ["dp", "implies", "--from", "1,0.1", "--to", "0.5,0.1"],
    "dp-rr64": ["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps", "0.5"],
    "compose-delta": ["compose", "--mech", "0.1,1e-8", "--steps", "10", "--eps", "0.5"],
    "compose-eps": ["compose", "--mech", "0.1,1e-8", "--steps", "10", "--delta", "1e-6"],
    "pld-epsilon": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                    "--delta", "1e-5"],
    "pld-delta": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                  "--eps", "1"],
    "pld-claim": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                  "--delta", "1e-5", "--claimed-eps", "2"],
    "events-epsilon": ["audit", "dpsgd", "--events", "{tree}", "--delta", "1e-5", "--digits", "3"],
    "events-delta": ["audit", "dpsgd", "--events", "{tree}", "--eps", "1", "--digits", "3"],
    "events-claim": ["audit", "dpsgd", "--events", "{tree}", "--delta", "1e-5", "--claimed-eps", "3"],
    "calibrate-bracket": ["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--sampling-rate", "1",
                          "--steps", "10", "--digits", "2"],
    "rdp-divergence": ["rdp", "divergence", "--mechanism", "gaussian", "--noise-multiplier", "2", "--alpha", "3"],
    "rdp-epsilon": ["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "2", "--steps", "10",
                    "--delta", "1e-5"],
    "rdp-epsilon-optimal": ["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "2",
                            "--steps", "10", "--delta", "1e-5", "--conversion", "optimal"],
    "rdp-to-dp-eps": ["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--delta", "0.3"],
    "rdp-to-dp-delta": ["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--eps", "0.5"],
    "shuffle-epsilon": ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "0.9", "--dataset-size",
                        "1000", "--batch-size", "100", "--epochs", "5", "--delta", "1e-5"],
    "shuffle-delta": ["audit", "dpsgd", "--sampling", "shuffle-persistent", "--noise-multiplier", "0.9",
                      "--dataset-size", "1000", "--batch-size", "100", "--epochs", "5", "--eps", "2",
                      "--neighboring", "replace-one"],
    "shuffle-claim": ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "0.9", "--dataset-size",
                      "1000", "--batch-size", "100", "--epochs", "5", "--delta", "1e-5", "--claimed-eps", "1"],
    "bins-epsilon": ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1",
                     "--dataset-size", "600", "--batch-size", "100", "--epochs", "1", "--delta", "1e-5"],
    "bins-delta": ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1",
                   "--dataset-size", "600", "--batch-size", "100", "--epochs", "1", "--eps", "2",
                   "--neighboring", "remove"],
    "bins-claim": ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1",
                   "--dataset-size", "600", "--batch-size", "100", "--epochs", "1", "--delta", "1e-5",
                   "--claimed-eps", "2.5"],
    "replace-epsilon": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                        "--delta", "1e-5", "--neighboring", "replace-one"],
    "replace-claim": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                      "--delta", "1e-5", "--neighboring", "replace-one", "--claimed-eps", "3"],
    "replace-delta": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                      "--eps", "1", "--neighboring", "replace-one"],
    "oracle-input": ["oracle", "--input", "{rows}"],
    "oracle-battery-smoke": ["oracle", "--battery", "smoke", "--accountants", "opacus-gdp,dp_accounting-rdp"],
}

#: one per remaining option of this release's writer (frozen with the rest; the tests
#: check that each is accepted, the forgeries run on the one-per-kind fixtures above)
OPTIONS = {
    "gdp-certify-laplace-past-support": ["gdp", "certify", "--mechanism", "laplace", "--scale", "0.5",
                                         "--eps-h", "30", "--margin", "1e-3"],
    "gdp-certify-laplace-naive": ["gdp", "certify", "--mechanism", "laplace", "--scale", "0.5", "--eps-h", "3",
                                  "--margin", "1e-2", "--algorithm", "naive"],
    "gdp-certify-laplace-shuffled": ["gdp", "certify", "--mechanism", "laplace", "--scale", "0.5", "--eps-h", "3",
                                     "--margin", "1e-2", "--algorithm", "shuffled"],
    "gdp-certify-approx": ["gdp", "certify", "--mechanism", "approx", "--eps0", "1", "--delta0", "0.1",
                           "--eps-h", "3"],
    "gdp-certify-rr": ["gdp", "certify", "--mechanism", "rr", "--p", "0.75", "--eps-h", "2"],
    "gdp-certify-subsampled": ["gdp", "certify", "--mechanism", "subsampled", "--rate", "0.1", "--eps0", "1",
                               "--delta0", "0", "--eps-h", "3", "--margin", "1e-3"],
    "gdp-certify-gaussian-sigma": ["gdp", "certify", "--mechanism", "gaussian", "--noise-multiplier", "2",
                                   "--sensitivity", "3", "--eps-h", "3"],
    "gdp-certify-sgd-refined": ["gdp", "certify", "--mechanism", "sgd-example", "--refined", "--eps-h", "3",
                                "--margin", "1e-3"],
    "dp-profile-approx": ["dp", "profile", "--mechanism", "approx", "--eps0", "1", "--delta0", "0.1", "--eps", "0.5"],
    "dp-profile-pure": ["dp", "profile", "--mechanism", "pure", "--eps0", "1", "--eps", "0.5"],
    "dp-profile-subsampled": ["dp", "profile", "--mechanism", "subsampled", "--rate", "0.1", "--eps0", "1",
                              "--delta0", "1e-5", "--eps", "0.05"],
    "dp-profile-expr": ["dp", "profile", "--mechanism", "expr", "--profile", "0.5*exp(-eps)", "--eps", "1"],
    "dp-profile-sgd": ["dp", "profile", "--mechanism", "sgd-example", "--eps", "1"],
    "dp-profile-icea-refined": ["dp", "profile", "--mechanism", "icea-example", "--refined", "--eps", "1"],
    "dp-rr64-fails": ["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps", "0.01"],
    "rdp-divergence-laplace": ["rdp", "divergence", "--mechanism", "laplace", "--scale", "1", "--alpha", "2"],
    "rdp-divergence-pure": ["rdp", "divergence", "--mechanism", "pure", "--eps0", "1", "--alpha", "3"],
    "rdp-divergence-rr": ["rdp", "divergence", "--mechanism", "rr", "--p", "0.75", "--alpha", "0.5"],
    "rdp-divergence-ssg": ["rdp", "divergence", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "2",
                           "--rate", "0.1", "--alpha", "3", "--compositions", "10"],
    "rdp-epsilon-rr": ["rdp", "epsilon", "--mechanism", "rr", "--p", "0.7", "--compositions", "3", "--delta",
                       "1e-3", "--conversion", "balle", "--digits", "2"],
    "rdp-to-dp-balle-delta": ["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--eps", "0.5", "--conversion",
                              "balle"],
    "rdp-to-dp-capped-delta": ["rdp", "to-dp", "--alpha", "5", "--rdp", "0.3", "--eps", "0.1"],
    "compose-exact": ["compose", "--mech", "0.1,1e-8", "--k", "10", "--delta", "1e-6", "--exact"],
    "pld-epsilon-replace-one": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "1", "--steps",
                                "10", "--delta", "1e-5", "--neighboring", "replace-one", "--digits", "3"],
    "pld-epsilon-add": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                        "--delta", "1e-5", "--neighboring", "add", "--digits", "3"],
    "pld-delta-remove": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                         "--eps", "1", "--neighboring", "remove", "--digits", "3"],
    "pld-epsilon-epochs": ["audit", "dpsgd", "--noise-multiplier", "2", "--dataset-size", "1000", "--batch-size",
                           "100", "--epochs", "1", "--delta", "1e-5", "--digits", "3"],
    # a legacy list of steps (inputs.events): every legacy mechanism, each item with its own keys
    "pld-epsilon-legacy-events": ["audit", "dpsgd", "--events", "{legacy}", "--delta", "1e-5", "--digits", "3"],
    "events-epsilon-wor": ["audit", "dpsgd", "--events", "{docs}/wor-events.json", "--delta", "1e-5",
                           "--digits", "2"],
    "events-epsilon-mog": ["audit", "dpsgd", "--events", "{docs}/mog-events.json", "--delta", "1e-5",
                           "--digits", "2"],
    # replace-one with Poisson sampling for an event tree (inputs.event): Gaussian and Laplace steps,
    # Poisson-sampled and not, by group privacy over the tree's add/remove curves
    "replace-epsilon-events": ["audit", "dpsgd", "--events", "{replace_tree}", "--delta", "1e-5"],
    "calibrate-steps": ["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--sampling-rate", "1",
                        "--noise-multiplier", "3", "--rel-width", "0.05"],
    "calibrate-sampling-rate": ["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--steps", "10",
                                "--noise-multiplier", "3", "--rel-width", "0.05"],
    # calibration with shuffled batches: the Gaussian safe end and pair limit, the max-of-batch-sums unsafe
    # end (ends.unsafe.shuffle_lower); persistent shuffling with the epochs free
    "calibrate-shuffle-sigma": ["calibrate", "dpsgd", "--sampling", "shuffle", "--target-eps", "2", "--delta",
                                "1e-5", "--dataset-size", "100", "--batch-size", "10", "--epochs", "2",
                                "--digits", "2"],
    "calibrate-shuffle-persistent-epochs": ["calibrate", "dpsgd", "--sampling", "shuffle-persistent",
                                            "--target-eps", "2", "--delta", "1e-5", "--dataset-size", "100",
                                            "--batch-size", "10", "--noise-multiplier", "3", "--digits", "2"],
    # calibration with balls-in-bins batches: one epoch (ends.*.bins_grid) and the epochs free (bins_epochs)
    "calibrate-bins-sigma": ["calibrate", "dpsgd", "--sampling", "balls-in-bins", "--target-eps", "2", "--delta",
                             "1e-5", "--dataset-size", "20", "--batch-size", "10", "--epochs", "1", "--digits", "2"],
    "calibrate-bins-epochs": ["calibrate", "dpsgd", "--sampling", "balls-in-bins", "--target-eps", "2", "--delta",
                              "1e-5", "--dataset-size", "20", "--batch-size", "10", "--noise-multiplier", "2",
                              "--digits", "2"],
    # every step a Gaussian at sampling rate 1: answered in closed form (no grid, method.algorithm says so)
    "pld-epsilon-closed-form": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "1", "--steps",
                                "10", "--delta", "1e-5", "--digits", "6"],
    "pld-delta-closed-form-replace-one": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "1",
                                          "--steps", "10", "--eps", "1", "--neighboring", "replace-one"],
    "calibrate-closed-form": ["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--sampling-rate", "1",
                              "--steps", "10", "--digits", "6"],
    # a whole domain safe below the closed form's floor: delta_at_target.hi = 2^-12000 rounded up
    "calibrate-closed-form-floor": ["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5",
                                    "--sampling-rate", "1", "--noise-multiplier", "1e10"],
    # stop 49's writers: a claim's reason in decimals (delta(0.75) ... 0.00001, not 3/4 ... 1/100000) and the
    # algorithm text shared with the answer builder (certificate.build.pld_claim_certificate, pld_algorithm)
    "pld-claim-decimal-reason": ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                                 "--steps", "100", "--delta", "1e-5", "--claimed-eps", "0.75"],
    "pld-claim-closed-form-fails": ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "1", "--steps",
                                    "100", "--delta", "1e-5", "--claimed-eps", "3"],
    # stop 50's: a rate-1 eps past 2^81 in closed form (eps near 5e24; the bracket ended at 2^81 and a grid
    # answered exit 3), and a Renyi-tail claim whose verify bound e^-(7e8) is floored at 2^-(2^19)
    "pld-epsilon-closed-form-5e24": ["audit", "dpsgd", "--noise-multiplier", "1e-12", "--sampling-rate", "1",
                                     "--steps", "10", "--delta", "0.999"],
    "pld-claim-renyi-tail-sigma-1e20": ["audit", "dpsgd", "--noise-multiplier", "1e20", "--sampling-rate", "1",
                                        "--steps", "10", "--delta", "1e-5", "--claimed-eps", "1e16"],
    # balls-in-bins over two independently re-allocated epochs (result.bins_epochs, AFA Thm 10)
    "bins-epsilon-epochs": ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "2",
                            "--dataset-size", "4", "--batch-size", "1", "--epochs", "2", "--delta", "1e-5"],
}
CLI.update(OPTIONS)


def api_fixtures() -> dict:
    """Kinds only the Python API writes (GDPT Thm 4.5 check, clip/rectify, identities)."""
    from fractions import Fraction

    from dpverify.certificate import verdict_certificate
    from dpverify.gdp.mu_gdp import check_thm45

    from dpverify.certificate import quantity_certificate
    from dpverify.gdp import eps_for_delta

    out = {}
    out["gdp-eps"] = quantity_certificate(
        quantity="gdp.eps", statement="eps with delta_mu(eps) = delta", source="GDPT eq. (2)",
        inputs={"mu": "1", "delta": "1e-5", "digits": 15}, enclosure=eps_for_delta("1", "1e-5"),
        algorithm="bracketed root of delta_mu(eps) - delta")
    verdict, slope = check_thm45("1", "1e-5")
    out["gdp-thm45"] = verdict_certificate(
        quantity="gdp.thm4.5", statement="GDPT Thm 4.5 at eps=1, delta=1e-5", source="GDPT Thm 4.5",
        inputs={"eps": "1", "delta": "1e-5"}, verdict=verdict, enclosure=slope,
        algorithm="check_thm45")
    sys.path.insert(0, str(HERE.parents[1]))
    from tests.theorems.test_identities import certificate as identity_certificate

    P, Q = [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4)]
    out["finite-identity"] = identity_certificate("lt-thm5.1", P, Q, (Fraction(3, 2), Fraction(1, 3)))
    return out


def fill_placeholders(argv: list[str], tmp: Path) -> list[str]:
    """A command line of :data:`CLI` with its input files written to ``tmp`` and its
    placeholders ({tree}, {rows}, {docs}, {replace_tree}, {legacy}) filled (also used by
    ``scripts/bench_verify.py``, which runs the same command lines)."""
    files = {"tree": TREE, "rows": ROWS, "replace_tree": REPLACE_TREE, "legacy": LEGACY_LIST}
    paths = {"docs": HERE.parents[1] / "docs" / "examples"}
    for name, content in files.items():
        paths[name] = tmp / f"{name.replace('_', '-')}.json"
        paths[name].write_text(json.dumps(content))
    out = []
    for a in argv:
        for name, path in paths.items():
            a = a.replace("{" + name + "}", str(path))
        out.append(a)
    return out


def run_cli(argv: list[str], tmp: Path) -> dict:
    """Run one command line of :data:`CLI` and return the certificate it writes."""
    import contextlib
    import io

    from dpverify.cli import main

    cert_path = tmp / "cert.json"
    argv = fill_placeholders(argv, tmp)
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*argv, "--certificate", str(cert_path)])
    if code not in (0, 1):
        raise RuntimeError(f"{argv}: exit {code}")
    cert = json.loads(cert_path.read_text())
    # the file name of an input file is recorded; make it independent of the temp folder
    return cert


def main() -> None:
    import tempfile

    OUT.mkdir(exist_ok=True)
    from dpverify.certificate import dumps

    missing = {name: argv for name, argv in CLI.items() if not (OUT / f"{name}.json").exists()}
    with tempfile.TemporaryDirectory() as d:
        certs = {name: run_cli(argv, Path(d)) for name, argv in missing.items()}
    certs.update({k: v for k, v in api_fixtures().items() if not (OUT / f"{k}.json").exists()})
    for name, cert in certs.items():
        (OUT / f"{name}.json").write_text(dumps(cert), encoding="utf-8")
        print(name, cert["claim"]["quantity"])


if __name__ == "__main__":
    main()

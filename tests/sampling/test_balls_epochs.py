"""Balls-in-bins DP-SGD over E >= 2 independently re-allocated epochs (AFA Thm 10 composition
of the one-epoch pair): the certified enclosure against independent routes.

* T = 1: one batch per epoch is the Gaussian mechanism with mu = 1/sigma, so E epochs are the
  Gaussian mechanism with mu = sqrt(E)/sigma: delta_mu (GDPT eq. 2) in mpmath at 30 digits,
  nothing shared with the grids (this exercises the P-law, the Q-law, the loss rounding, the
  E-fold power and the hinge sums);
* the E-fold composition and the hinge sums against brute-force enumeration of all E-tuples of
  a small discrete law, in exact rationals and mpmath exponentials;
* E = 2, T = 8 against a seeded Monte Carlo estimate of E_Q[(L_1 L_2 - c)_+] (6 standard errors);
* certificates through ``verify``: accepted; a forged E, a forged end, a missing or foreign hint
  refused; the CLI round trip;
* bad inputs: exit 2 naming the flag and saying what to do.
"""

import copy
import itertools
import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.certificate import bins_cert as C
from dpverify.certificate import verify_certificate
from dpverify.certificate.format import compute_digest
from dpverify.cli import main
from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.relation import Relation
from dpverify.sampling import balls as B
from dpverify.sampling import balls_epochs as BE

# small grids keep every test within seconds (any grid gives valid bounds: tightness only)
_DEG, _PTS = 1 << 13, 1 << 15


def _small(r):
    return BE.choose_grids(r, _DEG), None


def _gauss_delta(mu, eps):
    with mpmath.workdps(30):
        mu, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


@pytest.mark.parametrize("E,eps,rel", [(2, "0.5", Relation.ADD_REMOVE), (3, "1.5", Relation.REMOVE),
                                       (4, "1", Relation.ADD)])
def test_one_batch_epochs_are_the_gaussian_mechanism(E, eps, rel):
    r = B.BinsRun(Fraction(3, 2), 1, 1, E, rel)  # T = 1, below run()'s T >= 2: the library accepts it
    out = BE.enclose_delta(r, eps, grids=_small(r), points=_PTS)
    with mpmath.workdps(30):
        ref = _gauss_delta(mpmath.sqrt(E) / mpmath.mpf(1.5), eps)
    lo, hi = mpmath.mpf(out["lo"]), mpmath.mpf(out["hi"])
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo <= ref * mpmath.mpf("0.1")  # and informative


def _law(seed):
    import random

    rnd = random.Random(seed)
    n = 7
    up = [rnd.randrange(0, 1 << B.UNIT_BITS) // n for _ in range(n)]
    low = [x // 2 for x in up]
    return BE._EpochLaw(lo=-3, up=up, up_inf=rnd.randrange(0, 1 << 100), low=low)


@pytest.mark.parametrize("E,eps,m", [(2, Fraction(1, 3), 2), (3, Fraction(0), 1), (3, Fraction(5, 4), 2)])
def test_composition_and_hinge_against_brute_force(E, eps, m):
    law = _law(E * 10 + m)
    comp = BE._compose(law, E, m)
    one = Fraction(1, 1 << B.UNIT_BITS)
    with mpmath.workdps(60):
        def brute(masses, inf):
            atoms = [(law.lo + i, Fraction(c) * one) for i, c in enumerate(masses)]
            total = mpmath.mpf(0)
            for tup in itertools.product(atoms, repeat=E):
                s = Fraction(sum(i for i, _ in tup), 2**m)
                w = 1
                for _, p in tup:
                    w *= p
                if s > eps:
                    total += mpmath.mpf(w.numerator) / w.denominator * (1 - mpmath.exp(mpmath.mpf((eps - s).numerator) / (eps - s).denominator))
            fin = sum(masses) * one
            tot = fin + Fraction(inf) * one
            return total + (mpmath.mpf((tot**E - fin**E).numerator) / (tot**E - fin**E).denominator)

        ref_up, ref_low = brute(law.up, law.up_inf), brute(law.low, 0)
        hi = BE._hinge(comp.up, comp.base, m, eps, BE._w_fix(m, True), True) + comp.up_inf
        lo = BE._hinge(comp.low, comp.base, m, eps, BE._w_fix(m, False), False)
        hi_m, lo_m = mpmath.mpf(hi.numerator) / hi.denominator, mpmath.mpf(lo.numerator) / lo.denominator
        # rounding outward: the computed upper bound is above the exact super-measure's curve, the
        # lower below the exact sub-measure's, each by at most a few units 2^-128 per product
        slack = mpmath.mpf(2) ** -100
        assert ref_up <= hi_m <= ref_up + slack, (ref_up, hi_m)
        assert ref_low - slack <= lo_m <= ref_low, (ref_low, lo_m)


def test_two_epochs_against_monte_carlo():
    # E_Q^2[(L_1 L_2 - c)_+] (remove) and E_Q^2[(1 - c L_1 L_2)_+] (add) as sample means over 200000
    # draws of two independent epochs x ~ N(0, sigma^2 I_8) (fixed seed: deterministic)
    import numpy as np

    sigma, T, eps = 1.0, 8, 0.5
    rng = np.random.default_rng(20261126)
    L = [np.exp((rng.normal(0.0, sigma, size=(200_000, T)) - 0.5) / sigma**2).mean(axis=1) for _ in range(2)]
    prod, c = L[0] * L[1], np.exp(eps)
    for rel, sample in (("remove", np.maximum(prod - c, 0)), ("add", np.maximum(1 - c * prod, 0))):
        est, se = sample.mean(), sample.std() / np.sqrt(sample.size)
        r = B.run(str(sigma), T, 1, 2, rel)
        out = BE.enclose_delta(r, str(eps), grids=_small(r), points=_PTS)
        lo, hi = float(out["lo"]), float(out["hi"])
        assert lo - 6 * se <= est <= hi + 6 * se, (rel, lo, est, hi, se)


def _forge(cert, path, value):
    bad = copy.deepcopy(cert)
    node = bad
    for k in path[:-1]:
        node = node[k]
    if value is None:
        node.pop(path[-1])
    else:
        node[path[-1]] = value
    bad.pop("digest")
    bad["digest"] = compute_digest(bad)
    return bad


@pytest.fixture(scope="module")
def certs():
    r = B.run("2", 3, 1, 2, "add-remove")
    b = BE.enclose_eps(r, "1e-3", grids=_small(r), points=_PTS)
    d = BE.enclose_delta(r, "0.5", grids=_small(r), points=_PTS)
    return r, b, C.bracket_certificate(r, b, delta="1e-3"), C.bracket_certificate(r, d, eps="0.5")


def test_certificates_verify(certs):
    r, b, ecert, dcert = certs
    assert ecert["claim"]["quantity"] == "bins.epsilon" and ecert["inputs"]["epochs"] == "2"
    assert "bins_epochs" in ecert["result"] and "bins_grid" not in ecert["result"]
    assert any("AFA Thm 10" in t for t in ecert["result"]["theorems"])
    assert 0 < Fraction(b["lo"]) < Fraction(b["hi"])
    assert "confirmed" in verify_certificate(ecert)
    assert "confirmed" in verify_certificate(dcert)
    # E epochs lie above one epoch (the composition only adds loss): the one-epoch upper end is
    # below the E-epoch lower end here
    one = B.enclose_eps(B.run("2", 3, 1, 1), "1e-3", digits=4, grid=B.choose_grid(Fraction(2), 3, 8.0, _DEG))
    assert Fraction(one["hi"]) < Fraction(b["lo"])


def test_forged_certificates_are_refused(certs):
    r, b, ecert, dcert = certs
    with pytest.raises((CertificateRejected, CouldNotReprove)):  # more epochs than were certified
        verify_certificate(_forge(ecert, ["inputs", "epochs"], "4"))
    # a lower end at the upper end: an upper end proved just below hi makes [hi, hi] false (exit 1)
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(_forge(ecert, ["result", "enclosure", "lo"], b["hi"]))
    with pytest.raises((CertificateRejected, CouldNotReprove)):  # an upper end below the truth
        verify_certificate(_forge(ecert, ["result", "enclosure", "hi"], f"{float(b['lo']) * 0.9:.6f}"))
    with pytest.raises(CertificateRejected):  # a delta enclosure disjoint from the re-derived one
        verify_certificate(_forge(dcert, ["result", "enclosure", "hi"], "1e-9"))
    with pytest.raises((MalformedCertificate, CertificateRejected)):  # the E-epoch hint missing
        verify_certificate(_forge(ecert, ["result", "bins_epochs"], None))
    with pytest.raises((MalformedCertificate, CertificateRejected)):  # a one-epoch hint on E epochs
        verify_certificate(_forge(ecert, ["result", "bins_grid"], ecert["result"]["bins_epochs"]["grids"]["add"]))
    with pytest.raises((MalformedCertificate, CertificateRejected)):  # a window beyond the work cap
        big = copy.deepcopy(ecert["result"]["bins_epochs"])
        big["loss"]["add_lo"], big["loss"]["add_hi"] = -(1 << 30), 1 << 30
        verify_certificate(_forge(ecert, ["result", "bins_epochs"], big))


def test_cli_round_trip(capsys, tmp_path):
    base = ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "4", "--dataset-size", "2",
            "--batch-size", "1", "--epochs", "2", "--eps", "0.25"]
    path = tmp_path / "c.json"
    assert main(base + ["--certificate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 epochs" in out and "AFA Thm 10" in out
    assert main(["verify", str(path)]) == 0
    cert = json.loads(path.read_text())
    path.write_text(json.dumps(_forge(cert, ["inputs", "epochs"], "3")))
    assert main(["verify", str(path)]) != 0
    capsys.readouterr()


@pytest.mark.parametrize("argv,flag,words", [
    (["--dataset-size", "60000", "--batch-size", "256", "--epochs", "2"], "--batch-size", "number of bins"),
    (["--dataset-size", "100", "--batch-size", "10", "--epochs", "20000"], "--epochs", "independently"),
    (["--dataset-size", "100", "--batch-size", "10", "--epochs", "1.5"], "--epochs", "whole number"),
])
def test_bad_inputs_exit_2_and_say_what_to_do(argv, flag, words, capsys):
    rc = main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1", "--delta", "1e-5", *argv])
    assert rc == 2
    err = capsys.readouterr().err
    assert flag in err and words in err


def test_statement_names_the_scheme_and_each_end(certs):
    from dpverify.statement import statement

    r, b, ecert, dcert = certs
    text = statement(ecert, "txt").replace("\n", " ")
    # the stated epsilon is the certified upper end rounded up; the lower end is named as such
    import re

    eps = Fraction(re.search(r"satisfies \(([0-9.]+), ", text).group(1))
    assert eps >= Fraction(b["hi"])
    assert "balls-in-bins" in text and "Thm 10" in text and "2 independently assigned epochs" in text
    assert f"lower end, {b['lo']}, is a lower bound" in text
    with pytest.raises(Exception):  # a delta(eps) enclosure states no epsilon
        statement(dcert, "md")


def test_cli_statement_for_balls_in_bins(capsys):
    argv = ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1", "--dataset-size", "600",
            "--batch-size", "100", "--epochs", "1", "--statement", "md"]
    assert main(argv + ["--eps", "1"]) == 2  # a statement gives epsilon for a delta
    assert "--statement" in capsys.readouterr().err


def test_sweep_task_draws_balls_in_bins_byte_identical_to_audit(tmp_path, capsys):
    # the sweep's audit task with sampling = balls-in-bins writes the certificate `audit dpsgd --json`
    # prints, which verify re-proves; an option the scheme does not take names itself
    from dpverify.sweep import SequentialExecutor, load_grid, run_sweep

    (tmp_path / "g.toml").write_text('task = "audit"\n[fixed]\nsampling = "balls-in-bins"\nnoise_multiplier = "1.1"\n'
                                     'dataset_size = 600\nbatch_size = 100\nepochs = "1"\ndelta = "1e-5"\n')
    res = run_sweep(load_grid(tmp_path / "g.toml"), SequentialExecutor(), tmp_path / "out", cache=None)
    assert [r.status for r in res.rows] == ["ok"]
    body = (tmp_path / "out" / "certificates" / f"{res.rows[0].key}.json").read_bytes()
    assert "confirmed" in verify_certificate(json.loads(body))
    assert main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1", "--dataset-size",
                 "600", "--batch-size", "100", "--epochs", "1", "--delta", "1e-5", "--json"]) == 0
    assert capsys.readouterr().out.encode() == body
    from dpverify.errors import InvalidParameter
    from dpverify.sweep.task_audit import TASK

    with pytest.raises(InvalidParameter, match="sampling_rate"):
        TASK.plan({"sampling": "balls-in-bins", "noise_multiplier": "1", "dataset_size": 10, "batch_size": 2,
                   "epochs": "1", "sampling_rate": "0.1", "delta": "1e-5"})
    with pytest.raises(InvalidParameter, match="allowed: poisson, balls-in-bins"):
        TASK.plan({"sampling": "shuffle", "noise_multiplier": "1", "delta": "1e-5"})


def test_one_epoch_through_the_loss_law_meets_the_one_epoch_enclosure():
    # E = 1 through this module (P-law of log L on the loss grid, AFA Lemma 37) against the one-epoch
    # module (Q-law of L, the hinge identity with E[L] = 1): two routes to one number must overlap
    r = B.run("1.1", 30, 10, 1)
    a = B.enclose_delta(r, "1", grid=B.choose_grid(Fraction(11, 10), 3, 3.0, _DEG))
    b = BE.enclose_delta(r, "1", grids=_small(r), points=_PTS)
    assert Fraction(b["lo"]) <= Fraction(a["hi"]) and Fraction(a["lo"]) <= Fraction(b["hi"])
    assert Fraction(b["hi"]) - Fraction(b["lo"]) <= Fraction(b["hi"]) / 5  # tiny test grids: about 11%


def test_default_grid_is_refined_where_the_rounding_adds_up():
    """The rule of choose_grids: runs whose E h was at most 1/4 keep their grids (the measured
    T = 10 rows of docs/guide/sampling.md), a large-T run is refined until E h <= 1/4 or the
    degree reaches 2^20 (floats only: a hint). Against the old rule written out here."""
    def old(r):
        return BE.choose_grids(r, 1 << (16 if r.epochs < 3 else 17 if r.epochs < 9 else 18))

    for E in (2, 5, 20):
        r = B.run("1.1", 100, 10, E, "add-remove")
        assert BE.choose_grids(r) == old(r)
    r = B.run("0.85", 60000, 250, 60, "add-remove")
    coarse, fine = old(r), BE.choose_grids(r)
    assert max(float(g.h) for g in coarse.values()) == 1 / 16
    assert max(float(g.h) for g in fine.values()) == 1 / 64  # two doublings of 2^18, then the cap
    assert all(g.keep <= (1 << 20) + 3 for g in fine.values())


def test_refined_grid_against_monte_carlo():
    """T = 240, sigma 0.85, E = 5 (the rule doubles 2^17 to 2^18: E h = 5/16 > 1/4): the
    refined enclosure of delta(1/2) contains a seeded Monte Carlo estimate of
    max(E_P[(1 - e^{eps - X})_+], E_Q[...]) (X the sum of 5 independent epochs' losses, each
    log of the mean of 240 log-normals, sampled from the Gaussians directly; 6 standard
    errors), as does the old grid's, and is narrower than it."""
    import numpy as np

    r = B.run("0.85", 240, 1, 5, "add-remove")
    old = BE.choose_grids(r, 1 << 17)
    new = BE.choose_grids(r)
    assert max(float(g.h) for g in new.values()) < max(float(g.h) for g in old.values())
    ends = [BE.enclose_delta(r, "0.5", grids=(g, None)) for g in (new, old)]
    rng = np.random.default_rng(20261126)
    s, n, chunk = 0.85, 20_000, 5_000
    est = []
    for d in ("remove", "add"):
        vals = []
        for _ in range(n // chunk):
            x = rng.standard_normal((chunk, 5, 240)) * s
            if d == "remove":  # under P the law of L is its law under N(e_1, s^2 I) (symmetry)
                x[:, :, 0] += 1.0
            loss = np.log(np.exp((x - 0.5) / s**2).mean(axis=2)).sum(axis=1)
            vals.append(np.maximum(0.0, 1.0 - np.exp(0.5 - (loss if d == "remove" else -loss))))
        v = np.concatenate(vals)
        est.append((v.mean(), v.std() / np.sqrt(n)))
    mc, se = max(est)
    for out in ends:
        assert float(out["lo"]) - 6 * se <= mc <= float(out["hi"]) + 6 * se, (out["lo"], mc, se, out["hi"])
    (lo_n, hi_n), (lo_o, hi_o) = [(Fraction(o["lo"]), Fraction(o["hi"])) for o in ends]
    assert hi_n - lo_n < (hi_o - lo_o) * Fraction(3, 4)


@pytest.mark.parametrize("epochs", ["100", "136"])
def test_raised_epochs_are_refused_before_any_product(epochs, capsys, tmp_path):
    # a 2-epoch certificate with inputs.epochs raised: the recorded loss window (m = 12, about
    # 16,000 points per epoch here) times E is beyond the one cap producer and verify share
    # (E x window: 100 x 16,239 = 1,623,900 > 5 x 2^18), so verify answers exit 2 at once, before
    # the E-fold products (which took 33-50 s to end at exit 1 or 3); the producer refuses the same
    from dpverify.certificate.format import BINS_MAX_COMPOSED
    from dpverify.errors import PrecisionExhausted
    from dpverify.sampling import balls_epochs as BE

    base = ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "4", "--dataset-size", "2",
            "--batch-size", "1", "--epochs", "2", "--eps", "0.25"]
    path = tmp_path / "c.json"
    assert main(base + ["--certificate", str(path)]) == 0
    cert = json.loads(path.read_text())
    loss = cert["result"]["bins_epochs"]["loss"]
    window = max(loss["remove_hi"] - loss["remove_lo"], loss["add_hi"] - loss["add_lo"]) + 1
    assert int(epochs) * window > BINS_MAX_COMPOSED  # the derivation above, from the recorded hint
    # a consistent forger: the statement and the theorem list name the raised epochs too, so that
    # the words (rebuilt from the inputs) do not refuse it first and the work cap is what answers
    from dpverify.certificate.prose import statement, theorems

    bad = _forge(cert, ["inputs", "epochs"], epochs)
    kind = bad["claim"]["quantity"]
    bad["claim"]["statement"] = statement(kind, bad["inputs"], bad["result"])
    bad["result"]["theorems"] = theorems(kind, bad["inputs"])[0]
    path.write_text(json.dumps(_forge(bad, ["claim", "quantity"], kind)))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert "inputs.epochs x the" in err and "work cap" in err
    with pytest.raises(PrecisionExhausted, match="work cap"):  # the producer's side of the same constant
        BE._compose(BE._EpochLaw(0, [1] * window, 0, [1] * window), int(epochs), 12)


@pytest.mark.parametrize("sigma", ["0.001", "0.01", "0.02"])
def test_tiny_sigma_over_epochs_is_undecided_not_a_crash(sigma, capsys):
    # adv35 X1: below sigma ~ 0.023 the grid rule's Y quantile e^(4.75/s - 1/(2 s^2)) underflowed to 0 and
    # the cell rule divided by it (exit 4 "a bug"). Such a run's eps is beyond any grid (one epoch of
    # N = 8, B = 2 at sigma 0.01 has a loss of order 1/(2 sigma^2) = 5000): undecided, exit 3
    code = main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", sigma, "--dataset-size", "8",
                 "--batch-size", "2", "--epochs", "2", "--delta", "1e-5"])
    assert code == 3, capsys.readouterr()

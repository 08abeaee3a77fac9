"""Balls-in-bins DP-SGD (one epoch): the certified enclosure against independent routes.

* T = 2: delta_remove(eps) = E_Q[(L - c)_+] and delta_add(eps) = E_Q[(1 - cL)_+],
  L = (Y_1 + Y_2)/2, by mpmath quadrature at 30 digits over x_1 of a closed form in
  Y_2 (E[(Y - a)_+] and E[(a - Y)_+] of a log-normal), nothing shared with the grid;
* T = 1: the pair is the Gaussian pair with mu = 1/sigma, delta_mu (GDPT eq. 2);
* monotonicity in T at fixed sigma against the no-amplification Gaussian (above);
* the certificates through ``verify`` (accepted; forged ends not accepted);
* bad inputs: exit 2 naming the flag.
"""

import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.certificate import bins_cert as C
from dpverify.certificate import verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected, CouldNotReprove, InvalidParameter
from dpverify.relation import Relation
from dpverify.sampling import balls as B
from tests.sampling.test_shuffle import _forge


def _t2(sigma: str, eps: str) -> tuple:
    """(delta_remove, delta_add) of one epoch with T = 2 by quadrature (module docstring)."""
    with mpmath.workdps(30):
        s, c = mpmath.mpf(sigma), mpmath.e ** mpmath.mpf(eps)
        F = lambda y: mpmath.ncdf(s * mpmath.log(y) + 1 / (2 * s))  # noqa: E731
        above = lambda a: mpmath.ncdf(1 / (2 * s) - s * mpmath.log(a))  # E[Y; Y > a]  # noqa: E731
        below = lambda a: mpmath.ncdf(s * mpmath.log(a) - 1 / (2 * s))  # E[Y; Y < a]  # noqa: E731
        Y = lambda x: mpmath.exp((x - mpmath.mpf(1) / 2) / s**2)  # noqa: E731

        def rem(x):  # E[((y + Y2)/2 - c)_+] = E[(Y2 - a)_+] / 2, a = 2c - y
            a = 2 * c - Y(x)
            return (1 - a) / 2 if a <= 0 else (above(a) - a * (1 - F(a))) / 2

        def add(x):  # E[(1 - c (y + Y2)/2)_+] = (c/2) E[(a - Y2)_+], a = 2/c - y
            a = 2 / c - Y(x)
            return mpmath.mpf(0) if a <= 0 else c / 2 * (a * F(a) - below(a))

        pdf = lambda x: mpmath.npdf(x, 0, s)  # noqa: E731
        k_rem = s**2 * mpmath.log(2 * c) + mpmath.mpf(1) / 2  # where a = 0
        k_add = s**2 * mpmath.log(2 / c) + mpmath.mpf(1) / 2
        r = mpmath.quad(lambda x: rem(x) * pdf(x), [-mpmath.inf, k_rem, k_rem + 4 * s, mpmath.inf])
        a = mpmath.quad(lambda x: add(x) * pdf(x), [-mpmath.inf, k_add - 4 * s, k_add])
        return r, a


@pytest.mark.parametrize("sigma,eps", [("1.1", "0.5"), ("0.7", "1.5"), ("2", "0.1")])
def test_two_batches_against_quadrature(sigma, eps):
    rem, add = _t2(sigma, eps)
    for rel, ref in (("remove", rem), ("add", add), ("add-remove", max(rem, add))):
        out = B.enclose_delta(B.run(sigma, 2, 1, 1, rel), eps)
        lo, hi = mpmath.mpf(out["lo"]), mpmath.mpf(out["hi"])
        assert lo <= ref <= hi, (rel, lo, ref, hi)
        # and narrow: the grid moves L by at most h, which costs about c h Q(L < 1/c) in the add
        # direction (a few percent of a large delta at h = 2^-8), far less in the remove direction
        assert hi - lo <= ref * mpmath.mpf("0.05")


def test_one_batch_is_the_gaussian_mechanism():
    # T = 1: P = N(1, sigma^2), Q = N(0, sigma^2), delta_mu with mu = 1/sigma (GDPT eq. 2), both directions
    r = B.BinsRun(Fraction(3, 2), 1, 1, 1, Relation.ADD_REMOVE)  # below run()'s T >= 2: the library accepts it
    for eps in ("0", "0.3", "2"):
        out = B.enclose_delta(r, eps)
        with mpmath.workdps(30):
            mu, e = 1 / mpmath.mpf(1.5), mpmath.mpf(eps)
            ref = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
        assert mpmath.mpf(out["lo"]) <= ref <= mpmath.mpf(out["hi"])
        assert mpmath.mpf(out["hi"]) - mpmath.mpf(out["lo"]) <= ref * mpmath.mpf("0.02")


def test_more_batches_amplify_below_the_gaussian():
    # the no-amplification Gaussian (mu = 1/sigma) bounds every T from above, and eps falls with T
    from dpverify.gdp.eps_for_delta import eps_for_delta

    from dpverify.ball import upper_decimal

    gauss = Fraction(upper_decimal(eps_for_delta(Fraction(1, 1), Fraction(1, 10**5), digits=8).hi, 10))
    his = []
    for T in (2, 8, 32):
        out = B.enclose_eps(B.run("1", T, 1, 1), "1e-5", digits=4)
        assert Fraction(out["lo"]) < Fraction(out["hi"]) <= gauss * Fraction(1001, 1000)
        his.append(Fraction(out["hi"]))
    assert his[0] > his[1] > his[2]


def test_certificates_verify_and_forged_ends_are_not_accepted():
    r = B.run("1.1", 30, 10, 1)
    b = B.enclose_eps(r, "1e-5", digits=5)
    cert = C.bracket_certificate(r, b, delta="1e-5")
    assert "confirmed" in verify_certificate(cert)
    lo, hi = Fraction(b["lo"]), Fraction(b["hi"])
    assert 0 < lo < hi < lo * Fraction(101, 100)
    # a lower end at the upper end: verify proves delta <= delta_budget just below hi, so the
    # statement [hi, hi] is false (exit 1), not merely unproved
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(_forge(cert, "lo", b["hi"]))
    with pytest.raises((CertificateRejected, CouldNotReprove)):  # an upper end below the truth
        verify_certificate(_forge(cert, "hi", f"{float(lo) - 0.01:.6f}"))
    d = B.enclose_delta(r, "1")
    dcert = C.bracket_certificate(r, d, eps="1")
    assert "confirmed" in verify_certificate(dcert)
    with pytest.raises(CertificateRejected):  # an enclosure disjoint from the re-derived one
        verify_certificate(_forge(dcert, "hi", f"{float(d['lo']) / 2:.3e}"))
    # the grid is a hint: a coarser one gives a wider, still valid enclosure
    coarse = B.Grid(g=2, fine=8, per=4, top=40, keep=b["grid"].keep // 64 + 2)
    w = B.enclose_delta(r, "1", grid=coarse)
    assert Fraction(w["lo"]) <= Fraction(d["lo"]) and Fraction(d["hi"]) <= Fraction(w["hi"])


def test_forged_ends_are_not_accepted():
    r = B.run("0.9", 30, 10, 1, "remove")
    b = B.enclose_eps(r, "1e-3", digits=4)
    cert = C.claim_certificate(r, b, *C.decide(b, "5"), claimed_eps="5", delta="1e-3")
    assert cert["result"]["verdict"] == "holds" and "confirmed" in verify_certificate(cert)
    with pytest.raises(CertificateRejected, match="disjoint"):  # [hi, hi]: proved false, as above
        verify_certificate(_forge(cert, "lo", b["hi"]))


def test_cli_round_trip_and_claims(capsys, tmp_path):
    base = ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1", "--dataset-size", "40",
            "--batch-size", "10", "--epochs", "1", "--delta", "1e-5"]
    assert main(base + ["--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["claim"]["quantity"] == "bins.epsilon" and cert["inputs"]["sampling"] == "balls-in-bins"
    lo, hi = Fraction(cert["result"]["enclosure"]["lo"]), Fraction(cert["result"]["enclosure"]["hi"])
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert))
    assert main(["verify", str(path)]) == 0
    assert main(base + ["--claimed-eps", str(hi)]) == 0
    assert main(base + ["--claimed-eps", str(lo / 2)]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("argv,flag", [
    (["--dataset-size", "60000", "--batch-size", "256", "--epochs", "1"], "--batch-size"),  # B does not divide N
    (["--dataset-size", "100", "--batch-size", "100", "--epochs", "1"], "--batch-size"),  # T = 1
    (["--dataset-size", "1000000", "--batch-size", "1", "--epochs", "1"], "--batch-size"),  # T above the cap
    (["--dataset-size", "100", "--batch-size", "10", "--epochs", "20000"], "--epochs"),  # above the cap
    (["--dataset-size", "100", "--batch-size", "10", "--epochs", "0.5"], "--epochs"),
    (["--dataset-size", "100", "--batch-size", "10", "--epochs", "1", "--neighboring", "replace-one"],
     "--neighboring"),
    (["--sampling-rate", "0.1", "--steps", "10"], "--sampling-rate"),
])
def test_bad_inputs_exit_2_naming_the_flag(argv, flag, capsys):
    rc = main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1", "--delta", "1e-5", *argv])
    assert rc == 2
    assert flag in capsys.readouterr().err


def test_run_refuses_in_the_library_too():
    with pytest.raises(InvalidParameter):
        B.run("1", 10, 3, 1)


def test_eight_batches_against_monte_carlo():
    # an independent estimate for T > 2: E_Q[(L - c)_+] and E_Q[(1 - cL)_+] as sample means over
    # 400000 draws of x ~ N(0, sigma^2 I_8) (fixed seed, so the test is deterministic); the certified
    # enclosure must meet the estimate's 6-standard-error interval
    import numpy as np

    sigma, T, eps = 1.0, 8, 0.25
    rng = np.random.default_rng(20250301)
    x = rng.normal(0.0, sigma, size=(400_000, T))
    L = np.exp((x - 0.5) / sigma**2).mean(axis=1)
    c = np.exp(eps)
    for rel, sample in (("remove", np.maximum(L - c, 0)), ("add", np.maximum(1 - c * L, 0))):
        est, se = sample.mean(), sample.std() / np.sqrt(sample.size)
        out = B.enclose_delta(B.run(str(sigma), T, 1, 1, rel), str(eps))
        lo, hi = float(out["lo"]), float(out["hi"])
        assert lo - 6 * se <= est <= hi + 6 * se, (rel, lo, est, hi, se)
        assert hi - lo < 12 * se  # narrower than the Monte Carlo interval


@pytest.mark.parametrize("argv,code", [
    (["--noise-multiplier", "0.001", "--delta", "1e-5"], 3),  # the grid is beyond the work cap: undecided
    (["--noise-multiplier", "1", "--eps", "60"], 2),
])
def test_work_is_bounded_before_it_starts(argv, code, capsys):
    rc = main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--dataset-size", "100", "--batch-size", "10",
               "--epochs", "1", *argv])
    assert rc == code
    err = capsys.readouterr().err
    assert "work cap" in err or "--eps" in err


def test_corpus_record_decided_for_balls_in_bins(tmp_path, capsys):
    # a record whose number was computed for Poisson sampling, run with balls-in-bins batches: the verdict is
    # decided on the certified one-epoch enclosure (here T = 30, eps(1e-5) about 0.82 by the enclosure's own
    # numbers); a batch size that does not divide the dataset size leaves T undefined and becomes an
    # undecided row with the reason
    rec = {"source": "test", "location": "here", "quote": "q", "mechanism": "dpsgd-poisson",
           "noise_multiplier": "1.1", "batch_size": 20, "dataset_size": 600, "epochs": "1",
           "steps_rule": "per-epoch-floor", "delta": "1e-5", "accountant": "rdp",
           "implementation_sampling": "balls-in-bins"}
    b = B.enclose_eps(B.run("1.1", 600, 20, 1), "1e-5")
    recs = [dict(rec, id="holds", claimed_eps=b["hi"]), dict(rec, id="fails", claimed_eps=str(Fraction(b["lo"]) / 2)),
            dict(rec, id="no-bins", dataset_size=601, claimed_eps="5")]
    f = tmp_path / "b.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    main(["audit", "corpus", str(f), "--json"])
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["holds"]["verdict"] == "holds" and "balls-and-bins" in rows["holds"]["reason"]
    assert rows["fails"]["verdict"] == "fails"
    assert rows["no-bins"]["verdict"] == "undecided" and "number of bins" in rows["no-bins"]["reason"]


@pytest.mark.parametrize("shift", [0, 1])
def test_the_shared_mass_placement_against_monomials(shift):
    # recheck.bins.place is the one piece of arithmetic both routes share (the producer's laws and
    # verify's): cell i's mass at degree k_(i + shift), the tail at the top edge. Reference: the
    # same polynomial summed monomial by monomial in FLINT (fmpz_poly), nothing shared with place.
    from flint import fmpz_poly

    from dpverify.recheck.bins import edges, place

    ks = edges({"g": 3, "fine": 5, "per": 3, "top": 40, "keep": 40})
    assert ks[:7] == [0, 1, 2, 3, 4, 5, 6] and ks[-1] == 40  # unit cells, then doubling widths
    masses = [7 * i + 3 for i in range(len(ks) - 1)]
    want = fmpz_poly([0])
    for i, m in enumerate(masses):
        want += fmpz_poly([0] * ks[i + shift] + [m])
    want += fmpz_poly([0] * ks[-1] + [11])
    got = place(ks, masses, shift, 11)
    assert got == [int(c) for c in want.coeffs()] + [0] * (len(got) - len(want.coeffs()))


@pytest.mark.parametrize("eps", ["1", "20"])
def test_the_smallest_noise_multiplier_is_answered(eps, capsys):
    """sigma 0.001 (the smallest accepted): the grid proposal's quantile e^-495250 was 0.0 in binary64
    and a ZeroDivisionError (exit 4, issue 22 d). Now answered: the enclosure's lower end is below the
    no-amplification Gaussian's delta_mu(eps), mu = 1/sigma = 1000 (an upper bound of every epoch's
    curve; GDPT eq. 2, mpmath at 40 digits), and verify re-proves the certificate."""
    assert main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "0.001", "--dataset-size",
                 "10", "--batch-size", "1", "--epochs", "1", "--eps", eps, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    with mpmath.workdps(40):
        mu, e = mpmath.mpf(1000), mpmath.mpf(eps)
        ref = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
        assert mpmath.mpf(cert["result"]["enclosure"]["lo"]) <= ref
    assert "confirmed" in verify_certificate(cert)

"""Shuffled DP-SGD brackets: each piece checked against an independent route.

* the max statistic's CDF (a product of normal CDFs) against a numerical
  integral of the mixture's joint law at tiny T (mpmath.quad);
* the composed, grouped lower end against brute-force enumeration of every
  E-tuple of cells of the binned pair at tiny K and E (exact hockey-stick sum
  in mpmath at 50 digits): the certified lower end may not exceed it;
* the upper end against delta_mu at mpmath precision (GDPT eq. 2);
* the certificates through ``verify`` (accepted; forged ends not accepted).
"""

import copy
import itertools
import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.certificate import shuffle_cert as C
from dpverify.cli import main
from dpverify.errors import CertificateRejected, CouldNotReprove, InvalidParameter
from dpverify.sampling import shuffle as S


def test_max_cdf_is_the_product_of_normal_cdfs():
    # T = 2, x* in batch 1 or 2 with probability 1/2 each; the add-remove pair (others -1,
    # their batch sums subtracted) shifts x*'s batch by 2 mu under D and by mu under D'
    # (its slot empty). P(max <= x) by integrating the mixture's density over
    # (-inf, x]^2 must equal Phi(x - 2 mu) Phi(x), Q's Phi(x - mu) Phi(x) (the formula's claim)
    mu, x = mpmath.mpf("0.7"), mpmath.mpf("0.4")
    with mpmath.workdps(30):
        dens = lambda a, s: mpmath.npdf(a - s)  # noqa: E731

        def mixture_cdf(m):
            both = 0
            for t in (0, 1):
                shift = (m if t == 0 else 0, m if t == 1 else 0)
                both += mpmath.quad(lambda a: dens(a, shift[0]), [-mpmath.inf, x]) * \
                    mpmath.quad(lambda a: dens(a, shift[1]), [-mpmath.inf, x]) / 2
            return both

        fp, fq = mixture_cdf(2 * mu), mixture_cdf(mu)
        r = S.ShuffleRun(Fraction(10, 7), 20, 10, 1, False, S.Relation.REMOVE)
        h = S.LowerHints(Fraction(2, 5), Fraction(1), 2, 4)
        p, q = S.cell_masses(r, h)
        assert abs(fp - mpmath.ncdf(x - 2 * mu) * mpmath.ncdf(x)) < mpmath.mpf(10) ** -20
        assert abs(mpmath.mpf(p[0].str(30, radius=False)) - fp) < mpmath.mpf(10) ** -15
        assert abs(mpmath.mpf(q[0].str(30, radius=False)) - fq) < mpmath.mpf(10) ** -15
        # replace-one (x* +1 against -1): shifts 2 mu and 0, Q(max <= x) = Phi(x)^2
        r1 = S.ShuffleRun(Fraction(10, 7), 20, 10, 1, False, S.Relation.REPLACE_ONE)
        p1, q1 = S.cell_masses(r1, h)
        assert abs(mpmath.mpf(p1[0].str(30, radius=False)) - fp) < mpmath.mpf(10) ** -15
        assert abs(mpmath.mpf(q1[0].str(30, radius=False)) - mpmath.ncdf(x) ** 2) < mpmath.mpf(10) ** -15


#: (a, b): x*'s batch shifted by a/sigma under D and b/sigma under D' (others -1, subtracted):
#: replace-one x* +1 against -1; every other relation x* +1 against an empty slot
SHIFTS = {"replace-one": (2, 0)}


def _brute_delta(r, h, eps, swap):
    """Exact hockey stick of the E-fold product of the binned pair, by enumeration."""
    with mpmath.workdps(50):
        m = 1 / mpmath.mpf(r.sigma.numerator) * r.sigma.denominator
        sa, sb = SHIFTS.get(r.relation.value, (2, 1))
        xs = [mpmath.mpf((h.edge_from + i * h.edge_step).numerator) / (h.edge_from + i * h.edge_step).denominator
              for i in range(h.cells - 1)]
        Fp = [0] + [mpmath.ncdf(x - sa * m) * mpmath.ncdf(x) ** (r.batches - 1) for x in xs] + [1]
        Fq = [0] + [mpmath.ncdf(x - sb * m) * mpmath.ncdf(x) ** (r.batches - 1) for x in xs] + [1]
        p = [Fp[k + 1] - Fp[k] for k in range(h.cells)]
        q = [Fq[k + 1] - Fq[k] for k in range(h.cells)]
        if swap:
            p, q = q, p
        x = mpmath.exp(eps)
        E = 1 if r.persistent else r.epochs
        return mpmath.fsum(max(0, mpmath.fprod(p[k] for k in ks) - x * mpmath.fprod(q[k] for k in ks))
                           for ks in itertools.product(range(h.cells), repeat=E))


@pytest.mark.parametrize("E,eps,rel", [(3, "0.5", "remove"), (4, "1", "add"), (2, "0.2", "replace-one")])
def test_grouped_lower_end_is_below_the_brute_force_hockey_stick(E, eps, rel):
    r = S.run("0.7", 40, 10, E, "shuffle", rel)
    h = S.LowerHints(Fraction(1), Fraction(1, 2), 5, 3)
    lo, _ = S.lower_delta(r, Fraction(eps), h)
    swaps = {"remove": (False,), "add": (True,)}.get(rel, (False, True))
    with mpmath.workdps(50):
        exact = max(_brute_delta(r, h, mpmath.mpf(eps), s) for s in swaps)
        got = mpmath.mpf(lo.str(45, radius=False))
        assert 0 < got <= exact
        assert got > exact * mpmath.mpf("0.5")  # grouping on 2^-3 loses little at these sizes


def test_upper_end_is_the_no_amplification_gaussian():
    r = S.run("1.1", 60000, 256, 60, "shuffle", "add-remove")
    hi, mu = S.upper_delta(r, Fraction(20))
    with mpmath.workdps(40):
        m = mpmath.sqrt(60) / mpmath.mpf("1.1")
        ref = mpmath.ncdf(-20 / m + m / 2) - mpmath.exp(20) * mpmath.ncdf(-20 / m - m / 2)
        got = mpmath.mpf(hi.str(35, radius=False))
        assert ref <= got <= ref * (1 + mpmath.mpf(10) ** -8)
        assert m <= mpmath.mpf(mu.numerator) / mu.denominator <= m + mpmath.mpf(10) ** -39


@pytest.mark.parametrize("samp,rel", [("shuffle", "add-remove"), ("shuffle-persistent", "replace-one"),
                                      ("shuffle", "replace-special")])
def test_bracket_is_ordered_and_verifies(samp, rel):
    r = S.run("0.9", 1000, 100, 5, samp, rel)
    b = S.bracket_eps(r, "1e-5")
    assert 0 < Fraction(b["lo"]) < Fraction(b["hi"])
    cert = C.bracket_certificate(r, b, delta="1e-5")
    assert "confirmed" in verify_certificate(cert)
    d = S.bracket_delta(r, Fraction(b["lo"]))
    assert Fraction(d["lo"]) > Fraction(1, 10**5)  # the lower end of eps is where delta_lo exceeds delta
    assert "confirmed" in verify_certificate(C.bracket_certificate(r, d, eps=b["lo"]))


def _forge(cert, end, value):
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"][end] = value
    bad.pop("digest")
    bad["digest"] = compute_digest(bad)
    return bad


def test_forged_ends_are_not_accepted():
    r = S.run("4", 1000, 100, 5, "shuffle", "add-remove")
    b = S.bracket_eps(r, "1e-5")
    assert float(b["hi"]) - 1 > 2 * float(b["lo"])  # a wide bracket: the forged end is far above the pair's
    cert = C.bracket_certificate(r, b, delta="1e-5")
    with pytest.raises(CouldNotReprove):  # a lower end beyond what the pair proves
        verify_certificate(_forge(cert, "lo", f"{float(b['hi']) - 1:.6f}"))
    with pytest.raises((CertificateRejected, CouldNotReprove)):  # an upper end below the Gaussian's
        verify_certificate(_forge(cert, "hi", f"{float(b['lo']) + 0.5:.6f}"))


def test_cli_claim_below_the_lower_end_fails(capsys):
    base = ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "1.1", "--dataset-size", "60000",
            "--batch-size", "256", "--epochs", "60", "--delta", "1e-5"]
    assert main(base + ["--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    lo, hi = Fraction(cert["result"]["enclosure"]["lo"]), Fraction(cert["result"]["enclosure"]["hi"])
    # the lower end (others -1, x* against an empty slot) passes the Poisson epsilon 2.38
    assert Fraction(10) < lo < Fraction(12) and Fraction(50) < hi < Fraction(60)
    assert main(base + ["--claimed-eps", "2.38", "--json"]) == 1
    claim = json.loads(capsys.readouterr().out)
    assert claim["result"]["verdict"] == "fails" and "confirmed" in verify_certificate(claim)
    assert main(base + ["--claimed-eps", "60"]) == 0
    assert main(base + ["--claimed-eps", "20"]) == 3


def test_refusals(capsys):
    base = ["audit", "dpsgd", "--noise-multiplier", "1", "--delta", "1e-5"]
    assert main(base + ["--sampling", "shuffle", "--dataset-size", "1001", "--batch-size", "100",
                        "--epochs", "2"]) == 2  # add-remove: B divides n - 1
    assert main(base + ["--sampling", "shuffle", "--sampling-rate", "0.1", "--steps", "3"]) == 2
    assert main(base + ["--sampling", "balls-in-bins", "--dataset-size", "1000", "--batch-size", "100",
                        "--epochs", "1.5"]) == 2  # balls-in-bins composes whole epochs only
    with pytest.raises(InvalidParameter):
        S.run("1", 1000, 100, 0, "shuffle")


def test_adapter_entry_point_returns_the_bracket_and_a_verifiable_certificate():
    from dpverify.sampling import shuffle_bracket

    out = shuffle_bracket("0.9", 1000, 100, 5, delta="1e-5")
    r = S.run("0.9", 1000, 100, 5, "shuffle")
    b = S.bracket_eps(r, "1e-5")
    assert (out["lo"], out["hi"]) == (b["lo"], b["hi"]) and out["sampling"] == "shuffle"
    assert "confirmed" in verify_certificate(out["certificate"])
    with pytest.raises(InvalidParameter):
        shuffle_bracket("0.9", 1000, 100, 5)


@pytest.mark.parametrize("sampling, delta", [("shuffle", "0.5"), ("shuffle", "0.9999999"), ("shuffle-persistent", "0.99")])
def test_epsilon_at_a_delta_above_delta_mu_zero_is_zero_and_verifies(sampling, delta, capsys):
    """eps(delta) = 0 when delta >= delta_mu(0) = 2 Phi(mu/2) - 1 (mu = Delta sqrt(E) / sigma):
    the Gaussian root is then negative, and it was recorded as an upper end below the lower
    end 0, an empty enclosure that verify refused. Independent route: delta_mu(0) in mpmath."""
    import mpmath

    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    mu = mpmath.sqrt(2) / mpmath.mpf("1.1")  # Delta = 1 (add-remove), E = 2, for both schemes
    assert mpmath.mpf(delta) > 2 * mpmath.ncdf(mu / 2) - 1  # so eps(delta) = 0 exactly
    assert main(["audit", "dpsgd", "--noise-multiplier", "1.1", "--dataset-size", "1000", "--batch-size", "100",
                 "--epochs", "2", "--sampling", sampling, "--delta", delta, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert "confirmed" in verify_certificate(cert)


def test_delta_at_a_negative_eps_is_refused_as_on_every_route(capsys):
    # before: float(-1e3000) overflowed where the candidates are ordered (exit 4); then it was answered
    # while the Poisson route and `audit dpsgd --help` ("epsilon >= 0") refused it (adv42): one rule now
    from dpverify.cli import main

    for eps in ("-1e3000", "-2", "-1e-30"):
        assert main(["audit", "dpsgd", "--noise-multiplier", "1.1", "--dataset-size", "1000", "--batch-size", "100",
                     "--epochs", "2", "--sampling", "shuffle", "--eps", eps]) == 2
        assert "--eps" in capsys.readouterr().err


@pytest.mark.parametrize("sigma, refused", [
    ("1e-400", True),  # was a ZeroDivisionError (exit 4): float(sigma) is 0
    ("1e-5", True),  # mu = sqrt(2) 1e5: the producer certified eps ~ 1e10, verify could not (exit 3)
    ("1/7071", False),  # mu^2 = 2 * 7071^2 = 99,998,082 <= 10^8
    ("1/7072", True),  # mu^2 = 2 * 7072^2 = 100,026,368 > 10^8
])
def test_the_shuffled_bracket_refuses_a_mu_beyond_its_cap_before_work(sigma, refused, capsys):
    """mu = Delta sqrt(E) / sigma <= SHUFFLE_MAX_MU = 10^4, decided exactly on mu^2 = Delta^2 E / sigma^2
    (here Delta = 1, E = 2); the expected side of the cap is worked out in each case's comment."""
    from dpverify.certificate.format import SHUFFLE_MAX_MU

    assert SHUFFLE_MAX_MU == 10**4
    code = main(["audit", "dpsgd", "--noise-multiplier", sigma, "--dataset-size", "1000", "--batch-size", "100",
                 "--epochs", "2", "--sampling", "shuffle", "--eps", "1"])
    err = capsys.readouterr().err
    if refused:
        assert code == 2 and "--noise-multiplier" in err and "exceeds 10000" in err, err
    else:
        assert code == 0, err


def test_verify_refuses_a_forged_tiny_noise_multiplier_before_work(capsys):
    """A genuine shuffled certificate whose noise multiplier is rewritten to 1e-3000 (digest
    recomputed) kept verify busy for minutes (an mpmath bisection at mu = 1e3000); now the
    cap is checked in rationals first."""
    assert main(["audit", "dpsgd", "--noise-multiplier", "1.1", "--dataset-size", "1000", "--batch-size", "100",
                 "--epochs", "2", "--sampling", "shuffle", "--delta", "1e-5", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    bad = copy.deepcopy(cert)
    bad["inputs"]["noise_multiplier"] = "1e-3000"
    bad["digest"] = compute_digest(bad)
    from dpverify.errors import MalformedCertificate

    with pytest.raises(MalformedCertificate, match="exceeds the shuffled bracket's cap"):
        verify_certificate(bad)

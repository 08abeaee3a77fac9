"""Genuine certificates at the edges of the documented input ranges: each is written through
the CLI, must verify (exit 0), and its value is checked against a route of its own.

Each case answered exit 3 before (the producer could not finish, or the second route could
not re-prove what the producer proved); the docstring of each test names what failed.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
import pytest
from mpmath import mpf

from dpverify.cli import main

from ..certs import outcome, reseal


def _cert(capsys, argv: list) -> dict:
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("alpha,steps", [("2", "1"), ("1/2", "3"), ("20000", "1")])
def test_pure_dp_at_eps0_zero_is_exactly_zero(alpha, steps, capsys):
    """At eps0 = 0 the worst pair of pure DP is randomized response at p = 1/2, P = Q, so
    every Renyi divergence is exactly 0. The producer's formula subtracted two balls of
    log 2 that never cancel, and no precision reached a relative width around 0 (exit 3)."""
    c = _cert(capsys, ["rdp", "divergence", "--mechanism", "pure", "--eps0", "0",
                       "--alpha", alpha, "--steps", steps])
    assert c["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert outcome(c) == 0


@pytest.mark.parametrize("q,alpha", [("0.5", 2), ("1e-3000", 3), ("0.5", 20)])
def test_subsampled_gaussian_with_an_exponent_of_1e6000(q, alpha, capsys):
    """sigma = 1e-3000: the integer-order sum A_n = sum_k C(n,k) q^k (1-q)^(n-k)
    e^((k^2 - k) / (2 sigma^2)) (Mironov, Talwar, Zhang 2019 Sec 3.2) has exponents of order
    1e6000. The second route's log-sum-exp took one interval point M for both ends, so at
    any precision below 20000 bits its lower sum underflowed to 0 (exit 3, "log of an
    interval that reaches 0"). Reference: mpmath at 6100 digits sums the terms exactly as
    written, log(A_n) / (n - 1)."""
    c = _cert(capsys, ["rdp", "divergence", "--mechanism", "subsampled-gaussian",
                       "--noise-multiplier", "1e-3000", "--sampling-rate", q, "--alpha", str(alpha)])
    assert outcome(c) == 0
    with mpmath.workdps(6100):
        s, Q = mpf("1e-3000"), mpf(q)
        total = mpmath.fsum(mpmath.binomial(alpha, k) * Q**k * (1 - Q) ** (alpha - k)
                            * mpmath.exp((k * k - k) / (2 * s * s)) for k in range(alpha + 1))
        ref = mpmath.log(total) / (alpha - 1)
        assert mpf(c["result"]["enclosure"]["lo"]) <= ref <= mpf(c["result"]["enclosure"]["hi"])


_OPTIMAL_MU = [  # (mechanism inputs, eps_h, total variation f(0) of the worst pair)
    ({"mechanism": "laplace", "scale": "1/140"}, "4", lambda: 1 - mpmath.exp(-70)),
    ({"mechanism": "laplace", "scale": "1/2"}, "1", lambda: 1 - mpmath.exp(-1)),
    ({"mechanism": "pure", "eps0": "72"}, "4", lambda: mpmath.tanh(36)),
    ({"mechanism": "rr", "p": "0.99"}, "1", lambda: mpf("0.98")),
]


@pytest.mark.parametrize("mech,eps_h,tv", _OPTIMAL_MU, ids=["laplace-1/140", "laplace-1/2", "pure-72", "rr-0.99"])
def test_optimal_mu_claim_with_a_head_shorter_than_the_support(mech, eps_h, tv, tmp_path, capsys):
    """A `reproduce` claim of gdp.optimal_mu with eps_h below the largest privacy loss z
    (Laplace D/b, pure eps0, rr log(p/(1-p))): f = 0 only beyond z, the claim records no
    bridge, and verify answered exit 3 ("the sup over all eps is not bounded"); it now
    proves [eps_h, z] cell by cell itself. Reference: these mechanisms' G_f peaks at
    eps = 0 (GDPT Sec 4, Laplace example), where delta_mu(0) = 1 - 2 Phi(-mu/2) equals the
    total variation f(0), so mu* = -2 Phi^-1((1 - f(0)) / 2) (mpmath, 80 digits). A copy with
    the upper end moved below that value is refused."""
    claim = {"id": "edge", "source": "s", "statement": "s", "printed": "> 1",
             "relation": {"kind": "gt", "bound": "1"}, "quantity": "gdp.optimal_mu", "domain": "d",
             "inputs": dict(mech, eps_h=eps_h, margin="1e-6", argmax="0")}
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "c.jsonl").write_text(json.dumps(claim) + "\n")
    assert main(["reproduce", "--claims", str(tmp_path / "claims"), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    c = json.loads((tmp_path / "out" / "edge.json").read_text())
    assert outcome(c) == 0
    with mpmath.workdps(80):
        # Phi^-1(y) = sqrt(2) erfinv(2y - 1), so -2 Phi^-1((1 - f(0)) / 2) = 2 sqrt(2) erfinv(f(0))
        ref = 2 * mpmath.sqrt(2) * mpmath.erfinv(tv())
        enc = c["result"]["enclosure"]
        assert mpf(enc["lo"]) <= ref <= mpf(enc["hi"])
        forged = json.loads(json.dumps(c))
        forged["result"]["enclosure"]["hi"] = mpmath.nstr(ref * (1 - mpf("1e-6")), 20)
        forged["result"]["enclosure"]["lo"] = mpmath.nstr(ref * (1 - mpf("2e-6")), 20)
    assert outcome(reseal(forged)) != 0


def _mu_root(eps: mpf, delta: mpf) -> mpf:
    """mu_GDP at moderate eps by mpmath (unbounded exponents: e^eps Phi(-y) is formed as
    written), root of log delta_mu(eps) = log delta, 60 digits."""
    def g(m):
        return mpmath.log(mpmath.ncdf(-eps / m + m / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / m - m / 2))

    return mpmath.findroot(lambda m: g(m) - mpmath.log(delta), mpmath.sqrt(2 * eps))


@pytest.mark.parametrize("eps,delta", [("1e3000", "1e-3000"), ("1e3000", "0.5"), ("1e9", "1e-3000"),
                                       ("1e9", "1e-5")])
def test_gdp_mu_where_e_to_the_eps_leaves_the_exponent_range(eps, delta, capsys):
    """mu_GDP(eps, delta) at eps = 1e9 and 1e3000: e^eps is beyond MPFR's exponent range
    (2^(2^30)), so delta_mu's enclosure at the recorded ends was [0, 1] at every precision
    and verify answered exit 3 ("the target is within the second route's width"); it now
    compares log delta_mu, formed without e^eps. References: eps = 1e9, mpmath's root of
    log delta_mu = log delta at 60 digits. eps = 1e3000: with x = eps/mu - mu/2 and
    y = x + mu, delta_mu = Phi(-x) - phi(x) M(y) with 0 < phi(x) M(y) < phi(x) / y < 1e-1400,
    so Phi(-x) = delta up to 1e-1400: x in (0, 118) for these deltas (Phi(-118) < 1e-3000,
    Phi(0) = 1/2 > 0.5 - 1e-1400), and mu = sqrt(x^2 + 2 eps) - x is sqrt(2 eps) to relative
    1e-1400, far inside a 17-digit enclosure. A copy whose upper end is moved below the
    reference by a relative 1e-12 is refused."""
    c = _cert(capsys, ["gdp", "mu", "--eps", eps, "--delta", delta])
    assert outcome(c) == 0
    with mpmath.workdps(1600 if eps == "1e3000" else 60):
        ref = mpmath.sqrt(2 * mpf(eps)) if eps == "1e3000" else _mu_root(mpf(eps), mpf(delta))
        enc = c["result"]["enclosure"]
        assert mpf(enc["lo"]) <= ref <= mpf(enc["hi"])
        forged = json.loads(json.dumps(c))
        forged["result"]["enclosure"]["hi"] = mpmath.nstr(ref * (1 - mpf("1e-12")), 25)
        forged["result"]["enclosure"]["lo"] = mpmath.nstr(ref * (1 - mpf("2e-12")), 25)
    assert outcome(reseal(forged)) == 1


@pytest.mark.parametrize("sampling,eps,rel", [("shuffle", "-1e3000", "add-remove"),
                                              ("shuffle-persistent", "-2", "add")])
def test_shuffle_delta_at_a_negative_eps_is_refused_by_producer_and_verify(sampling, eps, rel, capsys, tmp_path):
    """eps >= 0 is the one range of ``audit dpsgd --eps`` (its help says so, the Poisson route refused
    less, the shuffled one answered: adv42). Both sides refuse it, exit 2: the producer names --eps,
    verify inputs.eps on a copy of a genuine shuffle.delta certificate resealed at that eps."""
    assert main(["audit", "dpsgd", "--noise-multiplier", "1.1", "--dataset-size", "1000", "--batch-size", "100",
                 "--epochs", "2", "--sampling", sampling, "--neighboring", rel, "--eps", eps]) == 2
    assert "--eps" in capsys.readouterr().err
    c = json.loads((Path(__file__).resolve().parents[1] / "certificate" / "format2" / "shuffle-delta.json").read_text())
    c["inputs"]["eps"] = eps
    assert outcome(reseal(c)) == 2


def test_poisson_audit_at_a_delta_below_the_smallest_double(capsys):
    """delta = 1e-320: the second route's per-step tail budget (1e-10 of delta per step) was
    converted to a float to choose the knot range, became 0.0 below 1e-308, and the range ran
    to its cap (exit 3, "spans more than 4194304 points"). Reference: one step of the
    Poisson-subsampled Gaussian (sigma 2, q 1/2); add is 0 beyond log(1/(1-q)) = log 2, and
    under remove the loss log(1 - q + q e^((2x - 1)/(2 sigma^2))) increases in x, so
    delta(eps) = P(x > x*) - e^eps Q(x > x*), x* = sigma^2 log((e^eps - 1 + q)/q) + 1/2,
    P = (1 - q) N(0, sigma^2) + q N(1, sigma^2), Q = N(0, sigma^2); its root at 1e-320 by
    mpmath at 400 digits."""
    c = _cert(capsys, ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.5", "--steps", "1",
                       "--delta", "1e-320", "--digits", "1"])
    assert outcome(c) == 0
    with mpmath.workdps(400):
        s, q, d = mpf(2), mpf("0.5"), mpf("1e-320")

        def tail(z):
            return mpmath.erfc(z / mpmath.sqrt(2)) / 2

        def delta(e):
            x = s * s * mpmath.log((mpmath.exp(e) - 1 + q) / q) + mpf(1) / 2
            return (1 - q) * tail(x / s) + q * tail((x - 1) / s) - mpmath.exp(e) * tail(x / s)

        ref = mpmath.findroot(lambda e: mpmath.log(delta(e)) - mpmath.log(d), 18.5)
        enc = c["result"]["enclosure"]
        assert mpf(enc["lo"]) <= ref <= mpf(enc["hi"])


def test_poisson_audit_at_delta_1e_1500_is_answered_before_the_work():
    """The certificate `audit dpsgd --noise-multiplier 1.1 --sampling-rate 0.01 --steps 10
    --delta 1e-1500 --digits 2` writes (34 s to produce) needs masses in units 2^-5344: 1146
    knots whose Phi each cost about 0.35 s at 5380 bits, far past verify's budget. It is
    answered exit 3 by the work cap before any knot is evaluated (the message names the cap),
    not after the whole budget. Its numbers are not re-proved here: the verdict is exit 3,
    never an accept."""
    from dpverify.certificate.prose import PLD_SOURCE
    from dpverify.errors import CouldNotReprove
    from dpverify.recheck.verify import verify_certificate

    from ..certs import reseal

    c = reseal({
        "format": "dpverify-certificate/2", "dpverify": "0.1.0",
        "claim": {"quantity": "pld.epsilon", "source": PLD_SOURCE,
                  "statement": "epsilon(delta) of the composed (Poisson-subsampled) mechanisms under the "
                               "add-remove relation lies in [lo, hi]"},
        "inputs": {"noise_multiplier": "1.1", "sampling_rate": "0.01", "steps": 10, "neighboring": "add-remove",
                   "delta": "1e-1500", "digits": 2},
        "result": {"quantity": "epsilon(delta=1e-1500)",
                   "enclosure": {"lo": "195.07077749534284", "hi": "195.20384764648668"},
                   "neighboring": "add-remove", "grid": "2^-4", "mass_unit": "2^-5026", "relative_width": "0.000682"},
        "method": {"backend": "python-flint 0.9.0 arb", "precision_bits": 5026, "algorithm": "pessimistic "
                   "connect-the-dots and optimistic quantised pairs on the grid 2^-4"},
        "digest": ""})
    with pytest.raises(CouldNotReprove, match="work cap"):
        verify_certificate(c, budget_seconds=120)


def test_naive_certify_of_a_pure_profile_past_its_support_verifies(tmp_path):
    """`gdp certify --mechanism approx --eps0 0.1 --delta0 0 --eps-h 3.33 --algorithm naive` records a
    breakpoint every 2e-4 of the head; past eps0 the profile is exactly 0, and each hinted cell there
    cost one unit of verify's cell budget until it ran out (exit 3 on a genuine certificate). The
    value: a pure eps0-DP profile is mu-GDP with mu = -2 Phi^-1(1 / (1 + e^eps0)) (GDPT Thm 5.1)."""
    import json

    import mpmath

    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    out = tmp_path / "c.json"
    assert main(["gdp", "certify", "--mechanism", "approx", "--eps0", "0.1", "--delta0", "0", "--eps-h", "3.33",
                 "--margin", "1e-3", "--algorithm", "naive", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert "confirmed" in verify_certificate(cert)
    with mpmath.workdps(40):
        mu = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(mpmath.mpf("0.1"))) - 1)
    enc = cert["result"]["enclosure"]
    assert mpmath.mpf(enc["lo"]) <= mu <= mpmath.mpf(enc["hi"])


@pytest.mark.parametrize("sigma", ["1e10", "1e15"])
def test_poisson_audit_at_a_noise_multiplier_past_a_c_long_squared(sigma, capsys):
    """sigma = 1e10 and more: the loss of one step is within about q / sigma^2 of 0, and eps(1e-5)
    of ten steps is exactly 0 (delta(0) = TV distance <= q erf(1 / (2 sqrt2 sigma)) < 1e-11 < 1e-5
    for q = 0.01). The re-check's Gaussian tail Phi(-t) at t near sigma formed 2^-(0.7213 t^2)
    with an exponent past a C long and raised OverflowError (exit 3, adv41 N1)."""
    c = _cert(capsys, ["audit", "dpsgd", "--noise-multiplier", sigma, "--sampling-rate", "0.01", "--steps", "10",
                       "--delta", "1e-5"])
    assert c["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert outcome(c) == 0


@pytest.mark.parametrize("sigma", ["1e101", "1e900"])
def test_a_noise_multiplier_past_the_producers_range_is_malformed(sigma, capsys):
    """The producer refuses a noise multiplier above limits.MAX_NOISE_MULTIPLIER = 1e100 (exit 2),
    so a certificate carrying one is no certificate it wrote: verify answers exit 2 too, before any
    work (it was exit 3 on an OverflowError, adv41 N1)."""
    c = _cert(capsys, ["audit", "dpsgd", "--noise-multiplier", "1e100", "--sampling-rate", "0.01", "--steps", "10",
                       "--delta", "1e-5"])
    c["inputs"]["noise_multiplier"] = sigma
    assert outcome(reseal(c)) == 2

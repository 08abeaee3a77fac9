"""One Poisson-subsampled Gaussian step (T = 1): the PLD re-check answers in closed form.

The step's pair (noise multiplier z, sensitivity 1, rate q): remove P = (1 - q) N(0, z^2) + q N(1, z^2)
against Q = N(0, z^2), add the two swapped. The re-check (recheck.poisson_step) reads delta(eps) as the
Gaussian curve at a transformed eps in MPFR directed rounding; before it, verify discretised the step
on a grid whose tails its meter underpriced (adv54 M2: z = 0.15, q = 0.01, eps(1e-5) to 8 digits took
38.6 CPU s, and on this branch 128 CPU s and exit 3).

The references here are independent of that algebra: delta(eps) = int (p - e^eps q)_+ dx by mpmath
quadrature of the two densities on the half line past the loss's crossing point (a bisection on the
loss log(p / q), in mpmath at 60 digits), and, far in the tail where the quadrature loses digits, the
same half line's normal tails P(half line) - e^eps Q(half line) by mpmath's ncdf at 300 digits.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import pld as P
from dpverify.recheck.core import arith, mpfr_to_mpf
from dpverify.recheck.poisson_step import one_poisson_step, poisson_delta_iv

from ..certs import outcome, reseal


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _crossing(z: mpmath.mpf, q: mpmath.mpf, d: str, eps: mpmath.mpf) -> mpmath.mpf:
    """The x where the loss log(p / q)(x) = eps: the remove loss is log(1 - q + q e^((2x - 1) / (2 z^2))),
    increasing in x; the add loss is its negative. Bisection at the working precision."""
    def loss(x):
        r = mpmath.log1p(q * mpmath.expm1((2 * x - 1) / (2 * z * z)))
        return r if d == "remove" else -r

    a, b = mpmath.mpf(-10**6), mpmath.mpf(10**6)
    for _ in range(mpmath.mp.prec + 30):
        c = (a + b) / 2
        if (loss(c) > eps) == (d == "remove"):
            b = c
        else:
            a = c
    return (a + b) / 2


def _quad_delta(z: Fraction, q: Fraction, d: str, eps: Fraction) -> mpmath.mpf:
    """int (p - e^eps q)_+ dx by mpmath quadrature at 60 digits, on {L > eps}: x above the crossing
    (remove) or below it (add); 0 where the add loss never exceeds eps (eps >= -log(1 - q))."""
    with mpmath.workdps(60):
        Z, R, E = _mp(z), _mp(q), _mp(eps)
        if d == "add" and E >= -mpmath.log(1 - R):
            return mpmath.mpf(0)
        x = _crossing(Z, R, d, E)
        n0 = lambda t: mpmath.npdf(t, 0, Z)  # noqa: E731
        mix = lambda t: (1 - R) * n0(t) + R * mpmath.npdf(t, 1, Z)  # noqa: E731
        p, qq = (mix, n0) if d == "remove" else (n0, mix)
        s = Z * Z / max(abs(x), 1)  # the integrand's scale past the crossing
        pts = [x + k * s for k in (0, mpmath.mpf("0.01"), mpmath.mpf("0.1"), 1, 3, 10, 30)]
        f = lambda t: p(t) - mpmath.exp(E) * qq(t)  # noqa: E731
        if d == "remove":
            return mpmath.quad(f, pts + [mpmath.inf])
        return mpmath.quad(f, [-mpmath.inf] + [2 * x - t for t in reversed(pts)])


def _tails_delta(z: Fraction, q: Fraction, d: str, eps: Fraction, dps: int = 300) -> mpmath.mpf:
    """P(half line) - e^eps Q(half line) by mpmath's ncdf at ``dps`` digits, the half line from
    :func:`_crossing` (the mixture's tails term by term; no transformed eps)."""
    with mpmath.workdps(dps):
        Z, R, E = _mp(z), _mp(q), _mp(eps)
        x = _crossing(Z, R, d, E)
        if d == "remove":
            Q = mpmath.ncdf(-x / Z)
            Pm = (1 - R) * Q + R * mpmath.ncdf((1 - x) / Z)
        else:
            Pm = mpmath.ncdf(x / Z)
            Q = (1 - R) * Pm + R * mpmath.ncdf((x - 1) / Z)
        return Pm - mpmath.exp(E) * Q


CASES = [  # (z, q, eps): both directions each
    (Fraction(15, 100), Fraction(1, 100), Fraction(0)),
    (Fraction(15, 100), Fraction(1, 100), Fraction(1, 10**12)),
    (Fraction(15, 100), Fraction(1, 100), Fraction(1, 200)),  # the add loss's bound is 0.01005
    (Fraction(15, 100), Fraction(1, 100), Fraction(1)),
    (Fraction(15, 100), Fraction(1, 100), Fraction(37)),  # delta about 1.2e-5 (the certificate below)
    (Fraction(1, 5), Fraction(1, 256), Fraction(20)),
    (Fraction(1, 2), Fraction(1, 100), Fraction(3)),
    (Fraction(2), Fraction(1, 3), Fraction(1, 10)),
    (Fraction(10), Fraction(1, 1000), Fraction(1, 10**9)),
]


@pytest.mark.parametrize("z,q,eps", CASES)
@pytest.mark.parametrize("d", ["remove", "add"])
def test_delta_encloses_the_quadrature_of_the_loss(z, q, eps, d) -> None:
    """The closed form's enclosure at 320 bits holds the quadrature's value up to the quadrature's own
    accuracy (1e-45 relative) and is narrower than 1e-90 relative; where the add loss never exceeds eps
    it is [0, 0] exactly."""
    lo, hi = poisson_delta_iv(arith(320), 1 / z, q, d, eps)
    ref = _quad_delta(z, q, d, eps)
    with mpmath.workdps(60):
        L, H = mpfr_to_mpf(lo), mpfr_to_mpf(hi)
        if ref == 0:
            assert L == H == 0
            return
        assert L - ref * mpmath.mpf(10) ** -45 <= ref <= H + ref * mpmath.mpf(10) ** -45
        assert H - L <= ref * mpmath.mpf(10) ** -90


@pytest.mark.parametrize("z,q,d,eps", [
    (Fraction(15, 100), Fraction(1, 100), "remove", Fraction(500)),  # delta about 1e-1900
    (Fraction(10), Fraction(1, 1000), "remove", Fraction(37)),  # about 1e-41864
    (Fraction(2), Fraction(1, 3), "remove", Fraction(5)),
    (Fraction(1, 2), Fraction(1, 3), "add", Fraction(2, 5)),  # just below the add loss's bound 0.405
])
def test_delta_far_in_the_tail_encloses_the_normal_tails(z, q, d, eps) -> None:
    """Far in the tail (the quadrature loses digits there) the enclosure holds the half line's normal
    tails at 300 digits, and stays narrow (1e-85 relative)."""
    lo, hi = poisson_delta_iv(arith(320), 1 / z, q, d, eps)
    ref = _tails_delta(z, q, d, eps)
    with mpmath.workdps(300):
        L, H = mpfr_to_mpf(lo), mpfr_to_mpf(hi)
        assert ref > 0 and L <= ref <= H
        assert H - L <= ref * mpmath.mpf(10) ** -85


@pytest.mark.parametrize("z,q,delta", [(Fraction(15, 100), Fraction(1, 100), Fraction(1, 10**5)),
                                       (Fraction(1, 5), Fraction(1, 100), Fraction(1, 10**5)),
                                       (Fraction(1, 2), Fraction(1, 100), Fraction(1, 10**5)),
                                       (Fraction(2), Fraction(1, 3), Fraction(1, 10**9)),
                                       (Fraction(1, 2), Fraction(1, 256), Fraction(1, 10**3))])
@pytest.mark.parametrize("dirs", [["remove"], ["add"], ["remove", "add"]])
def test_eps_brackets_the_root_of_the_quadrature(z, q, delta, dirs) -> None:
    """eps(delta), the larger over the directions: the quadrature's delta a hair (1e-40 relative) below
    the lower end is above delta in the direction that attains it, and a hair above the upper end is
    below delta in every direction; the enclosure is narrower than 1e-90 relative."""
    with mpmath.workdps(40):
        lo, hi = P.poisson_step_bounds([("gaussian", z, q, 1)], dirs, "eps", _mp(delta), delta)
    with mpmath.workdps(60):
        assert 0 < lo <= hi and hi - lo <= hi * mpmath.mpf(10) ** -90
        below = mpmath.mpf(lo) * (1 - mpmath.mpf(10) ** -40)
        above = mpmath.mpf(hi) * (1 + mpmath.mpf(10) ** -40)
    from dpverify.recheck.core import mpf_to_fraction

    with mpmath.workdps(60):
        D = _mp(delta)
    assert max(_quad_delta(z, q, d, mpf_to_fraction(below)) for d in dirs) > D
    assert all(_quad_delta(z, q, d, mpf_to_fraction(above)) < D for d in dirs)


def test_eps_is_zero_where_delta_at_zero_is_below_delta() -> None:
    """delta(0) = q (2 Phi(1 / (2 z)) - 1) in both directions (the total variation): 0.0068 at z = 0.5,
    q = 0.01, so eps(0.01) = 0 exactly."""
    lo, hi = P.poisson_step_bounds([("gaussian", Fraction(1, 2), Fraction(1, 100), 1)], ["remove", "add"], "eps",
                                   mpmath.mpf("0.01"), Fraction(1, 100))
    assert lo == hi == 0


def test_add_alone_past_its_loss_bound_is_zero_exactly() -> None:
    """The add loss is at most -log(1 - q) (0.01005 at q = 0.01): delta(eps) = 0 at eps = 0.02."""
    assert P.poisson_step_bounds([("gaussian", Fraction(1, 2), Fraction(1, 100), 1)], ["add"], "delta",
                                 mpmath.mpf("0.02"), Fraction(1, 50)) == (0, 0)


@pytest.mark.parametrize("leaves,dirs", [
    ([("gaussian", Fraction(1, 2), Fraction(1, 100), 2)], ["remove", "add"]),  # T = 2
    ([("gaussian", Fraction(1, 2), Fraction(1), 1)], ["remove", "add"]),  # rate 1: gaussian_bounds'
    ([("laplace", Fraction(1, 2), Fraction(1), 1)], ["remove", "add"]),
    ([("gaussian", Fraction(1, 2), Fraction(1, 100), 1), ("gaussian", Fraction(1), Fraction(1, 10), 1)], ["add"]),
    ([("gaussian", Fraction(1, 2), Fraction(1, 100), 1)], ["replace"]),
    (None, ["add"]),
])
def test_anything_but_one_poisson_gaussian_step_steps_aside(leaves, dirs) -> None:
    assert one_poisson_step(leaves, dirs) is None
    assert P.poisson_step_bounds(leaves, dirs, "delta", mpmath.mpf(1), Fraction(1)) is None


def _cert(capsys, *args) -> dict:
    from dpverify.cli import main

    assert main(["audit", "dpsgd", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _moved(cert: dict, lo: Fraction, hi: Fraction) -> dict:
    forged = json.loads(json.dumps(cert))
    forged["result"]["enclosure"] = {"lo": repr(float(lo)), "hi": repr(float(hi))}
    return reseal(forged)


@pytest.mark.parametrize("sigma", ["0.15", "0.2", "0.5"])
def test_one_step_certificates_verify_and_forgeries_are_refused(sigma, capsys) -> None:
    """The adv54 M2 certificates (T = 1, q = 0.01, eps(1e-5) to 8 digits; verify took 38.6, 23 and 12.6
    CPU s, and 128 (exit 3), 58 and 5.8 on this branch before) are confirmed without a grid. The
    enclosure moved off by its width and 1e-9 relative more either way, and either end narrowed
    1e-12 relative past the truth are refused, exit 1: the closed form's enclosure is 1e-90 wide."""
    cert = _cert(capsys, "--noise-multiplier", sigma, "--sampling-rate", "0.01", "--steps", "1", "--delta", "1e-5",
                 "--digits", "8")
    assert outcome(cert) == 0
    enc = cert["result"]["enclosure"]
    lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
    with mpmath.workdps(40):
        t_lo, t_hi = P.poisson_step_bounds([("gaussian", Fraction(sigma), Fraction(1, 100), 1)], ["remove", "add"],
                                           "eps", mpmath.mpf("1e-5"), Fraction(1, 10**5))
    truth = Fraction(mpmath.nstr(t_lo, 30))
    assert lo <= truth <= hi
    shift = hi - lo + lo / 10**9  # its width and 1e-9 relative more: off the truth
    for a, b in ((lo + shift, hi + shift), (lo - shift, hi - shift),
                 (lo, truth * (1 - Fraction(1, 10**12))), (truth * (1 + Fraction(1, 10**12)), hi)):
        assert outcome(_moved(cert, a, b)) == 1, (sigma, a, b)


def test_delta_and_claim_certificates_of_one_step(capsys) -> None:
    """delta(1) to 8 digits and a claim that holds (z = 0.5, q = 0.01) are confirmed, by the closed form
    (the route's bounds at the 8-bit grid are 1e-90 wide); the delta enclosure moved off the truth and the
    claim's verdict forged to 'fails' are refused, exit 1. (At z = 0.15 the producer took 13-15 CPU s by its grid before its own closed form, about 1 s now,
    for these; verify took 2 CPU s and exit 3 on delta(1), 73 CPU s and exit 3 on the claim at 37.4.)"""
    args = ["--noise-multiplier", "0.5", "--sampling-rate", "0.01", "--steps", "1"]
    cert = _cert(capsys, *args, "--eps", "1", "--digits", "8")
    assert outcome(cert) == 0
    with mpmath.workdps(40):
        lo, hi = P._bounds(cert["inputs"], "delta", mpmath.mpf(1), mpmath.mpf(1), mpmath.mpf(1), 8)
        assert 0 < lo <= hi <= lo * (1 + mpmath.mpf(10) ** -90)
    enc = cert["result"]["enclosure"]
    a, b = Fraction(enc["lo"]), Fraction(enc["hi"])
    assert outcome(_moved(cert, b + a / 10**9, b + (b - a) + a / 10**9)) == 1
    claim = _cert(capsys, *args, "--delta", "1e-5", "--claimed-eps", "3.1")
    assert claim["result"]["verdict"] == "holds" and outcome(claim) == 0
    forged = json.loads(json.dumps(claim))
    forged["result"]["verdict"] = "fails"
    assert outcome(reseal(forged)) == 1


def test_an_event_tree_of_one_step_is_answered_in_closed_form() -> None:
    """events.* reads the same closed form: a Poisson-sampled Gaussian under add-remove and
    replace-special, and a mixture of Gaussians that is one (weights 0.99 at 0, 0.01 at 1 / 0.2), agree
    with the schedule's answer to 1e-90."""
    from dpverify.recheck import events as EV

    with mpmath.workdps(40):
        want = P.poisson_step_bounds([("gaussian", Fraction(1, 5), Fraction(1, 100), 1)], ["remove", "add"], "eps",
                                     mpmath.mpf("1e-6"), Fraction(1, 10**6))
        trees = [
            ("add-remove", {"type": "poisson_sampled", "sampling_probability": "0.01",
                            "event": {"type": "gaussian", "noise_multiplier": "0.2"}}),
            ("replace-special", {"type": "poisson_sampled", "sampling_probability": "0.01",
                                 "event": {"type": "gaussian", "noise_multiplier": "0.2"}}),
            ("add-remove", {"type": "mixture_of_gaussians", "standard_deviation": "0.2", "sensitivities": ["0", "1"],
                            "sampling_probs": ["0.99", "0.01"]}),
        ]
        for rel, ev in trees:
            inputs = {"neighboring": rel, "event": ev, "delta": "1e-6"}
            got = EV._bounds(inputs, "eps", mpmath.mpf("1e-6"), mpmath.mpf("1e-6"), mpmath.mpf(0))
            assert abs(got[0] - want[0]) <= want[0] * mpmath.mpf(10) ** -90, rel
            assert abs(got[1] - want[1]) <= want[1] * mpmath.mpf(10) ** -90, rel


def test_explain_lists_the_closed_form_as_a_proof() -> None:
    """``verify --explain`` (recheck.kinds.STEPS) names this route, a proof on the accept path, for every
    kind whose re-check reaches it (pld.*, events.*, replace.*), and not for calibrate.bracket (its
    templates do not)."""
    from dpverify.recheck.kinds import PROOF, STEPS

    def has(kind: str) -> bool:
        return any("recheck.poisson_step" in what and how == PROOF and on for what, how, on in STEPS[kind])

    for k in ("pld.epsilon", "pld.delta", "pld.claim", "events.epsilon", "events.delta", "events.claim",
              "replace.epsilon", "replace.delta", "replace.claim"):
        assert has(k), k
    assert not has("calibrate.bracket")


@pytest.mark.parametrize("d,eps", [("remove", Fraction(3)), ("remove", Fraction(1, 200)), ("add", Fraction(1, 200))])
def test_the_grid_route_encloses_the_closed_form(d, eps) -> None:
    """The grid route this closed form replaces at T = 1 (the step's interval tails discretised on
    2^-10, recheck.pld.direction_bounds, no closed form) is a second independent enclosure: it holds
    the closed form's (z = 0.5, q = 0.01; its width there is 1e-10 to 1e-4 relative)."""
    inputs = {"noise_multiplier": "0.5", "sampling_rate": "0.01", "steps": 1, "neighboring": "add-remove"}
    with mpmath.workdps(40):
        E = _mp(eps)
        K, tau, budget = P._units(mpmath.mpf("1e-5"), E, 1)
        lo, hi = P.direction_bounds([(mk, t) for mk, t, _ in P._events(inputs)], d, "delta", E, eps, K, tau,
                                    budget, 10, "both")
        a, b = P.poisson_step_bounds([("gaussian", Fraction(1, 2), Fraction(1, 100), 1)], [d], "delta", E, eps)
        assert lo <= a <= b <= hi and hi - lo <= hi * mpmath.mpf(10) ** -3


#: adv56 M1: q = 1 - 1e-100 (0. and 100 nines), z = 0.1, add, eps(1e-300) = 230.2585...: the add
#: direction's w = 1 + expm1(-eps) / q cancelled 1 - q against 1 and straddled 0 at every eps at 320
#: bits, so no root was proved and verify fell to the grid (exit 3 after 33-89 CPU s)
_Q_NEAR_1 = 1 - Fraction(1, 10**100)


def test_eps_of_an_add_step_at_q_near_1_is_proved_at_320_bits() -> None:
    """The root is proved at the first precision, 2^-300 wide, and brackets the root of the half line's
    normal tails (mpmath at 700 digits, which resolve delta 1e-300 under the 1e-98 tail masses)."""
    from dpverify.recheck.poisson_step import poisson_step_at

    z, delta = Fraction(1, 10), Fraction(1, 10**300)
    r = poisson_step_at(arith(320), z, _Q_NEAR_1, ["add"], "eps", (delta, delta))
    assert r is not None and 0 < r[1] - r[0] <= r[1] / 2**290
    with mpmath.workdps(700):
        assert _tails_delta(z, _Q_NEAR_1, "add", r[0], 700) > _mp(delta) > _tails_delta(z, _Q_NEAR_1, "add", r[1], 700)


def _decimal(x: Fraction, digits: int = 50) -> str:
    with mpmath.workdps(60):
        return mpmath.nstr(_mp(x), digits)


def _narrowed(cert: dict, lo: Fraction, hi: Fraction) -> dict:
    forged = json.loads(json.dumps(cert))
    forged["result"]["enclosure"] = {"lo": _decimal(lo), "hi": _decimal(hi)}
    return reseal(forged)


@pytest.mark.parametrize("rel", ["add", "add-remove"])
def test_step_at_q_near_1_certificates_verify_and_forgeries_are_refused(rel, capsys) -> None:
    """adv56 M1: eps(1e-300) to 4 digits at q = 1 - 1e-100 (add [230.2578, 230.2598], add-remove
    [420.052, 420.054]) is confirmed (exit 3 before); either end narrowed 1e-35 relative past the
    truth is refused, exit 1 (the closed form's enclosure is 1e-90 wide)."""
    cert = _cert(capsys, "--noise-multiplier", "0.1", "--sampling-rate", "0." + "9" * 100, "--steps", "1", "--neighboring", rel, "--delta", "1e-300", "--digits", "4")
    assert outcome(cert) == 0
    enc = cert["result"]["enclosure"]
    lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
    with mpmath.workdps(60):
        t_lo, _ = P.poisson_step_bounds([("gaussian", Fraction(1, 10), _Q_NEAR_1, 1)], P._directions(cert["inputs"]),
                                        "eps", mpmath.mpf("1e-300"), Fraction(1, 10**300))
    truth = Fraction(mpmath.nstr(t_lo, 50))
    assert lo <= truth <= hi
    off = truth / 10**35
    for a, b in ((lo, truth - off), (truth + off, hi)):
        assert outcome(_narrowed(cert, a, b)) == 1, (rel, a, b)


@pytest.mark.parametrize("sigma,q,rel,eps", [
    ("1e64", "0.5", "add-remove", "1e-70"),
    ("0.01", "0.5", "add", "0.6931471805599453094172321214581765680755001343602552541206800094"),
    ("1e64", "1", "add-remove", "1e-70"),  # rate 1: the Gaussian closed form (gaussian_bounds)
])
def test_claims_recorded_past_30_digits_verify_and_moved_ones_are_refused(sigma, q, rel, eps, capsys) -> None:
    """adv56 M2: a claim decided at 30 digits records its delta to about 37 (relative width 1e-37); the
    closed forms stopped at their first precision narrower than 2^-100 (3e-32 wide at sigma 1e64, eps
    1e-70, where delta(eps) cancels some 200 bits), which could not fit inside: exit 3. They now refine
    toward a sixteenth of the recorded width. A claim that holds and one that fails (delta 1e-31 relative
    above and below the truth) are confirmed; the enclosure moved 1e-35 relative either way is refused,
    exit 1."""
    from dpverify.cli import main

    args = ["audit", "dpsgd", "--noise-multiplier", sigma, "--sampling-rate", q, "--steps", "1",
            "--neighboring", rel, "--claimed-eps", eps, "--json"]
    inputs = {"noise_multiplier": sigma, "sampling_rate": q, "steps": 1, "neighboring": rel, "claimed_eps": eps}
    token = P._CLOSED_NEED.set(mpmath.mpf(0))  # as a zero recorded width asks: refined to 1280 bits
    try:
        with mpmath.workdps(60):
            E = P.fraction_to_mpf(Fraction(eps))
            t_lo, t_hi = P._bounds(inputs, "delta", E, mpmath.mpf(1), E, 8)
    finally:
        P._CLOSED_NEED.reset(token)
    with mpmath.workdps(60):
        assert 0 < t_hi - t_lo <= t_lo / 10**45
        truth = Fraction(mpmath.nstr(t_lo, 50))
    for delta, verdict in ((truth * (1 + Fraction(1, 10**31)), "holds"), (truth * (1 - Fraction(1, 10**31)), "fails")):
        assert main([*args, "--delta", _decimal(delta, 33)]) == (0 if verdict == "holds" else 1)
        cert = json.loads(capsys.readouterr().out)
        assert cert["result"]["verdict"] == verdict and outcome(cert) == 0, verdict
        enc = cert["result"]["enclosure"]
        lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
        assert lo <= truth <= hi and hi - lo <= hi / 10**35
        off = lo / 10**35
        for a, b in ((lo + off, hi + off), (lo - off, hi - off)):
            assert outcome(_narrowed(cert, a, b)) == 1, (verdict, a, b)


def _tiny_mu_delta(q: mpmath.mpf, mu: mpmath.mpf, d: str, eps: mpmath.mpf) -> mpmath.mpf:
    """delta(eps) of one step of shift mu (noise multiplier 1 / mu) at rate q, in units of the noise, from
    the two densities directly: the remove loss log(1 - q + q e^(mu x - mu^2 / 2)) crosses eps at
    x = (log((e^eps - 1 + q) / q) + mu^2 / 2) / mu and the set {L > eps} is x above it, the add loss (its
    negative) at e^-eps in place of e^eps with x below it; P(set) - e^eps Q(set) by mpmath's ncdf. At
    q = 1 this is the Gaussian mechanism's delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    e = mpmath.exp(eps)
    if d == "remove":
        x = (mpmath.log((e - 1 + q) / q) + mu * mu / 2) / mu
        return (1 - q) * mpmath.ncdf(-x) + q * mpmath.ncdf(mu - x) - e * mpmath.ncdf(-x)
    w = (1 / e - 1 + q) / q
    if not w > 0:
        return mpmath.mpf(0)
    x = (mpmath.log(w) + mu * mu / 2) / mu
    return mpmath.ncdf(x) - e * ((1 - q) * mpmath.ncdf(x) + q * mpmath.ncdf(x - mu))


@pytest.mark.parametrize("q", ["0.5", "0.999", "1"])
def test_tiny_mu_certificates_verify_and_moved_ones_are_refused(q, capsys) -> None:
    """adv57 M1: at noise multiplier 1e100 (mu = 1e-100) delta_mu cancels about 340 bits, the proposals saw 0
    at 64 bits and the proofs bisected 600 steps at 1280 bits (verify 40-80 CPU s, exit 3 under load). eps(1e-150)
    to 8 digits, add-remove, is confirmed, and the enclosure moved off by its width and 1e-12 relative more either
    way is refused;
    the truth is the larger of the two directions' roots of :func:`_tiny_mu_delta`, bisected at 500 digits."""
    cert = _cert(capsys, "--noise-multiplier", "1e100", "--sampling-rate", q, "--steps", "1", "--delta", "1e-150",
                 "--digits", "8")
    assert outcome(cert) == 0
    enc = cert["result"]["enclosure"]
    lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
    with mpmath.workdps(500):
        Q, mu, delta = mpmath.mpf(Fraction(q).numerator) / Fraction(q).denominator, mpmath.mpf(10) ** -100, mpmath.mpf(10) ** -150
        roots = []
        for d in ("remove", "add"):
            a, b = mpmath.mpf(0), mpmath.mpf(10) ** -97
            assert _tiny_mu_delta(Q, mu, d, b) < delta
            for _ in range(120):
                c = (a + b) / 2
                a, b = (c, b) if _tiny_mu_delta(Q, mu, d, c) > delta else (a, c)
            roots.append(a)
        truth = Fraction(mpmath.nstr(max(roots), 40))
    assert lo <= truth <= hi
    shift = hi - lo + truth / 10**12  # its width and 1e-12 relative more: off the truth either way
    for a, b in ((lo + shift, hi + shift), (lo - shift, hi - shift)):
        assert outcome(_narrowed(cert, a, b)) == 1, (q, a, b)

"""Schedules of Gaussian steps at sampling rate 1: the PLD re-check answers in closed form.

T Gaussian steps of noise multiplier sigma_i compose to one Gaussian pair of shift
mu = sqrt(sum T_i c^2 / sigma_i^2) (c = 1 under add or remove, 2 under replace-one), whose curve
is delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). The grid route could not resolve
it at large T: sigma 1000, T = 10^6, delta(1) to 6 digits (mu = 1) held verify for its 300 s budget
and answered exit 3 on a genuine certificate. The references here are mpmath at 130 digits (no
directed rounding, a different evaluation of Phi and a root finder of its own).
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import gdp as G
from dpverify.recheck import pld as P
from dpverify.recheck.core import arith

from ..certs import outcome, reseal
from ..reference import gaussian_eps


def _ref_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


CASES = [  # (shifts [(1/sigma, T)], direction, eps)
    ([(Fraction(1, 1000), 10**6)], "add", Fraction(1)),  # mu = 1
    ([(Fraction(1, 1000), 10**6)], "replace", Fraction(1)),  # mu = 2
    ([(Fraction(10, 11), 3), (Fraction(1, 4), 17)], "remove", Fraction(3, 2)),  # mu^2 = 300/121 + 17/16
    ([(Fraction(1, 7), 1)], "add", Fraction(-1, 2)),
    ([(Fraction(1, 3), 2000)], "add", Fraction(40)),  # delta about 1e-8
]


@pytest.mark.parametrize("shifts,d,eps", CASES)
def test_closed_delta_encloses_mpmath(shifts, d, eps) -> None:
    c = 2 if d == "replace" else 1
    mu2 = sum(t * (c * g) ** 2 for g, t in shifts)
    with mpmath.workdps(130):
        ref = _ref_delta(mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator),
                         mpmath.mpf(eps.numerator) / eps.denominator)
    with mpmath.workdps(40):
        lo, hi = P.gaussian_bounds(shifts, d, "delta", mpmath.mpf(eps.numerator) / eps.denominator, eps)
    with mpmath.workdps(130):
        assert lo <= ref <= hi
        assert hi - lo <= ref * mpmath.mpf(10) ** -30


@pytest.mark.parametrize("delta", [Fraction(1, 10**5), Fraction(1, 10**12), Fraction(1, 3)])
def test_closed_eps_encloses_mpmath_root(delta: Fraction) -> None:
    shifts = [(Fraction(1, 1000), 10**6), (Fraction(1, 2), 1)]  # mu^2 = 1 + 1/4
    with mpmath.workdps(130):
        mu = mpmath.sqrt(mpmath.mpf(5) / 4)
        D = mpmath.mpf(delta.numerator) / delta.denominator
        a, b = mpmath.mpf(0), mpmath.mpf(50)  # delta_mu decreases in eps: bisection
        for _ in range(460):
            c = (a + b) / 2
            a, b = (c, b) if _ref_delta(mu, c) > D else (a, c)
        ref = a
    with mpmath.workdps(40):
        lo, hi = P.gaussian_bounds(shifts, "add", "eps", D, delta)
    with mpmath.workdps(130):
        assert lo <= ref <= hi
        assert hi - lo <= ref * mpmath.mpf(10) ** -30


def _ref_eps(mu2: Fraction, delta: Fraction) -> mpmath.mpf:
    return gaussian_eps(mu2, delta)


@pytest.mark.parametrize("mu2,delta", [(Fraction(25), Fraction(1, 10**5)), (Fraction(1, 10**4), Fraction(1, 10**3)),
                                       (Fraction(1), Fraction(1, 10**300)), (Fraction(400), Fraction(1, 10**12)),
                                       (Fraction(5, 4), Fraction(1, 3))])
@pytest.mark.parametrize("proposal", ["mpmath", "off", "none"])
def test_closed_eps_takes_the_proposal_only_where_it_is_proved(mu2, delta, proposal, monkeypatch) -> None:
    """The mpmath root is only a proposal: with it, the enclosure is as narrow as the bisection's
    (relative 2^-254 at 320 bits) after two proofs; a wrong proposal (10^-20 off) or none leaves the
    bisection to get there, and the enclosure holds mpmath's root whatever was proposed."""
    right = G._propose_eps
    if proposal == "off":
        monkeypatch.setattr(G, "_propose_eps", lambda *a: right(*a) * (1 + Fraction(1, 10**20)))
    elif proposal == "none":
        monkeypatch.setattr(G, "_propose_eps", lambda *a: None)
    a, b = G.composed_gaussian_eps_iv(arith(320), mu2, (delta, delta))
    ref = _ref_eps(mu2, delta)
    with mpmath.workdps(130):
        assert mpmath.mpf(a.numerator) / a.denominator <= ref <= mpmath.mpf(b.numerator) / b.denominator
    assert 0 < b - a <= b * Fraction(1, 1 << 254)


def _ref_delta_mills(mu2: Fraction, eps: Fraction) -> mpmath.mpf:
    """delta_mu(eps) at 130 digits with e^eps Phi(-y) = phi(x) M(y), x = eps/mu - mu/2, y = eps/mu + mu/2,
    and the Mills ratio from mpmath's confluent hypergeometric U: erfc(z) = e^(-z^2) U(1/2, 1/2, z^2) /
    sqrt(pi) gives M(y) = U(1/2, 1/2, y^2 / 2) / sqrt(2) (DLMF 7.11.4 / 13.6.7); a route that forms
    neither e^eps nor the code's series, for eps near 5e24 where mpmath's exp(eps) would abort."""
    with mpmath.workdps(130):
        mu = mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator)
        e = mpmath.mpf(eps.numerator) / eps.denominator
        x, y = e / mu - mu / 2, e / mu + mu / 2
        return mpmath.ncdf(-x) - mpmath.npdf(x) * mpmath.hyperu(0.5, 0.5, y * y / 2) / mpmath.sqrt(2)


@pytest.mark.parametrize("mu2,delta", [(Fraction(10**25), Fraction(999, 1000)), (Fraction(10**25), Fraction(1, 10**5)),
                                       (Fraction(4 * 10**18), Fraction(1, 10**300)), (Fraction(25), Fraction(1, 10**5))])
def test_closed_eps_is_two_proofs_when_the_proposal_is_right(mu2, delta, monkeypatch) -> None:
    """Where the proposal is right, the first pair x (1 -+ 2^-(prec - 15)) is proved and nothing else
    runs: two evaluations instead of the doubling to 2^83 and a 300-step bisection (621 evaluations at
    mu^2 = 1e25, the rate-1 certificate of noise multiplier 1e-12). The enclosure holds the root by an
    independent route (the Mills ratio from mpmath's hyperu, no exp(eps)) and is as narrow as the
    bisection's."""
    calls = []
    right = G.composed_gaussian_delta_iv
    monkeypatch.setattr(G, "composed_gaussian_delta_iv", lambda *a: calls.append(a[2]) or right(*a))
    a, b = G.composed_gaussian_eps_iv(arith(320), mu2, (delta, delta))
    assert len(calls) == 3  # eps = 0, then the pair
    with mpmath.workdps(130):
        assert _ref_delta_mills(mu2, a) > mpmath.mpf(delta.numerator) / delta.denominator
        assert _ref_delta_mills(mu2, b) < mpmath.mpf(delta.numerator) / delta.denominator
    assert 0 < b - a <= b * Fraction(1, 1 << 304)


def test_eps_is_zero_when_delta_reaches_delta_at_zero() -> None:
    """delta_mu(0) = 2 Phi(mu/2) - 1 (about 0.0399 at mu = 0.1): at delta 0.05 eps(delta) = 0."""
    lo, hi = P.gaussian_bounds([(Fraction(1, 10), 1)], "add", "eps", mpmath.mpf("0.05"), Fraction(1, 20))
    assert lo == hi == 0


def test_sqrt_bracket_and_a_step_not_at_rate_one() -> None:
    lo, hi = G.sqrt_bracket(Fraction(2), 100)
    assert lo * lo <= 2 <= hi * hi and hi - lo <= Fraction(1, 2**100)
    assert P.gaussian_bounds([(None, 10)], "add", "delta", mpmath.mpf(1), Fraction(1)) is None
    # an underflowing enclosure is left to the grid route (not narrow)
    A = arith(64)
    assert G.composed_gaussian_delta_iv(A, Fraction(1), (Fraction(10**9), Fraction(10**9)))[0] == 0


def _cert(capsys, *args):
    from dpverify.cli import main

    assert main(["audit", "dpsgd", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_rate_one_certificates_are_confirmed_and_a_moved_end_is_refused(capsys) -> None:
    """A genuine rate-1 certificate of each query is confirmed; each end moved by 1e-12 relative
    (past the truth) is refused, exit 1, by the closed form's 1e-30 enclosure."""
    for args in (["--noise-multiplier", "10", "--sampling-rate", "1", "--steps", "100", "--eps", "1/2"],
                 ["--noise-multiplier", "3", "--sampling-rate", "1", "--steps", "50", "--delta", "1e-6"],
                 ["--noise-multiplier", "5", "--sampling-rate", "1", "--steps", "100", "--neighboring",
                  "replace-one", "--delta", "1e-5"]):
        cert = _cert(capsys, *args)
        assert outcome(cert) == 0
        enc = cert["result"]["enclosure"]
        lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
        above = (hi * (1 + Fraction(1, 10**12)), hi * (1 + Fraction(2, 10**12)))  # past the truth
        below = (lo * (1 - Fraction(2, 10**12)), lo * (1 - Fraction(1, 10**12)))
        for a, b in (above, below):
            forged = json.loads(json.dumps(cert))
            forged["result"]["enclosure"] = {"lo": repr(float(a)), "hi": repr(float(b))}
            assert outcome(reseal(forged)) == 1, (args, a, b)


def test_the_grid_route_takes_the_closed_form_for_a_rate_one_schedule() -> None:
    """The certificate above that held verify 300 s (sigma 1000, T = 10^6, delta(1), mu = 1): one
    call of the route's bounds answers at the 8-bit grid with a 1e-30 enclosure (a grid would give
    about 1e-3 there)."""
    inputs = {"noise_multiplier": "1000", "sampling_rate": "1", "steps": 10**6, "neighboring": "add-remove",
              "eps": "1"}
    with mpmath.workdps(40):
        lo, hi = P._bounds(inputs, "delta", mpmath.mpf(1), mpmath.mpf(1), mpmath.mpf(1), 8)
    with mpmath.workdps(130):
        ref = _ref_delta(mpmath.mpf(1), mpmath.mpf(1))
        assert lo <= ref <= hi and hi - lo <= mpmath.mpf(10) ** -30


def test_a_calibration_at_rate_one_is_re_proved_in_closed_form(capsys) -> None:
    """The calibrate re-check at B = N (every step a Gaussian at rate 1): the safe end's
    delta_at_target [0, 3.34e-9] was not re-proved on any grid (exit 3 after 42 CPU s). With mu =
    sqrt(10) / 2, delta_mu(10) = 3.3376...e-9 (mpmath below); the closed form proves it, and the upper
    end moved below the truth is refused."""
    from dpverify.cli import main

    assert main(["calibrate", "dpsgd", "--target-eps", "10", "--delta", "1e-5", "--dataset-size", "100",
                 "--noise-multiplier", "2", "--steps", "10", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert outcome(cert) == 0
    with mpmath.workdps(130):
        ref = _ref_delta(mpmath.sqrt(10) / 2, mpmath.mpf(10))
    forged = json.loads(json.dumps(cert))
    forged["result"]["ends"]["safe"]["delta_at_target"]["hi"] = mpmath.nstr(ref * (1 - mpmath.mpf(10) ** -9), 17)
    assert outcome(reseal(forged)) == 1


@pytest.mark.parametrize("mu2,eps", [(Fraction(1, 9), Fraction(3)), (Fraction(10), Fraction(40)),
                                     (Fraction(1, 10**6), Fraction(1, 10))])
def test_the_chernoff_tail_bounds_the_closed_form_from_above(mu2, eps) -> None:
    """composed_gaussian_delta_tail(mu2, eps) = 2^-floor(1.44 r), r = (eps - mu2/2)^2 / (2 mu2), is an
    upper bound of delta_mu(eps) (mpmath at 130 digits), and None where eps <= mu2 / 2."""
    t = G.composed_gaussian_delta_tail(mu2, eps)
    with mpmath.workdps(130):
        ref = _ref_delta(mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator),
                         mpmath.mpf(eps.numerator) / eps.denominator)
        assert t is not None and ref <= t
    assert G.composed_gaussian_delta_tail(Fraction(8), Fraction(4)) is None


def test_le_decides_far_magnitudes_without_an_exact_rational() -> None:
    """recheck.calibrate._le compares an mpf with an exact delta: 2^-(10^13) (a tail bound of a whole
    domain safe at sigma 10^10) is below 1e-5 by its exponent alone (an exact rational of 10^13 bits
    was refused as out of range: exit 3), 2^(10^7) is above it, and near delta the comparison is exact."""
    from dpverify.recheck.calibrate import _le

    D = Fraction(1, 10**5)
    assert _le(mpmath.ldexp(mpmath.mpf(1), -10**13), D)
    assert not _le(mpmath.ldexp(mpmath.mpf(1), 10**7), D)
    with mpmath.workprec(200):
        x = mpmath.mpf(1) / 10**5  # rounded: not exactly 1e-5
        below, above = x * (1 - mpmath.mpf(2) ** -150), x * (1 + mpmath.mpf(2) ** -150)
    sign, man, exp, _ = x._mpf_
    assert _le(x, D) == (Fraction(int(man)) * Fraction(2) ** int(exp) <= D)
    assert _le(below, D) and not _le(above, D)
    assert _le(mpmath.mpf(0), D) and not _le(mpmath.inf, D) and _le(-mpmath.inf, D)


@pytest.mark.parametrize("argv,what", [
    # eps(1e-5) near 5e19 (mu = 1e10): past the 2^64 the root's doubling stopped at (exit 3), and mpmath's
    # exp of 5e19 in the proposal aborted the process inside GMP
    (["--noise-multiplier", "1e-10", "--steps", "1", "--delta", "1e-5"], "eps"),
    # delta(1e-101) at mu = 1e-100: 320 bits cancel to nothing, 1280 answer
    (["--noise-multiplier", "1e100", "--steps", "1", "--eps", "1e-101"], "delta"),
])
def test_extreme_closed_forms_are_re_proved(argv, what, capsys) -> None:
    """Genuine certificates of the rate-1 closed form at the edges of its range (adv48 M1, M2): the
    re-check confirms them, and the independent enclosure agrees with mpmath at 150 digits."""
    from dpverify.cli import main
    from dpverify.recheck.verify import verify_certificate

    assert main(["audit", "dpsgd", "--sampling-rate", "1", *argv, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    lo, hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
    with mpmath.workdps(150):
        if what == "delta":
            ref = _ref_delta(mpmath.mpf(10) ** -100, mpmath.mpf("1e-101"))
        else:
            mu = mpmath.mpf(10) ** 10
            a, b = mu * mu / 2, mu * mu / 2 + 10 * mu
            for _ in range(400):
                c = (a + b) / 2
                a, b = (c, b) if _ref_delta(mu, c) > mpmath.mpf("1e-5") else (a, c)
            ref = a
        assert lo <= ref <= hi


def test_a_root_near_zero_is_re_proved_and_a_moved_end_refused(capsys) -> None:
    """eps(delta) near 8e-259: sigma 1e100 at rate 1 (mu = 1e-100, TV(mu) = 2 Phi(mu/2) - 1 about 4e-101)
    with delta = TV (1 - 1e-158). Near 0, delta_mu(eps) = TV - eps Phi(-mu/2) + O(eps^2), so the root is
    about 1e-158 TV / Phi(-mu/2) = 8e-259 (mpmath at 400 digits below). The re-check's arithmetic bisection
    from [0, 1] ended at [0, 2^-600] and refused the genuine certificate (adv49 M1, exit 3 after 16-30 CPU
    s); the geometric descent (recheck.gdp._descend_to_root) brackets it. A lower end moved up by
    relative 1e-3 past the truth is refused."""
    from dpverify.cli import main
    from dpverify.recheck.verify import verify_certificate

    with mpmath.workdps(400):
        mu = mpmath.mpf(10) ** -100
        tv = 2 * mpmath.ncdf(mu / 2) - 1
        delta = tv * (1 - mpmath.mpf(10) ** -158)
        text = mpmath.nstr(delta, 180, min_fixed=1, max_fixed=0)
        d = mpmath.mpf(text)
        a, b = mpmath.mpf(0), mpmath.mpf(10) ** -200  # the root by bisection at 400 digits
        assert _ref_delta(mu, b) < d
        for _ in range(1400):
            c = (a + b) / 2
            a, b = (c, b) if _ref_delta(mu, c) > d else (a, c)
        ref = a
    assert main(["audit", "dpsgd", "--sampling-rate", "1", "--steps", "1", "--noise-multiplier", "1e100",
                 "--delta", text, "--digits", "3", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    with mpmath.workdps(400):
        lo, hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
        assert lo <= ref <= hi and 1e-262 < ref < 1e-256, (lo, ref, hi)
        moved = mpmath.nstr(ref * (1 + mpmath.mpf("1e-3")), 12)
    forged = json.loads(json.dumps(cert))
    forged["result"]["enclosure"]["lo"] = moved
    assert outcome(reseal(forged), budget=120) == 1


def test_a_nan_decides_neither_side_of_a_calibration_end() -> None:
    """recheck.calibrate._le: a NaN is neither <= D nor > D (the caller negates _le for the lower side,
    so a False would have read as a proof of delta > D; adv49)."""
    from dpverify.errors import CouldNotReprove
    from dpverify.recheck.calibrate import _le

    with pytest.raises(CouldNotReprove):
        _le(mpmath.nan, Fraction(1, 10**5))

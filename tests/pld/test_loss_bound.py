"""Every dominating pair's privacy-loss bound (``loss_bound``), against independent routes:
the closed form at 50 digits in mpmath, the loss function itself evaluated in mpmath on a
grid of outputs (its supremum over the grid is below the bound and reaches the closed form),
and the re-check's own search of its interval tails (recheck/pld.py ``loss_sup``, MPFR with
directed rounding, no python-flint), which must land at or below the producer's bound so
that every [0, 0] the producer writes is re-decided by verify.

delta(eps) = E_P[(1 - e^(eps - L))_+] (AFA Lemma 37) is 0 exactly once eps is at or past
the composed bound, and positive just below it where the supremum is approached but not
attained (the Poisson Gaussian in the add direction): both ends are tested through the CLI
and verify, a forged [0, 0] below the bound is refused."""

import copy
import json
import math
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.certificate.format import LOSS_BOUND_BITS
from dpverify.cli import main
from dpverify.errors import CertificateRejected
from dpverify.events.pairs import (MaxCurvePair, MixtureGaussianPair, discrete_gaussian_pair,
                                   discrete_laplace_pair, epsilon_delta_pair)
from dpverify.pld import dpsgd as S
from dpverify.pld.pairs import SubsampledGaussianPair, SubsampledLaplacePair, approx_dp_pair_exp, subsample_finite
from dpverify.pld.refine import Step, loss_bounds
from dpverify.recheck import pld as R

UNIT = mpmath.mpf(2) ** -LOSS_BOUND_BITS


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _check(bound, closed: mpmath.mpf, losses=(), exact=None) -> None:
    """bound is a dyadic rational in [closed + 2^-40, closed + 3 2^-40] (the closed form plus
    the room that keeps verify's search below it), and above every loss value given. ``exact``:
    the supremum is that rational, and the bound is it, unrounded (at least every loss value)."""
    if exact is not None:
        assert bound == exact and isinstance(bound, F)
        with mpmath.workdps(50):
            assert abs(_mp(bound) - closed) < mpmath.mpf(10) ** -40
            assert all(v <= _mp(bound) + mpmath.mpf(10) ** -45 for v in losses)
        return
    assert isinstance(bound, F) and bound.denominator <= 1 << LOSS_BOUND_BITS
    with mpmath.workdps(50):
        b = _mp(bound)
        assert closed + UNIT <= b <= closed + 3 * UNIT, (bound, closed)
        for v in losses:
            assert v < b


def _gauss_loss_add(sigma: F, q: F):
    """L(x) = -log(1 - q + q e^(mu x - mu^2/2)) of the add direction, mpmath at 50 digits."""
    mu = 1 / _mp(sigma)
    return lambda x: -mpmath.log(1 - _mp(q) + _mp(q) * mpmath.exp(mu * x - mu * mu / 2))


@pytest.mark.parametrize("sigma,q", [("1.1", "0.01"), ("0.5", "0.3"), ("3", "0.999")])
def test_gaussian_add_bound_is_minus_log_one_minus_q(sigma, q):
    s, r = F(sigma), F(q)
    with mpmath.workdps(50):
        L = _gauss_loss_add(s, r)
        grid = [L(mpmath.mpf(x) / 4) for x in range(-400, 401)]
        closed = -mpmath.log(1 - _mp(r))
        # the supremum is approached as x -> -inf (attained only to the working precision)
        assert closed - max(grid) < mpmath.mpf(10) ** -6 and max(grid) <= closed
        _check(SubsampledGaussianPair(s, r, "add").loss_bound(), closed, grid)


@pytest.mark.parametrize("direction,q", [("remove", "0.01"), ("add", "1"), ("remove", "1"), ("replace", "1")])
def test_unbounded_gaussian_losses_have_no_bound(direction, q):
    assert SubsampledGaussianPair(F("1.1"), F(q), direction).loss_bound() == math.inf


@pytest.mark.parametrize("b,q", [("1/2", "0.2"), ("2", "1"), ("0.7", "0.05")])
def test_laplace_bound_is_the_loss_support_end(b, q):
    B, r = F(b), F(q)
    with mpmath.workdps(50):
        def loss(x, sign):  # L = +-log(1 - q + q e^((|x| - |x-1|)/b))
            return sign * mpmath.log(1 - _mp(r) + _mp(r) * mpmath.exp((abs(x) - abs(x - 1)) / _mp(B)))

        xs = [mpmath.mpf(i) / 64 for i in range(-128, 193)]
        for d, sign, closed in (("remove", 1, mpmath.log(1 - _mp(r) + _mp(r) * mpmath.exp(1 / _mp(B)))),
                                ("add", -1, -mpmath.log(1 - _mp(r) + _mp(r) * mpmath.exp(-1 / _mp(B))))):
            vals = [loss(x, sign) for x in xs]
            assert abs(max(vals) - closed) < mpmath.mpf(10) ** -40  # attained (an atom)
            # q = 1: the supremum 1/b is rational and kept exact (eps = 1/b is then decided)
            _check(SubsampledLaplacePair(B, r, d).loss_bound(), closed, vals, exact=1 / B if r == 1 else None)


def test_finite_pairs_bound_and_mass_at_infinity():
    # (eps0, 0)-DP worst case: losses +-log 3; with delta0 > 0 P-mass at +inf: no bound
    _check(approx_dp_pair_exp(F(3), F(0)).loss_bound(), mpmath.log(3))
    assert approx_dp_pair_exp(F(3), F(1, 10**6)).loss_bound() == math.inf
    # add-subsampled: Q' = (1-q) P + q Q > 0 wherever P > 0, so even the +inf atom gets a finite
    # loss -log(1 - q) (exact rationals: L' = log(P / ((1-q) P + q Q)) per outcome)
    pair = subsample_finite(approx_dp_pair_exp(F(3), F(1, 100)), F(1, 10), "add")
    with mpmath.workdps(50):
        vals = [mpmath.log(_mp(p) / _mp(r)) for p, r in zip(pair.P, pair.Q) if p > 0]
        _check(pair.loss_bound(), max(vals), vals)
        assert abs(max(vals) + mpmath.log(mpmath.mpf(9) / 10)) < mpmath.mpf(10) ** -40


def test_atom_pairs_bound():
    with mpmath.workdps(50):
        _check(epsilon_delta_pair(F(1), F(0)).loss_bound(), mpmath.mpf(1), exact=F(1))  # losses +-eps0
        assert epsilon_delta_pair(F(1), F(1, 1000)).loss_bound() == math.inf
        q = F(1, 5)
        # remove: log(1 - q + q e^eps0); add with the +inf atom: -log(1 - q)
        _check(epsilon_delta_pair(F(1), F(0)).subsampled(q, "remove").loss_bound(),
               mpmath.log(1 - _mp(q) + _mp(q) * mpmath.e))
        assert epsilon_delta_pair(F(1), F(1, 1000)).subsampled(q, "remove").loss_bound() == math.inf
        _check(epsilon_delta_pair(F(1), F(1, 1000)).subsampled(q, "add").loss_bound(), -mpmath.log(1 - _mp(q)))
        # discrete Laplace: losses a (Delta - 2x) on 0..Delta, top a Delta; discrete Gaussian: unbounded
        _check(discrete_laplace_pair(F(1, 2), 3).loss_bound(), mpmath.mpf(3) / 2, exact=F(3, 2))
        assert discrete_gaussian_pair(F(2), 1).loss_bound() == math.inf


def test_mixture_and_max_curve_bounds():
    cs, ps = (F(0), F(1), F(5, 2)), (F(1, 2), F(1, 4), F(1, 4))
    with mpmath.workdps(50):
        # add: L = -log(sum p_i e^(mu_i x - mu_i^2/2)) -> -log p_0 as x -> -inf
        mus = [_mp(c) / mpmath.mpf(1.5) for c in cs]
        vals = [-mpmath.log(sum(_mp(p) * mpmath.exp(m * x - m * m / 2) for p, m in zip(ps, mus)))
                for x in (mpmath.mpf(i) / 8 for i in range(-400, 100))]
        _check(MixtureGaussianPair(F(3, 2), cs, ps, "add").loss_bound(), mpmath.log(2), vals)
    assert MixtureGaussianPair(F(3, 2), cs, ps, "remove").loss_bound() == math.inf
    assert MixtureGaussianPair(F(3, 2), (F(1),), (F(1),), "add").loss_bound() == math.inf  # p_0 = 0
    a = SubsampledLaplacePair(F(1, 2), F(1, 5), "remove")
    b = SubsampledLaplacePair(F(1, 2), F(1, 5), "add")
    assert MaxCurvePair(a, b).loss_bound() == max(a.loss_bound(), b.loss_bound())
    assert MaxCurvePair(a, SubsampledGaussianPair(F(1), F(1, 5), "remove")).loss_bound() == math.inf


@pytest.mark.parametrize("tails,pair", [
    (R.gauss_tails(F("1.1"), F("0.01"), "add"), SubsampledGaussianPair(F("1.1"), F("0.01"), "add")),
    (R.gauss_tails(F("0.3"), F("0.5"), "add"), SubsampledGaussianPair(F("0.3"), F("0.5"), "add")),
    (R.laplace_tails(F(1), F(1), "remove"), SubsampledLaplacePair(F(1), F(1), "remove")),
    (R.laplace_tails(F(1, 2), F(1, 5), "add"), SubsampledLaplacePair(F(1, 2), F(1, 5), "add")),
    (R.finite_tails([F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]), approx_dp_pair_exp(F(3), F(0))),
])
def test_verify_finds_the_bound_at_or_below_the_producers(tails, pair):
    """The re-check's search (the least point of the grid 2^-40 at which its interval tail
    P(L > e) is proved 0) is independent of the producer's closed form and must not exceed it:
    otherwise a genuine [0, 0] at an eps between the two would be left undecided (exit 3)."""
    found = R.loss_sup(lambda d: (tails, None), "any")
    assert found is not None and found <= pair.loss_bound()
    assert pair.loss_bound() - found <= F(3, 1 << LOSS_BOUND_BITS)


def test_composed_bound_is_the_sum_over_steps():
    g = SubsampledGaussianPair(F("1.1"), F("0.01"), "add").loss_bound()
    lap = SubsampledLaplacePair(F(2), F("0.1"), "add").loss_bound()
    steps = [Step(lambda d: SubsampledGaussianPair(F("1.1"), F("0.01"), d), 100),
             Step(lambda d: SubsampledLaplacePair(F(2), F("0.1"), d), 7)]
    got = loss_bounds(steps, ("add", "remove"))
    assert got == {"add": 100 * g + 7 * lap, "remove": math.inf}


# --------------------------------------------------------------------------- queries and certificates

#: 100 add steps of sigma 1.1, q 0.01: the composed loss is below 100 (-log 0.99) = 1.00503358535...
BOUND_100 = 100 * -mpmath.log(mpmath.mpf("0.99"))
ADD = ["audit", "dpsgd", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "100",
       "--neighboring", "add"]


def test_delta_past_the_composed_bound_is_exactly_zero_without_a_grid():
    ans = S.dpsgd_delta("1.1", "0.01", 100, "1.0051", neighboring="add")
    assert ans.enclosure.lo == 0 and ans.enclosure.hi == 0 and ans.grid_exponent == 0
    assert "grid" not in ans.details() and "exactly" in ans.details()["note"]
    # eps(delta) <= the bound whatever delta (delta(B) = 0): the add direction alone never needs a grid
    # past it, and under add-remove the add direction is settled at once while remove is computed
    # (2 steps at q = 1/2: add bound 2 log 2 = 1.386 < 1.5)
    both = S.dpsgd_delta("1", "0.5", 2, "1.5", neighboring="add-remove", digits=3)
    assert both.directions["add"] == (0, 0) and both.enclosure.lo > 0


def test_cli_certificate_of_zero_verifies(capsys):
    code = main([*ADD, "--eps", "2", "--time-budget", "30", "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code == 0
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert "confirmed (independent enclosure [0.0, 0.0])" in verify_certificate(cert)


@pytest.mark.parametrize("eps", ["0.9", "1.005"])
def test_forged_zero_below_the_bound_is_refused(capsys, eps):
    """delta(eps) > 0 below the bound (the supremum is not attained, but approached with positive
    density): verify's product-event lower bound proves it, so a recorded [0, 0] is disjoint."""
    assert mpmath.mpf(eps) < BOUND_100
    main([*ADD, "--eps", "2", "--json"])
    cert = json.loads(capsys.readouterr().out)
    bad = copy.deepcopy(cert)
    bad["inputs"]["eps"] = eps
    bad["result"]["quantity"] = f"delta(eps={eps})"
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(bad, budget_seconds=120)


def test_product_event_lower_bound_is_below_the_truth():
    """The re-check's lower bound below the end (and the producer's, which only sizes its unit), against the one-step truth computed in mpmath:
    delta_1(eps) = E_P[(1 - e^(eps - L))_+] for a single add step (N = 1), by quadrature over x."""
    from dpverify.pld.refine import _Dir, _floors, _product_scale

    s, q = F("1.1"), F("0.01")
    ev = [(lambda d: (R.gauss_tails(s, q, d), None), 1)]
    sup = R.Support.of(ev, "add")
    steps = [Step(lambda d: SubsampledGaussianPair(s, q, d), 1)]
    end = loss_bounds(steps, ("add",))["add"]
    for eps in (F(1, 200), F(1, 1000)):
        lo = sup.product_lower(eps)
        # the producer's own (arb) product bound, which sizes its unit near the end
        d = _Dir("add")
        d.floors = _floors(steps, "add", end, eps)
        lo_arb = _product_scale(steps, [d], {"add": end}, eps)
        with mpmath.workdps(30):
            L = _gauss_loss_add(s, q)
            f = lambda x: (1 - mpmath.exp(_mp(eps) - L(x))) * mpmath.npdf(x) if L(x) > _mp(eps) else 0  # noqa: E731
            # L(x) > eps iff x < x_eps (L decreasing in x)
            x_eps = mpmath.findroot(lambda x: L(x) - _mp(eps), -1)
            truth = mpmath.quad(f, [-mpmath.inf, x_eps])
        assert 0 < lo <= truth
        assert 0 < _mp(lo_arb) <= truth


@pytest.mark.parametrize("eps", ["1.3", "1.38"])
def test_genuine_delta_just_below_the_bound_verifies(capsys, eps):
    """Two add steps at q = 1/2 (bound 2 log 2 = 1.3863): below it both sides start each step's
    grid near the loss that can still reach eps (a raised first knot); the enclosure is positive,
    narrow, and the independent route confirms it."""
    assert mpmath.mpf(eps) < 2 * mpmath.log(2)
    code = main(["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.5", "--steps", "2",
                 "--neighboring", "add", "--eps", eps, "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code == 0
    with mpmath.workdps(30):
        lo, hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
        assert 0 < lo and (hi - lo) / lo < mpmath.mpf(10) ** -3
    assert "confirmed" in verify_certificate(cert)


# --------------------------------------------------------------------------- pure-DP eps exactly at the bound

LAP3 = {"neighboring": "add-remove", "event": {"type": "laplace", "noise_multiplier": "3"}}
LAP20_2 = {"neighboring": "add-remove", "event": {"type": "composed", "events": [
    {"type": "laplace", "noise_multiplier": "20"}, {"type": "laplace", "noise_multiplier": "2"}]}}


@pytest.mark.parametrize("tree,eps,pure", [
    (LAP3, "1/3", F(1, 3)),
    (LAP20_2, "0.55", F(1, 20) + F(1, 2)),
    ({**LAP3, "neighboring": "replace-one"}, "2/3", F(2, 3)),  # sensitivity doubled: 2/b
    ({"neighboring": "add-remove", "event": {"type": "discrete_laplace", "noise_parameter": "1/3",
                                             "sensitivity": 2}}, "2/3", F(1, 3) * 2),
])
def test_delta_at_the_pure_dp_eps_is_exactly_zero(tmp_path, capsys, tree, eps, pure):
    """eps equal to the composition's pure-DP eps (the sum of the exact loss suprema, a Fraction
    sum here: 1/20 + 1/2 == 0.55) is answered [0, 0] without a grid, and verify decides it the
    same way from its own rational bound. A bound rounded up to 2^-40 left this eps to a grid
    search that only approached 0 (exit 3 after minutes)."""
    assert F(eps) == pure
    f = tmp_path / "ev.json"
    f.write_text(json.dumps(tree))
    code = main(["audit", "dpsgd", "--events", str(f), "--eps", eps, "--time-budget", "30", "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code == 0
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"} and "grid" not in cert["result"]
    assert "confirmed (independent enclosure [0.0, 0.0])" in verify_certificate(cert)


@pytest.mark.parametrize("b,d", [(F(3), "remove"), (F(3), "add"), (F(1, 7), "add")])
def test_laplace_bound_is_the_same_rational_on_both_sides(b, d):
    """The producer's bound and verify's (each from the inputs on its own) are the same
    rational 1/b, so both sides draw the line delta = 0 at the same eps."""
    mine = SubsampledLaplacePair(b, F(1), d).loss_bound()
    theirs = R.loss_sup(lambda _d: (R.laplace_tails(b, F(1), _d), None), d)
    assert mine == theirs == 1 / b


def _laplace_delta(b: mpmath.mpf, t: mpmath.mpf) -> mpmath.mpf:
    """Hockey-stick divergence of (Lap(1, b), Lap(0, b)) at e^t, by hand: the loss is
    (|x| - |x-1|)/b in [-1/b, 1/b], so t >= 1/b gives 0 and t < -1/b gives 1 - e^t; in
    between p > e^t q iff x > x_t = (b t + 1)/2, where the two tails give 1 - e^((t - 1/b)/2)."""
    if t >= 1 / b:
        return mpmath.mpf(0)
    if t < -1 / b:
        return -mpmath.expm1(t)
    return -mpmath.expm1((t - 1 / b) / 2)


@pytest.mark.parametrize("gap", ["1e-13", "1e-6"])
def test_composed_laplace_just_below_the_pure_dp_eps_against_mpmath(capsys, tmp_path, gap):
    """Just below 0.55 = 1/20 + 1/2 delta is positive (the two atoms L = 1/b_i carry P-mass 1/4
    together: delta ~ gap / 4): the certified enclosure holds the independent value
    delta(eps) = int p_1(x) delta_2(eps - L_1(x)) dx (AFA Lemma 37 conditioned on the first
    step; mpmath quadrature at 40 digits, the second step's divergence in closed form).
    (verify's grid route does not yet narrow this close to the end: exit 3, never an accept.)"""
    eps = F("0.55") - F(gap)
    f = tmp_path / "ev.json"
    f.write_text(json.dumps(LAP20_2))
    code = main(["audit", "dpsgd", "--events", str(f), "--eps", str(eps), "--time-budget", "60", "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code == 0
    with mpmath.workdps(40):
        b1, b2, e = mpmath.mpf(20), mpmath.mpf(2), _mp(eps)

        def integrand(x):
            p1 = mpmath.exp(-abs(x - 1) / b1) / (2 * b1)
            return p1 * _laplace_delta(b2, e - (abs(x) - abs(x - 1)) / b1)

        truth = mpmath.quad(integrand, [-mpmath.inf, 0, 1, mpmath.inf])
        lo, hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
        assert lo <= truth <= hi and truth > 0
        assert abs(truth / (_mp(F(gap)) / 4) - 1) < mpmath.mpf(10) ** -3 * max(1, _mp(F(gap)) * 10**7)

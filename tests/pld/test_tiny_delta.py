"""delta(eps) far out in the tail of a skewed loss (Poisson sampling with about one expected
inclusion): the central-limit plan puts it hundreds of decades too low and its width per h^2
orders of magnitude too high. The accountant starts such a query on a coarse grid at the
unplanned unit and lets the certified widths pick the next level (plan.Plan.checked); the
answers are checked against independent routes: a one-dimensional mpmath quadrature of the
exact two-step mixture at 50 digits, and the MPFR re-check of `dpverify verify`."""

from fractions import Fraction as F

import mpmath
import pytest

from dpverify.cli import main
from dpverify.pld.accountant import Step, plan_query, refine_query
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.pld.plan import UNCHECKED_DELTA_GRID, UNCHECKED_EPS_HALVINGS, planned_grid
from dpverify.pld.refine import UNCHECKED_UNIT_BITS, tightened_width
from dpverify.recheck.verify import verify_file


def _two_step_remove_delta(sigma: F, q: F, eps: F) -> mpmath.mpf:
    """delta(eps) of two remove steps (P = ((1-q) N(0,s^2) + q N(1,s^2))^2, Q = N(0,s^2)^2) at 50
    digits: delta = E_Q[(r(X) r(Y) - e^eps)_+] with r(x) = 1 - q + q e^((2x - 1) / (2 s^2)), the
    inner expectation in closed form (r(Y) > c iff Y > y0 = s^2 log((c - 1 + q) / q) + 1/2, and
    E_Q[r(Y); Y > y0] = (1-q) Sf(y0 / s) + q Sf((y0 - 1) / s)), the outer one by quadrature."""
    mpmath.mp.dps = 50
    fr = lambda v: mpmath.mpf(v.numerator) / v.denominator  # noqa: E731
    s, q, e = fr(sigma), fr(q), fr(eps)
    sf = lambda z: mpmath.ncdf(-z)  # noqa: E731

    def r(x):
        return 1 - q + q * mpmath.exp((2 * x - 1) / (2 * s * s))

    def inner(x):
        c = mpmath.exp(e) / r(x)
        if c <= 1 - q:
            a = b = mpmath.mpf(1)
        else:
            y0 = s * s * mpmath.log((c - 1 + q) / q) + mpmath.mpf(1) / 2
            a, b = sf(y0 / s), sf((y0 - 1) / s)
        return mpmath.npdf(x, 0, s) * (r(x) * ((1 - q) * a + q * b) - mpmath.exp(e) * a)

    # split where c = e^eps / r(x) crosses 1 - q (y0 reaches -inf: the integrand has a kink there;
    # without that point the quadrature is off in the 5th digit and says its error is 1e-18)
    kink = s * s * mpmath.log((mpmath.exp(e) / (1 - q) - 1 + q) / q) + mpmath.mpf(1) / 2
    pts = sorted([-mpmath.inf, -5, 0, 5, 10, 15, 20, mpmath.inf, kink])
    value, err = mpmath.quad(inner, pts, error=True, maxdegree=10)
    assert err < value * mpmath.mpf(10) ** -35
    return value


@pytest.mark.parametrize("eps", [F(2), F(3)])
def test_two_step_tiny_delta_encloses_the_quadrature(eps):
    sigma, q = F(11, 10), F(1, 100)
    ref = _two_step_remove_delta(sigma, q, eps)
    assert 1e-19 < ref < 1e-12  # below the float law's floor: the tail regime
    step = Step(lambda d: SubsampledGaussianPair(sigma, q, d), 2)
    res = refine_query([step], ("remove",), kind="delta", target=eps, rel_width=1e-4)
    ref_f = F(mpmath.nstr(ref, 40, min_fixed=-1000, max_fixed=1000))
    assert res.lo <= ref_f * (1 - F(1, 10**30)) and ref_f * (1 + F(1, 10**30)) <= res.hi
    assert res.hi - res.lo <= F(1, 10**4) * res.lo


def test_unchecked_plan_starts_coarse_at_a_bounded_unit():
    """sigma 1.1, q 0.01, T 10, eps 2: the central-limit model says delta = e^-1460 (true 1.8e-13)
    and asked for the grid 2^-20 at a 2^-2150 unit (21 s on a first level that the certified
    widths then showed was 1000 times too fine in mass). The plan is marked unchecked, the
    first level is coarse, its unit bounded, and the answer is narrow."""
    step = Step(lambda d: SubsampledGaussianPair(F(11, 10), F(1, 100), d), 10)
    p = plan_query([step], ("remove",), "delta", F(2))
    assert p is not None and not p.checked and p.log_delta < -1000
    assert planned_grid(p, "delta", 1e-4) <= UNCHECKED_DELTA_GRID
    res = refine_query([step], ("remove",), kind="delta", target=F(2), rel_width=1e-4)
    assert res.levels[0]["m"] <= UNCHECKED_DELTA_GRID and res.levels[0]["K"] <= UNCHECKED_UNIT_BITS + 64
    assert len(res.levels) <= 3 and res.lo > F(1, 10**13) and res.hi - res.lo <= F(1, 10**4) * res.lo


def test_unchecked_eps_plan_starts_coarse_and_is_reproved(tmp_path):
    """sigma 0.5, q 1e-6, T 1000, delta 1e-9 (ref50 MEDIUM-2): about 1e-3 steps are sampled in
    expectation, a rare-event mixture the central-limit model misreads (eps 0.0074 against 0.058,
    width per h^2 5e5). The eps query went to 2^-19 at once: 64 CPU s, 1 GB, and a certificate
    priced past verify's cap (refused at write time). Unchecked, it starts 4 halvings coarser, and
    the answer is re-proved by verify's MPFR route (an enclosure that missed the truth is exit 1)."""
    step = Step(lambda d: SubsampledGaussianPair(F(1, 2), F(1, 10**6), d), 1000)
    p = plan_query([step], ("add", "remove"), "eps", F(1, 10**9))
    assert p is not None and not p.checked
    assert planned_grid(p, "eps", 1e-4) == 19 - UNCHECKED_EPS_HALVINGS
    # nor is it tightened for a caller that affords more points (the dp_accounting drop-in's 2^18):
    # toward width / 1000 it ran into its time budget at 2^-18 (ref51)
    assert tightened_width(p, "eps", 1e-4, 2**18) == 1e-4
    cert = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--noise-multiplier", "0.5", "--sampling-rate", "0.000001", "--steps", "1000",
                 "--delta", "1e-9", "--certificate", str(cert)]) == 0
    code, message = verify_file(cert, budget_seconds=600)
    assert code == 0, message


@pytest.mark.parametrize("argv", [
    # the plainest DP-SGD query that ran its whole budget and answered [0, inf] (delta 3.2e-12)
    ["audit", "dpsgd", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--steps", "100", "--eps", "2"],
    # the small event tree of the same finding (delta 1.5e-10)
    ["audit", "dpsgd", "--events", "EVENTS", "--eps", "1"],
])
def test_tiny_delta_certificates_are_answered_and_reproved_independently(tmp_path, argv):
    """The answer is a certificate, and `verify`'s MPFR route (no arb) re-proves it: an enclosure
    that missed the truth would be refused (exit 1)."""
    ev = tmp_path / "ev.json"
    ev.write_text('{"neighboring": "add-remove", "event": {"type": "composed", "events": ['
                  '{"type": "poisson_sampled", "sampling_probability": "0.01", '
                  '"event": {"type": "gaussian", "noise_multiplier": "1.1"}}, '
                  '{"type": "laplace", "noise_multiplier": "20"}]}}')
    cert = tmp_path / "c.json"
    argv = [str(ev) if a == "EVENTS" else a for a in argv] + ["--time-budget", "600", "--certificate", str(cert)]
    assert main(argv) == 0
    code, message = verify_file(cert, budget_seconds=1800)
    assert code == 0, message


@pytest.mark.parametrize("eps", [F(2), F(3)])
def test_split_event_floor_is_below_the_two_step_quadrature(eps):
    """refine._split_scale (sizes the unit of an unconfirmed tiny delta) is a lower bound of the
    true delta (the 50-digit quadrature above), and within 2^-30 of it (else it would size
    nothing useful)."""
    from dpverify.pld.refine import _split_scale

    sigma, q = F(11, 10), F(1, 100)
    ref = _two_step_remove_delta(sigma, q, eps)
    step = Step(lambda d: SubsampledGaussianPair(sigma, q, d), 2)
    got = _split_scale([step], ["remove"], eps)
    assert got is not None
    got_mp = mpmath.mpf(got.numerator) / got.denominator
    assert ref * mpmath.mpf(2) ** -30 < got_mp < ref


@pytest.mark.parametrize("sigma,q,eps", [(F(5), F(1, 10), F(1)), (F(11, 10), F(1, 100), F(3)), (F(1), F(1, 2), F(1, 2))])
def test_split_event_floor_is_below_the_one_step_curve(sigma, q, eps):
    """One step: delta(eps) = P(L > eps) - e^eps Q(L > eps) exactly (the pair's hockey-stick
    curve), here from the closed-form tails in mpmath at 50 digits (test_grid_tails). The floor
    (1 - e^-g) P(L > eps + g) lies below it; P(L > eps) alone, the event without its margin
    and factor, lies above it (so this check would catch their loss)."""
    from dpverify.pld.refine import _split_scale

    from .test_grid_tails import _mp_gauss_tails

    mpmath.mp.dps = 50
    e = mpmath.mpf(eps.numerator) / eps.denominator
    p, qt = _mp_gauss_tails(sigma, q, "remove", e)
    truth = p - mpmath.exp(e) * qt
    step = Step(lambda d: SubsampledGaussianPair(sigma, q, d), 1)
    got = _split_scale([step], ["remove"], eps)
    assert got is not None and 0 < mpmath.mpf(got.numerator) / got.denominator < truth
    assert p > truth


def test_unconfirmed_tiny_delta_sizes_its_unit_from_the_split_floor():
    """sigma 5, q 0.1, T 4, eps 3 (delta 1.13e-137): the first level's lower end is 0, and the unit
    followed the upper end about 20 bits a level (17 levels at 2^-4 before the grid could refine);
    with the split event's floor the second level's unit resolves delta. The enclosure is the
    same as before (both certified; this checks the route, and that the answer is narrow)."""
    step = Step(lambda d: SubsampledGaussianPair(F(5), F(1, 10), d), 4)
    res = refine_query([step], ("remove",), kind="delta", target=F(3), rel_width=1e-3)
    assert len(res.levels) <= 5, [(lv["m"], lv["K"]) for lv in res.levels]
    assert F(1129, 10**140) < res.lo <= res.hi < F(1131, 10**140) and res.hi - res.lo <= F(1, 10**3) * res.lo

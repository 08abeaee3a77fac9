"""RDP -> (eps, delta) conversions: ABC eq. (23), ordering optimal <= Balle <=
classic, validity against the exact Gaussian, soundness of the order proof."""

from fractions import Fraction

import mpmath
import pytest
from flint import arb
from hypothesis import given, settings, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.errors import InvalidParameter
from dpverify.rdp import (
    GaussianCurve,
    LaplaceCurve,
    RandomizedResponseCurve,
    compose,
    conversion_delta,
    conversion_eps,
    rdp_epsilon,
)
from dpverify.rdp.conversions import abc_lemma1_eps_upper, abc_thm4_gamma_lower, optimal_gamma_ball
from dpverify.rdp.infimum import _Prover, _prove
from tests.reference import golden_min, in_enclosure, mpf_exact


def gauss_T(sigma, T):
    return compose([GaussianCurve(Fraction(1) / sigma)], [T])


def test_abc_eq23_classic_encloses_closed_form_to_1e9():
    """ABC eq. (23): inf_alpha rho T alpha + log(1/delta)/(alpha-1) = rho T + sqrt(4 rho T log(1/delta)),
    rho = 1/(2 sigma^2); sigma = 20, T = 1000, delta = 1e-5."""
    res = rdp_epsilon(gauss_T(Fraction(20), 1000), "1e-5", "classic", digits=10)
    with mpmath.workdps(40):
        rho = mpmath.mpf(1) / 800
        ref = rho * 1000 + mpmath.sqrt(4 * rho * 1000 * mpmath.log(10**5))
    assert in_enclosure(ref, res.enclosure)
    with working_precision(100):
        assert res.enclosure.rel_width() <= arb(10) ** -9


def test_abc_optimal_contains_thm3_infimum_at_recorded_order():
    res = rdp_epsilon(gauss_T(Fraction(20), 1000), "1e-5", "optimal", digits=8)
    with mpmath.workdps(30):
        a = mpf_exact(res.alpha)
        v = _abc_thm3_eps(a, a * 1000 / mpmath.mpf(800), mpmath.mpf(10) ** -5)
    assert in_enclosure(v, res.enclosure)


def _abc_thm3_eps(a, g, d):
    """The reference: the least eps with gamma_a(eps, d) >= g (ABC Thm 3), where
    gamma_a(e, d) = e + min_p log S(p) / (a - 1) and S is ABC eq. (16),
    S(p) = p^a (p - d)^(1 - a) + (1 - p)^a (e^e - p + d)^(1 - a), convex in p on (d, 1].
    The minimum over p by golden-section search in t = log(p - d) (minimisers near d
    resolve), gamma increasing in e, so eps by bisection. Written apart from the product's
    and the re-check's routes (which prove the same quantity by ABC's tangent bound)."""
    def log_s(e, p):
        return mpmath.log(p**a * (p - d) ** (1 - a) + (1 - p) ** a * (mpmath.exp(e) - p + d) ** (1 - a))

    def gamma(e):
        tl, th = mpmath.log(mpmath.mpf(10) ** -mpmath.mp.dps * d), mpmath.log(1 - d)
        h = lambda t: log_s(e, d + mpmath.exp(t))  # noqa: E731
        best = golden_min(h, tl, th, int(mpmath.mp.prec * 1.6) + 40)[1]
        return e + min(best, h(th)) / (a - 1)

    lo, hi = mpmath.mpf(0), g + mpmath.log(1 / d) / (a - 1) + 1  # the classic conversion bounds it
    if gamma(lo) >= g:
        return lo
    for _ in range(int(mpmath.mp.prec) + 20):
        m = (lo + hi) / 2
        lo, hi = (lo, m) if gamma(m) >= g else (m, hi)
    return hi


def test_soundness_a_too_high_lower_bound_is_not_proved():
    curve = gauss_T(Fraction(20), 1000)
    for conv, truth in (("classic", "8.8371356469"), ("balle", "8.0783595481"), ("optimal", "8.0783591658")):
        with working_precision(100):
            ok_below = _prove(_Prover(curve, conv, Fraction(1, 10**5), arb("8.07")), 5000)[0]
            bad = _prove(_Prover(curve, conv, Fraction(1, 10**5), arb(truth) + arb("1e-6")), 3000)[0]
        assert ok_below and not bad


curves = st.one_of(
    st.builds(lambda s, t: gauss_T(s, t), st.fractions(Fraction(1, 2), Fraction(50)).map(lambda x: x.limit_denominator(50)),
              st.integers(1, 5000)),
    st.builds(lambda b, t: compose([LaplaceCurve(b)], [t]), st.fractions(Fraction(1, 20), Fraction(2)).map(lambda x: x.limit_denominator(50)),
              st.integers(1, 200)),
    st.builds(lambda p, t: compose([RandomizedResponseCurve(p)], [t]),
              st.fractions(Fraction(11, 20), Fraction(9, 10)).map(lambda x: x.limit_denominator(50)), st.integers(1, 200)),
)


@settings(max_examples=6)
@given(curve=curves, dexp=st.integers(2, 12))
def test_optimal_le_balle_le_classic(curve, dexp):
    d = Fraction(1, 10**dexp)
    c = rdp_epsilon(curve, d, "classic", 6).enclosure
    b = rdp_epsilon(curve, d, "balle", 6).enclosure
    o = rdp_epsilon(curve, d, "optimal", 5).enclosure
    assert b.lo <= c.hi and o.lo <= b.hi


@settings(max_examples=5)
@given(sigma=st.fractions(Fraction(1, 2), Fraction(30)).map(lambda x: x.limit_denominator(20)),
       T=st.integers(1, 2000), dexp=st.integers(3, 10))
def test_optimal_gaussian_never_below_exact_gaussian(sigma, T, dexp):
    """The optimal conversion is an (eps, delta) guarantee, so it is >= the exact eps of the
    composed Gaussian (mu sqrt(T)-GDP): delta_mu(eps_opt) <= delta."""
    d = Fraction(1, 10**dexp)
    o = rdp_epsilon(gauss_T(sigma, T), d, "optimal", 5).enclosure
    mu_T = Fraction(1) / sigma  # per step; the T-fold composition is mu sqrt(T)-GDP
    from dpverify.mechanisms.gaussian import delta_mu_ball

    with working_precision(200):
        dm = delta_mu_ball(ball(mu_T) * arb(T).sqrt(), o.lo)
        assert dm <= ball(d)


def test_fixed_order_optimal_vs_abc_thm4_and_lemma1():
    with working_precision(120):
        a, d = ball(Fraction(4)), ball(Fraction(1, 10**5))
        for e in ("0.5", "2", "8"):
            g = optimal_gamma_ball(a, arb(e), d)
            lower = abc_thm4_gamma_lower(a, arb(e), d)
            assert not (lower > g)  # Thm 4 is a lower bound of gamma_alpha^eps(delta)
        gamma = ball(Fraction(5, 4))
        opt = conversion_eps(4, "1.25", "1e-5", "optimal", 12)
        up = abc_lemma1_eps_upper(a, gamma, d)
        assert opt.hi <= up.upper()
        balle = conversion_eps(4, "1.25", "1e-5", "balle", 12)
        assert opt.hi <= balle.lo


def test_abc_thm4_eq17_regime_alpha_delta_ge_1():
    # alpha delta >= 1: gamma = eps - log(1 - delta) exactly, so eps_opt = (gamma + log(1 - delta))_+
    enc = conversion_eps(20, "1", "0.1", "optimal", 12)
    with mpmath.workdps(40):
        ref = 1 + mpmath.log(mpmath.mpf("0.9"))
    assert in_enclosure(ref, enc)


def test_delta_side_round_trip():
    # eps from delta, then delta from that eps, brackets the original delta
    e = conversion_eps(4, "1.25", "1e-5", "balle", 14)
    dlo = conversion_delta(4, "1.25", e.hi_str(), "balle", 14)
    dhi = conversion_delta(4, "1.25", e.lo_str(), "balle", 14)
    with working_precision(200):
        d = ball(Fraction(1, 10**5))
        assert dlo.lo <= d and d <= dhi.hi


@pytest.mark.parametrize("kw,name", [
    (dict(alpha=1, gamma=1, delta="1e-5"), "alpha"),
    (dict(alpha=2, gamma=-1, delta="1e-5"), "rdp"),
    (dict(alpha=2, gamma=1, delta=0), "delta"),
    (dict(alpha=2, gamma=1, delta=1), "delta"),
    (dict(alpha=2, gamma=1, delta="1e-5", conversion="bogus"), "conversion"),
])
def test_bad_inputs(kw, name):
    with pytest.raises(InvalidParameter) as ei:
        conversion_eps(**kw)
    assert ei.value.name == name


@given(sigma=st.fractions(Fraction(1, 4), Fraction(100)).map(lambda x: x.limit_denominator(30)),
       T=st.integers(1, 10**6), dexp=st.integers(1, 40))
def test_classic_infimum_is_eq23_everywhere(sigma, T, dexp):
    """ABC eq. (23) for any sigma, T, delta: the certified inf over all real orders
    contains rho T + sqrt(4 rho T log(1/delta))."""
    d = Fraction(1, 10**dexp)
    enc = rdp_epsilon(gauss_T(sigma, T), d, "classic", 9).enclosure
    with mpmath.workdps(60):
        rho = 1 / (2 * mpf_exact(sigma) ** 2)
        ref = rho * T + mpmath.sqrt(4 * rho * T * mpmath.log(10**dexp))
    assert in_enclosure(ref, enc)


def test_optimal_reaches_15_digits_where_it_was_undecided():
    """alpha 2, gamma 0.05, delta 1e-5 was undecided at 15 digits
    (float steps cannot resolve the last digits). Independent route: ABC Thm 3
    in mpmath at 50 digits, G(eps) = eps + min_p log S(p)/(alpha-1) increasing
    in eps, root of G(eps) = gamma by bisection."""
    import mpmath

    from dpverify.rdp.conversions import optimal_eps
    from flint import arb

    enc = optimal_eps(Fraction(2), arb("0.05"), Fraction(1, 10**5), 15)
    with mpmath.workdps(50):
        d = mpmath.mpf(10) ** -5

        def G(e):
            E = mpmath.exp(e)
            S = lambda p: p**2 / (p - d) + (1 - p) ** 2 / (E - p + d)  # noqa: E731
            # S is convex in p (both terms are): bisect on the sign of S'
            dS = lambda p: (2 * p / (p - d) - p**2 / (p - d) ** 2  # noqa: E731
                            - 2 * (1 - p) / (E - p + d) + (1 - p) ** 2 / (E - p + d) ** 2)
            a, b = d * (1 + mpmath.mpf(10) ** -30), mpmath.mpf(1)
            for _ in range(200):
                m = (a + b) / 2
                a, b = (m, b) if dS(m) < 0 else (a, m)
            return e + mpmath.log(S((a + b) / 2))

        lo, hi = mpmath.mpf(5), mpmath.mpf(9)
        for _ in range(120):
            m = (lo + hi) / 2
            lo, hi = (m, hi) if G(m) < mpmath.mpf("0.05") else (lo, m)
        assert mpmath.mpf(enc.lo_str()) <= lo and hi <= mpmath.mpf(enc.hi_str())
        assert (mpmath.mpf(enc.hi_str()) - mpmath.mpf(enc.lo_str())) / lo <= mpmath.mpf("1e-15")


def test_certified_bisection_keeps_the_crossing_and_stops_when_stuck():
    """The one bisection of the optimal conversions (eps and delta routes shared it
    written twice; the delta copy had no stop for a midpoint that rounds onto an end,
    so at a low precision it spent all 400 steps evaluating G without moving).
    Route: G(x) = x crosses gamma = 1/3 exactly at 1/3, compared as rationals."""
    from fractions import Fraction

    from flint import arb

    from dpverify.ball import arb_to_fraction, endpoints, working_precision
    from dpverify.rdp.conversions import _bisect_increasing

    calls = []

    def G(m):
        calls.append(m)
        return m

    with working_precision(200):
        g_lo, g_hi = endpoints(arb(1) / 3)
    with working_precision(24):
        lo, hi = _bisect_increasing(G, g_lo, g_hi, arb(0), arb(1), lambda lo, hi: False, 400)
    assert arb_to_fraction(lo) < Fraction(1, 3) < arb_to_fraction(hi)
    assert len(calls) <= 30  # 24 bits of mantissa: the halvings run out after about 24 steps


@pytest.mark.parametrize("cells", [float("nan"), float("inf"), 1e308, 10**5000, 0, -1, True, 0.5, "x", None,
                                   10**6 + 1],
                         ids=lambda v: f"int{v.bit_length()}" if isinstance(v, int) and v > 2**64 else repr(v))
def test_max_cells_is_a_bounded_integer(cells):
    # adv37 A4: NaN/inf/10**5000 had been accepted (no cap), True/0 ended in a PrecisionExhausted
    # blaming the conversion, a str in a TypeError. The rule: an integer in [1, 10^6] (limits.MAX_RDP_CELLS).
    from dpverify import SubsampledGaussianCurve

    curve = SubsampledGaussianCurve(Fraction(1), Fraction(1, 100))
    with pytest.raises(InvalidParameter) as exc:
        rdp_epsilon(curve, "1e-5", "optimal", max_cells=cells)
    assert exc.value.name == "max_cells"


def test_a_huge_conversion_value_is_refused_by_name():
    # the refusal's message had raised ValueError formatting repr(10**5000)
    from dpverify import SubsampledGaussianCurve

    with pytest.raises(InvalidParameter) as exc:
        rdp_epsilon(SubsampledGaussianCurve(1, "0.01"), "1e-5", 10**5000)
    assert exc.value.name == "conversion"

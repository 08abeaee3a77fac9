"""The directed-rounding re-check of the Renyi-DP kinds against independent routes.

* cumulants log E_Q[(dP/dQ)^alpha] against the *defining integral* by mpmath quadrature at
  40 digits (a different method from the closed forms and series of recheck.rdp), or the
  finite binomial sum on mpmath at 60 digits;
* the fractional-order series of the subsampled Gaussian truncated early (its proved tail
  bound must still enclose the quadrature: a bound that were too small would fail here);
* ABC Thm 3's gamma against a golden-section minimisation over p on mpmath at 60 digits;
* the infimum over orders: a recorded lower end above the truth (by 1e-9 relative) is never
  accepted, one below it is proved.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.errors import CertificateRejected, CouldNotReprove
from dpverify.recheck import rdp
from dpverify.recheck.core import arith, mpfr_to_mpf


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _golden_mp(h, lo_t, hi_t, iters: int):
    """argmin of a unimodal h by golden-section search at mpmath's precision (the mpmath
    helper the events route proposes with; here it only locates a reference minimum)."""
    return rdp._golden(h, lo_t, hi_t, iters)[0]


def _inside(iv, ref, rel, ref_digits: int = 35) -> None:
    """[lo, hi] meets the reference to the reference's own accuracy (10^-ref_digits relative;
    the enclosures are far narrower) and is narrow."""
    with mpmath.workdps(80):
        lo, hi = mpfr_to_mpf(iv[0]), mpfr_to_mpf(iv[1])
        err = abs(ref) * mpmath.mpf(10) ** -ref_digits
        assert lo <= ref + err and ref - err <= hi, (lo, ref, hi)
        assert hi - lo <= max(abs(ref) * mpmath.mpf(rel), mpmath.mpf(10) ** -55), (lo, hi, ref)


def _quad_cgf(density_p, density_q, a, points) -> mpmath.mpf:
    with mpmath.workdps(40):
        am = _mp(a)
        return mpmath.log(mpmath.quad(lambda x: density_p(x) ** am * density_q(x) ** (1 - am), points))


@pytest.mark.parametrize("a", ["3/10", "1/2", "7/10", "2", "7/2", "50"])
@pytest.mark.parametrize("lam", ["1", "1/3"])
def test_laplace_cumulant_encloses_the_defining_integral(a: str, lam: str) -> None:
    a_, l_ = Fraction(a), Fraction(lam)
    with mpmath.workdps(40):
        lm = _mp(l_)
        ref = _quad_cgf(lambda x: mpmath.exp(-abs(x - lm)) / 2, lambda x: mpmath.exp(-abs(x)) / 2, a_,
                        [-mpmath.inf, 0, lm, mpmath.inf])
    got = rdp._laplace_cgf(arith(200), a_, l_)
    _inside(got, ref, 1e-30)


@pytest.mark.parametrize("mech,a", [({"mechanism": "rr", "p": "3/4"}, "1/2"), ({"mechanism": "rr", "p": "3/4"}, "3"),
                                    ({"mechanism": "rr", "p": "1/2"}, "5/2"),
                                    ({"mechanism": "pure", "eps0": "1"}, "5/2"),
                                    ({"mechanism": "pure", "eps0": "40"}, "3")])
def test_finite_mechanisms_enclose_the_two_point_sum(mech: dict, a: str) -> None:
    a_ = Fraction(a)
    with mpmath.workdps(60):
        if mech["mechanism"] == "rr":
            p = _mp(Fraction(mech["p"]))
        else:
            e0 = _mp(Fraction(mech["eps0"]))
            p = 1 / (1 + mpmath.exp(-e0))
        am = _mp(a_)
        ref = mpmath.log(p**am * (1 - p) ** (1 - am) + (1 - p) ** am * p ** (1 - am))
    got = rdp._Mech(mech).curve(arith(200), a_)
    _inside(got, ref, 1e-40, 40)


def _ssg_quad(a: Fraction, s: Fraction, q: Fraction) -> mpmath.mpf:
    with mpmath.workdps(40):
        sm, qm, am = _mp(s), _mp(q), _mp(a)
        g = lambda x: mpmath.npdf(x, 0, sm) * (1 - qm + qm * mpmath.exp((2 * x - 1) / (2 * sm * sm))) ** am  # noqa: E731
        pts = [-mpmath.inf] + [mpmath.mpf(k) for k in range(-10, int(am + 10 * sm) + 2)] + [mpmath.inf]
        return mpmath.log(mpmath.quad(g, pts))


@pytest.mark.parametrize("a,s,q", [("3", "1", "1/100"), ("10", "2", "1/10"), ("57", "3/2", "1/20")])
def test_subsampled_gaussian_integer_order_is_the_binomial_sum(a: str, s: str, q: str) -> None:
    a_, s_, q_ = Fraction(a), Fraction(s), Fraction(q)
    n = int(a_)
    with mpmath.workdps(60):
        sm, qm = _mp(s_), _mp(q_)
        ref = mpmath.log(mpmath.fsum(mpmath.binomial(n, k) * qm**k * (1 - qm) ** (n - k)
                                     * mpmath.exp((k * k - k) / (2 * sm * sm)) for k in range(n + 1)))
    got = rdp._ssg_integer(arith(200), n, s_, q_)
    _inside(got, ref, 1e-40, 55)
    # and the defining integral agrees (a third route, to its 30 digits)
    with mpmath.workdps(60):
        assert abs(_ssg_quad(a_, s_, q_) - ref) <= abs(ref) * mpmath.mpf(10) ** -25


@pytest.mark.parametrize("a,s,q,tol", [("5/2", "1", "1/100", 100), ("1368755724913/155193589554", "1", "1/100", 100),
                                       ("3/5", "2", "1/10", 100), ("23/2", "4/5", "1/4", 100), ("101/100", "1", "1/2", 60)])
def test_subsampled_gaussian_fractional_series_encloses_the_integral(a: str, s: str, q: str, tol: int) -> None:
    """The series summed to 2^-tol relative: the enclosure of A_alpha contains e^(the
    quadrature's log) and is about 2^-tol wide."""
    a_, s_, q_ = Fraction(a), Fraction(s), Fraction(q)
    ref = _ssg_quad(a_, s_, q_)
    lo, hi = rdp._ssg_series(arith(200), a_, s_, q_, tol)
    with mpmath.workdps(60):
        e = mpmath.exp(ref)
        slack = e * mpmath.mpf(10) ** -30
        assert mpfr_to_mpf(lo) <= e + slack and e - slack <= mpfr_to_mpf(hi), (mpfr_to_mpf(lo), e, mpfr_to_mpf(hi))
        assert mpfr_to_mpf(hi) - mpfr_to_mpf(lo) <= mpfr_to_mpf(hi) * mpmath.mpf(2) ** -(tol - 2)


@pytest.mark.parametrize("n", [1, 2, 5, 12, 40])
def test_accelerated_alternating_sum_meets_its_bound(n: int) -> None:
    """sum_k (-1)^k / (k + 1) = log 2 (a_k = 1/(k+1), the moments of Lebesgue measure on
    [0, 1]): the weights of :func:`_cvz` give S_n within a_0 / T_n(3) of it, in exact
    rationals, and T_n(3) is the Chebyshev value ((3 + sqrt 8)^n + (3 - sqrt 8)^n) / 2."""
    b, D = rdp._cvz(n)
    sn = sum(Fraction(bk, k + 1) for k, bk in enumerate(b)) / D
    with mpmath.workdps(60):
        assert abs(_mp(sn) - mpmath.log(2)) <= mpmath.mpf(1) / D
        assert D == mpmath.nint(((3 + mpmath.sqrt(8)) ** n + (3 - mpmath.sqrt(8)) ** n) / 2)


@pytest.mark.parametrize("tol", [2, 4, 8])
def test_fractional_series_tail_bound_holds_when_truncated_early(tol: int) -> None:
    """With a few accelerated terms the enclosure is wide but still contains the integral:
    the tail bound a_0 / T_n(3) is a bound, not an estimate."""
    a_, s_, q_ = Fraction(7, 2), Fraction(1, 2), Fraction(1, 5)
    ref = _ssg_quad(a_, s_, q_)
    lo, hi = rdp._ssg_series(arith(120), a_, s_, q_, tol)
    with mpmath.workdps(40):
        assert mpfr_to_mpf(lo) <= mpmath.exp(ref) <= mpfr_to_mpf(hi)
        assert mpfr_to_mpf(hi) - mpfr_to_mpf(lo) > 0


def _gamma_ref(a: Fraction, e: Fraction, d: Fraction) -> mpmath.mpf:
    """ABC (16) minimised over p by golden-section search in log(p - delta) at 60 digits."""
    with mpmath.workdps(60):
        am, em, dm = _mp(a), _mp(e), _mp(d)
        if am * dm >= 1:
            return em - mpmath.log(1 - dm)

        def h(t):
            p = dm + mpmath.exp(t)
            return mpmath.log(p**am * (p - dm) ** (1 - am) + (1 - p) ** am * (mpmath.exp(em) - p + dm) ** (1 - am))

        return em + h(_golden_mp(h, mpmath.log(dm) - 60, mpmath.log(1 - dm), 400)) / (am - 1)


@pytest.mark.parametrize("a,e,d", [("2", "0", "3/10"), ("2", "1/2", "1/100000"), ("20", "1", "1/10"),
                                   ("77/10", "3", "1/10**9"), ("3", "7/5", "1/1000")])
def test_gamma_encloses_the_minimum_over_p(a: str, e: str, d: str) -> None:
    a_, e_ = Fraction(a), Fraction(e)
    d_ = Fraction(1, 10**9) if d == "1/10**9" else Fraction(d)
    ref = _gamma_ref(a_, e_, d_)
    (lo, hi), _ = rdp._gamma_iv(arith(256), a_, e_, d_)
    _inside((lo, hi), ref, 1e-30, 50)


def _eps_result(lo: mpmath.mpf, hi: mpmath.mpf, alpha: "str | None" = None) -> dict:
    r = {"enclosure": {"lo": mpmath.nstr(lo, 25), "hi": mpmath.nstr(hi, 25)}}
    if alpha is not None:
        r["alpha"] = alpha
    return r


def _optimal_eps_ref(a: Fraction, g: Fraction, d: Fraction) -> mpmath.mpf:
    lo, hi = mpmath.mpf(0), mpmath.mpf(50)
    if _gamma_ref(a, Fraction(0), d) >= _mp(g):
        return mpmath.mpf(0)
    for _ in range(90):
        m = (lo + hi) / 2
        if _gamma_ref(a, Fraction(str(mpmath.nstr(m, 40))), d) >= _mp(g):
            hi = m
        else:
            lo = m
    return hi


def test_optimal_to_dp_eps_brackets_and_refuses_a_moved_bracket() -> None:
    a, g, d = Fraction(3), Fraction(1, 2), Fraction(1, 10**4)
    inputs = {"alpha": "3", "rdp": "1/2", "delta": "1/10000", "conversion": "optimal"}
    with mpmath.workdps(40):
        ref = _optimal_eps_ref(a, g, d)
        ok = rdp.recheck_to_dp_eps(inputs, _eps_result(ref * (1 - mpmath.mpf(10) ** -15),
                                                       ref * (1 + mpmath.mpf(10) ** -15)))
        assert ok.lo <= ref <= ok.hi
        # moved above and below the truth: refused as false by the one rule (exit 1, not exit 3)
        _refused_as_false(rdp.recheck_to_dp_eps, inputs, _eps_result(ref * (1 + mpmath.mpf(10) ** -12),
                                                                      ref * (1 + 2 * mpmath.mpf(10) ** -12)))
        _refused_as_false(rdp.recheck_to_dp_eps, inputs, _eps_result(ref * (1 - 2 * mpmath.mpf(10) ** -12),
                                                                      ref * (1 - mpmath.mpf(10) ** -12)))


def _refused_as_false(recheck, inputs: dict, result: dict) -> None:
    """The re-check's enclosure is disjoint from the recorded one: the acceptance rule raises
    CertificateRejected and not CouldNotReprove (its subclass: exit 3, undecided)."""
    from dpverify.recheck.verify import accept_enclosure, enclosure_of

    with pytest.raises(CertificateRejected) as got:
        r = recheck(inputs, result)
        accept_enclosure(enclosure_of(result["enclosure"], "result.enclosure", 40), r.enclosure(), "root")
    assert not isinstance(got.value, CouldNotReprove), got.value


def test_optimal_to_dp_delta_brackets_the_root() -> None:
    inputs = {"alpha": "3", "rdp": "1/10", "eps": "1/2", "conversion": "optimal"}
    with mpmath.workdps(40):
        lo, hi = mpmath.mpf(10) ** -30, mpmath.mpf(1) / 2
        for _ in range(120):  # the smallest delta with gamma_3^(1/2)(delta) >= 1/10 (monotone in delta)
            m = mpmath.sqrt(lo * hi) if hi / lo > 4 else (lo + hi) / 2
            if _gamma_ref(Fraction(3), Fraction(1, 2), Fraction(mpmath.nstr(m, 45))) >= mpmath.mpf(1) / 10:
                hi = m
            else:
                lo = m
        ref = hi
        r = rdp.recheck_to_dp_delta(inputs, _eps_result(ref * (1 - mpmath.mpf(10) ** -14),
                                                        ref * (1 + mpmath.mpf(10) ** -14)))
        assert r.lo <= ref <= r.hi
        for a, b in ((1 + mpmath.mpf(10) ** -9, 1 + 2 * mpmath.mpf(10) ** -9),
                     (1 - 2 * mpmath.mpf(10) ** -9, 1 - mpmath.mpf(10) ** -9),
                     (1 + mpmath.mpf(10) ** -13, 1 + 2 * mpmath.mpf(10) ** -13)):
            _refused_as_false(rdp.recheck_to_dp_delta, inputs, _eps_result(ref * a, ref * b))


def _accepts(inputs: dict, result: dict) -> bool:
    """Does verify's acceptance rule accept the re-derived enclosure against the recorded one?"""
    from dpverify.recheck.verify import accept_enclosure, enclosure_of

    try:
        r = rdp.recheck_epsilon(inputs, result)
        accept_enclosure(enclosure_of(result["enclosure"], "result.enclosure", 40), r.enclosure(), "eps")
    except (CertificateRejected, CouldNotReprove):
        return False
    return True


@pytest.mark.parametrize("inputs,truth,alpha", [
    # the Gaussian's infimum in closed form for classic; Balle and optimal at these inputs
    # are the committed certificates' values (tests/certificate/format1, cross-checked there)
    ({"mechanism": "gaussian", "noise_multiplier": "2", "compositions": 10, "delta": "1e-5",
      "conversion": "balle"}, "8.07835954814444695", "2349017682884/609882966793"),
    # Laplace: D_alpha -> k lam from below like -k log 2 / (alpha - 1), slower than L / (alpha - 1)
    # falls: the infimum is the limit k lam = 3, approached as alpha -> inf
    ({"mechanism": "laplace", "scale": "1", "compositions": 3, "delta": "1e-3", "conversion": "classic"},
     "3", "1000000000000000"),
    ({"mechanism": "subsampled-gaussian", "noise_multiplier": "3/2", "rate": "1/20", "compositions": 50,
      "delta": "1e-5", "conversion": "balle"}, None, None),
])
def test_the_infimum_lower_end_is_proved_and_a_too_high_one_is_not_accepted(inputs, truth, alpha) -> None:
    conv = inputs["conversion"]
    mech = rdp._Mech(inputs)
    d = Fraction(inputs["delta"])
    with mpmath.workdps(40):
        if truth is None:
            # the infimum by golden-section search over log(alpha - 1) on the directed values
            # at 200 bits (their midpoints): a proposal; the test asserts the two directions
            A = arith(200)

            def h(t):
                a = Fraction(mpmath.nstr(1 + mpmath.exp(t), 30))
                return mpfr_to_mpf(rdp._eps_at(A, mech, conv, a, d, 80)[1]), a

            v, a_best = h(_golden_mp(lambda t: h(t)[0], mpmath.mpf(-3), mpmath.mpf(6), 70))
            alpha = f"{a_best.numerator}/{a_best.denominator}"
        else:
            v = mpmath.mpf(truth)
        good = _eps_result(v * (1 - mpmath.mpf(10) ** -9), v * (1 + mpmath.mpf(10) ** -9), alpha)
        bad = _eps_result(v * (1 + mpmath.mpf(10) ** -9), v * (1 + 2 * mpmath.mpf(10) ** -9), alpha)
    assert _accepts(inputs, good)
    assert not _accepts(inputs, bad)


def test_abc_gain_encloses_an_mpmath_minimisation() -> None:
    """eps_MA - eps_0 at sigma 20, T = 1000, delta 1e-5 (ABC Fig. 2) against golden-section
    search of Balle's conversion on mpmath at 50 digits."""
    with mpmath.workdps(50):
        rho_t, dm = mpmath.mpf(1000) / 800, mpmath.mpf(10) ** -5
        f = lambda t: (rho_t * (1 + mpmath.exp(t)) + mpmath.log1p(-1 / (1 + mpmath.exp(t)))  # noqa: E731
                       - (mpmath.log(dm) + mpmath.log(1 + mpmath.exp(t))) / mpmath.exp(t))
        ref = rho_t + mpmath.sqrt(4 * rho_t * mpmath.log(1 / dm)) - f(_golden_mp(f, mpmath.mpf(-5), mpmath.mpf(5), 200))
    r = rdp.recheck_abc_gain({"noise_multiplier": "20", "compositions": 1000, "delta": "1e-5"},
                             {"enclosure": {"lo": "0.758", "hi": "0.759"}})
    with mpmath.workdps(50):
        assert r.lo <= ref <= r.hi
        assert r.hi - r.lo <= mpmath.mpf(10) ** -14

"""The directed-rounding / exact re-checks of the (eps, delta) kinds, the LT
transform kinds and finite.identity, each against an independent route: mpmath at
80+ digits with its own ncdf / exp and quadrature (a different implementation, at a
precision far beyond the enclosures' width), exact rationals by brute force, or a
derivation in a comment. Each enclosure must contain the reference and be narrow."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.recheck import dp, identities, profiles, transforms
from dpverify.recheck.core import arith, mpfr_to_mpf

REF = 80


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _inside(lo, hi, ref, rel=1e-25, absolute=0) -> None:
    with mpmath.workdps(REF):
        lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
        assert lo <= ref <= hi, (lo, ref, hi)
        assert hi - lo <= abs(ref) * mpmath.mpf(rel) + absolute, (lo, hi, ref)


_THIRTY = {"enclosure": {"lo": "1", "hi": "1.000000000000000000000000000001"}}


# --------------------------------------------------------------------------- dp.profile

def _hinge_ref(P, Q, eps):
    E = mpmath.exp(_mp(eps))
    return mpmath.fsum(max(p - E * q, 0) for p, q in zip(P, Q))


def _four_ref(e0: F, d0: F, eps: F):
    u = mpmath.exp(_mp(e0))
    d = _mp(d0)
    P = [d, (1 - d) * u / (1 + u), (1 - d) / (1 + u), 0]
    return _hinge_ref(P, P[::-1], eps)


def _laplace_ref(b: F, eps: F):
    # the hockey-stick of Laplace(0, b) against Laplace(1, b) by quadrature over the
    # output x (not the closed form): int (p(x) - e^eps q(x))_+ dx, split at the kinks
    B, e = _mp(b), _mp(eps)
    p = lambda x: mpmath.exp(-abs(x) / B) / (2 * B)  # noqa: E731
    q = lambda x: mpmath.exp(-abs(x - 1) / B) / (2 * B)  # noqa: E731
    x0 = (1 - B * e) / 2  # p > e^eps q iff x < x0 (for |eps| < 1/b)
    f = lambda x: max(p(x) - mpmath.exp(e) * q(x), 0)  # noqa: E731
    pts = sorted({mpmath.mpf(0), mpmath.mpf(1), min(max(x0, -50), 50)})
    return mpmath.quad(f, [-mpmath.inf, *pts, mpmath.inf])


PROFILE_CASES = [
    ({"mechanism": "gaussian", "mu": "1/2"}, "1/3", lambda e: mpmath.ncdf(-_mp(e) * 2 + mpmath.mpf(1) / 4)
     - mpmath.exp(_mp(e)) * mpmath.ncdf(-_mp(e) * 2 - mpmath.mpf(1) / 4)),
    ({"mechanism": "gaussian", "noise_multiplier": "2", "sensitivity": "3"}, "-1/2",
     lambda e: mpmath.ncdf(-_mp(e) / mpmath.mpf(1.5) + mpmath.mpf(0.75))
     - mpmath.exp(_mp(e)) * mpmath.ncdf(-_mp(e) / mpmath.mpf(1.5) - mpmath.mpf(0.75))),
    ({"mechanism": "pure", "eps0": "1"}, "1/4", lambda e: _four_ref(F(1), F(0), e)),
    ({"mechanism": "approx", "eps0": "1/2", "delta0": "1/100"}, "-1", lambda e: _four_ref(F(1, 2), F(1, 100), e)),
    ({"mechanism": "rr", "p": "3/4"}, "1/5", lambda e: _hinge_ref([mpmath.mpf(3) / 4, mpmath.mpf(1) / 4],
                                                               [mpmath.mpf(1) / 4, mpmath.mpf(3) / 4], e)),
    ({"mechanism": "subsampled", "rate": "1/10", "eps0": "1", "delta0": "1/1000"}, "1/20",
     lambda e: mpmath.mpf(1) / 10 * _four_mp_at(F(1), F(1, 1000), mpmath.log(1 + mpmath.expm1(_mp(e)) * 10))),
    ({"mechanism": "sgd-example"}, "3/2", lambda e: mpmath.exp(-_mp(e) ** 2)),
    ({"mechanism": "icea-example"}, "2", lambda e: 4 * mpmath.exp(-2) / _mp(e)),
    ({"mechanism": "expr", "profile": "0.5*exp(-eps) + Phi(-eps)**2 / (1 + eps**3)"}, "7/10",
     lambda e: mpmath.exp(-_mp(e)) / 2 + mpmath.ncdf(-_mp(e)) ** 2 / (1 + _mp(e) ** 3)),
    # integer exponents (also written 2.0) of a negative base stay real; 0^b = 0 for b > 0 (the + 1 keeps
    # the value, 3/8, in [0, 1]: outside it no expression is a privacy profile, and verify refuses it)
    ({"mechanism": "expr", "profile": "(eps - 1)**2.0/4 + 2**-3 + (eps - 1)**3 + eps**0.5 + 1"}, "0",
     lambda e: mpmath.mpf(1) / 4 + mpmath.mpf(1) / 8 - 1 + 1),
    ({"mechanism": "expr", "profile": "min(1, sqrt(eps) * log1p(eps) ** (3/2))"}, "1/3",
     lambda e: min(1, mpmath.sqrt(_mp(e)) * mpmath.log1p(_mp(e)) ** mpmath.mpf(1.5))),
]


def _four_mp_at(e0: F, d0: F, e) -> mpmath.mpf:
    u = mpmath.exp(_mp(e0))
    d = _mp(d0)
    P = [d, (1 - d) * u / (1 + u), (1 - d) / (1 + u), 0]
    E = mpmath.exp(e)
    return mpmath.fsum(max(p - E * q, 0) for p, q in zip(P, P[::-1]))


@pytest.mark.parametrize("inputs,eps,ref", PROFILE_CASES)
def test_profile_enclosures_contain_the_high_precision_value(inputs, eps, ref) -> None:
    r = profiles.recheck_profile({**inputs, "eps": eps}, _THIRTY)
    with mpmath.workdps(REF):
        _inside(r.lo, r.hi, ref(F(eps)), absolute=mpmath.mpf(10) ** -60)


@pytest.mark.parametrize("b,eps", [("1", "1/3"), ("2", "-1/4"), ("1/2", "3"), ("1", "-3"), ("4", "1/4")])
def test_laplace_profile_against_quadrature(b, eps) -> None:
    r = profiles.recheck_profile({"mechanism": "laplace", "scale": b, "eps": eps}, _THIRTY)
    with mpmath.workdps(40):
        ref = _laplace_ref(F(b), F(eps))
        assert r.lo - mpmath.mpf(10) ** -30 <= ref <= r.hi + mpmath.mpf(10) ** -30
        assert r.hi - r.lo <= mpmath.mpf(10) ** -28


@pytest.mark.parametrize("name,ref_point", [("sgd-example", "1.187"), ("icea-example", "1.159")])
def test_refinement_point_bracket_holds_the_root_of_k(name, ref_point) -> None:
    """GDPT App B prints eps2 ~ 1.187 (sgd) and eps3 ~ 1.159 (icea); mpmath's findroot of
    k at 60 digits lies in the proved bracket."""
    a, b = profiles.refinement_bracket(name, 200)
    with mpmath.workdps(60):
        K = 4 * mpmath.exp(-2)
        f, fd = ((lambda x: mpmath.exp(-x * x), lambda x: -2 * x * mpmath.exp(-x * x)) if name == "sgd-example"
                 else (lambda x: K / x, lambda x: -K / x ** 2))
        root = mpmath.findroot(lambda x: fd(x) * (1 + mpmath.exp(x)) + mpmath.exp(x) * (1 - f(x)), mpmath.mpf(1.17))
        assert _mp(a) <= root <= _mp(b) and b - a <= F(1, 2 ** 200)
        assert abs(root - mpmath.mpf(ref_point)) < 5e-3  # GDPT prints three digits, rounded loosely


def test_expression_power_tower_is_refused_before_work() -> None:
    for text in ("10**10**10**10*eps", "9**9**9**9**9**9*eps", "exp(exp(exp(100)))"):
        with pytest.raises(MalformedCertificate):
            profiles.recheck_profile({"mechanism": "expr", "profile": text, "eps": "1"}, _THIRTY)


def test_expression_undefined_at_its_point_is_exit_2_and_one_at_its_domain_edge_exit_3() -> None:
    # log(1 - 1) is log(0) exactly: the argument's enclosure is [0, 0], proved outside the domain, an
    # input the producer refuses (exit 2, adv36 W2). 1/3*3 is an interval around 1 (1/3 is rounded
    # outward), so eps - 1/3*3 straddles 0: not proved either way, exit 3
    with pytest.raises(MalformedCertificate, match="undefined"):
        profiles.recheck_profile({"mechanism": "expr", "profile": "log(eps - 1)", "eps": "1"}, _THIRTY)
    with pytest.raises(CouldNotReprove):
        profiles.recheck_profile({"mechanism": "expr", "profile": "0.5*exp(log(eps - 1/3*3))", "eps": "1"}, _THIRTY)


# --------------------------------------------------------------------------- compositions

def _brute_composition(types, t: F) -> mpmath.mpf:
    """1 - R + R E[(1 - e^{t - S})_+] by enumerating every sign pattern (2^k outcomes)
    on mpmath at REF digits: an independent route from the binomial sum / recursion."""
    seq = [(e, d) for e, d, c in types for _ in range(c)]
    R = mpmath.fprod((1 - _mp(d)) for _, d in seq)
    acc = mpmath.mpf(0)
    for signs in itertools.product((1, -1), repeat=len(seq)):
        w, s = mpmath.mpf(1), F(0)
        for (e, _), sg in zip(seq, signs):
            E = mpmath.exp(_mp(e))
            w *= E / (1 + E) if sg > 0 else 1 / (1 + E)
            s += sg * e
        acc += w * max(0, -mpmath.expm1(_mp(t - s)))
    return 1 - R + R * acc


@pytest.mark.parametrize("types,t", [
    (((F(1, 2), F(0), 9),), F(1)),                       # one type: LT Cor 4.7
    (((F(1, 10), F(1, 1000), 8),), F(-1, 5)),
    (((F(1, 2), F(1, 100), 2), (F(1, 3), F(0), 3)), F(1, 4)),   # recursion (5 mechanisms)
    (((F(1, 5), F(0), 7), (F(1, 7), F(1, 10 ** 6), 6)), F(1, 2)),  # forward law (13 > 12)
])
def test_composed_profile_encloses_the_brute_force_sum(types, t) -> None:
    with mpmath.workdps(REF):
        ref = _brute_composition(types, t)
    lo, hi = dp._profile_iv(arith(256), types, t)
    _inside(mpfr_to_mpf(lo), mpfr_to_mpf(hi), ref, rel=1e-60)


@pytest.mark.parametrize("types,t", [
    # incommensurable steps: 41 x 41 distinct shifts (the compose --mech 0.1,1e-5 --mech 0.123456789,0 row)
    (((F(1, 10), F(1, 10 ** 5), 40), (F(123456789, 10 ** 9), F(0), 40)), F(1)),
    # commensurable steps: 0.1 (2Y - 9) and 0.2 (2Z - 5) shifts merge on one key
    (((F(1, 10), F(0), 9), (F(1, 5), F(1, 1000), 5)), F(3, 10)),
    (((F(1, 2), F(0), 6), (F(1, 3), F(0), 4), (F(1, 4), F(1, 100), 5)), F(0)),
])
def test_forward_law_encloses_the_written_out_binomial_sum(types, t) -> None:
    """The forward law (binomial per type, convolved on integer keys) against the composed
    profile written out as a sum over the per-type counts Y_i ~ Bin(c_i, p_i) in mpmath at
    REF digits: 1 - R + R sum_y prod_i Bin(c_i, p_i)(y_i) (1 - e^(t - sum_i eps_i (2 y_i - c_i)))_+.
    No merging of keys happens in the reference, so a wrong merge in the law shows."""
    with mpmath.workdps(REF):
        R = mpmath.fprod((1 - _mp(d)) ** c for _, d, c in types)
        pmf = []
        for e, _, c in types:
            p = 1 / (1 + mpmath.exp(-_mp(e)))
            pmf.append([mpmath.binomial(c, y) * p ** y * (1 - p) ** (c - y) for y in range(c + 1)])
        acc = mpmath.mpf(0)
        for ys in itertools.product(*(range(c + 1) for _, _, c in types)):
            s = sum((e * (2 * y - c) for (e, _, c), y in zip(types, ys)), F(0))
            if s > t:
                acc += mpmath.fprod(pm[y] for pm, y in zip(pmf, ys)) * -mpmath.expm1(_mp(t - s))
        ref = 1 - R + R * acc
    lo, hi = dp._profile_iv(arith(256), types, t)
    _inside(mpfr_to_mpf(lo), mpfr_to_mpf(hi), ref, rel=1e-60)


def test_composition_eps_bracket_is_proved_or_refused() -> None:
    """eps(delta) of 10-fold (1/2, 0): its true value (bisection at 80 digits on the profile
    sum_y Bin(10, p)(y) (1 - e^(t - (2y - 10)/2))_+, the binomial law written out) inside a
    recorded [lo, hi] is accepted; a bracket moved past it is refused."""
    delta = F(1, 100)

    def d(t):
        p = mpmath.exp(mpmath.mpf(1) / 2) / (1 + mpmath.exp(mpmath.mpf(1) / 2))
        return mpmath.fsum(mpmath.binomial(10, y) * p ** y * (1 - p) ** (10 - y)
                           * max(0, -mpmath.expm1(t - mpmath.mpf(2 * y - 10) / 2)) for y in range(11))

    with mpmath.workdps(REF):
        lo, hi = mpmath.mpf(2), mpmath.mpf(5)  # d(2) > 1/100 > d(5) = 0
        for _ in range(150):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > _mp(delta) else (lo, mid)
        root = (lo + hi) / 2
        enc = mpmath.nstr(root - mpmath.mpf(10) ** -20, 30), mpmath.nstr(root + mpmath.mpf(10) ** -20, 30)
        moved = mpmath.nstr(root + mpmath.mpf(10) ** -15, 30), mpmath.nstr(root + 2 * mpmath.mpf(10) ** -15, 30)
    inputs = {"mechs": ["1/2,0"], "k": 10, "delta": "1/100"}
    r = dp.recheck_composition_eps(inputs, {"enclosure": {"lo": enc[0], "hi": enc[1]}})
    with mpmath.workdps(REF):
        assert r.lo <= root <= r.hi
    with pytest.raises(CertificateRejected):
        dp.recheck_composition_eps(inputs, {"enclosure": {"lo": moved[0], "hi": moved[1]}})


# --------------------------------------------------------------------------- rr64, implies, sigma

def _rows_exact_sup(eps0: F, delta0: F, eps: F) -> mpmath.mpf:
    u, E, d = mpmath.exp(_mp(eps0)), mpmath.exp(_mp(eps)), _mp(delta0)
    P = [[d, 0, (1 - d) * u / (1 + u), (1 - d) / (1 + u)], [0, d, (1 - d) / (1 + u), (1 - d) * u / (1 + u)]]
    return max(mpmath.fsum(P[s][i] - E * P[1 - s][i] for i in range(4) if m >> i & 1)
               for s in (0, 1) for m in range(16))


@pytest.mark.parametrize("eps0,delta0,eps", [("1", "1/10", "1/2"), ("2", "0", "-3"), ("1/2", "1/3", "-1/4")])
def test_rows_enclose_the_brute_force_sup(eps0, delta0, eps) -> None:
    with mpmath.workdps(REF):
        ref = _rows_exact_sup(F(eps0), F(delta0), F(eps))
    r = dp.recheck_rr64({"eps0": eps0, "delta0": delta0, "eps": eps}, _THIRTY)
    _inside(r.lo, r.hi, ref)


def test_implies_verdicts() -> None:
    base = {"eps0": "1", "delta0": "1/10", "eps": "1/2"}
    with mpmath.workdps(REF):
        sup = _rows_exact_sup(F(1), F(1, 10), F(1, 2))
        above = mpmath.nstr(sup * (1 + mpmath.mpf(10) ** -20), 40)
        below = mpmath.nstr(sup * (1 - mpmath.mpf(10) ** -20), 40)
    assert dp.recheck_implies({**base, "delta": above}, _THIRTY).verdict == "holds"
    assert dp.recheck_implies({**base, "delta": below}, _THIRTY).verdict == "fails"
    # eps >= eps0: the sup is delta0 exactly, so delta = delta0 holds and anything below fails
    assert dp.recheck_implies({"eps0": "1", "delta0": "1/10", "eps": "1", "delta": "1/10"}, _THIRTY).verdict == "holds"
    assert dp.recheck_implies({"eps0": "1", "delta0": "1/10", "eps": "2",
                               "delta": "0.0999999999999999999999"}, _THIRTY).verdict == "fails"


@pytest.mark.parametrize("which", ["eps0", "delta0", "sigma"])
def test_sigma_refinement_against_a_golden_section_search(which) -> None:
    """GDPT Sec 5.2 at (0.2, e^-2): the minimiser of sigma by mpmath's findroot of the
    numerical derivative at 80 digits (the old route) inside the proved enclosure; GDPT
    prints sigma ~ 8.086."""
    with mpmath.workdps(REF):
        a, D = mpmath.exp(mpmath.mpf(1) / 5), mpmath.exp(-2)
        d0 = lambda x: (D * (1 + mpmath.exp(x)) - mpmath.exp(x) + a) / (1 + a)  # noqa: E731
        sig = lambda x: -mpmath.log(d0(x)) / x  # noqa: E731
        lo, hi = mpmath.mpf("0.2"), mpmath.mpf("0.5")  # sigma' < 0 at 0.2, > 0 at 0.5
        for _ in range(250):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mpmath.diff(sig, mid) < 0 else (lo, mid)
        x = (lo + hi) / 2
        ref = {"eps0": x, "delta0": d0(x), "sigma": sig(x)}[which]
    r = dp.recheck_sigma({"eps": "1/5", "log_delta": "-2", "which": which}, _THIRTY)
    _inside(r.lo, r.hi, ref, rel=1e-28)
    if which == "sigma":
        assert abs(ref - mpmath.mpf("8.086")) < 1e-3


# --------------------------------------------------------------------------- finite.identity

def test_tradeoff_inverse_by_brute_force() -> None:
    """The left-continuous inverse against a brute-force definition: f evaluated on a
    fine rational grid of alpha (exactly), the first grid point with f <= beta bounds the
    infimum from above, the previous one from below."""
    P, Q = [F(1, 2), F(1, 4), F(1, 8), F(1, 8)], [F(1, 8), F(1, 8), F(1, 4), F(1, 2)]
    for beta in (F(0), F(1, 3), F(1, 2), F(7, 8), F(1)):
        inv = identities._f_inverse(P, Q, beta)
        grid = [F(i, 512) for i in range(513)]
        first = next((a for a in grid if identities._f(P, Q, a) <= beta), F(1))
        assert first - F(1, 512) <= inv <= first
        assert identities._f(P, Q, inv) <= beta


@pytest.mark.parametrize("ident,args", [("lt-eq7", {"r": "3/2"}), ("afa-lemma46", {"r": "2/3"}),
                                        ("afa-lemma19", {"r": "1/2"}), ("lt-eq19", {"r": "2"}),
                                        ("lt-eq21", {"q": "3"}), ("lt-eq12", {"beta": "1/3"}),
                                        ("lt-thm5.1", {"r": "3/2", "lam": "1/3"})])
def test_identities_hold_exactly_and_a_perturbed_pmf_is_caught(ident, args) -> None:
    P, Q = ["1/2", "1/4", "1/4"], ["1/4", "1/4", "1/2"]
    r = identities.recheck_identity({"identity": ident, "P": P, "Q": Q, **args}, {})
    assert r.verdict == "holds" and r.lo == 0 == r.hi


# --------------------------------------------------------------------------- LT transforms

def _mech_mp(name: str, a):
    """The mechanism's PLD tails and profile on mpmath (the old second route)."""
    if name == "gaussian":
        h = a * a / 2
        return (lambda t: mpmath.ncdf(-t / a + a / 2) - mpmath.exp(t) * mpmath.ncdf(-t / a - a / 2),
                lambda x: mpmath.ncdf((h - x) / a), lambda y: mpmath.ncdf((y - h) / a), [])
    if name == "laplace":
        s = a
        mid = lambda z: mpmath.exp(-(s - z) / 2) / 2  # noqa: E731
        return ((lambda t: (1 - mpmath.exp(t)) if t < -s else ((1 - mpmath.exp((t - s) / 2)) if t < s else 0)),
                lambda x: 1 if x < -s else ((1 - mid(x)) if x < s else 0),
                lambda y: 0 if y < -s else (mid(y) if y < s else 1), [-s, s])
    p = mpmath.exp(a) / (1 + mpmath.exp(a))
    return ((lambda t: max(p - mpmath.exp(t) * (1 - p), 0) + max(1 - p - mpmath.exp(t) * p, 0)),
            lambda x: 1 if x < -a else (p if x < a else 0),
            lambda y: 0 if y < -a else ((1 - p) if y < a else 1), [-a, a])


def _quad(f, a, b, kinks):
    return mpmath.quad(f, [a, *sorted(k for k in kinks if a < k < b), b])


@pytest.mark.parametrize("name,param", [("gaussian", "1"), ("gaussian", "3/2"), ("laplace", "3/2"),
                                        ("rr", "1"), ("laplace", "1/2")])
@pytest.mark.parametrize("eps", ["1/2", "-1/4", "3", "-3"])
def test_eq22_eq23_integrals_against_quadrature(name, param, eps) -> None:
    a, e = F(param), F(eps)
    A = arith(256)
    with mpmath.workdps(40):
        prof, sf, cdfp, kinks = _mech_mp(name, _mp(a))
        E = _mp(e)
        v22 = _quad(lambda t: mpmath.exp(-t) * sf(t + E), mpmath.mpf(0), mpmath.inf, [k - E for k in kinks])
        v23 = mpmath.exp(E) * _quad(lambda t: mpmath.exp(t) * cdfp(-t - E), mpmath.mpf(0), mpmath.inf,
                                    [-k - E for k in kinks])
        for ident, ref in (("eq22", v22), ("eq23", v23)):
            lo, hi = transforms.tail_integral(A, name, a, e, ident)
            assert mpfr_to_mpf(lo) - mpmath.mpf(10) ** -30 <= ref <= mpfr_to_mpf(hi) + mpmath.mpf(10) ** -30
            assert hi - lo < 1e-60
            # and LT Thm 3.2: the integral is the profile
            assert abs(ref - prof(E)) < mpmath.mpf(10) ** -30


@pytest.mark.parametrize("name,param,q,lim", [("gaussian", "1", "1/2", 40), ("gaussian", "1", "3", 10),
                                              ("laplace", "3/2", "1/2", 20), ("rr", "1", "2", 5),
                                              ("laplace", "1", "-1", 7), ("rr", "1/2", "1/2", 30)])
def test_partial_transform_against_quadrature(name, param, q, lim) -> None:
    a, Q = F(param), F(q)
    with mpmath.workdps(40):
        prof, _, _, kinks = _mech_mp(name, _mp(a))
        qq = _mp(Q)
        ref = qq * (qq - 1) * _quad(lambda t: mpmath.exp((qq - 1) * t) * prof(t), mpmath.mpf(-lim), mpmath.mpf(lim),
                                    kinks)
        r = transforms.recheck_partial({"mechanism": name, "param": param, "q": q, "A": lim, "B": lim}, _THIRTY)
        assert r.lo - abs(ref) * mpmath.mpf(10) ** -30 <= ref <= r.hi + abs(ref) * mpmath.mpf(10) ** -30


@pytest.mark.parametrize("name,param,q", [("laplace", "3/2", ("2", "0")), ("rr", "1", ("3", "5")),
                                          ("rr", "1", ("3/2", "0")), ("laplace", "1/2", ("5/4", "-2")),
                                          ("gaussian", "1", ("2", "3"))])
def test_whole_line_transform_against_quadrature(name, param, q) -> None:
    """int e^((q-1)t) delta(t) dt over the line (Re q > 1) by mpmath quadrature at 40 digits
    against the closed form in directed rounding; the residual of eq. (27) encloses 0."""
    a = F(param)
    qc = (F(q[0]), F(q[1]))
    A = arith(256)
    with mpmath.workdps(40):
        prof, _, _, kinks = _mech_mp(name, _mp(a))
        z = mpmath.mpc(_mp(qc[0]), _mp(qc[1]))
        f = lambda t: mpmath.exp((z - 1) * t) * prof(t)  # noqa: E731
        # the integrand oscillates and decays like e^((Re q - 1) t) as t -> -inf: many short pieces
        pts = sorted(set(mpmath.linspace(-300, 40, 170)) | set(kinks))
        ref = mpmath.quad(f, [-mpmath.inf, *pts]) + mpmath.quad(f, [50, mpmath.inf])
        re, im = transforms.weighted_profile_integral(A, name, a, qc, None, None)
        tol = abs(ref) * mpmath.mpf(10) ** -25
        assert mpfr_to_mpf(re[0]) - tol <= ref.real <= mpfr_to_mpf(re[1]) + tol
        assert mpfr_to_mpf(im[0]) - tol <= ref.imag <= mpfr_to_mpf(im[1]) + tol
    r = transforms.recheck_residual({"identity": "eq27", "mechanism": name, "param": param,
                                     "q_re": q[0], "q_im": q[1]}, {})
    assert r.lo == 0 and r.hi < 1e-60


def test_transform_outside_its_region_of_convergence_is_exit_3() -> None:
    with pytest.raises(CouldNotReprove):
        transforms.recheck_residual({"identity": "eq27", "mechanism": "laplace", "param": "1",
                                     "q_re": "1/2", "q_im": "0"}, {})


@pytest.mark.parametrize("types", [
    ((F(1, 10), F(0), 9), (F(1, 5), F(1, 1000), 5)),
    ((F(1, 2), F(0), 6), (F(1, 3), F(0), 4), (F(1, 4), F(1, 100), 5), (F(0), F(1, 10), 3)),
    ((F(9, 4000), F(0), 30), (F(11, 4000), F(0), 20)),  # a grid's multiples: m = 9, 11
])
def test_both_law_routes_enclose_every_weight(types, monkeypatch) -> None:
    """The law on the lattice (exact packed integer products at unit 2^-K, rounded down /
    up) and the dictionary convolution each enclose every merged weight of the law written
    out in mpmath at REF digits (sum over the per-type counts with equal shifts added)."""
    with mpmath.workdps(REF):
        ref: dict = {}
        pmf = []
        for e, _, c in types:
            p = 1 / (1 + mpmath.exp(-_mp(e)))
            pmf.append([mpmath.binomial(c, y) * p ** y * (1 - p) ** (c - y) for y in range(c + 1)])
        for ys in itertools.product(*(range(c + 1) for _, _, c in types)):
            s = sum((e * (2 * y - c) for (e, _, c), y in zip(types, ys)), F(0))
            ref[s] = ref.get(s, 0) + mpmath.fprod(pm[y] for pm, y in zip(pmf, ys))
    lattice = dict(dp._law_iv.__wrapped__(types, 200))
    assert dp._law_plan(types, 200)[0] == "lattice"
    monkeypatch.setattr(dp, "_law_plan", lambda ty, prec: ("convolution", 0))
    convolution = dict(dp._law_iv.__wrapped__(types, 200))
    for law in (lattice, convolution):
        assert set(law) == set(ref)
        for s, (lo, hi) in law.items():
            _inside(mpfr_to_mpf(lo), mpfr_to_mpf(hi), ref[s], rel=1e-50)


def test_law_work_is_priced_before_any_product() -> None:
    """adv37 P1: four incommensurable eps_i at k = 36 (37^4 = 1.9e6 shifts) at 1000 bits: the
    lattice spans about 10^9 points and the convolution needs 1.9e6 products, both beyond the
    caps: exit 3 at once (it ran 31 CPU s and 2.5 GB before). The same four on the grid 0.0025
    (multiples 40, 50, 94, 139 at k = 200: 64,600 lattice points) take the lattice route."""
    eps = [F(1, 10), F(1234567, 10**7), F(2345671, 10**7), F(3456781, 10**7)]
    with pytest.raises(CouldNotReprove, match="work cap"):
        dp._law_plan(tuple((e, F(0), 36) for e in eps), 1000)
    h = F(1, 400)
    assert dp._law_plan(tuple((h * math.ceil(e / h), F(0), 200) for e in eps), 64)[0] == "lattice"


@pytest.mark.parametrize("e,c,lo", [(F(1, 10), 40, 0), (F(3, 2), 25, 7), (F(1, 100), 3000, 1490)])
def test_binomial_weights_by_the_ratio_recurrence(e, c, lo) -> None:
    """adv38 K1: the weights C(c, y) p^y (1-p)^(c-y) come from p^c and the ratio e^-eps y/(c-y+1)
    (no integer binomial per y); each encloses mpmath's value at REF digits, narrowly."""
    ws = dp._binomial_iv(arith(200), e, c, lo)
    assert len(ws) == c - lo + 1
    with mpmath.workdps(REF):
        p = 1 / (1 + mpmath.exp(-_mp(e)))
        for y, (a, b) in zip(range(lo, c + 1), ws):
            _inside(mpfr_to_mpf(a), mpfr_to_mpf(b), mpmath.binomial(c, y) * p ** y * (1 - p) ** (c - y), rel=1e-50)


def test_one_guarantee_beyond_the_producers_count_is_exit_2() -> None:
    """The producer composes at most 399,999 steps of one guarantee (exit 2 beyond); a forged
    k = 10^9 ran 164 CPU s in verify before (adv38 K1)."""
    with pytest.raises(MalformedCertificate, match="at most 399999"):
        dp._types({"mechs": ["0.1,1e-8"], "k": 10**9})


@pytest.mark.parametrize("types", [
    ((F(1, 10), F(1, 10**8), 399_999), (F(0), F(1, 10**8), 399_999)),  # adv39 K2's certificate
    ((F(1, 10), F(12345678901234567, 10**24), 399_999),),
    ((F(1, 2), F(1, 3), 40_000), (F(1), F(999, 1000), 7)),  # R near 10^-7065: 1 - R near 1
])
def test_survival_product_is_enclosed_without_forming_the_rational(types) -> None:
    """adv39 K2: R = prod (1 - delta_i)^k_i as a Fraction had 3.2M-digit terms whose gcds (one C
    call, beyond the budget's reach) kept verify busy for minutes on a genuine 700-byte
    certificate. Past _EXACT_SURVIVAL_BITS it is exp(L), 1 - R = -expm1(L), L = sum k_i
    log1p(-delta_i) outward; both enclose mpmath's values at REF digits (its own log1p and
    expm1, a different implementation), narrowly."""
    assert dp._survival_exact(types) is None
    (r0, r1), (m0, m1) = dp._survival_iv(arith(200), types)
    with mpmath.workdps(REF):
        L = mpmath.fsum(c * mpmath.log1p(-_mp(d)) for _, d, c in types)
        _inside(mpfr_to_mpf(r0), mpfr_to_mpf(r1), mpmath.exp(L), rel=1e-50)
        _inside(mpfr_to_mpf(m0), mpfr_to_mpf(m1), -mpmath.expm1(L), rel=1e-50)


def test_survival_product_decides_no_finite_eps_or_says_it_cannot() -> None:
    """delta against 1 - R, the limit of the composed profile: decided by the enclosures at
    rising precision where R is not formed exactly (true sides from mpmath in the comment:
    1 - (1 - 1e-8)^799998 = 0.0079683...), and an exact tie, which intervals cannot prove, is
    exit 3 rather than a guess."""
    types = ((F(1, 10), F(1, 10**8), 399_999), (F(0), F(1, 10**8), 399_999))
    assert dp._against_no_eps(types, F(8, 1000)) == 1
    assert dp._against_no_eps(types, F(7, 1000)) == -1
    small = ((F(1, 10), F(1, 10), 3),)  # exact route: 1 - 0.9^3 = 0.271
    assert dp._against_no_eps(small, F(271, 1000)) == 0
    assert dp._against_no_eps(small, F(270, 1000)) == -1


def test_total_mechanisms_beyond_the_producers_cap_is_exit_2() -> None:
    """Two types of 6,000,000 steps: 12,000,000 mechanisms, past the producer's 10^7
    (MAX_COMPOSED_MECHANISMS), which the single-type cap did not see (adv39 K2's forgery)."""
    with pytest.raises(MalformedCertificate, match="at most 10000000"):
        dp._types({"mechs": ["0.1,1e-8", "0.2,1e-8"], "k": 6_000_000})


@pytest.mark.parametrize("grid", ["0", "-0.03"])
def test_a_composition_grid_of_zero_or_below_is_exit_2(grid) -> None:
    """adv39 G1: the producer refuses --grid H <= 0; verify answered exit 3 (a division by zero,
    or crossed sub-enclosures) instead of naming the input."""
    inputs = {"mechs": ["0.1,1e-8"], "k": 3, "grid": grid}
    with pytest.raises(MalformedCertificate, match="inputs.grid"):
        dp._check_grid(inputs, {}, lambda types, res: None)


def test_survival_product_of_pure_dp_types_and_deltas_near_one() -> None:
    """adv40 S2: 70,000 steps of (0.1, 0) were priced at a bit a step, so R = 1 was not formed and
    delta = 0 = 1 - R was undecidable (exit 3 on a genuine certificate): a delta_i = 0 factor is 1.
    adv40 S1: delta_i = 1 - 10^-50, k = 400: -delta_i rounded outward reached -1 and log1p raised;
    log(1 - delta_i) of the exact rational is used past 1/2. Both against mpmath at REF digits."""
    assert dp._survival_exact(((F(1, 10), F(0), 70_000),)) == 1
    assert dp._against_no_eps(((F(1, 10), F(0), 70_000),), F(0)) == 0
    d = 1 - F(1, 10**50)
    types = ((F(1, 10), d, 400),)
    assert dp._survival_exact(types) is None
    (r0, r1), (m0, m1) = dp._survival_iv(arith(200), types)
    with mpmath.workdps(REF):
        _inside(mpfr_to_mpf(r0), mpfr_to_mpf(r1), mpmath.mpf(10) ** -20000, rel=1e-50)
    assert m0 <= 1 <= m1 and 1 - m0 < 1e-50
    assert dp._against_no_eps(types, F(1, 2)) == -1

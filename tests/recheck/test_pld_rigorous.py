"""The PLD re-check's directed-rounding parts against independent routes.

* interval tails (:func:`gauss_tails`, :func:`laplace_tails`, :func:`finite_tails`) must
  contain the same tails written out in mpmath at 1000 bits, and be narrow;
* the composed bounds of T Gaussian steps at sampling rate 1 must contain the closed form
  of the Gaussian mechanism with mu sqrt(T) (composition of Gaussians is Gaussian,
  GDPT Cor 3.3): delta(eps) = Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2), and eps(delta)
  its root (mpmath bisection at 1000 bits);
* the discretisation's integers must agree with a mpmath reference discretisation to the
  one unit of margin that one carries.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings, strategies as st

from dpverify.recheck import pld as P
from dpverify.recheck.core import arith, to_fraction, mpfr_to_mpf

HP = 400


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


# --------------------------------------------------------------------------- mpmath references
# the same tails and discretisation written out in mpmath (estimates at high precision, no
# directed rounding): what the interval route must enclose


def _ref_gauss_tails(sig, q, direction: str, e):
    mu = 1 / sig
    if q == 1:
        return mpmath.ncdf(-e / mu + mu / 2), mpmath.ncdf(-e / mu - mu / 2)
    if direction == "remove":
        a = mpmath.expm1(e) + q
        if a <= 0:
            return mpmath.mpf(1), mpmath.mpf(1)
        x = (mpmath.log(a / q) + mu * mu / 2) / mu
        return (1 - q) * mpmath.ncdf(-x) + q * mpmath.ncdf(mu - x), mpmath.ncdf(-x)
    a = mpmath.expm1(-e) + q
    if a <= 0:
        return mpmath.mpf(0), mpmath.mpf(0)
    x = (mpmath.log(a / q) + mu * mu / 2) / mu
    pt = mpmath.ncdf(x)
    return pt, (1 - q) * pt + q * mpmath.ncdf(x - mu)


def _ref_laplace_tails(b, q, direction: str, e):
    """Subsampled Laplace (scale b, sensitivity 1) on the densities' survival functions. At q = 1 the
    loss support's ends are -1/b and 1/b themselves (not the logs of their exponentials, which may land
    on either side of a knot on the end: there the tails are P(L > 1/b) = 0 and P(L > -1/b) =
    1 - e^(-1/b) / 2, x_e = 0)."""
    if q == 1:
        lo_end, hi_end = -1 / b, 1 / b
    else:
        lmin = mpmath.log(1 - q + q * mpmath.exp(-1 / b))
        lmax = mpmath.log(1 - q + q * mpmath.exp(1 / b))
        lo_end, hi_end = (lmin, lmax) if direction == "remove" else (-lmax, -lmin)
    if e >= hi_end:
        return mpmath.mpf(0), mpmath.mpf(0)
    if e < lo_end:
        return mpmath.mpf(1), mpmath.mpf(1)
    s0 = lambda x: mpmath.exp(-x / b) / 2  # noqa: E731
    s1 = lambda x: 1 - mpmath.exp((x - 1) / b) / 2  # noqa: E731
    if direction == "remove":
        x = (b * mpmath.log((mpmath.expm1(e) + q) / q) + 1) / 2
        return (1 - q) * s0(x) + q * s1(x), s0(x)
    x = (b * mpmath.log((mpmath.expm1(-e) + q) / q) + 1) / 2
    return 1 - s0(x), (1 - q) * (1 - s0(x)) + q * (1 - s1(x))


def _ref_discretise(tails, i0: int, n: int, K: int, m: int):
    """Connect-the-dots masses and quantised masses on knots i0..n of the grid 2^-m, in
    units 2^-K, from mpmath tails with one unit of margin each way (upper and Q-masses
    up, P-masses down; no mass at +inf here)."""
    h, unit = mpmath.mpf(2) ** -m, mpmath.mpf(2) ** K
    pts = [tails(i * h) for i in range(i0, n + 1)]
    xs = [mpmath.exp(i * h) for i in range(i0, n + 1)]
    ds = [p - x * qq for (p, qq), x in zip(pts, xs)]
    sl = [(ds[0] - 1) / xs[0]] + [(ds[t] - ds[t - 1]) / (xs[t] - xs[t - 1]) for t in range(1, len(ds))] + [0]
    up = [max(0, int(mpmath.ceil(xs[t] * (sl[t + 1] - sl[t]) * unit)) + 1) for t in range(len(ds))]
    lp = [max(0, int(mpmath.floor((pts[t][0] - pts[t + 1][0]) * unit)) - 1) for t in range(len(ds) - 1)]
    lq = [int(mpmath.ceil((pts[t][1] - pts[t + 1][1]) * unit)) + 1 for t in range(len(ds) - 1)]
    return up, lp, lq


def _inside(iv, ref: mpmath.mpf, width: mpmath.mpf) -> None:
    with mpmath.workprec(HP + 20):
        a, b = mpfr_to_mpf(iv[0]), mpfr_to_mpf(iv[1])
        assert a <= ref <= b, (a, ref, b)
        assert b - a <= width, (a, b)


@settings(max_examples=40, deadline=None)
@given(sig=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(13, 4)]),
       q=st.sampled_from([Fraction(1, 1000), Fraction(1, 10), Fraction(1, 2), Fraction(1)]),
       direction=st.sampled_from(["remove", "add"]), i=st.integers(-600, 600))
def test_gaussian_tails_enclose_mpmath_at_1000_bits(sig: Fraction, q: Fraction, direction: str, i: int) -> None:
    A = arith(160)
    e = Fraction(i, 64)
    got = P.gauss_tails(sig, q, direction)(A, A.dyadic(i, 6))
    with mpmath.workprec(HP):
        ref = _ref_gauss_tails(_mp(sig), _mp(q), direction if q != 1 else "remove", _mp(e))
    for g, r in zip(got, ref):
        _inside(g, r, mpmath.mpf(2) ** -140)


@pytest.mark.parametrize("sig,q", [(Fraction(1), Fraction(1, 100)), (Fraction(1, 2), Fraction(1, 2)),
                                   (Fraction(13, 4), Fraction(1, 1000))])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_gaussian_tails_at_knots_enclose_mpmath(sig: Fraction, q: Fraction, direction: str) -> None:
    """The one-loop evaluation at every knot of a grid (what the discretisation uses) against
    the mpmath tails at 1000 bits, over a range that reaches both ends (e^e - 1 + q <= 0 for
    the remove direction's lowest knots, far tails at the top), and against the per-knot
    interval route (same roundings: the same enclosures)."""
    A, m = arith(150), 7
    tails = P.gauss_tails(sig, q, direction)
    lo, hi = -900, 900
    got = tails.at_knots(A, lo, hi, m)
    assert got == [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    with mpmath.workprec(HP):
        for i in range(lo, hi + 1, 7):
            ref = _ref_gauss_tails(_mp(sig), _mp(q), direction, mpmath.mpf(i) / 2 ** m)
            for g, r in zip(got[i - lo], ref):
                if g[0] == 0 and g[1] == 1:
                    continue  # "somewhere in [0, 1]" at an undecided end: sound, loose
                _inside(g, r, mpmath.mpf(2) ** -130)


@settings(max_examples=40, deadline=None)
@given(b=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(3)]),
       q=st.sampled_from([Fraction(1, 100), Fraction(1, 3), Fraction(1)]),
       direction=st.sampled_from(["remove", "add"]), i=st.integers(-300, 300))
def test_laplace_tails_enclose_mpmath_at_1000_bits(b: Fraction, q: Fraction, direction: str, i: int) -> None:
    A = arith(160)
    got = P.laplace_tails(b, q, direction)(A, A.dyadic(i, 7))
    with mpmath.workprec(HP):
        ref = _ref_laplace_tails(_mp(b), _mp(q), direction, _mp(Fraction(i, 128)))
    for g, r in zip(got, ref):
        with mpmath.workprec(HP):
            a, c = mpfr_to_mpf(g[0]), mpfr_to_mpf(g[1])
            assert a <= r <= c, (a, r, c)  # [0, 1] at an undecided range end is allowed: still contains


def test_finite_tails_are_exact_sums() -> None:
    A = arith(64)
    P_, Q_ = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6), Fraction(0)], [Fraction(0), Fraction(1, 6),
                                                                               Fraction(1, 3), Fraction(1, 2)]
    t = P.finite_tails(P_, Q_)
    assert t.inf == Fraction(1, 2)
    (p, q) = t(A, A.dyadic(0, 8))  # L > 0: the atom with P/Q = 2 only
    assert to_fraction(p[0]) <= Fraction(1, 3) <= to_fraction(p[1]) and p[1] - p[0] < 2.0**-60
    assert to_fraction(q[0]) <= Fraction(1, 6) <= to_fraction(q[1]) and q[1] - q[0] < 2.0**-60


def _gauss_delta(m: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("sigma,steps,eps", [("2", 1, "0.5"), ("1", 4, "1"), ("3", 16, "0.25")])
def test_composed_gaussian_delta_contains_closed_form(sigma: str, steps: int, eps: str) -> None:
    inputs = {"noise_multiplier": sigma, "sampling_rate": "1", "steps": steps, "neighboring": "add-remove"}
    with mpmath.workdps(40):
        E = mpmath.mpf(eps)
        lo, hi = P._bounds(inputs, "delta", E, mpmath.mpf("0.1"), E, 9)
    with mpmath.workprec(HP):
        true = _gauss_delta(mpmath.sqrt(steps) / mpmath.mpf(sigma), mpmath.mpf(eps))
        assert lo <= true <= hi
        assert hi - lo < true * mpmath.mpf(10) ** -2  # and the enclosure says something


@pytest.mark.parametrize("sigma,steps,delta", [("2", 1, "1e-5"), ("1", 9, "1e-6")])
def test_composed_gaussian_eps_contains_the_root(sigma: str, steps: int, delta: str) -> None:
    inputs = {"noise_multiplier": sigma, "sampling_rate": "1", "steps": steps, "neighboring": "add-remove"}
    with mpmath.workdps(40):
        D = mpmath.mpf(delta)
        lo, hi = P._bounds(inputs, "eps", D, D, mpmath.mpf(0), 9)
    with mpmath.workprec(HP):
        m = mpmath.sqrt(steps) / mpmath.mpf(sigma)
        a, b = mpmath.mpf(0), mpmath.mpf(60)  # delta(eps) decreases: bisection to 2^-200
        for _ in range(210):
            c = (a + b) / 2
            a, b = (c, b) if _gauss_delta(m, c) > mpmath.mpf(delta) else (a, c)
        root = a
        assert lo <= root and b <= hi
        assert hi - lo < root * mpmath.mpf(10) ** -2


def test_discretisation_agrees_with_the_mpmath_route_to_its_margin() -> None:
    """The mpmath reference discretisation carries one unit of margin each way (and
    rounds from mpmath values); the interval one none: their integers differ by at most 2."""
    K, m = 80, 9
    tau = mpmath.mpf(10) ** -15
    s, q = Fraction(3, 2), Fraction(1, 5)
    new_u, new_l = P._discretise(P.gauss_tails(s, q, "remove"), K, tau, m)
    i0, n = new_u[0], new_u[0] + len(new_u[1]) - 1
    with mpmath.workdps(60):
        old_up, old_lp, old_lq = _ref_discretise(lambda x: _ref_gauss_tails(_mp(s), _mp(q), "remove", x),
                                                 i0, n, K, m)
    assert len(new_u[1]) == len(old_up)
    assert all(0 <= o - n <= 2 for n, o in zip(new_u[1], old_up))  # the reference rounds up one more
    assert all(0 <= n - o <= 2 for n, o in zip(new_l[1], old_lp))  # the reference rounds P down one more
    assert all(0 <= o - n <= 2 for n, o in zip(new_l[2], old_lq))


def test_format1_schedule_counts_as_digit_strings() -> None:
    """Format 1 (0.1.0) wrote dataset_size and batch_size as digit strings: the frozen
    certificate tests/certificate/format1/main-pld-epsilon-epochs.json was refused as
    malformed (exit 2) once the schedule check wanted integers."""
    import json
    from pathlib import Path

    from dpverify.errors import CertificateRejected

    path = Path(__file__).parents[1] / "certificate" / "format1" / "main-pld-epsilon-epochs.json"
    inputs = json.loads(path.read_text())["inputs"]
    assert isinstance(inputs["dataset_size"], str)
    P.check_tf_schedule(inputs)  # the recorded schedule is consistent
    with pytest.raises(CertificateRejected):
        P.check_tf_schedule({**inputs, "steps": str(inputs["steps"] + 1)})


def _trim_one_by_one(v: list, budget: int) -> tuple:
    """The trimming rule written as its definition: drop leading masses while their sum stays
    within the budget (keeping one), then trailing ones likewise."""
    a, s = 0, 0
    while a < len(v) - 1 and s + v[a] <= budget:
        s += v[a]
        a += 1
    b, t = len(v), 0
    while b - 1 > a and t + v[b - 1] <= budget:
        t += v[b - 1]
        b -= 1
    return a, s, b, t


@settings(max_examples=300, deadline=None)
@given(v=st.lists(st.sampled_from([0, 0, 1, 2, 5, 100, 10 ** 6]), min_size=1, max_size=1200),
       budget=st.sampled_from([0, 1, 3, 10, 1000, 10 ** 7, 10 ** 12]))
def test_trim_takes_the_longest_ends_within_the_budget(v: list, budget: int) -> None:
    assert P._trim(P._Seq.of(v, 64), budget) == _trim_one_by_one(v, budget)


def _convolve(a: list, b: list) -> list:
    """The product of two integer sequences by its definition, one term at a time."""
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


@settings(max_examples=150, deadline=None)
@given(a=st.lists(st.integers(0, 2 ** 12), min_size=1, max_size=40),
       b=st.lists(st.integers(0, 2 ** 12), min_size=1, max_size=40),
       K=st.sampled_from([3, 8, 12]), budget=st.sampled_from([0, 1, 5, 100]),
       ia=st.integers(0, 3), ib=st.integers(0, 3), square=st.booleans())
def test_packed_products_are_the_rounded_convolution_trimmed(a: list, b: list, K: int, budget: int,
                                                            ia: int, ib: int, square: bool) -> None:
    """The packed pair products (rounded on the packed integer, trimmed on cut-out slots, slots
    widened when totals outgrow them) against the convolution by definition, rounded per
    coefficient and trimmed one by one: the upper pair rounds up and moves the trimmed front onto
    the first kept point and the back to +inf; the lower pair rounds P down and Q up and drops the
    classes trimmed by P."""
    if square:
        b, ib = a, ia
    ceil = [-((-c) >> K) for c in _convolve(a, b)]
    x = (-2, a, ia)
    y = x if square else (5, b, ib)
    lo, s, hi, t = _trim_one_by_one(ceil, budget)
    kept = ceil[lo:hi]
    kept[0] += s
    got = P._mul_upper(x, y, K, budget)
    assert (got[0], [int(c) for c in got[1]], got[2]) == (x[0] + y[0] + lo, kept, ia + ib + t)
    floor = [c >> K for c in _convolve(a, b)]
    qa, qb = a[::-1], b[::-1]
    qceil = [-((-c) >> K) for c in _convolve(qa, qb)]
    lo, _, hi, _ = _trim_one_by_one(floor, budget)
    lx, ly = (0, a, qa, 0), (0, b, qb, 0)
    got = P._mul_lower(lx, lx if square else ly, K, budget)
    assert (got[0], [int(c) for c in got[1]], [int(c) for c in got[2]]) == (lo, floor[lo:hi], qceil[lo:hi])


def test_packed_product_widens_slots_that_its_totals_outgrow() -> None:
    """Slots of 24 bits cannot hold the exact coefficients of a product whose totals are 5 2^10
    and 3 2^11 (up to 15 2^21 > 2^24 - 2^2): the product repacks both factors in wider slots, and
    its coefficients are the exact convolution rounded down."""
    a, b = [2 ** 10] * 5, [2 ** 11] * 3
    got = P._product(P._Seq.of(a, 24), P._Seq.of(b, 24), 2, False)
    assert got.s > 24 and [int(c) for c in got.coeffs()] == [c >> 2 for c in _convolve(a, b)]


@pytest.mark.parametrize("end", ["hi", "lo"])
def test_an_end_moved_by_one_millionth_is_refused_on_the_packed_route(end: str) -> None:
    """The frozen pld.claim fixture (delta(2) of sigma = 2, q = 0.1, T = 10, add-remove, recorded to
    relative width 1.5e-6 on the grid 2^-14) with one end moved inward by a relative 10^-6, its
    relative width restated and the digest recomputed (a forger's certificate). The re-derivation
    (packed exact products of the connect-the-dots and grouped pairs) encloses delta(2) so tightly
    that the moved end excludes it: refused as false (exit 1), not merely left unconfirmed (exit
    3). The genuine certificate is accepted (the test can fail both ways)."""
    import copy
    import json
    from pathlib import Path

    from ..certs import outcome, reseal

    cert = json.loads((Path(__file__).parents[1] / "certificate" / "format2" / "pld-claim.json").read_text())
    assert outcome(copy.deepcopy(cert)) == 0
    enc = cert["result"]["enclosure"]
    move = Fraction(1) - Fraction(1, 10 ** 6) if end == "hi" else Fraction(1) + Fraction(1, 10 ** 6)
    enc[end] = f"{float(Fraction(enc[end]) * move):.17g}"
    cert["result"]["relative_width"] = f"{float((Fraction(enc['hi']) - Fraction(enc['lo'])) / Fraction(enc['lo'])):.3g}"
    assert outcome(reseal(cert)) == 1


def test_fixed_batch_max_curve_tails_at_the_knots_equal_the_pointwise_tails() -> None:
    """The fixed-batch (AFA Cor 32) pair's tails at the grid knots, from both Poisson pairs' one-loop
    evaluations, are the very enclosures of the per-point route (the same roundings and the same
    choice between the two curves at every knot, e = 0 included)."""
    from dpverify.recheck import wor

    tails, _ = wor.wor_make(Fraction(11, 10), 256, 60000)("replace")
    A = arith(150)
    for m in (5, 9):
        assert tails.at_knots(A, -300, 2000, m) == [tails(A, A.dyadic(i, m)) for i in range(-300, 2001)]


def _above(pair: tuple, n: int) -> dict:
    """{absolute index: mass} of an unpacked pair's masses (upper: its one list; lower: P and Q
    zipped) at indices above n."""
    off, *seqs = pair[:-1]
    return {off + k: tuple(int(s[k]) for s in seqs) for k in range(len(seqs[0])) if off + k > n}


def _upper_delta_at(pair: tuple, c: int) -> int:
    """The upper pair's mass above index c plus its mass at +inf (exact integers)."""
    off, v, inf = pair
    return inf + sum(int(x) for k, x in enumerate(v) if off + k > c)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.integers(0, 2 ** 10), min_size=1, max_size=12),
       b=st.lists(st.integers(0, 2 ** 10), min_size=1, max_size=9),
       off_a=st.integers(-6, 3), off_b=st.integers(-4, 4), T=st.integers(1, 13), U=st.integers(1, 5),
       need=st.integers(-40, 90), two=st.booleans(), K=st.sampled_from([0, 6]))
def test_products_cut_below_the_read_index_are_exact_above_it(a, b, off_a, off_b, T, U, need, two, K) -> None:
    """The last products cut to what the query reads (``_compose_side`` with a read index, the
    power's last squaring and last product among them) against the same products uncut: with no
    trim budget, the upper pair's masses above the read index ``need``, its mass at +inf, the
    lower pair's classes above need - (steps) are the same integers; and, with exact products
    (units 2^0: no rounding, which adds a unit per coefficient and so depends on their number),
    the cut upper pair lies above the uncut one everywhere (the moved mass only went up: its mass
    above every index is at least the uncut one's), so a wrong read index loosens and never
    under-reports."""
    budget = 0
    steps_u = [(T, P._pack_upper((off_a, a, 1), K))] + ([(U, P._pack_upper((off_b, b, 0), K))] if two else [])
    qa, qb = a[::-1], b[::-1]
    steps_l = [(T, P._pack_lower((off_a, a, qa, 0), K))] + ([(U, P._pack_lower((off_b, b, qb, 0), K))] if two else [])
    total = T + (U if two else 0)
    full_u = P._unpack(P._compose_side([(t, d, None) for t, d in steps_u], 1, P._pmul_upper, K, budget, None))
    cut_u = P._unpack(P._compose_side([(t, d, None) for t, d in steps_u], 1, P._pmul_upper, K, budget,
                                      P._Reader(need, True)))
    assert _above(cut_u, need) == _above(full_u, need) and cut_u[2] == full_u[2]
    lo = min(full_u[0], cut_u[0]) - 1
    hi = max(full_u[0] + len(full_u[1]), cut_u[0] + len(cut_u[1]))
    assert K or all(_upper_delta_at(cut_u, c) >= _upper_delta_at(full_u, c) for c in range(lo, hi + 1))
    full_l = P._unpack(P._compose_side([(t, None, d) for t, d in steps_l], 2, P._pmul_lower, K, budget, None))
    cut_l = P._unpack(P._compose_side([(t, None, d) for t, d in steps_l], 2, P._pmul_lower, K, budget,
                                      P._Reader(need - total, False)))
    assert _above(cut_l, need - total) == _above(full_l, need - total)


@pytest.mark.parametrize("kind,target", [("delta", "0.06"), ("delta", "0.03"), ("eps", "1.1e-18")])
def test_composition_read_above_the_query_gives_the_same_bounds(kind: str, target: str) -> None:
    """prv_accountant #17's mechanism (a Poisson-subsampled Gaussian, sigma 4, q = 0.00033,
    10^4 steps) on the grid 2^-12, its last products cut below where the query reads, against the
    same composition uncut: delta(eps) read above eps, and eps(delta) read above a lower bound of
    eps(delta) (the uncut route's own lower end), give the same [lo, hi] to the last bit, and the
    cut took knots away (the query sits in the far tail, where the cut pays)."""
    events = [(lambda d: (P.gauss_tails(Fraction(4), Fraction(33, 100000), d), mpmath.mpf(0)), 10000)]
    m = 12
    with mpmath.workdps(40):
        t = mpmath.mpf(target)
        K, tau, budget = P._units(t if kind == "eps" else mpmath.mpf("1e-17"), t if kind == "delta" else 0, 10000)
        U, L = P._compose(events, "remove", K, tau, budget, m)
        read = P._eps_bounds if kind == "eps" else P._delta_bounds
        full = read(U, L, t, K, m)
        token = P._EPS_FLOOR.set(("remove", full[0]))
        try:
            need = P._read_above(kind, t, "remove", m)
        finally:
            P._EPS_FLOOR.reset(token)
        assert need is not None
        U2, L2 = P._compose(events, "remove", K, tau, budget, m, need=need)
        assert len(U2[1]) < len(U[1])
        assert read(U2, L2, t, K, m) == full


def _exact_power(c: list, T: int) -> list:
    """The exact T-fold convolution power of nonnegative integers (Python integers, no rounding)."""
    out = [1]
    for _ in range(T):
        nxt = [0] * (len(out) + len(c) - 1)
        for i, x in enumerate(out):
            if x:
                for j, y in enumerate(c):
                    nxt[i + j] += x * y
        out = nxt
    return out


def _curve(off: int, masses: list, unit: int, inf: Fraction, m: int, eps: Fraction) -> mpmath.mpf:
    """inf + sum_k masses_k 2^-unit (1 - e^(eps - (off + k) 2^-m))+ at 60 digits."""
    s = mpmath.mpf(inf.numerator) / inf.denominator
    for k, c in enumerate(masses):
        loss = Fraction(off + k, 2**m)
        if c and loss > eps:
            s += mpmath.mpf(c) * mpmath.mpf(2) ** -unit * -mpmath.expm1(_mp(eps - loss))
    return s


@pytest.mark.parametrize("T", [1, 3])
@pytest.mark.parametrize("drop", [20, 45])
def test_pairs_in_a_coarser_unit_bound_the_exact_power_of_the_fine_pairs(T: int, drop: int) -> None:
    """The upper pair and the lower pair's P composed in the coarser unit 2^-(K - drop)
    (:func:`P._compose`'s ``upper_drop``) against the exact integer T-fold powers of the pairs
    discretised at 2^-K: the upper delta(eps) curve lies above the exact one at every knot, every
    lower P-mass (and the +inf mass) below the exact one, and Q is the one in 2^-K (a coarse mass
    rounded the wrong way, or a unit converted back wrongly, breaks one of these: at T = 1 no
    product's outward rounding hides it); each by at most a few coarse units."""
    K, m = 70, 5
    tau = mpmath.mpf(10) ** -12
    tails = P.gauss_tails(Fraction(1), Fraction(1, 5), "remove")
    events = [(lambda d: (tails, mpmath.mpf(0)), T)]
    with mpmath.workdps(40):
        (off, c, inf), (loff, lp, lq, linf) = P._discretise(tails, K, tau, m)
        U, L = P._compose(events, "remove", K, tau, 0, m, upper_drop=drop)
    assert all(int(v) % (1 << drop) == 0 for v in U[1]) and U[2] % (1 << drop) == 0
    assert all(int(v) % (1 << drop) == 0 for v in L[1]) and L[3] % (1 << drop) == 0
    Y = _exact_power([int(v) for v in c], T)  # units 2^-(K T), exact
    alpha = Fraction(inf, 2**K)
    inf_exact = 1 - (1 - alpha) ** T
    lo_k, hi_k = T * off - 1, T * off + len(Y) + 1
    with mpmath.workdps(60):
        worst = mpmath.mpf(0)
        for j in range(lo_k, hi_k, max(1, (hi_k - lo_k) // 60)):
            eps = Fraction(j, 2**m)
            got = _curve(U[0], [int(v) for v in U[1]], K, Fraction(U[2], 2**K), m, eps)
            ref = _curve(T * off, Y, K * T, inf_exact, m, eps)
            assert got >= ref, (j, got, ref)
            worst = max(worst, got - ref)
        assert worst <= (T + 1) * len(U[1]) * mpmath.mpf(2) ** (drop - K)
    PY, QY = _exact_power([int(v) for v in lp], T), _exact_power([int(v) for v in lq], T)
    # no budget: only classes of P-mass 0 are trimmed (a coarse unit floors far tails to 0)
    sh = L[0] - T * loff
    assert sh >= 0 and sh + len(L[1]) <= len(PY)
    unit = Fraction(1, 2**K)
    for k in range(len(L[1])):
        p_got, p_ref = int(L[1][k]) * unit, Fraction(PY[k + sh], 2 ** (K * T))
        assert p_got <= p_ref <= p_got + 2 * T * 2 ** drop * unit  # T floors, T - 1 products
    if T == 1:  # Q stays in 2^-K, untouched (a product drops the classes whose P-mass is 0 with
        # their Q: a smaller set of outcomes, which (P - e^eps Q)+ summed over disjoint sets allows)
        assert [int(v) for v in L[2]] == QY[sh:sh + len(L[2])]
    l_alpha = Fraction(linf, 2**K)
    assert Fraction(L[3], 2**K) <= 1 - (1 - l_alpha) ** T


@pytest.mark.parametrize("scale,hint,total", [("1e-5", "139", 10**6), ("1e-5", "0", 10**6), ("1e-143", "1", 100),
                                              ("0.3", "3000", 7), ("1e-300", "25.6", 10**5)])
def test_the_unit_drop_is_the_bits_units_added_for_eps(scale, hint, total) -> None:
    """The drop is what :func:`P._units` adds for the eps hint (ceil(1.45 eps) bits, eps capped at
    2000; none where the 64-bit floor of K takes over), less the one bit of slack for reading the
    scale back from tau."""
    with mpmath.workdps(40):
        S, H = mpmath.mpf(scale), mpmath.mpf(hint)
        K, tau, _ = P._units(S, H, total)
        K0 = P._units(S, mpmath.mpf(0), total)[0]
        assert K0 >= 64
        drop = P._upper_drop(K, tau, total)
        assert drop in (max(0, K - K0 - 1), max(0, K - K0 - 2), max(0, K - K0))  # a rounding of the scale's log
        if K0 > 64:
            want = int(mpmath.ceil(mpmath.mpf("1.45") * min(H, mpmath.mpf(2000))))
            assert want - 2 <= drop <= want


@settings(max_examples=80, deadline=None)
@given(v=st.lists(st.integers(0, 2**40), min_size=1, max_size=70), data=st.data())
def test_slots_cut_from_either_end_equal_the_coefficients(v: list, data) -> None:
    """Both ways of cutting slots out of a packed sequence (mask then shift near the front, shift
    then mask near the back) give the coefficients themselves."""
    x = P._Seq.of(v, 48)
    start = data.draw(st.integers(0, len(v)))
    count = data.draw(st.integers(0, len(v) - start))
    assert [int(c) for c in x.slots(start, count)] == v[start:start + count]


@pytest.mark.parametrize("hint,first", [(None, 8), ("2^-10", 8), ("2^-13", 9), ("2^-16", 12), ("2^-24", 12),
                                        ("2^-5", 5)])
def test_the_recorded_grid_proposes_a_first_grid_no_finer_than_2_to_the_minus_12(hint, first):
    """The recorded grid is a hint (untrusted). It proposed a first grid four halvings coarser than
    itself, up to 2^-20: a forged "2^-24" on a true certificate that 2^-12 settles cost 66 CPU s and
    3 GB before exit 3 (adv41 S2). Past 2^-12 the width's own prediction leads. Here the first grid
    settles (it returns the recorded ends), so the grids tried are exactly the first one."""
    from dpverify.recheck.pld import _METER, _grid_for_width

    tried = []

    def compute(m, sides, d, lo):
        if _METER.get().cap >= 0:  # not a dry price (_start_price: this stub charges nothing)
            tried.append(m)
        return mpmath.mpf(1), mpmath.mpf(1)

    result = {"enclosure": {"lo": "0.5", "hi": "1.5"}}
    if hint is not None:
        result["grid"] = hint
    assert _grid_for_width(compute, ["add"], result) == (1, 1)
    assert tried == [first]


@pytest.mark.parametrize("price,first", [(0, 12), (10**8, 12), (2 * 10**8, 11), (10**9, 10), (10**11, 8)])
def test_a_hinted_first_grid_is_a_probe_priced_within_a_share_of_the_cap(price, first):
    """adv52 M3: a forged hint 2^-16 on the T = 10^7 certificate started at 2^-12, priced under the cap
    but 76 CPU s. A hinted first round priced past PLD_MAX_GRID_WORK / 16 (1.5e8 or more) starts a
    halving coarser, down to 2^-8. The stub's round costs price 4^(m - 12) on 2^-m: 1e8 fits at 2^-12,
    2e8 at 2^-11 (5e7), 1e9 at 2^-10 (6.25e7); 1e11 fits nowhere above 2^-8, where the search starts."""
    from dpverify.recheck import pld as P

    tried = []

    def compute(m, sides, d, lo):
        meter = P._METER.get()
        meter.charge(int(price * 4.0 ** (m - 12)) // 3, m, sides)
        if meter.cap >= 0:
            tried.append(m)
        return mpmath.mpf(1), mpmath.mpf(1)

    assert P._grid_for_width(compute, ["add"], {"enclosure": {"lo": "0.5", "hi": "1.5"}, "grid": "2^-16"}) == (1, 1)
    assert tried == [first]

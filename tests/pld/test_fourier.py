"""The certified Fourier power (dpverify/pld/fourier.py) against independent routes:
twiddles and transforms against mpmath at 40 digits, powers against FLINT's
exact integer power of the same polynomial (no floats at all), and whole
queries against the exact-product route."""

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import fmpz, fmpz_poly

from dpverify.pld import fourier as F
from dpverify.pld.compose import power
from dpverify.pld.plan import cheaper_than_exact
from dpverify.pld.discretise import LowerDist, UpperDist
from ..reference import tail_point_per_lambda

K = 48


def _exact(x) -> Fraction:
    m, e = mpmath.mpf(x).man_exp
    return Fraction(int(m)) * Fraction(2) ** int(e)


def test_twiddle_error_bound_holds_against_mpmath():
    F._TW.clear()  # rebuild for this N
    N = 1 << 12
    c, s, mu = F._twiddles(N)
    mu_f = float(mu.mid()) * (1 + 1e-9)
    worst = 0.0
    with mpmath.workdps(40):
        for k in range(0, N // 2, 7):
            t = 2 * mpmath.pi * k / N
            err = mpmath.sqrt((mpmath.mpf(c[k]) - mpmath.cos(t)) ** 2 + (mpmath.mpf(s[k]) - mpmath.sin(t)) ** 2)
            worst = max(worst, float(err))
    assert worst <= mu_f
    assert mu_f < 12 * 2.0 ** -53  # the two-level table costs a few ulps, not more


def test_fft_componentwise_bound_against_mpmath():
    rng = np.random.default_rng(1)
    N = 128
    x = rng.random(N) ** 4
    x[rng.random(N) < 0.3] = 0.0
    re, im, mu = F._fft(x.copy(), np.zeros(N))
    L = 7
    eta = float(mu.mid()) + 5 * 2.0 ** -53
    bound = ((1 + eta) ** L - 1) * float(np.sum(x)) * (1 + 1e-6)
    with mpmath.workdps(40):
        xs = [mpmath.mpf(v) for v in x]
        for f in range(0, N, 3):
            y = mpmath.fsum(xs[i] * mpmath.expjpi(mpmath.mpf(-2 * i * f) / N) for i in range(N))
            assert abs(mpmath.mpc(re[f], im[f]) - y) <= bound


def _natural_fft(re: np.ndarray, im: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The textbook in-place radix-2 loop on the natural layout (bit reversal, then stage
    s = 1..L over blocks of 2^s; stages 1 and 2 with w = 1 and w = -i exact), one numpy
    ufunc per IEEE operation: the sequence of operations the module docstring's error
    bound (3) is proved for, written out independently of fourier.py's layout."""
    N = re.size
    L = N.bit_length() - 1
    perm = np.zeros(1, dtype=np.int64)
    for _ in range(L):
        perm = np.concatenate([2 * perm, 2 * perm + 1])
    re, im = re[perm], im[perm]
    cos, sin, _ = F._twiddles(N)
    for s in range(1, L + 1):
        half = 1 << (s - 1)
        R, I = re.reshape(-1, 2 * half), im.reshape(-1, 2 * half)
        ar, ai = R[:, :half].copy(), I[:, :half].copy()
        br, bi = R[:, half:].copy(), I[:, half:].copy()
        if s == 1:
            tr, ti = br, bi
        elif s == 2:  # w = 1 for j = 0, w = -i for j = 1: w b = (b_i, -b_r) exactly
            tr = np.stack([br[:, 0], bi[:, 1]], axis=1)
            ti = np.stack([bi[:, 0], -br[:, 1]], axis=1)
        else:
            wr = cos[:: N >> s][:half]
            wi = -sin[:: N >> s][:half]
            tr = wr * br - wi * bi
            ti = wr * bi + wi * br
        R[:, :half], I[:, :half] = ar + tr, ai + ti
        R[:, half:], I[:, half:] = ar - tr, ai - ti
    return re, im


def test_fft_layout_is_bit_identical_to_the_natural_loop():
    # the transposed early stages change where results are stored, never an operation:
    # every double (signed zeros included) is the natural loop's, so the proven bound
    # and the bytes of every certificate stand
    rng = np.random.default_rng(7)
    for L in list(range(0, 15)) + [17, 19]:  # 17 and 19: rows capped at 2^8, several cache slices
        N = 1 << L
        zeros = np.where(rng.random(N) < 0.5, 0.0, -0.0)
        cases = [(rng.random(N), np.zeros(N)),
                 (rng.random(N) * 2.0 ** rng.integers(-70, 0, N), rng.random(N) - 0.5),
                 (np.where(rng.random(N) < 0.3, 1.0, zeros), -zeros),
                 (rng.standard_normal(N), rng.standard_normal(N))]
        for x, y in cases:
            got_r, got_i, _ = F._fft(x.copy(), y.copy())
            ref_r, ref_i = _natural_fft(x.copy(), y.copy())
            assert np.array_equal(got_r.view(np.int64), ref_r.view(np.int64)), (L, "re")
            assert np.array_equal(got_i.view(np.int64), ref_i.view(np.int64)), (L, "im")


def test_fft_of_a_zero_padded_vector_copies_its_first_stages_bit_for_bit():
    # fourier._fft(support=n): the stages whose butterflies all have b = +0 are done as copies;
    # every double (signed zeros included) must be the natural loop's, for supports from 1 to
    # N, on real and complex (the packed pair's) nonnegative inputs with +0 padding and zeros
    # inside the support
    rng = np.random.default_rng(13)
    for L in list(range(1, 13)) + [15, 17]:
        N = 1 << L
        for n in sorted({1, 2, 3, 5, N // 3 + 1, N // 2, N // 2 + 1, N - 1, N} - {0}):
            if not 1 <= n <= N:
                continue
            x = np.zeros(N)
            x[:n] = np.where(rng.random(n) < 0.2, 0.0, rng.random(n) * 2.0 ** rng.integers(-70, 0, n))
            for im in (np.zeros(N), np.concatenate((rng.random(n), np.zeros(N - n)))):
                got_r, got_i, _ = F._fft(x.copy(), im.copy(), n)
                ref_r, ref_i = _natural_fft(x.copy(), im.copy())
                assert np.array_equal(got_r.view(np.int64), ref_r.view(np.int64)), (L, n, "re")
                assert np.array_equal(got_i.view(np.int64), ref_i.view(np.int64)), (L, n, "im")


def test_fft_column_slabs_worked_on_as_copies_are_bit_identical():
    # from 2^7 rows of the (2^(L-15), 2^15) matrix on (L = 22), the column stages work on a
    # contiguous copy of each slab (fourier._COPY_ROWS): the copies move doubles, never round
    L = 22
    assert 1 << (L - F._CHUNK_BITS) >= F._COPY_ROWS
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(1 << L), rng.random(1 << L) * 2.0 ** rng.integers(-70, 0, 1 << L)
    got_r, got_i, _ = F._fft(x.copy(), y.copy())
    ref_r, ref_i = _natural_fft(x.copy(), y.copy())
    assert np.array_equal(got_r.view(np.int64), ref_r.view(np.int64))
    assert np.array_equal(got_i.view(np.int64), ref_i.view(np.int64))


def test_fft_bound_on_a_complex_input_against_mpmath():
    # N = 2^11: stages 1..6 run transposed, 7..11 natural; a complex input as in the
    # packed pair transform and the inverse (module docstring 3 and 6)
    rng = np.random.default_rng(5)
    N, L = 1 << 11, 11
    xr, xi = rng.random(N) ** 3, rng.random(N) ** 5
    re, im, mu = F._fft(xr.copy(), xi.copy())
    eta = float(mu.mid()) + 5 * 2.0 ** -53
    bound = ((1 + eta) ** L - 1) * float(np.sum(np.hypot(xr, xi))) * (1 + 1e-6)
    with mpmath.workdps(30):
        xs = [mpmath.mpc(a, b) for a, b in zip(xr, xi)]
        for f in list(range(0, N, 97)) + [1, N // 2, N - 1]:
            y = mpmath.fsum(xs[i] * mpmath.expjpi(mpmath.mpf(-2 * i * f) / N) for i in range(N))
            assert abs(mpmath.mpc(re[f], im[f]) - y) <= bound


def _random_upper(rng: random.Random, n: int, off: int) -> UpperDist:
    # a bumpy distribution with a long thin right tail, total mass <= 1
    w = [rng.random() * (0.5 if i < n // 3 else 1e-6 * rng.random()) for i in range(n)]
    tot = sum(w) * 1.001
    c = [int(v / tot * 2**K) + 1 for v in w]
    return UpperDist(10, K, off, fmpz_poly(c), fmpz(2**K // 10**7))


def _coeffs(p: fmpz_poly) -> list:
    return [int(v) for v in p.coeffs()]


@pytest.mark.parametrize("n,a", [(30, 40), (60, 400)])
def test_upper_power_dominates_the_exact_power(n, a):
    """Every tail sum (including +inf) of the Fourier result is >= that of
    the exact a-fold power: the pessimistic curve is increasing in this order
    (module docstrings of convolve and fourier). (60, 400) has a window
    shorter than the support, so the Chernoff terms are exercised."""
    D = _random_upper(random.Random(n), n, -3)
    R = F.fourier_power(D, a, allowance=2**K // 10**6)
    exact = _coeffs(D.poly ** a)  # units 2^-(K a), exact
    scale = 2 ** (K * (a - 1))
    inf_exact = 2 ** (K * a) - (2**K - int(D.inf)) ** a  # 1 - (1 - alpha)^a, exact
    got = _coeffs(R.poly)
    shift = R.offset - a * D.offset
    if a == 400:
        assert len(got) < len(exact) // 4  # a window, not the whole support
    # suffix sums, from the top
    tail_e = inf_exact
    tail_g = int(R.inf) * scale
    j_top = max(len(exact), shift + len(got))
    for k in range(j_top - 1, -1, -1):
        if k < len(exact):
            tail_e += exact[k]
        if 0 <= k - shift < len(got):
            tail_g += got[k - shift] * scale
        if k >= shift:
            assert tail_g >= tail_e, k
    assert tail_g >= tail_e  # whole mass too
    # tight: the bound is close to the exact law (width of the allowance)
    assert tail_g - tail_e <= 2 ** (K * a) // 10**5


@pytest.mark.parametrize("n,a", [(30, 40), (60, 400)])
def test_lower_power_is_below_the_exact_power(n, a):
    rng = random.Random(7 * n)
    U = _random_upper(rng, n, 2)
    P = fmpz_poly([max(0, int(c) - 3) for c in U.poly.coeffs()])
    Q = fmpz_poly([int(c) // 3 + 1 for c in U.poly.coeffs()])
    D = LowerDist(10, K, 2, P, Q, fmpz(5), Fraction(1, 2048))
    R = F.fourier_power(D, a, allowance=2**K // 10**6)
    eP, eQ = _coeffs(P ** a), _coeffs(Q ** a)
    gP, gQ = _coeffs(R.P), _coeffs(R.Q)
    shift = R.offset - a * D.offset
    scale = 2 ** (K * (a - 1))
    assert R.tilt == a * D.tilt
    # Q: coefficientwise upper bound on the window
    for i, q in enumerate(gQ):
        assert q * scale >= (eQ[i + shift] if i + shift < len(eQ) else 0)
    # P: every suffix of the window, less the deficit, is below the exact suffix
    # (window classes only: the classes above it are not counted)
    suf_g, suf_e = -int(R.deficit) * scale, 0
    for i in range(len(gP) - 1, -1, -1):
        suf_g += gP[i] * scale
        suf_e += eP[i + shift] if i + shift < len(eP) else 0
        assert suf_g <= suf_e
    # +inf: 1 - (1 - alpha)^a from below
    assert int(R.inf) * scale <= 2 ** (K * a) - (2**K - 5) ** a


@pytest.mark.parametrize("m,a,delta", [(9, 1000, Fraction(1, 10**5)), (11, 10**4, Fraction(1, 10**5)),
                                         (10, 3000, Fraction(1, 10**9))])
def test_lower_power_read_floor_keeps_the_classes_the_queries_read(m, a, delta):
    """fourier_power's ``read_above`` (the lower pair's queries read suffixes near the first
    class whose effective loss passes it) drops classes below a float cut only: the classes kept
    are the uncut power's to the bit, a cut was made (most of the window lies below the reads),
    and the eps query's lower end (its suffix window at the upper end) is the same."""
    from dpverify.ball import working_precision
    from dpverify.pld.discretise import discretise
    from dpverify.pld.pairs import SubsampledGaussianPair
    from dpverify.pld.queries import ComposedBounds

    pair = SubsampledGaussianPair(Fraction(4), Fraction(1, 100), "remove")
    K = 72
    with working_precision(K + 64):
        u, low = discretise(pair, m, K, Fraction(1, 10**15))
        allowance = 2 ** K // 10**9
        U = F.fourier_power(u, a, allowance)
        whole = F.fourier_power(low, a, allowance)
        hi = ComposedBounds(U, None).eps_upper(delta)
        cut = F.fourier_power(low, a, allowance, read_above=float(hi))
    k = cut.offset - whole.offset
    assert k > whole.P.length() // 4
    assert _coeffs(cut.P) == _coeffs(whole.P)[k:] and _coeffs(cut.Q) == _coeffs(whole.Q)[k:]
    assert (cut.inf, cut.deficit, cut.tilt) == (whole.inf, whole.deficit, whole.tilt)
    with working_precision(K + 96):
        lo_whole = ComposedBounds(U, whole).eps_lower(delta, float(hi))
        lo_cut = ComposedBounds(U, cut).eps_lower(delta, float(hi))
    assert lo_cut == lo_whole and 0 < lo_cut < hi


def test_declined_when_the_allowance_is_too_small():
    D = _random_upper(random.Random(3), 40, 0)
    with pytest.raises(F.FourierDeclined):
        F.fourier_power(D, 5000, allowance=1)


def test_power_falls_back_to_exact_products_when_declined():
    """power() with a hopeless allowance gives exactly the exact route's result."""
    D = _random_upper(random.Random(4), 20, 0)
    a = power(D, 100, budget=0)
    b = power(D, 100, budget=0, allowance=0)
    assert a == b


def test_queries_agree_with_the_exact_route():
    """eps(1e-5) of DP-SGD (1, 0.01, 1000): the Fourier route (used for T >= 64)
    and the exact products give overlapping certified enclosures of the same
    width class; mpmath's second route is exercised by the certificate tests."""
    from dpverify.pld import dpsgd as S
    from dpverify.pld import refine as A

    fast = S.dpsgd_epsilon("1", "0.01", 1000, "1e-5", rel_width=1e-3)
    orig = A.compose
    try:
        A.compose = lambda parts, budget, tick=None, allowance=None, read_above=None: orig(parts, budget, tick, None)
        exact = S.dpsgd_epsilon("1", "0.01", 1000, "1e-5", rel_width=1e-3)
    finally:
        A.compose = orig
    lo_f, hi_f = fast.enclosure.lo, fast.enclosure.hi
    lo_e, hi_e = exact.enclosure.lo, exact.enclosure.hi
    assert max(lo_f, lo_e) <= min(hi_f, hi_e)
    assert (hi_f - lo_f) <= 1.2 * (hi_e - lo_e)


def test_rounding_mode_probe_refuses_directed_rounding():
    """The error model needs round to nearest; with the x86 rounding mode set
    upward / downward / toward zero (fesetround through ctypes) the probe says
    no and fourier_power declines (the exact products take over)."""
    import ctypes
    import ctypes.util
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("FE_* constants below are x86's")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    D = _random_upper(random.Random(5), 20, 0)
    try:
        for mode in (0x800, 0x400, 0xC00):  # FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO
            assert libm.fesetround(mode) == 0
            assert not F.ieee_round_to_nearest()
            with pytest.raises(F.FourierDeclined):
                F.fourier_power(D, 100, allowance=2**K)
    finally:
        libm.fesetround(0)
    assert F.ieee_round_to_nearest()


# -- properties and the cases an adversarial review found ---------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**20), min_size=2, max_size=24), st.sampled_from([30, 53, 60, 70]),
       st.integers(64, 160), st.integers(0, 2**10), st.booleans())
def test_upper_power_dominates_exact_power_property(w, k, a, inf, spike):
    """Random shapes (zeros, spikes, flat tails) at units below, at and above
    the 53-bit mantissa and the 60-bit output scale: every tail sum of the
    Fourier power is >= the exact one (FLINT's integer power)."""
    if spike:
        w = [0] * (len(w) - 1) + [2**20]
    tot = sum(w) or 1
    c = [v * (2**k - inf) // tot for v in w]
    if not any(c):
        return
    D = UpperDist(6, k, -2, fmpz_poly(c), fmpz(inf))
    try:
        R = F.fourier_power(D, a, allowance=2**k // 10**4)
    except F.FourierDeclined:
        return  # declining is always sound (the caller takes exact products)
    exact = _coeffs(D.poly ** a)
    scale = 2 ** (k * (a - 1))
    got = _coeffs(R.poly)
    shift = R.offset - a * D.offset
    tail_e = 2 ** (k * a) - (2**k - inf) ** a
    tail_g = int(R.inf) * scale
    for idx in range(max(len(exact), shift + len(got)) - 1, -1, -1):
        if idx < len(exact):
            tail_e += exact[idx]
        if 0 <= idx - shift < len(got):
            tail_g += got[idx - shift] * scale
        if idx >= shift:
            assert tail_g >= tail_e


def test_an_input_with_a_deficit_is_declined():
    U = _random_upper(random.Random(9), 20, 0)
    D = LowerDist(10, K, 0, U.poly, U.poly, fmpz(0), Fraction(0), fmpz(5))
    with pytest.raises(F.FourierDeclined):
        F.fourier_power(D, 100, allowance=2**K)


def test_unit_conversion_at_the_default_precision():
    """K = 90 at python-flint's default 53 bits used to round 2^K x to a ball
    without a unique ceiling (TypeError)."""
    rng = random.Random(11)
    c = [rng.randrange(1, 2**60) for _ in range(40)]
    D = UpperDist(10, 90, 0, fmpz_poly(c), fmpz(0))
    R = F.fourier_power(D, 700, allowance=2**90 // 10**6)
    assert R.poly.length() > 0


def test_overflowing_power_declines_instead_of_raising():
    """A tilted Q of mass 2 raised to a = 10^6 overflows binary64: the error
    ratio is not finite, and the Fourier power declines (it raised
    OverflowError in convolve's retry loop)."""
    from dpverify.pld.compose import _power_fourier

    U = _random_upper(random.Random(12), 30, 0)
    Q = fmpz_poly([2 * int(c) for c in U.poly.coeffs()])
    D = LowerDist(10, K, 0, U.poly, Q, fmpz(0), Fraction(0))
    with pytest.raises(F.FourierDeclined):
        _power_fourier(D, 10**6, 0, 2**K // 10**6, None, 0)


@pytest.mark.slow
def test_overflowing_tilted_mass_falls_back_to_exact_products():
    """End to end (36 s): sigma 0.6, q 0.05, 2e6 steps at a coarse width."""
    from dpverify.pld import dpsgd as S

    from dpverify.errors import PrecisionExhausted

    try:  # an enclosure (36 s on an idle machine) or, under load, a clean budget stop
        r = S.dpsgd_epsilon("0.6", "0.05", 2_000_000, "1e-5", rel_width=0.3, time_budget=60)
        assert r.enclosure.lo > 20000
    except PrecisionExhausted as exc:
        assert "time budget" in str(exc)


def test_units_beyond_binary64_go_to_exact_products_without_overflow():
    """delta 1e-300 needs ~1050-bit units: the cost model and the power both
    step aside (the float conversion of such masses overflowed: internal
    error on `audit dpsgd --delta 1e-300`)."""
    K = 1050
    D = UpperDist(10, K, 0, fmpz_poly([2**K // 3, 2**K // 3, 2**K // 3]), fmpz(0))
    assert not cheaper_than_exact(D, 10**4)
    with pytest.raises(F.FourierDeclined):
        F.fourier_power(D, 10**4, allowance=2**(K - 20))


@pytest.mark.parametrize("n, a, N", [(24, 120, 64), (6, 500, 128), (30, 200, 1 << 12)])
def test_power_error_bound_holds_where_most_frequencies_are_not_powered(n, a, N):
    """_Transform.power leaves p_f = 0 where |z^_f|^a is negligible (most of a long
    composition's spectrum) and counts (|z^_f| + e)^a for them. The bound it returns
    must hold coefficientwise: every output of the inverse transform lies within Err of
    the exact cyclic a-fold convolution, computed here from FLINT's exact integer power
    of the same input doubles (no floats), folded mod N, compared as exact rationals."""
    from dpverify.ball import arb_to_fraction, endpoints

    rng = random.Random(n + a)
    w = [rng.random() + 0.05 for _ in range(n)]
    tot = sum(w) * 1.0001
    poly = fmpz_poly([int(v / tot * 2**K) for v in w])
    tr = F._Transform(poly, K, True, N)
    # a tiny target: every frequency that matters is recomputed in arb, so the bound is
    # tight (about 1e-17) and a zeroed frequency that mattered would break it
    err = tr.power(a, 1e-30)
    out = tr.inverse()
    r2 = tr.re * tr.re + tr.im * tr.im
    assert int(np.count_nonzero(tr.pr)) < N // 2  # the zeroed frequencies are exercised
    # the exact input the transform saw: its doubles times 2^(K + 53) are integers
    xs = tr._exact_poly()
    y = [int(c) for c in (xs ** a).coeffs()]
    scale = Fraction(2) ** ((K + 53) * a)
    folded = [0] * N
    for i, c in enumerate(y):
        folded[i % N] += c
    bound = arb_to_fraction(endpoints(err)[1])
    for k in range(N):
        assert abs(_exact(out[k]) - Fraction(folded[k]) / scale) <= bound, k
    assert r2.size == N


@pytest.mark.parametrize("n, a, N", [(20, 60, 64), (6, 400, 128)])
def test_packed_pair_transform_bounds_both_outputs(n, a, N):
    """P and tilted Q share one forward and one inverse transform (fourier docstring 6):
    every output of each lies within the shared Err of the exact cyclic a-fold
    convolution of its own input doubles (FLINT's exact integer power, folded mod N,
    compared as exact rationals), and the unpacked spectra match separate transforms'
    within their bound e. A tiny target makes the bound tight (every frequency that
    matters is recomputed in arb), so a wrong unpacking or a mixed-up half would break it."""
    from dpverify.ball import arb_to_fraction, endpoints

    rng = random.Random(3 * n + a)
    w = [rng.random() + 0.05 for _ in range(n)]
    tot = sum(w) * 1.0001
    P = fmpz_poly([int(v / tot * 2**K) for v in w])
    Q = fmpz_poly([int(v / tot * 2**K * (0.5 + rng.random())) + 1 for v in w])
    xP, xQ = F._floats(P, K, False), F._floats(Q, K, True)
    tP, tQ = F._Transform.pair(P, xP, Q, xQ, K, N)
    for t, x in ((tP, xP), (tQ, xQ)):
        sep = F._Transform(P if t is tP else Q, K, t is tQ, N, x)
        gap = np.abs((t.re - sep.re) + 1j * (t.im - sep.im)).max()
        assert gap <= 2 * float(t.e.mid())  # both within e of the exact DFT
    tP.power(a, 1e-30)
    tQ.power(a, 1e-30)
    err = F._pair_error(tP, tQ)
    yP, yQ = F._inverse_pair(tP, tQ)
    bound = arb_to_fraction(endpoints(err)[1])
    for t, y in ((tP, yP), (tQ, yQ)):
        xs = t._exact_poly()
        scale = Fraction(2) ** ((K + 53) * a)
        folded = [0] * N
        for i, c in enumerate(int(c) for c in (xs ** a).coeffs()):
            folded[i % N] += c
        for k in range(N):
            assert abs(_exact(y[k]) - Fraction(folded[k]) / scale) <= bound, k


def test_a_retry_that_gains_nothing_ends_the_fourier_tries(monkeypatch):
    """A Poisson-subsampled (eps, delta) step (three atoms: its composed law is lattice-like, |z|
    stays near 1 at many frequencies) kept the Fourier power's factor at 1.084 from a = 10^4 down to
    a = 2: thirteen declined transforms (19 s) before the exact products. A retry that gains less than
    RETRY_GAIN is now the last. The lower pair, declined, takes the exact products: its lower end is
    the exact route's own, bit for bit; the upper pair's Fourier power overlaps the exact route's."""
    import dpverify.pld.compose as C
    from dpverify.events import epsilon, model as E
    from dpverify.pld import plan as P, refine as A

    # this event's plan is unchecked: it would now start 4 halvings coarser, at 2^-10, and answer
    # there without a transform (0.12 s); the planned 2^-14 is where the transforms were declined
    monkeypatch.setattr(P, "UNCHECKED_EPS_HALVINGS", 0)

    event = E.SelfComposed(E.PoissonSampled(Fraction(1, 100), E.EpsilonDelta(Fraction(1, 2), Fraction(1, 10**9))),
                           10**4)
    declined = []
    orig = C.fourier_power

    def counted(base, a, allowance, tick, read_above=None):
        try:
            return orig(base, a, allowance, tick, read_above)
        except F.FourierDeclined as e:
            declined.append(e.factor)
            raise

    monkeypatch.setattr(C, "fourier_power", counted)
    fast = epsilon(event, Fraction(1, 10**5), neighboring="add-remove", digits=4)
    assert 0 < len(declined) <= 2, declined
    compose = A.compose
    monkeypatch.setattr(A, "compose", lambda parts, budget, tick=None, allowance=None, read_above=None:
                        compose(parts, budget, tick, None))
    exact = epsilon(event, Fraction(1, 10**5), neighboring="add-remove", digits=4)
    assert fast.enclosure.lo.str(30, radius=True) == exact.enclosure.lo.str(30, radius=True)
    assert max(fast.enclosure.lo, exact.enclosure.lo) <= min(fast.enclosure.hi, exact.enclosure.hi)


@pytest.mark.parametrize("N, W", [(8, 0), (8, 3), (8, 8), (8, 21), (16, 15), (4, 4099)])
def test_window_of_is_the_gather_through_the_cyclic_indices(N, W):
    """fourier._window_of rotates the cyclic output instead of gathering out[(W + i) % N]
    (W past N included: a rotation by W alone picked the wrong window and an enclosure
    came out with lo > hi)."""
    out = np.arange(N, dtype=np.float64) * 1.5 + 0.25
    assert np.array_equal(F._window_of(out, W), out[np.arange(W, W + N) % N])


@pytest.mark.parametrize("n, a, above", [(558, 10**4, True), (558, 10**4, False), (37, 50, True),
                                         (1300, 7, False)])
def test_tail_point_in_place_scan_is_the_per_lambda_scan(n, a, above):
    """The Chernoff scan of fourier._tail_point, worked in place on blocks of lambdas, gives
    the same (t, lambda) as a plain per-lambda evaluation of the same IEEE operations
    (logx + lam idx, exp(z - max), a contiguous pairwise sum), zeros of the input included."""
    rng = np.random.default_rng(n + a)
    x = rng.random(n) * np.exp(-np.linspace(0, 30, n))
    x[rng.integers(0, n, n // 10)] = 0.0
    log_target = math.log(1e-12)
    assert F._tail_point(x, a, log_target, above) == tail_point_per_lambda(x, a, log_target, above)


@pytest.mark.parametrize("K", [60, 74, 900])
def test_power_evaluates_the_exact_input_with_double_coefficients(K):
    """_Transform.power evaluates the input doubles as the arb coefficients of its live
    frequencies' polynomial: each coefficient must be an exact point equal to the integer
    of _exact_poly over 2^(K + 53) (exact rationals), and the polynomial's value at a
    frequency must contain mpmath's sum of the same doubles at 60 digits."""
    from flint import acb, arb, arb_poly, fmpq

    from dpverify.ball import arb_to_fraction, working_precision

    rng = random.Random(K)
    n = 300
    poly = fmpz_poly([0 if rng.random() < 0.1 else rng.randrange(1, 2**K // n) for _ in range(n)]
                     + [rng.randrange(1, 2**20)])
    for up in (True, False):
        tr = F._Transform(poly, K, up, 1024)
        ints = [int(c) for c in tr._exact_poly().coeffs()]
        with working_precision(128):
            P = arb_poly(tr.x.tolist())
            assert P.length() == len(ints)
            for i, c in enumerate(ints):
                assert P[i].rad() == 0
                assert arb_to_fraction(P[i].mid()) == Fraction(c, 2 ** (K + 53)), i
            sn, cs = arb.sin_cos_pi_fmpq(fmpq(2 * 5, 1024))
            z = P(acb(cs, -sn))
        with mpmath.workdps(60):
            w = mpmath.exp(-2j * mpmath.pi * 5 / 1024)
            ref = mpmath.fsum(mpmath.mpf(float(x)) * w ** i for i, x in enumerate(tr.x.tolist()))
            for part, r in ((z.real, ref.real), (z.imag, ref.imag)):
                sign, man, exp, _ = r._mpf_  # mpmath's value exactly, within 1e-55 of the sum
                rf = (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)
                gap = abs(arb_to_fraction(part.mid()) - rf)
                assert gap <= arb_to_fraction(part.rad()) + Fraction(1, 10**55)


@pytest.mark.parametrize("N, n", [(2, 2), (4, 3), (8, 8), (64, 37), (1 << 11, 700), (1 << 12, 4096)])
def test_real_transform_bound_against_mpmath(N, n):
    """_rfft (module docstring 7): one half-length complex transform of x_even + i x_odd and a
    post-pass. Every one of the N Hermitian-extended values lies within its e of the exact DFT
    of the input doubles (mpmath at 40 digits, the exact inputs as mpf); N = 2^11 and 2^12 run
    the half transform's transposed and natural stages, n = N a full support."""
    rng = np.random.default_rng(N + n)
    x = rng.random(n) ** 4
    x[rng.random(n) < 0.2] = 0.0
    from flint import arb
    mass = arb(math.fsum(x.tolist())) * (1 + 2.0 ** -50)  # >= ||x||_1
    re, im, e = F._rfft(x, N, mass)
    bound = float(e.mid()) * (1 + 1e-6)
    # not vacuous: about sqrt2 (L - 1) eta + kappa times ||x||_1 (mu: a few u)
    assert bound < 25 * N.bit_length() * 2.0 ** -53 * float(mass.mid())
    fs = sorted(set(list(range(0, N, max(1, N // 61))) + [1, N // 2 - 1, N // 2, N // 2 + 1, N - 1]) & set(range(N)))
    with mpmath.workdps(40):
        xs = [mpmath.mpf(v) for v in x]
        for f in fs:
            y = mpmath.fsum(xs[i] * mpmath.expjpi(mpmath.mpf(-2 * i * f) / N) for i in range(n))
            assert abs(mpmath.mpc(re[f], im[f]) - y) <= bound, f


@pytest.mark.parametrize("N", [2, 8, 256, 1 << 11])
@pytest.mark.parametrize("hermitian", [True, False])
def test_real_inverse_bound_against_exact_rationals(N, hermitian):
    """_irfft (module docstring 7): from a spectrum p within SE of a Hermitian h (exactly
    Hermitian or not), every output lies within _irfft_error(N, S1, SE, hermitian) of the
    exact real IDFT of h (mpmath at 40 digits, exact inputs). The non-Hermitian case puts one
    perturbation where it moves Re c_0 by 2 |d| / N: charged SE once, it would fail."""
    from dpverify.ball import arb_to_fraction, endpoints
    from flint import arb
    rng = np.random.default_rng(N)
    x = rng.random(N) ** 2
    h = np.fft.fft(x) ** 3  # any doubles: made exactly Hermitian below
    hr, hi = h.real.copy(), h.imag.copy()
    N2 = N // 2
    hr[N2 + 1:] = hr[1:N2][::-1]
    hi[N2 + 1:] = -hi[1:N2][::-1]
    hi[0] = hi[N2] = 0.0
    pr, pi = hr.copy(), hi.copy()
    SE = 0.0
    if not hermitian:
        # d at f = 3N/4: IFFT(p) - IFFT(h) = d e^{-i pi n / 2} / N, and Re c_0 = Re y_0 - Im y_1
        # moves by d / N + d / N (N = 2: i d at f = 1, which no real p_1 could be)
        d = 1e-3 * float(np.abs(hr).max())
        if N > 2:
            pr[3 * N // 4] += d
        else:
            pi[1] += d
        SE = d
        assert not F._hermitian(pr, pi)
    else:
        assert F._hermitian(pr, pi)
    S1 = math.fsum(np.hypot(pr, pi).tolist()) * (1 + 1e-12)
    err = F._irfft_error(N, arb(S1), arb(SE), F._hermitian(pr, pi))
    out = F._irfft(pr, pi)
    bound = arb_to_fraction(endpoints(err)[1])
    with mpmath.workdps(40):
        hs = [mpmath.mpc(a, b) for a, b in zip(hr, hi)]
        worst = 0
        for k in range(0, N, max(1, N // 97)):
            y = mpmath.fsum(hs[g] * mpmath.expjpi(mpmath.mpf(2 * g * k) / N) for g in range(N)) / N
            assert abs(y.imag) < 1e-30 * max(1, abs(y.real))
            gap = abs(Fraction(mpmath.mpf(out[k]).man_exp[0]) * Fraction(2) ** mpmath.mpf(out[k]).man_exp[1]
                      - _exact(y.real)) if out[k] != 0 else abs(_exact(y.real))
            worst = max(worst, gap)
            assert gap <= bound, k
    if not hermitian:  # the factor 2 is needed: once SE would not cover the worst output
        assert worst > Fraction(SE) / N * Fraction(1999, 1000) or N == 2

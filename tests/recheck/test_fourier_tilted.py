"""The tilted certified Fourier power of the upper pair (:func:`fourier.fourier_upper_tilted`,
design tilt44 section 1) against an independent route: the exact a-fold convolution of the same
integer masses in Python integers (numpy object arrays, no floats), and, through
:func:`pld._power`, the exact products of the re-check itself on the same integers."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from mpmath import mpf

from dpverify.recheck import fourier as F
from dpverify.recheck import pld as P


def _exact(c: list, a: int) -> list:
    """(c)^{*a} in exact integers (binary powering of object-array convolutions)."""
    r = np.array([1], dtype=object)
    b = np.array(c, dtype=object)
    while a:
        if a & 1:
            r = np.convolve(r, b)
        a >>= 1
        if a:
            b = np.convolve(b, b)
    return [int(v) for v in r.tolist()]


def _dominates(out: tuple, exact: list, off: int, a: int, inf_in: int, K: int) -> Fraction:
    """Asserts the upper pair ``out`` dominates the exact power (units 2^-K): its first index
    holds at least the exact mass at and below it, every later index at least the exact mass
    there, +inf at least the exact mass past the window plus the composed +inf mass. Returns
    the excess over the exact masses on the indices above the first (units)."""
    o, v, inf = out
    sh = K * (a - 1)
    W = o - a * off
    assert 0 <= W < len(exact)
    assert v[0] >= Fraction(sum(exact[: W + 1]), 1 << sh)
    excess = Fraction(0)
    for j in range(1, len(v)):
        e = Fraction(exact[W + j], 1 << sh) if W + j < len(exact) else Fraction(0)
        assert v[j] >= e, (j, v[j], float(e))
        excess += v[j] - e
    above = Fraction(sum(exact[W + len(v):]), 1 << sh)
    alpha = Fraction(inf_in, 1 << K)
    assert inf >= above + (1 - (1 - alpha) ** a) * (1 << K)
    return excess


_CASES = [(5, 2, 30), (17, 7, 50), (33, 12, 64), (40, 24, 64), (9, 40, 50), (28, 19, 30), (12, 33, 64), (36, 16, 50)]


def test_the_tilted_upper_power_dominates_the_exact_one() -> None:
    # random nonnegative masses, a random read floor W inside the support, and allowances from
    # huge (tiny windows: the circular power wraps from above, amplified by e^(mu N) in the
    # untilted values, and from below, damped; design risk 9) to tight. Fails if a tilt factor
    # is below its exact value (an off-by-one in the output table's start was caught: the masses
    # came out ~0.1% low), if the float error E is left out (low by a few units), if the wrap or
    # the masses below the floor were dropped, or +inf missed the mass past the window; the
    # counts make sure that windows did wrap and that the bound is not vacuous.
    wrapped = tight = taken = 0
    for seed, (n, a, K) in enumerate(_CASES):
        rng = random.Random(1000 + seed)
        for trial in range(6):
            w = [rng.random() ** 3 for _ in range(n)]
            s = sum(w)
            c = [int(v / s * (1 << K)) for v in w]
            off, inf = rng.randint(-30, 30), rng.randint(0, 1 << (K - 12))
            exact = _exact(c, a)
            W = rng.randint(1, len(exact) - 3)
            allowance = 1 << (K + rng.choice([-12, 0, 30]))
            try:
                out = F.fourier_upper_tilted((off, c, inf), a, K, allowance, a * off + W)
            except F.Declined:
                continue
            taken += 1
            _dominates(out, exact, off, a, inf, K)
            N = len(out[1])
            if W + N < len(exact) and sum(exact[W + N:]) > 0:
                wrapped += 1  # mass above the window: its power wraps onto the window
            sh = K * (a - 1)
            big = [j for j in range(1, N) if W + j < len(exact) and exact[W + j] >> sh > 1 << 24]
            if big and min(Fraction(out[1][j] << sh, exact[W + j]) for j in big) < 1 + Fraction(1, 10**6):
                tight += 1  # within 1e-6 of the exact mass somewhere: the bound is not vacuous
    assert taken >= 30 and wrapped >= 10 and tight >= 10, (taken, wrapped, tight)


def test_the_tilt_passes_where_the_untilted_power_declines() -> None:
    # a bell of 48 knots to the 32nd power, read above index 850 (exact mass there 5e-12 of the
    # whole): the untilted power's error is absolute (about 1e-16 of the whole mass per index),
    # below its binary64 floor for an allowance of 2^10 units of 2^-64; the tilted one's error is
    # relative to the mass near the floor. Fails if the tilt is not applied (it declines too) or
    # if its charge is not honest: the excess over the exact masses on the read indices must be
    # within the allowance it was given.
    n, K, a, W, allowance = 48, 64, 32, 850, 1 << 10
    c = [int(math.exp(-(i - 20) ** 2 / 60) * 2 ** 60) for i in range(n)]
    with pytest.raises(F.Declined):
        F.fourier_upper((0, c, 0), a, K, allowance)
    out = F.fourier_upper_tilted((0, c, 0), a, K, allowance, W)
    excess = _dominates(out, _exact(c, a), 0, a, 0, K)
    assert excess <= allowance
    assert out[0] == W  # the masses at and below the floor in one index, at the floor


def test_a_floor_below_the_support_declines() -> None:
    # the tilted power serves a read floor inside the support only (no tail to tilt for)
    c = [1 << 40] * 8
    with pytest.raises(F.Declined):
        F.fourier_upper_tilted((3, c, 0), 16, 50, 1 << 60, 3 * 16)


@pytest.mark.parametrize("n", [1 << 15, 1 << 11])
def test_the_power_route_takes_the_tilt_and_bounds_delta_from_above(n: int, monkeypatch) -> None:
    # pld._power of a 2^15-knot bell to T = 64, read above a tail index (the Reader), with the
    # Fourier kernel: the whole d^T by the tilted power; also from a base shorter than
    # pld.FOURIER_MIN_LENGTH (2^11 knots), which the untilted power never takes and the tilted one
    # does from pld.FOURIER_TILT_MIN_STEPS steps on (lowered to T here: the route is a choice, its
    # bound is what is tested; below it only the exact squarings run there). delta read above the floor (as
    # _delta_bounds does) must lie above a lower bound of the same composition's delta (the exact
    # products with every coefficient rounded DOWN: the lower pair's P product, Q empty, its
    # delta summed in binary64 and shrunk by 1e-9, far above the sum's float error), and within
    # the allowance the kernel was given (plus the lower route's rounding, one unit per
    # coefficient per product) above it. Fails if the kernel does not take the tilted route (its
    # result's first index is the floor itself, where the exact route's cut lies below it), if
    # the tilted pair falls below the composition (by more than 1e-4 of delta: the rounding
    # slack), or if it is off by more than it charged.
    K, T, m = 64, 64, 12
    monkeypatch.setattr(P, "FOURIER_TILT_MIN_STEPS", T)
    budget, total = 1 << 8, T  # an allowance of 2^8 x 32 x 10^4 units: 4.4e-12, about 6e-4 of delta
    sd = n / 16
    w = [math.exp(-((i - n / 2) / sd) ** 2 / 2) for i in range(n)]
    s = math.fsum(w)
    c = [int(v / s * 2 ** K) for v in w]  # mass just below 1
    off = -n // 2
    need = int(5.5 * math.sqrt(T) * sd)  # about e^-15 of the mass above
    kernel = P._fourier_kernel(True, K, budget, total)
    U_t = P._unpack(P._power(P._pack_upper((off, c, 0), K), T, P._pmul_upper, K, budget, P._Reader(need, True),
                             kernel))
    U_e = P._unpack(P._power(P._pack_upper((off, c, 0), K), T, P._pmul_upper, K, budget, P._Reader(need, True)))
    assert U_t[0] == need and U_e[0] < need
    eps = mpf(need + 1) / 2 ** m
    _, hi_t = P._delta_bounds(U_t, None, eps, K, m)
    # the lower route: P rounded down in every product, no trimming (budget 0), read everywhere
    lo_off, lo_p, _, _ = P._unpack(P._power(P._pack_lower((off, c, [0] * n, 0), K), T, P._pmul_lower, K, 0))
    k = np.arange(len(lo_p), dtype=np.float64) + lo_off
    read = k > need + 1
    weights = -np.expm1(float(eps) - k[read] / 2 ** m)
    masses = np.array([float(v) for v in lo_p], dtype=np.float64)[read]
    lower = math.fsum((masses * weights).tolist()) * (1 - 1e-9) * 2.0 ** -K
    allowance = budget * (4 * total.bit_length() + 4) * P.FOURIER_SHARE
    rounding = 8 * len(lo_p)  # units: each of the lower route's products rounds by < 1 unit a coefficient
    assert lower <= hi_t
    assert (hi_t - lower) * 2 ** K <= allowance + rounding
    assert lower > 1e-10  # the read mass is not empty (delta about 8e-9; 8e-10 from the short base)



def test_a_short_base_below_the_tilt_steps_takes_the_exact_products() -> None:
    # pld._power of a 2^11-knot bell (shorter than FOURIER_MIN_LENGTH) to T = 64, below
    # FOURIER_TILT_MIN_STEPS, read above a tail index, with the Fourier kernel: the route is the exact
    # squarings, bit for bit the power without a kernel (which the test above compares with the exact
    # convolution); the kernel is never asked. Fails if the tilted power is asked below the steps.
    K, T, n = 64, 64, 1 << 11
    assert T < P.FOURIER_TILT_MIN_STEPS
    sd = n / 16
    w = [math.exp(-((i - n / 2) / sd) ** 2 / 2) for i in range(n)]
    s = math.fsum(w)
    c = [int(v / s * 2 ** K) for v in w]
    off, need = -n // 2, int(5.5 * math.sqrt(T) * sd)
    asked: list = []
    kernel = P._fourier_kernel(True, K, 1 << 8, T)

    def spy(*args):
        asked.append(args[1:])
        return kernel(*args)

    with_kernel = P._unpack(P._power(P._pack_upper((off, c, 0), K), T, P._pmul_upper, K, 1 << 8,
                                     P._Reader(need, True), spy))
    exact = P._unpack(P._power(P._pack_upper((off, c, 0), K), T, P._pmul_upper, K, 1 << 8, P._Reader(need, True)))
    assert not asked
    assert with_kernel == exact

_SPY = """
import sys
from dpverify.recheck import fourier as F
from dpverify.recheck.verify import verify_file
real, taken = F.fourier_upper_tilted, []
def spy(*args):
    out = real(*args)
    taken.append(len(out[1]))
    return out
F.fourier_upper_tilted = spy
code, msg = verify_file(sys.argv[1])
print(code, len(taken))
"""


def test_a_genuine_certificate_through_the_tilted_power_is_confirmed() -> None:
    # the format-1 dp_accounting PLD certificate (T = 1000, delta(eps)) is re-proved with its upper
    # pair from the tilted power (the spy only counts the real function's results; a fresh process,
    # as the re-check remembers its queries within one), and confirmed. Fails if the route is not
    # taken (the count), or if its pair is below the truth or too loose for the recorded enclosure
    # (verify refuses, exit 1, or cannot re-prove it, exit 3).
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).parent.parent / "certificate" / "format1" / "dpsgd-issue6-dp-accounting-pld.json"
    run = subprocess.run([sys.executable, "-c", _SPY, str(path)], capture_output=True, text=True, check=True)
    code, taken = run.stdout.split()
    assert code == "0" and int(taken) >= 1, run.stdout


@pytest.mark.parametrize("inf,K,a", [(1, 80, 3000), (12345, 64, 1999), ((1 << 70) + 3, 80, 2500), (1 << 40, 40, 4096),
                                     ((1 << 50) - 1, 50, 3)])
def test_the_mpfr_inf_power_brackets_the_exact_integers(inf: int, K: int, a: int) -> None:
    # the composed +inf mass 2^K (1 - (1 - inf 2^-K)^a) in MPFR (the route of large K a; exact_bits 0
    # forces it here) against the exact rational: rounded up it is at least the exact value, down
    # at most, each within one unit of the exact ceiling / floor. Fails if 1 - inf 2^-K is rounded
    # on its way into MPFR (at 53 bits 2^80 - 1 becomes 2^80: the result 0, below the exact one),
    # if the ceiling / floor is taken of a rounded value, or if the precision is too short to
    # stay within a unit; a swapped rounding direction of the power moves the result by about
    # 2^-64 of a unit and is seen only where the exact value sits that close to an integer.
    exact = Fraction(1 << K) * (1 - (1 - Fraction(inf, 1 << K)) ** a)
    up, dn = F._inf_power(inf, K, a, True, 0), F._inf_power(inf, K, a, False, 0)
    assert dn <= exact <= up
    assert up - math.ceil(exact) <= 1 and math.floor(exact) - dn <= 1

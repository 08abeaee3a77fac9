"""The lower pair's Fourier power with a unit drop (revfast T1): :func:`pld._fourier_kernel` with
``drop`` d > 0 hands the coarse P (units 2^-(K - d)) to :func:`fourier.fourier_lower` times 2^d, and
must return its P-masses and +inf mass rounded DOWN to the coarse unit (a smaller lower P is as
sound) and its deficit rounded UP (it is subtracted). Checked two ways:

* exactly, against :func:`fourier.fourier_lower` called on the fine pair directly: P is
  floor(P_fine / 2^d) on the kernel's window (only the budget's trims at the ends differ), the +inf
  mass floor(inf_fine / 2^d), the deficit ceil(D / 2^d). The float error allowance dwarfs one
  coarse unit, so only this exact comparison sees a floor / ceil swapped (the referee's mutant m5);
* against the exact a-fold power in Python integers (brute force, an independent route): the
  returned pair times 2^d is a lower pair of the exact power up to the returned deficit, Q above it.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from dpverify.recheck import pld as P
from dpverify.recheck.fourier import fourier_lower

from .test_fourier import _exact_power

M = 6  # the grid 2^-M of the lower pair's classes (the tilt of Q)


def _pair(seed: int, n: int, K: int, d: int, off: int) -> tuple:
    """A lower pair: P in coarse units 2^-(K - d) (total below 1), Q in 2^-K about e^-loss P."""
    rng = random.Random(seed)
    w = [rng.random() for _ in range(n)]
    s = sum(w) * 1.001
    pc = [int(v / s * (1 << (K - d))) for v in w]
    q = [int(Fraction(p << d) * Fraction(math.exp(-(off + i) / 2 ** M)) * Fraction(3, 4)) for i, p in enumerate(pc)]
    return pc, q


@pytest.mark.parametrize("seed,d", [(3, 5), (8, 11), (24, 1)])
def test_the_coarse_lower_power_is_the_fine_one_floored_with_the_deficit_ceiled(seed: int, d: int) -> None:
    K, n, a, off, steps, total = 64, 40, 60, 2, 1, 64
    pc, q = _pair(seed, n, K, d, off)
    inf_c = 12345  # coarse units: a +inf mass whose power is not a multiple of 2^d
    budget = 1 << (26 - d)  # coarse units: the allowance (budget << d) x 32 x 10^4, about 2^44 fine units
    allowance = (budget << d) * (4 * total.bit_length() + 4) * P.FOURIER_SHARE
    base = P._pack_lower((off, pc, q, inf_c), K, d)
    F, deficit, factor = P._fourier_kernel(False, K, budget, total, M, d)(base, a, steps)
    assert F is not None, factor
    got_off, got_p, got_q, got_inf = F[0], F[1].coeffs(), F[2].coeffs(), F[3]

    (r_off, r_p, r_q, r_inf), r_def = fourier_lower((off, [p << d for p in pc], q, inf_c << d), a, K, allowance, M,
                                                    steps)
    assert r_def > 0 and r_def % (1 << d)  # a genuine window, and a deficit that ceil and floor tell apart
    assert any(p % (1 << d) for p in r_p) and r_inf % (1 << d)
    floor_p = [p >> d for p in r_p]
    lo = got_off - r_off
    hi = lo + len(got_p)
    assert 0 <= lo and hi <= len(floor_p)
    assert got_p == floor_p[lo:hi] and got_q == r_q[lo:hi]
    assert sum(floor_p[:lo]) <= budget and sum(floor_p[hi:]) <= budget  # only the trims differ
    assert got_inf == r_inf >> d
    assert deficit == -((-r_def) >> d)

    # the independent route: the exact power of the fine pair (P = pc 2^d, units 2^-K)
    exact_p = _exact_power([p << d for p in pc], a)  # units 2^-(K a)
    exact_q = _exact_power(q, a)
    W = got_off - a * off
    scale = 1 << (K * (a - 1))  # from units 2^-(K a) to 2^-K
    over = Fraction(0)
    for k, (p, qq) in enumerate(zip(got_p, got_q)):
        e_p = Fraction(exact_p[W + k], scale) if W + k < len(exact_p) else Fraction(0)
        e_q = Fraction(exact_q[W + k], scale) if W + k < len(exact_q) else Fraction(0)
        assert qq >= e_q
        over += max(Fraction(0), (p << d) - e_p)
    assert over <= deficit << d  # the P-mass above the exact one, in fine units, within the deficit
    alpha = Fraction(inf_c << d, 1 << K)
    assert Fraction(got_inf << d, 1 << K) <= 1 - (1 - alpha) ** a

"""The eps(delta) read-out of long composed pairs (issue 24, T = 10^6: the tilted powers return 2^21
knots a pair): the upper scan starts below the knots whose whole mass above is at most delta
(:func:`pld._scan_start`), and the lower bound orders the classes in doubles and scans a neighbourhood of
the best prefix exactly (:func:`pld._ratio_order`). Both against the full scans they shortcut and against
an independent route (mpmath at 60 digits on the same integers)."""

from __future__ import annotations

import random

import gmpy2
import mpmath
from mpmath import mpf

from dpverify.recheck import pld as P


def _upper(seed: int, n: int, K: int) -> tuple:
    rng = random.Random(seed)
    bulk = [int(2**K * 0.5 * mpmath.exp(-((k - 300) / 60.0) ** 2 / 2) / 150.0) for k in range(n)]
    return (7, [b + rng.randint(0, 3) for b in bulk], rng.randint(0, 5))  # a long tail of 0-3 units


def _curve(U: tuple, K: int, m: int, s: mpf) -> mpf:
    off, v, inf = U
    with mpmath.workdps(60):
        h = mpf(2) ** -m
        tot = sum((c * (1 - mpmath.exp(s - (off + k) * h)) for k, c in enumerate(v) if (off + k) * h > s), mpf(0))
        return (tot + inf) / mpf(2) ** K


def test_the_upper_scan_skips_the_far_knots_and_gives_the_full_scans_end(monkeypatch) -> None:
    K, m, delta = 60, 4, mpf("1e-5")
    for seed in range(3):
        U = _upper(seed, 6000, K)
        A = P.arith(P._prec_of(K))
        d_lo = A.dn.mul_2exp(P._target(A, delta)[0], K)
        start = P._scan_start(U[1], U[0], U[2], d_lo, m)
        assert start < len(U[1]) - 1  # the shortcut is taken (the tail is far above eps)
        _, hi = P._eps_bounds(U, None, delta, K, m)
        monkeypatch.setattr(P, "_scan_start", lambda v, *args: len(v) - 1)
        _, full = P._eps_bounds(U, None, delta, K, m)
        monkeypatch.undo()
        # the skipped knots' part of W starts at [0, their mass]: a lower W_lo, a root at most
        # 2^-64 delta 2^K / W higher (W is about delta 2^K at the root)
        with mpmath.workdps(60):
            assert 0 <= hi - full <= full * mpf(2) ** -60
        assert _curve(U, K, m, hi) <= delta  # an upper bound of the upper pair's eps(delta)


def test_a_scan_that_would_reach_negative_losses_is_not_shortened() -> None:
    # 3000 one-unit knots above 3000 units of delta: the top 3000 may be skipped, the scan starts
    # D = ceil(64 ln2 2^4) + 1 = 711 knots below them, unless a skipped knot's s_(k-1) is negative
    v, d = [1] * 5000, gmpy2.mpfr(3000)
    assert P._scan_start(v, 0, 0, d, 4) == 2000 + 711
    assert P._scan_start(v, -2711, 0, d, 4) == 2000 + 711
    assert P._scan_start(v, -2712, 0, d, 4) == len(v) - 1
    assert P._scan_start(v, 0, 0, gmpy2.mpfr(10), 4) == len(v) - 1  # too few to skip


def test_the_lower_bound_from_the_float_order_is_the_full_scans(monkeypatch) -> None:
    K, delta = 80, mpf("1e-5")
    for seed in range(3):
        rng = random.Random(seed)
        n = P._RATIO_NUMPY_MIN + 3000
        Pm = [rng.randint(0, 2**66) if rng.random() < 0.9 else 0 for _ in range(n)]
        Qm = [max(1, p >> rng.randint(0, 40)) for p in Pm]  # Q > 0: a finite eps (Q = 0 with P > delta: inf)
        L = (0, Pm, Qm, rng.randint(0, 2**40))
        got = P._lower_eps(L, delta, K)
        assert len(P._ratio_order(Pm, Qm, L[3], 2**63)[0]) <= 2 * P._RATIO_AROUND + 1  # the short scan is taken
        monkeypatch.setattr(P, "_RATIO_NUMPY_MIN", 10**9)
        full = P._lower_eps(L, delta, K)
        monkeypatch.undo()
        assert got == full and 0 < got < mpmath.inf
        # independent: some set S of classes has P(S) - e^got Q(S) >= delta (60 digits, exact masses)
        with mpmath.workdps(60):
            order = sorted((k for k in range(n) if Pm[k] > 0), key=lambda k: -mpf(Pm[k]) / Qm[k] if Qm[k] else -mpmath.inf)
            sp, sq, ok = mpf(L[3]), mpf(0), False
            for k in order:
                sp += Pm[k]
                sq += Qm[k]
                ok = ok or (sp - mpmath.exp(got) * sq) / mpf(2) ** K >= delta
            assert ok


def _far_pair(K: int, n: int) -> tuple:
    # a lower pair whose classes lie at losses 0.75 k: P a bell at loss 1000 (width 40), Q = P e^-loss
    # rounded up (2^100 units and more at K = 1700): the ratios P / Q pass 2^1024 from class 946 on
    with mpmath.workdps(600):
        P_ = [int(mpmath.floor(mpf(2) ** K * mpmath.exp(-((mpf(3) * k / 4 - 1000) / 40) ** 2 / 2) / 60)) for k in range(n)]
        Q_ = [max(1, int(mpmath.ceil(p * mpmath.exp(-mpf(3) * k / 4)))) for k, p in enumerate(P_)]
    return (0, [gmpy2.mpz(p) for p in P_], [gmpy2.mpz(q) for q in Q_], 0)  # as the products carry them


def test_the_lower_bound_past_the_double_range_is_the_best_prefix() -> None:
    """eps(delta) above ln(2^1024) = 709.8 (sigma 1, q 0.01, T = 10^7: 1014): the prefix scan read
    the log of a quotient past the double range as inf and kept the first such prefix (1001.45 at
    2^-8 where the same pair proves 1006.86). Against mpmath at 600 digits on the same integers: the
    best prefix of the classes ordered by exact ratio, and some set S with P(S) - e^got Q(S) >= delta."""
    # delta 0.2: eps(delta) about 1051, reached by a prefix far past the first one above delta (whose
    # quotient's log read inf and was kept: 1051.277 where the best prefix gives 1051.403)
    K, n, delta = 1700, 1470, mpf("0.2")
    L = _far_pair(K, n)
    with mpmath.workdps(P._DPS):
        got = P._lower_eps(L, delta, K)
    with mpmath.workdps(600):
        Pm, Qm = L[1], L[2]
        D = mpf(delta)
        order = sorted(range(n), key=lambda k: -mpf(Pm[k]) / Qm[k])
        sp, sq, best = mpf(0), mpf(0), -mpmath.inf
        for k in order:
            sp += Pm[k]
            sq += Qm[k]
            if sp / mpf(2) ** K > D:
                best = max(best, mpmath.log((sp / mpf(2) ** K - D) / (sq / mpf(2) ** K)))
        assert best > 900  # the regime the fix is about
        assert got <= best  # a lower bound, from a prefix no better than the best
        assert best - got < mpf(10) ** -20, (got, best)  # and the best prefix is the one kept
        # the bound itself, independently: the chosen set's P - e^got Q reaches delta
        sp, sq, ok = mpf(0), mpf(0), False
        for k in order:
            sp += Pm[k]
            sq += Qm[k]
            ok = ok or (sp - mpmath.exp(got) * sq) / mpf(2) ** K >= D
        assert ok

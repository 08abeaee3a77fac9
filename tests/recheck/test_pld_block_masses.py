"""The integer masses of the PLD re-check's block route (``gauss_tails(...)``'s ``block_masses``,
:func:`dpverify.recheck.pld._discretise_iv`, design pld-speed section 5) against two independent
routes:

* the knot-by-knot walk over the block tails' enclosures (the route before it, still taken where a
  block's masses are not proved): every integer mass must be the same (both are the ceiling or
  floor of an enclosure narrower than 2^-20 units around the same exact mass, so they can differ
  only where the exact mass lies that near an integer; none does in these cases);
* the exact masses written out in mpmath at 600 bits: each upper and Q-mass must be at least the
  exact one and below it plus one unit (plus 2^-16), each P-mass at most the exact one and above it
  minus one unit;
* the new exact polynomial helpers of :mod:`dpverify.recheck.series` against rationals.
"""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import pld as Pl
from dpverify.recheck import series as S
from dpverify.recheck.core import arith

from .test_pld_rigorous import _mp, _ref_gauss_tails

CASES = [
    (Fraction(2), Fraction(1, 10), "remove", 13, 60, "1e-12"),
    (Fraction(2), Fraction(1, 10), "add", 13, 60, "1e-12"),
    (Fraction(11, 10), Fraction(1, 100), "remove", 14, 70, "1e-15"),
    (Fraction(4, 5), Fraction(4, 1875), "remove", 13, 64, "1e-14"),
    (Fraction(11, 10), Fraction(1, 100), "add", 12, 80, "1e-20"),  # blocks of 2^8 knots (_BLOCK_MIN_RHO_LOW)
]


@pytest.fixture(autouse=True)
def _no_remembered_masses(monkeypatch):
    """Every test computes its masses (``_discretise`` remembers a keyed pair's: a test that
    changes a route's constant would otherwise be handed an earlier test's integers)."""
    monkeypatch.setattr(Pl, "_DISC_MEMO", {})


def _walk_only(tails: Pl.IvTails) -> Pl.IvTails:
    """The same tails without ``runs``: every knot's enclosure goes through the walk."""
    return Pl.IvTails(tails.fn, tails.inf, tails.many, tails.sup)


@pytest.mark.parametrize("sig,q,direction,m,K,tau", CASES)
def test_block_masses_equal_the_walk_and_bracket_mpmath(sig, q, direction, m, K, tau) -> None:
    tails = Pl.gauss_tails(sig, q, direction)
    tau = mpmath.mpf(tau)
    (i0, up, up_inf), (j0, lp, lq, l_inf) = Pl._discretise(tails, K, tau, m)
    (k0, up2, up_inf2), (_, lp2, lq2, l_inf2) = Pl._discretise(_walk_only(tails), K, tau, m)
    assert (i0, j0, up_inf, l_inf) == (k0, k0, up_inf2, l_inf2)
    assert up == up2 and lp == lp2 and lq == lq2
    # the block route was taken (at 2^-13 a block carries 510 knots, at 2^-12 254)
    A = arith(K + m + 32)
    n = i0 + len(up) - 1
    runs = tails.knot_runs(A, i0, n, m, K)
    blocks = [r for r in runs if isinstance(r, Pl._BlockMasses)]
    carried = sum(b.e - b.a for b in blocks)
    assert len(blocks) >= 3 and carried >= 700, (len(blocks), carried, n - i0)
    # mpmath at 600 bits, at knots inside blocks, at block joins and knot by knot
    rng = random.Random(m * 7 + K)
    picks = set(rng.sample(range(i0 + 1, n - 1), 25))
    for b in blocks[:4]:
        picks |= {b.a, b.a + 1, b.a + 2, b.e - 1, b.e, b.e + 1}
    _bracket_mpmath(sig, q, direction, m, K, (i0, up), (lp, lq), picks)


def _bracket_mpmath(sig, q, direction, m, K, ups, lows, picks) -> None:
    """Each upper and Q-mass at the knots ``picks`` at least the exact one (mpmath, 600 bits) and
    below it plus one unit (plus 2^-16), each P-mass the mirror."""
    (i0, up), (lp, lq) = ups, lows
    n = i0 + len(up) - 1
    picks = sorted(k for k in picks if i0 < k < n - 1)
    unit = mpmath.mpf(2) ** K
    slack = mpmath.mpf(2) ** -16
    with mpmath.workprec(600):
        h = mpmath.mpf(2) ** -m
        r = mpmath.exp(h)

        def tl(k):
            return _ref_gauss_tails(_mp(sig), _mp(q), direction, k * h)

        def d(k):
            p, qq = tl(k)
            return p - mpmath.exp(k * h) * qq

        for k in picks:
            U = ((d(k + 1) - d(k)) - r * (d(k) - d(k - 1))) / (r - 1) * unit
            got = up[k - i0]
            assert got >= U and got < max(U, 0) + 1 + slack, (k, got, U)
            (p0, q0), (p1, q1) = tl(k), tl(k + 1)
            a, c = (p0 - p1) * unit, (q0 - q1) * unit
            assert lp[k - i0] <= a and lp[k - i0] > a - 1 - slack, (k, lp[k - i0], a)
            assert lq[k - i0] >= c and lq[k - i0] < c + 1 + slack, (k, lq[k - i0], c)




def test_series_product_sub_enclose_the_exact_rationals() -> None:
    P = 100
    rng = random.Random(3)
    n = 8
    xs = [Fraction(rng.randint(-10**6, 10**6), 10**6) for _ in range(n)]
    ys = [Fraction(rng.randint(-10**6, 10**6), 10**6) for _ in range(n)]

    def balls(v):
        out = []
        for x in v:
            r = rng.randrange(1 << 12)
            m = (x * (1 << P)).__floor__() + rng.randint(-r, r)
            out.append((m, r + abs(m - x * (1 << P)).__ceil__()))
        return S.Ser(out)

    bx, by = balls(xs), balls(ys)
    prod = S.product(bx, by, n, P)
    diff = S.sub(bx, by)
    for j in range(n):
        exact = sum((xs[i] * ys[j - i] for i in range(j + 1)), Fraction(0))
        m, r = prod[j]
        assert Fraction(m - r, 1 << P) <= exact <= Fraction(m + r, 1 << P)
        m, r = diff[j]
        assert Fraction(m - r, 1 << P) <= xs[j] - ys[j] <= Fraction(m + r, 1 << P)


@pytest.mark.parametrize("seed", range(4))
def test_taylor_shift_k_basis_and_abs_bound_are_exact(seed: int) -> None:
    rng = random.Random(seed)
    N, rho = rng.randint(2, 25), rng.randint(1, 8)
    c = [rng.randint(-(1 << 150), 1 << 150) for _ in range(N + 1)]
    B = S.k_basis(c, rho)
    vals = S.values_at_integers(c, rho, -(1 << rho), 1 << rho)
    for k in range(-(1 << rho), (1 << rho) + 1):
        assert sum(b * k ** j for j, b in enumerate(B)) == vals[k + (1 << rho)]
    for s in (1, -1):
        C = S.taylor_shift(B, s)
        for k in rng.sample(range(-(1 << rho), 1 << rho), min(10, 1 << rho)):
            assert sum(x * k ** j for j, x in enumerate(C)) == sum(b * (k + s) ** j for j, b in enumerate(B))
    bound = S.abs_bound(B, 1 << rho)
    assert all(abs(v) <= bound for v in vals)


@pytest.mark.parametrize("seed", range(3))
def test_at_integers_reads_and_rounds_exactly(seed: int) -> None:
    """The forward differences against Horner in Python integers, raw and rounded each way."""
    rng = random.Random(100 + seed)
    for _ in range(60):
        N = rng.randint(0, 12)
        B = [rng.randint(-(1 << 80), 1 << 80) for _ in range(N + 1)]
        k0 = rng.randint(-300, 0)
        k1 = k0 + rng.randint(0, 300)
        sh, add = rng.randint(1, 90), rng.randint(-(1 << 70), 1 << 70)
        exact = [sum(b * k ** j for j, b in enumerate(B)) for k in range(k0, k1 + 1)]
        assert S.at_integers(B, k0, k1) == exact
        assert S.at_integers(B, k0, k1, sh, add) == [max(0, (v + add) >> sh) for v in exact]
        assert S.at_integers(B, k0, k1, sh, add, True) == [max(0, -((-(v + add)) >> sh)) for v in exact]


def _grown(runs: list, m: int) -> list:
    """The blocks of ``runs`` grown past the standard size (:data:`dpverify.recheck.pld._BLOCK_GROW`)."""
    size = 2 << (m - Pl._BLOCK_SPAN)
    return [r for r in runs if isinstance(r, Pl._BlockMasses) and r.b - r.a + 1 > size]


# the baseline row of scripts/bench_events.py (sigma 1, q 0.01) on its recorded grid 2^-12, K = 82
GROWN = (Fraction(1), Fraction(1, 100), 12, 82, "1e-19")


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_grown_blocks_give_the_same_masses_and_bracket_mpmath(direction: str, monkeypatch) -> None:
    """Blocks twice the standard size far from the end of the support (a choice only): the masses
    are those of the standard blocks bit for bit, and bracket the exact ones at knots of a grown
    block (its joins and its middle)."""
    sig, q, m, K, tau = GROWN
    tails = Pl.gauss_tails(sig, q, direction)
    (i0, up, up_inf), (_, lp, lq, l_inf) = Pl._discretise(tails, K, mpmath.mpf(tau), m)
    n = i0 + len(up) - 1
    grown = _grown(tails.knot_runs(arith(K + m + 32), i0, n, m, K), m)
    assert len(grown) >= 8, len(grown)
    monkeypatch.setattr(Pl, "_BLOCK_GROW", 0)
    Pl._DISC_MEMO.clear()
    std = Pl.gauss_tails(sig, q, direction)
    assert Pl._discretise(std, K, mpmath.mpf(tau), m) == ((i0, up, up_inf), (i0, lp, lq, l_inf))
    assert not _grown(std.knot_runs(arith(K + m + 32), i0, n, m, K), m)
    picks = set()
    for b in (grown[0], grown[-1]):
        picks |= {b.a, b.a + 1, b.a + 2, (b.a + b.e) // 2, b.e - 1, b.e, b.e + 1}
    _bracket_mpmath(sig, q, direction, m, K, (i0, up), (lp, lq), picks)


def test_a_grown_block_that_fails_is_retried_at_the_standard_size(monkeypatch) -> None:
    """A grown block whose remainder test fails (forced here: the test refuses every series
    expanded with the grown step H = 2^(rho - m)) is not lost: its knots go as standard blocks, and
    the masses are those of the standard route bit for bit."""
    sig, q, m, K, tau = GROWN
    grown_H = Fraction(1 << (m - Pl._BLOCK_SPAN + 1), 1 << m)
    seen: dict = {"H": None, "refused": 0}
    power_coeffs, remainder_ok = Pl.bs.power_coeffs, Pl.bs.remainder_ok

    def spy_power(A, ex, H, s, n, P):
        seen["H"] = Fraction(*H.as_integer_ratio())
        return power_coeffs(A, ex, H, s, n, P)

    def refuse_grown(top, coeffs, tol):
        if seen["H"] == grown_H:
            seen["refused"] += 1
            return None
        return remainder_ok(top, coeffs, tol)

    monkeypatch.setattr(Pl.bs, "power_coeffs", spy_power)
    monkeypatch.setattr(Pl.bs, "remainder_ok", refuse_grown)
    tails = Pl.gauss_tails(sig, q, "remove")
    got = Pl._discretise(tails, K, mpmath.mpf(tau), m)
    i0, n = got[0][0], got[0][0] + len(got[0][1]) - 1
    runs = tails.knot_runs(arith(K + m + 32), i0, n, m, K)
    assert seen["refused"] >= 8 and not _grown(runs, m)
    assert sum(isinstance(r, Pl._BlockMasses) for r in runs) >= 40
    monkeypatch.setattr(Pl.bs, "remainder_ok", remainder_ok)
    monkeypatch.setattr(Pl, "_BLOCK_GROW", 0)
    Pl._DISC_MEMO.clear()
    assert Pl._discretise(Pl.gauss_tails(sig, q, "remove"), K, mpmath.mpf(tau), m) == got

"""The add pair of :func:`dpverify.recheck.pld.gauss_tails` is the remove pair mirrored
(:func:`dpverify.recheck.pld._mirror_tails`: P_a(L_a > e) = 1 - Q_r(L_r > -e), Q_a(L_a > e) =
1 - P_r(L_r > -e), the loss having no atom at q < 1), and the remove pair's knot loop is remembered
by knot (:func:`dpverify.recheck.pld._knots_by_memo`), so that a probe of both directions on one grid
evaluates each knot's Phi once. Checked here: the mirrored enclosures hold mpmath's add tails at
300 bits (computed from the add pair's own formula, not from the mirror), the masses of either
direction are the same integers whatever was discretised before (cold or warm memory, either
order), a range that only partly overlaps the remembered knots is filled in, and the memory is
bounded."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from mpmath import mpf

from dpverify.recheck import pld as Pl
from dpverify.recheck.core import arith

from .test_pld_rigorous import _mp, _ref_gauss_tails


def _fresh() -> None:
    Pl._KNOT_MEMO.clear()
    Pl._DISC_MEMO.clear()


@pytest.mark.parametrize("sig,q,m,lo,hi", [
    (Fraction(1), Fraction(1, 100), 8, -1500, 300),
    (Fraction(2), Fraction(1, 10), 10, -900, 108),  # up to the end of add's support, -log(0.9) 2^10
    (Fraction(3, 10), Fraction(1, 10), 4, -1000, 20),  # mu = 3.3: Phi's far branch
])
def test_mirrored_add_tails_enclose_the_add_formula(sig, q, m, lo, hi) -> None:
    _fresh()
    A = arith(82 + m + 32)
    got = Pl.gauss_tails(sig, q, "add").at_knots(A, lo, hi, m)
    assert len(got) == hi - lo + 1
    with mpmath.workprec(300):
        for k in range(lo, hi + 1, 5):
            (p0, p1), (q0, q1) = got[k - lo]
            p, qq = _ref_gauss_tails(_mp(sig), _mp(q), "add", mpf(k) / 2 ** m)
            assert mpf(p0) <= p <= mpf(p1) and mpf(q0) <= qq <= mpf(q1), k
            # as narrow as the direct route's: a few units of 2^-prec
            assert p1 - p0 < 2.0 ** (16 - A.prec) and q1 - q0 < 2.0 ** (16 - A.prec), k


def _masses(direction: str, sig: Fraction, q: Fraction, K: int, m: int):
    tails = Pl.gauss_tails(sig, q, direction)
    Pl._DISC_MEMO.clear()  # the masses themselves are computed each time
    return Pl._discretise(tails, K, mpf(2) ** -(K + 8), m)


@pytest.mark.parametrize("sig,q,K,m", [
    (Fraction(1), Fraction(1, 100), 77, 10),  # every knot by the loop
    (Fraction(2), Fraction(1, 10), 80, 12),  # blocks, and the knots near either end of the support
])
def test_masses_do_not_depend_on_what_was_discretised_before(sig, q, K, m) -> None:
    _fresh()
    add_cold = _masses("add", sig, q, K, m)
    _fresh()
    rem_cold = _masses("remove", sig, q, K, m)
    add_warm = _masses("add", sig, q, K, m)  # its knots now mirrored from the remembered ones
    assert add_warm == add_cold
    _fresh()
    _masses("add", sig, q, K, m)
    assert _masses("remove", sig, q, K, m) == rem_cold


def test_partly_remembered_ranges_are_filled_in_and_memory_is_bounded(monkeypatch) -> None:
    _fresh()
    sig, q, m = Fraction(1), Fraction(1, 100), 8
    A = arith(82 + m + 32)
    rem = Pl.gauss_tails(sig, q, "remove")
    cold = rem.knots(A, -40, 300, m)
    _fresh()
    rem.knots(A, 0, 100, m)
    rem.knots(A, 200, 250, m)
    assert rem.knots(A, -40, 300, m) == cold  # three gaps evaluated around two remembered runs
    monkeypatch.setattr(Pl, "_KNOT_MEMO_MAX", 300)
    _fresh()
    rem.knots(A, 0, 200, m)
    rem.knots(A, 0, 200, m + 1)
    assert sum(len(v) for v in Pl._KNOT_MEMO.values()) <= 300  # the oldest grid let go
    assert rem.knots(A, -40, 300, m) == cold
    assert rem.knots(A, -40, 400, m)[:341] == cold  # a range past the bound alone: not kept, the same
    assert sum(len(v) for v in Pl._KNOT_MEMO.values()) <= 300

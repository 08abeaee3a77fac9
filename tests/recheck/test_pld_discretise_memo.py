""":func:`dpverify.recheck.pld._discretise` remembers the masses of a pair named by its exact inputs
(``IvTails.key``, :func:`dpverify.recheck.pld.gauss_tails`): a second call with equal arguments gets
the same integers (copies), is priced as the first was, and any other argument (tau to the last bit,
K, the grid, the first knot, the pair) computes afresh."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import pld as Pl


@pytest.fixture(autouse=True)
def _empty_memo(monkeypatch):
    monkeypatch.setattr(Pl, "_DISC_MEMO", {})


def _spy(monkeypatch) -> list:
    calls: list = []
    inner = Pl._discretise_iv

    def spy(*args, **kw):
        calls.append(args[1:])
        return inner(*args, **kw)

    monkeypatch.setattr(Pl, "_discretise_iv", spy)
    return calls


def test_equal_pairs_are_discretised_once_and_priced_alike(monkeypatch) -> None:
    calls = _spy(monkeypatch)
    tau = mpmath.mpf("1e-15")
    charged: list = []

    def price(knots, bits):
        charged.append((knots, bits))

    a = Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9, price=price)
    b = Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9, price=price)
    assert a == b and len(calls) == 1
    assert len(charged) == 2 and charged[0] == charged[1] == (len(a[0][1]), 60 + 9 + 32)
    b[0][1][0] += 1  # a caller's edit does not reach the remembered masses
    c = Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9)
    assert c == a and len(calls) == 1
    # and the remembered masses are those of a pair without a key (computed afresh)
    t = Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove")
    t.key = None
    assert Pl._discretise(t, 60, tau, 9) == a and len(calls) == 2


def test_any_other_argument_computes_afresh(monkeypatch) -> None:
    calls = _spy(monkeypatch)
    tau = mpmath.mpf("1e-15")
    base = Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9)
    with mpmath.workprec(200):
        tau2 = tau * (1 + mpmath.mpf(2) ** -150)  # another tau, equal to 45 digits
    with mpmath.workdps(15):  # shown at 15 digits whatever the global precision another test file left
        assert repr(tau2) == repr(tau) and tau2 != tau
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau2, 9)
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 61, tau, 9)
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 10)
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9, first=base[0][0] + 5)
    other = Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "add"), 60, tau, 9)
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 11), "remove"), 60, tau, 9)
    Pl._discretise(Pl.gauss_tails(Fraction(21, 10), Fraction(1, 10), "remove"), 60, tau, 9)
    assert len(calls) == 8 and other != base


def test_memory_is_bounded(monkeypatch) -> None:
    calls = _spy(monkeypatch)
    monkeypatch.setattr(Pl, "_DISC_MEMO_MAX_KNOTS", 1500)
    tau = mpmath.mpf("1e-15")
    n9 = len(Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9)[0][1])
    assert 750 < n9 <= 1500 and len(Pl._DISC_MEMO) == 1
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "add"), 60, tau, 9)  # the first is dropped
    assert len(Pl._DISC_MEMO) == 1 and sum(v[1][0] for v in Pl._DISC_MEMO.values()) <= 1500
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 11)  # too large to keep
    assert len(Pl._DISC_MEMO) == 1
    Pl._discretise(Pl.gauss_tails(Fraction(2), Fraction(1, 10), "remove"), 60, tau, 9)
    assert len(calls) == 4
    monkeypatch.setattr(Pl, "_DISC_MEMO_MAX", 2)  # and at most so many pairs
    for s in range(3, 7):
        Pl._discretise(Pl.gauss_tails(Fraction(s), Fraction(1, 10), "remove"), 40, tau, 5)
    assert len(Pl._DISC_MEMO) == 2 and len(calls) == 8

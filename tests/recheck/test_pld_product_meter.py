"""The PLD re-check's meter charges the exact products past a grid's price (recheck.pld._Meter.products).

* ``_product_bits`` is the size of the integer ``_product`` forms: its length times its slots, checked
  against the product computed and against the exact coefficients (slots wide enough for them);
* a share of a grid's price (1 / PLD_PRODUCT_PREPAID) prepays its exact products, per side; past it
  each product is charged
  bits // PLD_PRODUCT_BITS_PER_UNIT before its work, recomputed here from the products the composition
  makes (a spy on ``_product``: the same pairs, counted independently);
* a forged enclosure that sends a grid through its exact products reaches the cap on a product, and is
  refused there (exit 3) with the meter's charges at the cap, never by the clock.
"""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest

from dpverify.errors import CouldNotReprove
from dpverify.recheck import pld as P
from dpverify.recheck.limits import PLD_MAX_GRID_WORK, PLD_PRODUCT_BITS_PER_UNIT, PLD_PRODUCT_PREPAID

T = 200
TAILS = P.gauss_tails(Fraction(11, 10), Fraction(1, 100), "remove")


def test_product_bits_is_the_packed_product() -> None:
    rng = random.Random(5)
    K = 40
    for n1, n2, top in ((1, 1, 1 << 40), (7, 3, 1 << 45), (50, 80, 1 << 60), (300, 300, 1 << 90)):
        a = [rng.randrange(top) for _ in range(n1)]
        b = [rng.randrange(top) for _ in range(n2)]
        x, y = P._Seq.of(a, P._slot_bits(K, sum(a))), P._Seq.of(b, P._slot_bits(K, sum(b)))
        z = P._product(x, y, K, True)
        assert P._product_bits(x, y, K) == z.n * z.s
        # the exact coefficients (a plain double loop) fit in the slots the bits count
        exact = [0] * (n1 + n2 - 1)
        for i, u in enumerate(a):
            for j, v in enumerate(b):
                exact[i + j] += u * v
        assert max(exact) + (1 << K) < 1 << z.s
        assert [-((-c) >> K) for c in exact] == z.coeffs()  # the product itself: rounded up, exactly


def _compose_metered(cap: int, sides: str = "both"):
    """One direction's pairs of T steps on 2^-9, metered with refusal threshold ``cap``; the
    products' bits recorded by a spy, and the meter."""
    seen: list = []
    real = P._product

    def spy(x, y, K, up):
        seen.append(P._product_bits(x, y, K))
        return real(x, y, K, up)

    meter = P._Meter()
    meter.cap = cap
    token = P._METER.set(meter)
    P._product = spy
    try:
        with mpmath.workdps(40):
            K, tau, budget = P._units(mpmath.mpf("1e-3"), mpmath.mpf(1), T)
            P._compose([(lambda d: (TAILS, mpmath.mpf(0)), T)], "remove", K, tau, budget, 9, sides)
        err = None
    except CouldNotReprove as exc:
        err = exc
    finally:
        P._product = real
        P._METER.reset(token)
    return meter, seen, err


def test_products_past_the_price_are_charged_their_bits() -> None:
    with mpmath.workdps(40):
        K, tau, _ = P._units(mpmath.mpf("1e-3"), mpmath.mpf(1), T)
        (_, up, _), _ = P._discretise(TAILS, K, tau, 9)
    for sides, mult in (("upper", 1), ("lower", 2)):
        meter, seen, err = _compose_metered(PLD_MAX_GRID_WORK, sides)
        assert err is None
        price = len(up) * (K + 9 + 32) * T.bit_length() * mult
        # every product of this side (lower: P and Q, each its own product) in units, the price first
        units = sum(b // PLD_PRODUCT_BITS_PER_UNIT for b in seen) if sides == "upper" else \
            sum((seen[i] + seen[i + 1]) // PLD_PRODUCT_BITS_PER_UNIT for i in range(0, len(seen), 2))
        prepaid = price // PLD_PRODUCT_PREPAID
        assert units > prepaid  # short bases, no Fourier power: the products cost more than the share
        assert meter.spent == price + units - prepaid, (sides, meter.spent, price, units)


def test_a_grid_whose_products_pass_the_cap_is_refused_on_a_product() -> None:
    # the cap a little above the grid's price: the price passes, the products past it do not; the
    # refusal comes before the product that would pass the cap (its bits are in the charge, its
    # work is not done: the spy saw one product fewer than a fresh run charges)
    full, seen_all, _ = _compose_metered(PLD_MAX_GRID_WORK, "upper")
    with mpmath.workdps(40):
        K, tau, _ = P._units(mpmath.mpf("1e-3"), mpmath.mpf(1), T)
        (_, up, _), _ = P._discretise(TAILS, K, tau, 9)
    price = len(up) * (K + 9 + 32) * T.bit_length()
    prepaid = price // PLD_PRODUCT_PREPAID
    cap = (price + full.spent) // 2
    meter, seen, err = _compose_metered(cap, "upper")
    assert err is not None and "work cap" in str(err)
    assert meter.spent > cap
    n = len(seen)
    assert 0 < n < len(seen_all)
    units = [b // PLD_PRODUCT_BITS_PER_UNIT for b in seen_all]
    # the products done stayed within the cap; the one refused is the next one, charged but not run
    def charged(k: int) -> int:  # the price and the first k products past its prepaid share
        return price + max(0, sum(units[:k]) - prepaid)

    assert charged(n) <= cap < charged(n + 1) == meter.spent


@pytest.mark.parametrize("units,prepaid,spent,left", [(10, 100, 0, 90), (150, 100, 50, 0), (99, 0, 99, 0)])
def test_the_prepaid_price_is_drawn_first(units: int, prepaid: int, spent: int, left: int) -> None:
    for side in (0, 1):
        meter, pool = P._Meter(), [0, 0]
        pool[side] = prepaid
        meter.products(units * PLD_PRODUCT_BITS_PER_UNIT + PLD_PRODUCT_BITS_PER_UNIT - 1, pool, side, 9)
        assert (meter.upper, meter.lower)[side] == spent and meter.spent == spent and pool[side] == left

"""At eps >= sum eps_i k_i every shift of the composition is at most eps, so delta(eps) = 1 - prod
(1 - delta_i)^k_i exactly (LT Thm 4.6). The producer evaluated the hinge at the ball of a
non-dyadic eps, which straddled the shift eps itself: `compose --mech 0.3,0 --eps 0.3` could not
reach its width around 0 (exit 3, adv46 L2)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpverify.ball import arb_to_fraction
from dpverify.composition.tight import compose_delta


@pytest.mark.parametrize("mechs, k, eps, exact", [
    (["0.3,0"], 1, "0.3", Fraction(0)),
    (["0.3,0"], 3, "0.9", Fraction(0)),
    (["0.3,0.1", "0.2,0.05"], 2, "1", 1 - (Fraction(9, 10) * Fraction(19, 20)) ** 2),  # 0.268975
])
def test_at_the_largest_shift_delta_is_one_minus_R(mechs, k, eps, exact):
    enc = compose_delta(mechs, eps, k=k, digits=15)
    lo, hi = arb_to_fraction(enc.lo), arb_to_fraction(enc.hi)  # exact points
    assert lo <= exact <= hi
    assert hi - lo <= max(exact, Fraction(0)) * Fraction(1, 10**14)

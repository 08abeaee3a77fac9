"""What ``dpverify verify`` charges to re-prove a Poisson calibration's ends, priced before the
producer computes them (issue 22: work is bounded before it starts; a bad input gets a clear
error, never a hang).

The re-check of a ``calibrate.bracket`` (:mod:`dpverify.recheck.calibrate`) composes, for each
end, one curve per direction on a grid 2^-m, m >= 2^-10 (``_M_MIN``), at a unit 2^-K sized from
delta and target_eps, and holds all of them to one static budget,
:data:`dpverify.recheck.limits.CALIBRATE_MAX_WORK`: each curve is charged, before its work, its
knots x bits x the bit length of its step count x its sides, and a discretisation whose masses it
computes knots x bits x (``CALIBRATE_KNOT_WEIGHT`` - that bit length) once more
(:meth:`dpverify.recheck.calibrate._Route._priced`); its exact products are charged past that. The
price here is that charge, by the re-check's own code (one copy of the price): the same route,
its ``_knots`` count (a few tail evaluations per step law, no mass), on a meter of its own
(:func:`dpverify.recheck.calibrate.price_ends`). It
leaves out the products, the delta_at_target bounds (the same curves, remembered) and the finer
grids a search may add, so it is at most what verify charges a certificate with these ends on
these grids: past the budget, verify would answer exit 3 and the writer would not write it.

The producer (:mod:`.solve`) asks it before every certified evaluation of a value x on a grid
2^-m (an evaluation there costs about what the re-check's curve costs: the same grid, a unit of
about the same bits), and once after the float proposal, for the two ends and the grid the
requested width needs there (the width model of :mod:`.solve`): a calibration whose ends verify
could not re-prove is refused before the search, exit 2 naming the input that set the price. A
choice of what to compute (a decline is always safe), never of a number; a count of knots and
bits, no clock: the same inputs decide the same way on every machine.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Sequence

from ..ball import exact_str

__all__ = ["verify_price"]


def verify_price(template: Any, target_eps: Fraction, delta: Fraction,
                 ends: Sequence[tuple[str, Fraction, int]]) -> "tuple[Optional[int], int, str]":
    """(price, K, why): what ``dpverify verify`` charges at least to re-prove a ``calibrate.bracket``
    of the Poisson template ``template`` (name ``dpsgd``) whose ends are ``ends``, each (name
    ``safe`` or ``unsafe``, exact value, grid exponent m the end is decided on):
    :func:`dpverify.recheck.calibrate.price_ends` of the inputs and ends as the certificate would
    record them. Price None, why "" for a template verify does not re-prove by that route (fixed
    batches' Cor 32 pair, a user's own template): not priced."""
    if getattr(template, "name", None) != "dpsgd" or not ends:
        return None, 0, ""
    from ..recheck.calibrate import price_ends

    inputs: dict[str, Any] = {"template": template.name, "parameter": template.parameter,
                              "target_eps": exact_str(target_eps), "delta": exact_str(delta), **template.fixed}
    return price_ends(inputs, template.parameter,
                      [(name, int(x) if template.integer else exact_str(x), m) for name, x, m in ends])

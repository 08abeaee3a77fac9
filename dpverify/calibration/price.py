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
its ``_knots`` count (a few tail evaluations per step law, no mass), on a meter of its own. It
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
    ``safe`` or ``unsafe``, exact value, grid exponent m the end is decided on): the re-check's own
    price (:meth:`dpverify.recheck.calibrate._Route._priced`) of the safe end's upper curve and the
    unsafe end's lower curve, each over its directions, on the grid 2^-max(m, 10) (the re-check
    starts no coarser), in one route as verify builds it (a steps bracket's ends share their
    discretisation on one grid). ``K``: the route's unit 2^-K (bits). An end at sampling rate 1
    (every step a Gaussian: the closed form, no grid) costs nothing. ``why``: where one step's loss
    spans more knots than the re-check discretises (price None: verify refuses it at any cost).
    Price None, why "" for a template verify does not re-prove by this route (fixed batches'
    Cor 32 pair, a user's own template): not priced."""
    if getattr(template, "name", None) != "dpsgd" or not ends:
        return None, 0, ""
    import mpmath

    from ..errors import CertificateRejected, MalformedCertificate
    from ..recheck import calibrate as RC
    from ..recheck import pld as P
    from ..recheck.gdp import fraction_to_mpf

    inputs: dict[str, Any] = {"template": template.name, "parameter": template.parameter,
                              "target_eps": exact_str(target_eps), "delta": exact_str(delta), **template.fixed}
    with mpmath.workdps(RC._DPS):
        E, D = fraction_to_mpf(Fraction(target_eps)), fraction_to_mpf(Fraction(delta))
        try:
            plans = [(RC._plans("dpsgd", inputs, template.parameter, name,
                                int(x) if template.integer else exact_str(x), Fraction(x)), max(m, RC._M_MIN))
                     for name, x, m in ends]
        except (CertificateRejected, MalformedCertificate):  # not an end verify reads: not priced
            return None, 0, ""
        route = RC._Route(E, D, max(p[0][3] for p in plans), Fraction(delta), Fraction(target_eps))
        # a meter of its own, with no limit that could stop the count: the charges only
        with P.one_meter(1 << 200, "the calibration's price", per_query=False) as meter:
            for (name, x, _), ((blocks, dirs, want, _), m) in zip(ends, plans):
                if all(b[3] is not None for b in blocks):
                    continue  # every step a Gaussian at sampling rate 1: closed form, no grid
                if name == "safe":
                    # a safe end its Renyi tail bound proves needs no grid (recheck.calibrate._prove_ends)
                    tail = RC._tail_upper(inputs, template.parameter, int(x) if template.integer else exact_str(x))
                    if tail is not None and RC._le(tail, Fraction(delta)):
                        continue
                for d in dirs:
                    # the blocks' direction keys as _Route.curve forms them (a Gaussian step at
                    # rate 1 is one pair for add and remove)
                    dk = [(key, "add|remove" if g is not None and d in ("add", "remove") else d, T)
                          for key, _, T, g in blocks]
                    try:
                        route._priced(blocks, dk, d, m, want)
                    except CertificateRejected as exc:  # CouldNotReprove: a range past the knot cap
                        return None, route.K, str(exc)
                    # verify computes these masses next, so a later end on the same pair and grid
                    # (a steps bracket) is not charged their discretisation again: marked as computed
                    for (key, _, _, _), (_, d_key, _) in zip(blocks, dk):
                        route.cache.setdefault((key, d_key, m), None)
        return meter.spent, route.K, ""

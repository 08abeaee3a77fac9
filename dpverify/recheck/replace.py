"""Second route for Poisson sampling under replace-one (``replace.epsilon``,
``replace.delta``, ``replace.claim``): both ends re-proved with the PLD re-check
(:mod:`.pld` for a DP-SGD schedule, :mod:`.events` for an event tree in
``inputs.event``; MPFR and GMP integers, nothing from the arb side).

* epsilon, upper end hi: with eps* = hi / 2 (exact), the independent upper end of
  delta_add-remove(eps*) times (1 + e^eps*), rounded up in MPFR, must be <= delta;
  then group privacy (delta_replace(2 eps) <= delta_remove(eps) + e^eps
  delta_add(eps), Dwork and Roth 2014 Thm 2.2) gives epsilon_replace(delta) <= hi;
* delta, upper end hi: (1 + e^(eps/2)) times the independent upper end of
  delta_add-remove(eps/2), rounded up in MPFR, must be <= hi (or hi >= 1: every
  delta is); that product is the independent upper end, so an enclosure recorded
  wholly above it is refused (exit 1);
* lower end lo: the independent enclosure of the remove direction's epsilon(delta)
  or delta(eps) (a zero-contribution replacement realises removal under Poisson
  sampling; the pair is tight, AFA Thm 11 Remark), refined until it lies inside the
  recorded ``result.lower``, whose lower end must be >= lo.

An event tree is covered when every step is a Gaussian or Laplace step, Poisson-sampled
or not (:func:`_additive`, written again here from the producer's rule): group privacy
needs each step's add/remove curve, the lower end a record of zero contribution.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping

import mpmath
from mpmath import mpf

from ..certificate.format import REPLACE_MAX_EPS, SENSITIVITY_CONVENTION
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from . import events as EV
from . import pld as P
from .core import arith, mpf_to_fraction, mpfr_to_mpf
from .gdp import exact_input
from .limits import REPLACE_MAX_WORK
from .decimals import exact_decimal
from .verify import RECHECKERS, BudgetExceeded, Recheck, check_enclosure, enclosure_of, parse_bound, register, root_enclosure

#: working precision of the group-privacy product (bits): one rounding of the factor and one of
#: the product, far below the margin a genuine bracket leaves
_BITS = 128
_KEYS = ("noise_multiplier", "sampling_rate", "steps", "dataset_size", "batch_size", "epochs", "steps_rule")
_TREE_KEYS = ("event", "sensitivity_convention")
#: the grid hint a recorded curve detail's search is handed (:func:`_refined`): four halvings
#: finer than the start it sets, the finest a hint may set (:data:`.pld._HINT_START_MAX`)
_DETAIL_HINT = f"2^-{P._HINT_START_MAX + 4}"


def _metered(check: Callable[[Mapping[str, Any], Mapping[str, Any]], Recheck]) -> Callable:
    """``check`` with every grid search of the certificate on one meter of
    :data:`.limits.REPLACE_MAX_WORK` units (:func:`.pld.one_meter`), each search still within one
    :data:`.limits.PLD_MAX_GRID_WORK`: the two curve details and the root probes share it, so the
    probes of a forged end and the details together stop at the budget, not at a cap per search.
    A static count, no clock (a choice of when to stop, exit 3, never of a number)."""

    def run(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with P.one_meter(REPLACE_MAX_WORK, "one replace-one certificate", per_query=True):
            return check(inputs, result)

    run.__doc__, run.__name__ = check.__doc__, check.__name__
    return run


def _additive(ev: Any, path: str, depth: int = 0) -> None:
    """Refuse a tree with a step the bracket does not cover (the node's path and why)."""
    t = ev.get("type") if isinstance(ev, dict) and depth <= 64 else None
    if t in ("gaussian", "laplace", "no_op"):
        return
    if t == "poisson_sampled" and isinstance(ev.get("event"), dict) and \
            ev["event"].get("type") in ("gaussian", "laplace", "no_op"):
        return
    if t == "self_composed":
        return _additive(ev.get("event"), f"{path}.event", depth + 1)
    if t == "composed" and isinstance(ev.get("events"), list):
        for i, e in enumerate(ev["events"]):
            _additive(e, f"{path}.events[{i}]", depth + 1)
        return
    raise CertificateRejected(f"{path}: a {str(t)[:40]!r} step is not covered by the replace-one bracket (group "
                              "privacy needs Gaussian or Laplace steps, Poisson-sampled or not: an add/remove "
                              "curve per step and a record of zero contribution)")


def _curves(inputs: Mapping[str, Any]) -> tuple[dict, Callable, Callable, Callable]:
    """(base inputs, epsilon re-checker, delta re-checker, one-grid bounds) of the mechanism's
    add/remove and remove curves: the schedule's ``pld.*`` route or the tree's ``events.*`` route."""
    if inputs.get("neighboring") != "replace-one":
        raise MalformedCertificate("inputs.neighboring must be 'replace-one' for this kind")
    if "event" not in inputs:
        if "sensitivity_convention" in inputs:
            # the writer records the convention with an event tree only: a schedule's noise
            # multiplier is the pld.* one, and a text beside it would claim a meaning not computed with
            raise MalformedCertificate("inputs.sensitivity_convention: not taken by a schedule (it goes with "
                                       "inputs.event only)")
        # the registered routes, not the bare grid ones: pld.delta's is wrapped by the Renyi tail bound
        # (events._pld_tail), which settles an upper end below 1e-30 at once; the bare grid route held
        # verify for its whole budget on delta(200) <= 1e-3569 (adv45 S1), which the tree form confirmed
        return {k: inputs[k] for k in _KEYS if k in inputs}, RECHECKERS["pld.epsilon"], RECHECKERS["pld.delta"], P._bounds
    mixed = [k for k in _KEYS if k in inputs]
    if mixed:
        raise MalformedCertificate(f"inputs.{mixed[0]}: a schedule input beside inputs.event (give one mechanism)")
    if inputs.get("sensitivity_convention") != SENSITIVITY_CONVENTION:
        raise CertificateRejected("inputs.sensitivity_convention is not the convention the event pairs are built "
                                  "with (it defines what a noise multiplier means)")
    EV._check_nodes(inputs["event"], "inputs.event")
    _additive(inputs["event"], "inputs.event")
    return {k: inputs[k] for k in _TREE_KEYS}, RECHECKERS["events.epsilon"], RECHECKERS["events.delta"], EV._bounds


def _delta_detail(rec: Callable, bounds: Callable, inputs: dict, recorded: Mapping, detail: bool = True,
                  where: str = "result.upper") -> Any:
    """The independent enclosure of a delta curve recorded in ``recorded`` (an upper or lower
    curve of the bracket), checked to lie inside it: first screened at the route's own scales
    (:func:`.events.screen_delta`: a forged [0, 0] sized the unit to 1e-300, 33 s), then, if
    the screen did not settle it, refined toward the recorded enclosure (:func:`_refined`; ``detail``
    False: a probe of the root search, not a recorded detail). ``where``: the detail's path, named in
    a refusal."""
    # far in the tail the Renyi bound settles it, or tells the screen where to start: walking the PLD
    # grid's rungs down to an upper curve recorded near 1e-348 held verify for its budget (adv45 S1)
    settled, upper = EV.tail_settled(inputs, "eps", recorded, where=where)
    if settled is not None:
        check_enclosure(dict(recorded), settled, where=where)
        return settled
    coarse = EV.screen_delta(bounds, inputs, "eps", recorded, upper, where=where)
    if coarse is not None:
        check_enclosure(dict(recorded), coarse, where=where)  # refused (disjoint) or accepted, by the one rule
        return coarse
    return _refined(rec, inputs, recorded, detail, where)


def _refined(rec: Callable, inputs: dict, recorded: Mapping, detail: bool = True, where: str = "result.upper") -> Recheck:
    """The route's enclosure of a recorded curve detail (``lower`` or ``upper``), checked to lie
    inside it by the one rule (:func:`.verify.check_enclosure`: disjoint is refused, exit 1).

    A detail records no grid; its search (:func:`.pld._grid_for_width`) is handed
    :data:`_DETAIL_HINT`, so it starts at the finest grid a hint may set (2^-12,
    :data:`.pld._HINT_START_MAX`, coarser where that grid is priced past 1/16 of the cap; 2^-11 for
    a tree, whose hint events.py reads at most as 2^-15) and refines from there on the grid its h^2
    gap model predicts. A producer's detail is as tight as its own grid, 2^-14 .. 2^-16 here, so
    2^-8 predicted it badly: the add/remove curve of the T = 200 epochs certificate (delta 1.9e-40)
    was extrapolated from 2^-8 past the cap and computed at 2^-18, 2.9e9 units and 20 CPU s,
    where from 2^-12 the prediction lands on 2^-15, 4.2e8 units and 2.7 CPU s (and a remove detail
    forged 8e-8 wide, 41 CPU s to exit 3 after that 2^-18, stops in 17, on the certificate's budget). The start costs a
    grid the lucky 2^-8 prediction did not: the remove curve of delta(5) there (1.2e-175) went
    2^-8 -> 2^-14 in 2.8e9 units, 0.93 of the cap; from 2^-11 (coarsened from 2^-12 by its price,
    :data:`.pld._HINT_START_SHARE`) it passes the cap, exit 3 (and a start at 2^-9 predicted 2^-15,
    past it, for delta(4) too, which from 2^-11 verifies). An end held at a
    bounded loss's cap closes like h, not h^2 (the remove curve of a Poisson-sampled Laplace step:
    an atom of mass about 1/2 at the loss supremum, whose cap :meth:`.pld.Support.tighten` is the
    upper end until the grid's own passes below it at 2^-14): the rounds from 2^-8 (2^-8, -10, -11,
    -12, -13) stopped one short, from 2^-12 they reach it. One search (a second, from the hint, was
    run where the first left the detail undecided: two caps a detail), so a detail costs at most one
    cap and what the certificate's budget (:func:`_metered`) has left. A probe of the root
    search (``detail`` False) is not a recorded detail: it starts at 2^-8 (it asks for an upper end
    below a target, which a coarse grid often settles), and one it leaves undecided is no proof."""
    grid = {"grid": _DETAIL_HINT} if detail else {}
    re = rec(inputs, {"enclosure": dict(recorded), **grid})
    check_enclosure(dict(recorded), re, where=where)
    return re


def _details(result: Mapping[str, Any], need_lower: bool) -> tuple[Mapping, Any, Mapping]:
    enc, low, up = result.get("enclosure"), result.get("lower"), result.get("upper")
    if not isinstance(enc, Mapping) or not isinstance(up, Mapping) or (
            low is not None or need_lower) and not isinstance(low, Mapping):
        raise MalformedCertificate("result.enclosure, result.upper and (for a lower end above 0) result.lower "
                                   "are required")
    # each detail read once under its own path, so that a malformed or reversed one is named as it is
    # (the curves' re-checks read it as the enclosure of a pld.* / events.* result: adv54 L1)
    for name, detail in (("lower", low), ("upper", up)):
        if detail is not None:
            enclosure_of(detail, f"result.{name}", 40)
    return enc, low, up


def _times_factor(half: Fraction, up_hi: mpf) -> Any:
    """(1 + e^half) up_hi rounded up in MPFR (the factor's exp correctly rounded upward, the
    product too; the mpf's exact value is used, no rounding)."""
    if not mpmath.isfinite(up_hi):
        raise CouldNotReprove("the add-remove upper end is not finite")
    A = arith(_BITS)
    factor = A.add(A.q(1), A.exp(A.q(half)))
    return A, A.up.mul(factor[1], A.q(mpf_to_fraction(up_hi))[1])


def _lower(rec: Callable, base: dict, key: str, value: Any, low: Mapping, enc: Mapping,
           bounds: "Callable | None" = None) -> mpf:
    """The remove direction's independent lower end (a lower end of the replace-one quantity),
    once its enclosure lies inside ``result.lower``; 0 when no lower curve is recorded (then the
    recorded lower end must be 0)."""
    rec_lo = parse_bound(enc.get("lo"), "result.enclosure.lo", 40)
    if low is None:
        if rec_lo > 0:
            raise MalformedCertificate("result.lower is required for a lower end above 0")
        return mpf(0)  # [0, hi]: nothing to re-prove below
    inputs = dict(base, neighboring="remove", **{key: value})
    if key == "eps":  # a delta curve: its unit is sized by the route, not by the recorded detail
        re = _delta_detail(rec, bounds, inputs, low, where="result.lower")
    else:  # an epsilon curve's unit is sized by the input delta
        re = _refined(rec, inputs, low, where="result.lower")
    return max(re.enclosure()[0], mpf(0))


def _group_at_most(rec_delta: Callable, bounds: Callable, base: dict, delta: Fraction, x: Fraction,
                   up: "Mapping | None") -> bool:
    """Group privacy proves epsilon_replace(delta) <= x: (1 + e^(x/2)) delta_add-remove(x/2) <= delta,
    the add-remove curve by the PLD second route, the factor and the product rounded up. At the
    recorded upper end the curve's recorded enclosure ``up`` (a certified detail) must hold the
    independent one; elsewhere the route is sized toward [0, delta / (1 + e^(x/2))]."""
    half = x / 2
    inputs = dict(base, neighboring="add-remove", eps=f"{half.numerator}/{half.denominator}")
    if up is None:
        A = arith(_BITS)
        t = A.dn.div(A.q(delta)[0], A.up.add(A.q(1)[1], A.exp(A.q(half))[1]))
        up = {"lo": "0", "hi": mpmath.nstr(mpfr_to_mpf(t), 20, strip_zeros=False) if t > 0 else "0"}
        try:
            up_re = _delta_detail(rec_delta, bounds, inputs, up, detail=False)
        except BudgetExceeded:
            raise
        except CertificateRejected:  # CouldNotReprove included: no proof at x
            return False
    else:
        up_re = _delta_detail(rec_delta, bounds, inputs, up)
    A, total = _times_factor(half, up_re.enclosure()[1])
    return total <= A.q(delta)[0]  # against delta rounded down


def _bracket(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> tuple[mpf, mpf]:
    base, rec_eps, rec_delta, bounds = _curves(inputs)
    delta = exact_input(inputs, "delta")
    enc, low, up = _details(result, False)
    hi_text = enc.get("hi")
    hi_exact = exact_decimal(hi_text, "result.enclosure.hi")
    if not 0 <= hi_exact / 2 <= REPLACE_MAX_EPS:
        raise MalformedCertificate(f"result.enclosure.hi out of range [0, {2 * REPLACE_MAX_EPS}] (the add/remove "
                                   f"curve is evaluated at hi / 2, at most {REPLACE_MAX_EPS}: the producer's cap)")
    # the recorded details are certified numbers too: each independent enclosure must lie inside.
    # The upper end at the recorded hi (exact) with its recorded curve; an end that does not hold
    # is answered by the one rule for roots (verify.root_enclosure), which seeks a refutation
    upper_ok = _group_at_most(rec_delta, bounds, base, delta, hi_exact, up)
    floor = _lower(rec_eps, base, "delta", inputs["delta"], low, enc)

    def at_most(x: Fraction) -> bool:
        if upper_ok and x >= hi_exact:
            return True
        if abs(x - hi_exact) <= hi_exact / 2**200:
            return False  # the recorded end read inward: tried above, with its recorded curve
        return 0 <= x / 2 <= REPLACE_MAX_EPS and _group_at_most(rec_delta, bounds, base, delta, x, None)

    # proved at the decimal itself: the end it states is the decimal's reading inward (decimals.Ends)
    hi_in = parse_bound(hi_text, "result.enclosure.hi", 40, "f")
    ceiling = hi_in if upper_ok else mpmath.inf
    return root_enclosure(enc, None, at_most, floor=floor, ceiling=ceiling)


@register("replace.epsilon", explain="Poisson sampling under replace-one (a DP-SGD schedule or an event tree of "
          "Gaussian / Laplace steps), bracket of epsilon(delta): hi by group privacy ((1 + e^(hi/2)) "
          "delta_add-remove(hi/2) <= delta, PLD re-check), lo by the remove direction's epsilon (PLD re-check)")
@_metered
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    lo, hi = _bracket(inputs, result)
    return Recheck(lo=lo, hi=hi, dps=40, proved=frozenset({"lower", "upper"}))


# a claim is decided on the same bracket (verify derives the verdict from claim.relation)
recheck_claim = register("replace.claim", explain="Poisson sampling under replace-one, verdict on a claimed "
                         "epsilon: the bracket of replace.epsilon re-proved, holds iff hi <= claimed, fails iff "
                         "lo > claimed")(recheck_eps)


@register("replace.delta", explain="Poisson sampling under replace-one, bracket of delta(eps): hi >= (1 + "
          "e^(eps/2)) delta_add-remove(eps/2) (group privacy, PLD re-check), lo by the remove direction's "
          "delta(eps) (PLD re-check)")
@_metered
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    base, _, rec_delta, bounds = _curves(inputs)
    # in [0, REPLACE_MAX_EPS] (the remove curve is evaluated at eps): certificate.ranges, before any route
    eps = exact_input(inputs, "eps")
    enc, low, up = _details(result, False)
    hi = parse_bound(enc.get("hi"), "result.enclosure.hi", 40, "f")  # proved at the decimal: read inward
    hi_exact = exact_decimal(enc.get("hi"), "result.enclosure.hi")
    up_re = _delta_detail(rec_delta, bounds, dict(base, neighboring="add-remove",
                                          eps=f"{(eps / 2).numerator}/{(eps / 2).denominator}"), up)
    if hi_exact < 1:  # delta <= 1 always: a recorded hi >= 1 needs no product
        A, total = _times_factor(eps / 2, up_re.enclosure()[1])
        # the product is itself a proved upper end (group privacy, rounded up; the mpf holds the mpfr
        # exactly): at most the recorded decimal (compared with it rounded down), it or the decimal read
        # inward, whichever is lower; else it, past the recorded hi, and the rule answers exit 3 unless
        # the lower end below shows the enclosures disjoint (an enclosure moved wholly below the remove
        # curve's lower end was exit 3 here, before its lower end was read). One below the recorded lo is
        # refused at once (exit 1): only the recorded hi was returned before, so an enclosure moved wholly
        # above the group-privacy bound was undecided
        hi = min(hi, mpfr_to_mpf(total)) if total <= A.q(hi_exact)[0] else mpfr_to_mpf(total)
        try:  # delta >= 0: refused here, before the remove curve's search, when already disjoint
            check_enclosure(dict(enc), Recheck(lo=mpf(0), hi=hi, dps=40))
        except CouldNotReprove:
            pass  # not decided without the lower end
    lo = _lower(rec_delta, base, "eps", inputs["eps"], low, enc, bounds)
    proved = {"upper"} | ({"lower"} if low is not None else set())
    return Recheck(lo=lo, hi=hi, dps=40, proved=frozenset(proved))

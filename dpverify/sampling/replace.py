"""Replace-one neighbours under Poisson sampling: a certified bracket from
the add/remove curves.

No dominating pair of the Poisson-subsampled Gaussian under replace-one is proved
in the papers dpverify is built on (AFA Thm 11 covers add and remove neighbours;
Prop 30 / Cor 32 pair Poisson sampling with add/remove and subset sampling with
replace). dp_accounting 0.6's PLD accountant does answer a Poisson-sampled
Gaussian under REPLACE_ONE, with the pair ((1-q) N(0,s^2) + q N(-1,s^2),
(1-q) N(0,s^2) + q N(1,s^2)) (``AdjacencyType.REPLACE`` in
``privacy_loss_mechanism``), whose domination under composition has no published
proof (Lebeda et al. 2024 show that a per-step worst case need not survive
composition); its RDP accountant and its PLD accountant for Laplace refuse the
event. So the answer here is a bracket from two theorems about the whole
mechanism M, which hold for any tree of additive-noise steps (Gaussian or
Laplace, Poisson-sampled or not):

* upper end, group privacy (Dwork and Roth 2014, Thm 2.2 in its (eps, delta)
  form): replace-one neighbours D, D' are two add/remove steps apart through
  D'' = D minus x (remove x, then add x'), so for every event S
  P(M(D) in S) <= e^eps1 P(M(D'') in S) + delta_remove(eps1)
               <= e^(eps1 + eps2) P(M(D') in S) + e^eps1 delta_add(eps2) + delta_remove(eps1),
  i.e. delta_replace(2 eps) <= delta_remove(eps) + e^eps delta_add(eps)
  <= (1 + e^eps) delta_add-remove(eps), with
  delta_remove / delta_add the composed curves of AFA Thm 11 (1) + Thm 10 that
  the PLD accountant bounds from above. No adaptivity assumption is added: the
  inequality is about M itself.
* lower end, a concrete pair: replacing x by a record whose clipped gradient is
  0 at every model gives M(D') the law of M(D minus x) (a Poisson-sampled sum
  does not see a zero summand), so replace-one is at least the remove direction
  of add/remove, whose pair is tight (AFA Thm 11, "Remark (Exact optimality)":
  realised by [0,...,0,1] vs [0,...,0]); the accountant's lower end of that
  composed curve is a lower bound.

Both ends are answered for a DP-SGD schedule (``audit dpsgd``, certificate kinds
``replace.*`` with the schedule's inputs) and for a JSON event tree or a
dp_accounting DpEvent tree (``dpverify.epsilon`` / ``delta`` / ``check_claim``,
whose answers ``audit dpsgd --events`` and ``CertifiedPLDAccountant`` use, the same
kinds with ``inputs.event``) whose every step is a Gaussian or Laplace
step, Poisson-sampled or not (:func:`not_covered` names what is refused and why);
:mod:`dpverify.recheck.replace` re-proves both ends of either form.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Optional


from .. import _validate as V
from ..ball import ball, exact_str, lower_decimal, round_decimal_text, upper_decimal, working_precision
from ..certificate.format import REPLACE_MAX_EPS
from ..certificate.prose import REPLACE_SOURCE, REPLACE_THEOREMS
from ..errors import InvalidParameter, PrecisionExhausted
from ..relation import Relation
from ..limits import DEFAULT_TIME_BUDGET_SECONDS

__all__ = ["group_privacy_epsilon", "group_privacy_delta", "poisson_replace_one_epsilon", "poisson_replace_one_delta",
           "not_covered", "tree_route", "decide", "THEOREMS", "SOURCE", "LOWER_END", "UPPER_END", "METHOD", "DIGITS"]

SOURCE = REPLACE_SOURCE
THEOREMS = list(REPLACE_THEOREMS)

#: what each end of the bracket is (the labels of :class:`dpverify.EventAnswer`)
LOWER_END = ("the remove direction's certified curve: replacing x by a record of zero clipped gradient has the "
             "law of removing x under Poisson sampling (a value the mechanism attains; AFA Thm 11 Remark)")
UPPER_END = ("group privacy over the certified add/remove curves: delta_replace(2 eps) <= (1 + e^eps) "
             "delta_add-remove(eps) (Dwork and Roth 2014 Thm 2.2; AFA Thm 10, Thm 11 (1))")
METHOD = "group-privacy bracket over the add/remove curves"
#: the default accuracy of the curves' queries (relative width 10^-3): the bracket's width is the
#: gap between the two theorems, far above it
DIGITS = 3

#: float steps of the fixed point that proposes eps* (each one add/remove eps query at 2 digits)
_FIXED_POINT_STEPS = 30

#: an answer function: (kind "eps" | "delta", relation, target, digits) -> an answer with
#: ``.enclosure`` (certified) and ``.seconds``; the PLD accountant of the mechanism's curves
Answer = Callable[[str, Relation, Fraction, int], Any]


def group_privacy_epsilon(answer: Answer, delta: Any, *, digits: int = DIGITS) -> dict[str, Any]:
    """Certified bracket of the replace-one epsilon(delta): {lo, hi, eps_star = hi / 2,
    lower (the remove curve's eps enclosure), upper (the add/remove curve's delta
    enclosure at eps_star), seconds}. ``hi`` is proved by group privacy (module
    docstring): (1 + e^eps*) delta_add-remove(eps*) <= delta, checked in arb on the
    certified upper end; ``lo`` is the remove curve's certified lower end."""
    D = V.open_unit("delta", delta)
    low = answer("eps", Relation.REMOVE, D, digits)
    # float-guided fixed point eps = eps_AR(delta / (1 + e^eps)); then certified. The map's slope is
    # about d eps_AR / d log delta, near 1/2 to 1 where the sampling rate is near 1 and eps is in
    # the tens (q = 0.95, 50 steps of noise 1: 51 -> 98 -> 124 -> ... -> 144.6, ratio 0.41 per
    # step), so a fixed number of steps stops far short of it: iterate until a step moves it
    # by less than 1e-3 relative (the certified attempts below cover that much)
    guess = float(low.enclosure.hi.mid())
    for _ in range(_FIXED_POINT_STEPS):
        target = D / (1 + Fraction(math.exp(min(guess, 700.0))))
        new = float(answer("eps", Relation.ADD_REMOVE, target, 2).enclosure.hi.mid())
        moved = abs(new - guess)
        guess = new
        if moved <= 1e-3 * max(1.0, guess) or guess > REPLACE_MAX_EPS:
            break
    for attempt in range(6):
        eps_star = Fraction(round_decimal_text(repr(guess * (1 + 1e-3 * 2**attempt)), 6, upward=True))
        if eps_star > REPLACE_MAX_EPS:  # verify could not re-prove the curve there in bounded work
            raise PrecisionExhausted(f"replace-one upper end: group privacy needs the add/remove curve at eps* = "
                                     f"{float(eps_star):.6g}, beyond the cap of {REPLACE_MAX_EPS} (the bracket's "
                                     f"upper end would exceed {2 * REPLACE_MAX_EPS})")
        # delta_remove + e^eps delta_add <= (1 + e^eps) max(delta_remove, delta_add): one query of the
        # add/remove curve (its relative width is that of the larger direction, so it is cheap)
        dar = answer("delta", Relation.ADD_REMOVE, eps_star, 2)
        with working_precision(256):
            total = (1 + ball(eps_star).exp()) * dar.enclosure.hi
            if total <= ball(D):
                break
    else:
        raise PrecisionExhausted("replace-one upper end: no eps found with (1 + e^eps) delta_add-remove(eps) "
                                 f"<= {D} (the float fixed point proposed eps* = {guess:.6g}; its certified "
                                 "check failed 6 times up to 3.2% above it)")
    with working_precision(256):
        lo_text = lower_decimal(low.enclosure.lo, 8)
        up = dar.enclosure.to_json()
        if Fraction(up["hi"]) == 0:
            # delta_add-remove(eps*) = 0 exactly (eps* at or past the end of the loss's support,
            # proved here from the pairs' bounded losses); a second route on a grid may reach only
            # a tiny positive bound there, so record the widest enclosure that still proves the
            # upper end: [0, delta (1 - 2^-40) / (1 + e^eps*)], rounded down
            cap = ball(D) * (1 - ball(2) ** -40) / (1 + ball(eps_star).exp())
            up = {"lo": "0", "hi": lower_decimal(cap, 8)}
    out = {"lo": lo_text, "hi": exact_str(2 * eps_star), "eps_star": eps_star, "upper": up,
           "seconds": low.seconds + dar.seconds}
    return _with_lower(out, low)


def _with_lower(out: dict[str, Any], low: Any) -> dict[str, Any]:
    """Record the remove curve's enclosure as ``lower``, unless it is the exact point 0
    (then the lower end is 0, which needs no proof, and a second route on a grid could
    not reach the point)."""
    if low is not None:
        enc = low.enclosure.to_json()
        if not (Fraction(enc["lo"]) == 0 and Fraction(enc["hi"]) == 0):
            out["lower"] = enc
    return out


def group_privacy_delta(answer: Answer, eps: Any, *, digits: int = DIGITS, lower: bool = True) -> dict[str, Any]:
    """Certified bracket of the replace-one delta(eps): {lo, hi (decimals rounded
    outward), bounds (the same as arb points), lower (the remove curve's delta
    enclosure at eps, absent when ``lower`` is False), upper (the add/remove
    curve's delta enclosure at eps / 2), seconds}. hi = (1 + e^(eps/2))
    delta_add-remove(eps/2) capped at 1 (group privacy at eps/2 + eps/2, module
    docstring); lo = the remove curve's delta(eps) (a zero-contribution
    replacement), or 0 when ``lower`` is False (the remove curve's delta at a tiny
    value is the slow query, and an upper bound needs none)."""
    E_ = V.nonnegative("eps", eps)
    if E_ > REPLACE_MAX_EPS:
        raise InvalidParameter("eps", f"eps={float(E_):.6g} is beyond the replace-one bracket's cap of "
                                      f"{REPLACE_MAX_EPS} (its curves' units grow with eps; delta there is below e^-150 "
                                      "for any useful guarantee)")
    dar = answer("delta", Relation.ADD_REMOVE, E_ / 2, digits)
    low = answer("delta", Relation.REMOVE, E_, digits) if lower else None
    up = dar.enclosure.to_json()
    with working_precision(256):
        # from the recorded (rounded-up) decimal, the number verify multiplies too
        hi = ((1 + ball(E_ / 2).exp()) * ball(Fraction(up["hi"]))).upper()
        hi = hi if hi < 1 else ball(1)
        lo = ball(0) if low is None else low.enclosure.lo.lower()
        out = {"lo": lower_decimal(lo, 8), "hi": upper_decimal(hi, 8), "upper": up,
               "seconds": dar.seconds + (0.0 if low is None else low.seconds)}
        # the decimals are the bounds: a rounded-outward decimal is still a bound
        out["bounds"] = (ball(Fraction(out["lo"])), ball(Fraction(out["hi"])))
    return _with_lower(out, low)


def poisson_replace_one_epsilon(events: list, delta: Any, *, time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
                                digits: int = DIGITS) -> dict[str, Any]:
    """:func:`group_privacy_epsilon` for a list of Poisson-sampled Gaussian steps
    (:class:`dpverify.pld.GaussianSteps`), the DP-SGD run of ``audit dpsgd``."""
    from ..pld import dpsgd as S

    def answer(kind: str, rel: Relation, target: Fraction, d: int) -> Any:
        f = S.epsilon if kind == "eps" else S.delta
        return f(events, target, neighboring=rel, digits=d, time_budget=time_budget)

    return group_privacy_epsilon(answer, delta, digits=digits)


def poisson_replace_one_delta(events: list, eps: Any, *, time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
                              digits: int = DIGITS) -> dict[str, Any]:
    """:func:`group_privacy_delta` for a list of Poisson-sampled Gaussian steps."""
    from ..pld import dpsgd as S

    def answer(kind: str, rel: Relation, target: Fraction, d: int) -> Any:
        f = S.epsilon if kind == "eps" else S.delta
        return f(events, target, neighboring=rel, digits=d, time_budget=time_budget)

    return group_privacy_delta(answer, eps, digits=digits)


# --------------------------------------------------------------------------- event trees


def not_covered(tree: Any) -> Optional[str]:
    """None for a tree of additive-noise steps only (Gaussian or Laplace, Poisson-sampled
    or not, composed, self-composed, no-ops), else the first node the bracket does not
    cover, with the reason. Both ends need it: the upper end the add/remove curve of
    every step (group privacy passes through D minus x), the lower end a record whose
    contribution is zero in every step, so that replacing x by it is removing x."""
    from ..events import model as E

    if isinstance(tree, (E.Gaussian, E.Laplace, E.NoOp)):
        return None
    if isinstance(tree, E.PoissonSampled):
        return not_covered(tree.event) if isinstance(tree.event, (E.Gaussian, E.Laplace, E.NoOp)) else (
            f"a Poisson-sampled {type(tree.event).__name__}: the bracket covers Poisson sampling of a Gaussian or "
            "Laplace step only")
    if isinstance(tree, E.SelfComposed):
        return not_covered(tree.event)
    if isinstance(tree, E.Composed):
        for e in tree.events:
            why = not_covered(e)
            if why is not None:
                return why
        return None
    why = {
        "RandomizedResponse": "randomized response has no add/remove pair (it randomises one record's value)",
        "EpsilonDelta": "an (eps, delta)-DP event states its guarantee for one relation, not add/remove curves",
        "ZCDp": "a zCDP event states a Renyi bound, not add/remove curves",
        "MixtureOfGaussians": "a mixture of Gaussians has no zero-contribution record proved here",
        "SampledWithoutReplacement": "sampling without replacement draws from a dataset of fixed size, and the "
                                     "intermediate dataset D minus x of group privacy has another size",
        "NonPrivate": "a non-private step has no finite curve",
    }.get(type(tree).__name__, "not a Gaussian or Laplace step")
    return f"{type(tree).__name__}: {why}"


def tree_route(tree: Any, rel: Any) -> bool:
    """True when the event tree under ``rel`` is answered by the group-privacy bracket:
    replace-one, no replace-one pair of its own (a Poisson-sampled step), every step
    additive (:func:`not_covered`). False when it has a pair of its own or another
    relation; raises :class:`~dpverify.events.dispatch.Unsupported` with both reasons
    when neither route covers it."""
    from ..events.dispatch import Unsupported, compile_event
    from ..relation import relation

    r = relation(rel)
    if r is not Relation.REPLACE_ONE:
        return False
    try:
        compile_event(tree, r)
        return False
    except Unsupported as exc:
        why = not_covered(tree)
        if why is not None:
            raise Unsupported(f"{exc.reason}; the group-privacy bracket over the add/remove curves (Dwork and "
                              f"Roth 2014 Thm 2.2) does not cover the tree either: {why}") from None
    compile_event(tree, Relation.ADD_REMOVE)  # the add/remove curves exist (else its own reason)
    return True


def decide(b: dict[str, Any], claimed_eps: Any) -> tuple[str, str]:
    """The verdict on "epsilon(delta) <= claimed_eps" from an epsilon bracket ``b`` of
    :func:`group_privacy_epsilon`: holds when the group-privacy upper end is at most the
    claim, fails when the zero-contribution lower end (a concrete replacement, so a value
    the mechanism attains) exceeds it, else undecided. (verdict, reason)."""
    c = V.real("claimed_eps", claimed_eps)
    from ..certificate.comments import bracket_reason

    outcome = "holds" if Fraction(b["hi"]) <= c else "fails" if Fraction(b["lo"]) > c else "undecided"
    return outcome, bracket_reason(outcome, b["lo"], b["hi"], claimed_eps, 1)

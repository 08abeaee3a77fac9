"""``CertifiedPLDAccountant``: a ``dp_accounting.PrivacyAccountant`` whose
answers are the *upper ends* of certified enclosures (rounded up to the next
float), so that a float it returns is never below the truth for the exact
event parameters (floats in DpEvents are taken at their exact binary value;
probability vectors by the rule of :func:`dpverify.events.convert.probability_vector`).

Interface as dp_accounting's own accountants: ``supports(event)`` (a dry run
that never approximates: False for anything without a proved dominating
pair), ``compose(event, count=1)`` (raises dp_accounting's
``UnsupportedEventError`` naming the unsupported *leaf* and, under a relation
the event has no pair for, the relations it has one for, in dp_accounting's
words, followed by dpverify's reason), ``get_epsilon(delta)``,
``get_delta(eps)``; plus ``enclosure(delta=... | eps=...)``,
``check(eps, delta)`` and ``certificate(delta=... | eps=...)``.

Under REPLACE_ONE, a tree of Gaussian and Laplace steps with Poisson sampling (no
replace-one pair is proved for it) is answered by the group-privacy bracket of
:mod:`dpverify.sampling.replace`: the float answers are its upper end
(delta_rep(eps) <= (1 + e^(eps/2)) delta_AR(eps/2), Dwork-Roth Thm 2.2), the enclosure's
lower end is the remove curve (a zero-contribution replacement); ``certificate()``
writes it as kind ``replace.epsilon`` / ``replace.delta`` with the tree in ``inputs.event``.

The ends of the domain follow dp_accounting's contract, each proved
(:meth:`CertifiedPLDAccountant.get_epsilon`, :meth:`~CertifiedPLDAccountant.get_delta`).
"""

from __future__ import annotations

import math
import numbers
import sys
from fractions import Fraction
from typing import Any, Optional

from dp_accounting import dp_event, privacy_accountant
from flint import arb

from .. import _validate as V
from ..ball import arb_to_fraction, ball, parse_exact, working_precision
from ..errors import InvalidParameter, PrecisionExhausted
from ..events import api as A
from ..events import model as E
from ..events.convert import from_dp_event
from ..events.dispatch import Plan, Unsupported, compile_event
from ..events.pairs import AtomPair, MaxCurvePair
from ..relation import Relation, relation
from ..pld.pairs import FinitePair, SubsampledLaplacePair
from ..sampling import replace as GP
from ..limits import DEFAULT_TIME_BUDGET_SECONDS

__all__ = ["CertifiedPLDAccountant"]

NeighborRel = privacy_accountant.NeighboringRelation
_HOST_NAME = {Relation.ADD_REMOVE: NeighborRel.ADD_OR_REMOVE_ONE, Relation.REPLACE_ONE: NeighborRel.REPLACE_ONE,
              Relation.REPLACE_SPECIAL: NeighborRel.REPLACE_SPECIAL}
_INF = math.inf
#: the float answers (get_epsilon, get_delta) are refined past ``rel_width``, down to a
#: thousandth of it, while the planned grid holds at most this many points
#: (:func:`dpverify.pld.refine.tightened_width`, a static count): a caller of a float API
#: cannot ask for a width, and compares floats at tolerances of its own (dp_accounting's
#: tests: 1e-12 on a delta of 1e-6). A grid of 2^18 points composes in seconds.
FLOAT_AFFORD_POINTS = 1 << 18


def _float_up(x: Any) -> float:
    """Smallest float >= the exact value of the arb point x (inf stays inf; past the
    binary64 range, inf)."""
    if not x.is_finite() or x > sys.float_info.max:  # compared as arb first: a huge exponent is never expanded
        return math.inf
    return _fraction_float(arb_to_fraction(x), up=True)


_DBL_MAX = Fraction(sys.float_info.max)


def _fraction_float(f: Fraction, *, up: bool) -> float:
    """The float next to the exact rational f in the stated direction: the smallest
    float >= f (``up``) or the largest float <= f. The one conversion of an exact end
    to a float in the adapters. Past the binary64 range (|f| > DBL_MAX), where
    ``float(f)`` raises OverflowError: +inf up and DBL_MAX down above the range (+inf
    is >= every real, a sound upper end; DBL_MAX is the largest float <= f), -DBL_MAX
    up and -inf down below it."""
    if f > _DBL_MAX:
        return math.inf if up else sys.float_info.max
    if f < -_DBL_MAX:
        return -sys.float_info.max if up else -math.inf
    v = float(f)  # the nearest float (|f| <= DBL_MAX: no overflow); at most one step from the answer
    while (Fraction(v) < f) if up else (Fraction(v) > f):
        v = math.nextafter(v, math.inf if up else -math.inf)
    return v


def _host_number(value: Any, name: str) -> Any:
    """A delta or epsilon as a dp_accounting caller passes it, ready for
    :func:`parse_exact`: numpy scalars (``np.float32(1e-5)``, ``np.int64(3)``; dp_accounting's
    own accountants take them) become their exact value (a numpy float of any width at its
    exact binary value, as a Python float is); a non-finite numpy float becomes the Python
    float of the same value, so that +inf reaches the end-of-domain rules and NaN is refused
    by parse_exact with the parameter's name."""
    if type(value).__module__ == "numpy":
        if hasattr(value, "is_integer") and hasattr(value, "as_integer_ratio"):  # numpy floats
            f = float(value)  # exact: every binary16/32/64 value is a binary64 value
            return f if not math.isfinite(f) else Fraction(*value.as_integer_ratio())
        if isinstance(value, numbers.Integral):
            return int(value)
    return value


def _upper(x: arb) -> arb:
    """The upper end of a ball as an exact point (+inf for a non-finite ball)."""
    return x.upper() if x.is_finite() else arb("inf")


# --------------------------------------------------------------------------- ends of the domain


def _pair_sup(pair: Any) -> Optional[arb]:
    """A ball whose upper end bounds the essential supremum of the privacy loss
    L = log(dP/dQ) under P of one step's dominating pair; None when the loss is
    (or may be) unbounded. Then delta(eps) = E_P[(1 - e^{eps - L})_+] = 0 for
    every eps at or above it (AFA Lemma 37 with P(L = inf) = 0)."""
    if isinstance(pair, SubsampledLaplacePair):
        # the loss is monotone in the output between its two atoms (class docstring)
        lmin, lmax = pair._ends()
        return lmax if pair.direction == "remove" else -lmin
    if isinstance(pair, FinitePair):
        ratios = []
        for p, q in zip(pair.P, pair.Q):
            if p > 0:
                if q == 0:
                    return None  # mass at +inf
                ratios.append(Fraction(p) / Fraction(q))
        return ball(max(ratios)).log()
    if isinstance(pair, AtomPair):
        if pair.tail is not None:
            return None  # atoms not listed: their losses are unknown
        m = pair.inf_mass()
        if not (m.is_exact() and m.is_zero()):
            return None
        d = None if pair.sampling is None else pair.sampling[1]
        # a +inf atom with zero mass is no support point, except under add
        # sampling where its loss becomes -log(1-q) (AtomPair docstring)
        lams = [lam for lam in pair.losses if lam != -_INF and (lam != _INF or d == "add")]
        if not lams:
            return arb(0)
        top = max(lams)
        if d is None:
            return ball(top)
        q = ball(pair.sampling[0])
        if d == "remove":  # L' = log(1 - q + q e^lambda), increasing in lambda
            return (1 - q + q * ball(top).exp()).log()
        # add: L' = -log(1 - q + q e^-lambda), increasing in lambda (e^-inf = 0)
        return -(1 - q + (q * (-ball(top)).exp() if top != _INF else arb(0))).log()
    if isinstance(pair, MaxCurvePair):
        # max(H_1, H_2)(e^eps) = 0 exactly when both curves are 0 there
        a, b = _pair_sup(pair.first), _pair_sup(pair.second)
        if a is None or b is None:
            return None
        ua, ub = _upper(a), _upper(b)
        return ua if ua >= ub else ub
    return None  # Gaussian-type pairs: the loss is unbounded above


def _sup_loss(plan: Plan) -> Optional[arb]:
    """An exact point >= eps(0), the essential supremum of the composed loss,
    maximised over the relation's directions (the loss of a composition is
    the sum of the independent steps' losses, so its supremum is the sum of
    theirs, AFA Thm 10); None when unbounded (or not known to be bounded)."""
    if plan.zcdp is not None:
        rho, xi = plan.zcdp
        # zero zCDP: D_alpha = 0 for all alpha, so P = Q and L = 0
        return arb(0) if rho == 0 and xi == 0 else None
    best = arb(0)
    for d in plan.directions:
        total = arb(0)
        for b in plan.blocks:
            s = _pair_sup(b.make_pair(d))
            if s is None:
                return None
            total += b.count * _upper(s)
        t = _upper(total)
        best = t if t >= best else best
    return best


def _inf_mass(plan: Plan) -> arb:
    """A ball containing delta(inf) = P(L = +inf) of the composition,
    maximised over the directions: the composed loss is +inf exactly when one
    step's loss is (independent steps), so P(L = inf) = 1 - prod_i (1 - m_i)^count_i."""
    if plan.zcdp is not None:
        # a finite Renyi divergence of some order > 1 forces P << Q: no mass at +inf
        return arb(0)
    best = arb(0)
    for d in plan.directions:
        keep = arb(1)
        for b in plan.blocks:
            keep *= (1 - b.make_pair(d).inf_mass()) ** b.count
        t = _upper(1 - keep)
        best = t if t >= best else best
    return best


class CertifiedPLDAccountant(privacy_accountant.PrivacyAccountant):
    """Certified PLD accountant for DpEvent trees, a drop-in for
    ``dp_accounting.pld.PLDAccountant``.

    ``neighboring_relation``: dp_accounting's ADD_OR_REMOVE_ONE, REPLACE_ONE or
    REPLACE_SPECIAL. ``rel_width``: requested relative width of the
    enclosures (the float answers are their upper ends). ``float_points``: the
    float answers are refined past ``rel_width`` while the planned grid holds at
    most this many points (:data:`FLOAT_AFFORD_POINTS`; 0 keeps them at
    ``rel_width``, seconds faster per answer on a short composition, e.g. inside
    a calibration's bisection). Sensitivity convention:
    :data:`dpverify.events.SENSITIVITY_CONVENTION`.
    """

    def __init__(self, neighboring_relation: NeighborRel = NeighborRel.ADD_OR_REMOVE_ONE,
                 rel_width: float = 1e-4, time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
                 float_points: int = FLOAT_AFFORD_POINTS) -> None:
        self._float_points = V.afford_length("float_points", float_points)
        super().__init__(neighboring_relation)
        self._rel = relation(neighboring_relation)
        self._events: list = []
        self._rel_width = V.relative_width(rel_width, "1e-8", "1", hi_open=True)
        self._time_budget = V.seconds("time_budget", time_budget)
        self._last_reason = ""

    # -- PrivacyAccountant
    def _refusal(self, event: dp_event.DpEvent) -> Optional[str]:
        """None when the event compiles under this relation, else dpverify's
        reason (InvalidParameter propagates: a bad parameter is a ValueError)."""
        try:
            tree = from_dp_event(event)
        except Unsupported as exc:
            return exc.reason
        try:
            # replace-one with Poisson sampling: the group-privacy bracket (raises with both reasons
            # when neither it nor a pair of the tree's own covers the tree)
            if not GP.tree_route(tree, self._rel):
                compile_event(tree, self._rel)
        except Unsupported as exc:
            return exc.reason
        return None

    def _leaf(self, event: dp_event.DpEvent) -> dp_event.DpEvent:
        """The innermost event that is refused on its own (dp_accounting reports
        the offending subevent); a composite is reported itself when each of
        its parts is supported alone (e.g. zCDP composed with a Laplace event)."""
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                if self._refusal(e) is not None:
                    return self._leaf(e)
        # every wrapper of one event (self-composition, the three samplings, repeat-and-select)
        # holds it as .event: a refused inner event is the one to name
        inner = getattr(event, "event", None)
        if isinstance(inner, dp_event.DpEvent) and self._refusal(inner) is not None:
            return self._leaf(inner)
        return event

    def _message(self, leaf: dp_event.DpEvent, reason: str) -> str:
        """dp_accounting's wording: the relations the event is supported under
        when there are any, then dpverify's reason."""
        ok = []
        for r, host in _HOST_NAME.items():
            if r is not self._rel:
                try:
                    compile_event(from_dp_event(leaf), r)
                    ok.append(f"`{host.name}`")
                except (Unsupported, InvalidParameter):
                    pass
        if not ok:
            return f"Unsupported event. dpverify: {reason}"
        what = f"`{type(leaf).__name__}`"
        if isinstance(leaf, dp_event.PoissonSampledDpEvent):
            what += f" of a `{type(leaf.event).__name__}`"
        return (f"neighboring_relation must be {' or '.join(ok)} for {what}. Found "
                f"{self._neighboring_relation}. dpverify: {reason}")

    def _maybe_compose(self, event: dp_event.DpEvent, count: int, do_compose: bool
                       ) -> Optional[privacy_accountant.PrivacyAccountant.CompositionErrorDetails]:
        try:
            reason = self._refusal(event)
        except InvalidParameter as exc:  # supports(): False; compose() raised it already
            return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        if reason is not None:
            leaf = self._leaf(event)
            self._last_reason = reason
            return self.CompositionErrorDetails(invalid_event=leaf, error_message=self._message(leaf, reason))
        if do_compose:
            self._events.append(E.SelfComposed(from_dp_event(event), int(count)))
        return None

    def compose(self, event: dp_event.DpEvent, count: int = 1) -> "CertifiedPLDAccountant":
        """As dp_accounting: UnsupportedEventError for an event without a proved
        pair; ValueError (InvalidParameter) for a count < 1 or a bad parameter."""
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
            raise InvalidParameter("count", f"count={count!r} must be an integer >= 1")
        if isinstance(event, dp_event.DpEvent):
            self._refusal(event)  # a bad parameter raises here, as a ValueError
        return super().compose(event, count)

    def _tree(self) -> Any:
        return E.Composed(tuple(self._events))

    def _grouped(self) -> bool:
        """Replace-one answered by group privacy over the add/remove curves
        (Unsupported when the composed tree has neither route)."""
        return GP.tree_route(self._tree(), self._rel)

    def _plan(self) -> Plan:
        """The plan of the composed tree; under group privacy, its add/remove plan."""
        if self._grouped():
            return compile_event(self._tree(), Relation.ADD_REMOVE)
        return compile_event(self._tree(), self._rel)

    def _curve(self, kind: str, rel: Relation, target: Fraction, digits: int) -> A.EventAnswer:
        """One certified answer on the add/remove curves (the group-privacy bracket's input)."""
        f = A.epsilon if kind == "eps" else A.delta
        return f(self._tree(), target, neighboring=rel, digits=digits, time_budget=self._time_budget)

    def get_epsilon(self, target_delta: float) -> float:
        """Smallest float >= the upper end of a certified enclosure of
        epsilon(target_delta), the least eps with delta(eps) <= target_delta.

        Ends of the domain (each proved, no PLD needed):

        * a non-private event: inf for every delta (dp_accounting's contract
          for NonPrivateDpEvent; a sound upper end);
        * delta >= 1: 0, since delta(0) = H_1(P || Q) = TV(P, Q) <= 1;
        * delta = 0: the essential supremum of the composed privacy loss
          (delta(eps) = 0 exactly from there on, AFA Lemma 37), which is the
          eps of a pure-DP tree (sum of the steps' maximal losses); inf where
          the loss is unbounded (Gaussian noise) or has mass at +inf.

        When the requested width cannot be reached within the budget, the
        upper end of the best certified enclosure is returned (the host's
        contract is a sound upper bound, not a width); PrecisionExhausted only
        when no finite upper end was certified. Any finite essential supremum
        also bounds epsilon(delta) for every delta, and the smaller bound is
        returned."""
        D = parse_exact(_host_number(target_delta, "target_delta"), "target_delta")
        if D < 0:
            raise InvalidParameter("target_delta", f"target_delta={target_delta!r} must be >= 0")
        plan = self._plan()
        if plan.non_private:
            return math.inf
        if D >= 1:
            return 0.0
        grouped = plan.relation is not self._rel  # the add/remove plan of the group-privacy route
        with working_precision(128):
            sup = _sup_loss(plan)
            # replace-one is two add/remove steps: pure eps doubles (group privacy)
            cap = math.inf if sup is None else _float_up(2 * sup if grouped else sup)
        if D == 0:
            return cap
        if grouped:
            try:
                return min(_fraction_float(Fraction(GP.group_privacy_epsilon(self._curve, D)["hi"]), up=True), cap)
            except PrecisionExhausted:
                if cap < math.inf:  # the proved supremum bounds epsilon at every delta
                    return cap
                raise
        try:
            hi = _float_up(self.answer(delta=D, afford_length=self._float_points).enclosure.hi)
        except PrecisionExhausted as exc:
            hi = self._best_upper(exc, cap)
        return min(hi, cap)

    def get_delta(self, target_epsilon: float) -> float:
        """Smallest float >= the upper end of a certified enclosure of
        delta(target_epsilon), maximised over the relation's directions.

        Ends of the domain (each proved): a non-private event gives 1
        (dp_accounting's contract); eps = inf gives the mass of the composed
        loss at +inf, 1 - prod_i (1 - P_i(L = inf))^count_i (AFA Lemma 37); an
        eps at or above the essential supremum of the composed loss gives 0.
        When the requested width cannot be reached the upper end of the best
        certified enclosure is returned (see :meth:`get_epsilon`)."""
        target_epsilon = _host_number(target_epsilon, "target_epsilon")
        if isinstance(target_epsilon, float) and math.isinf(target_epsilon) and target_epsilon > 0:
            plan = self._plan()
            if plan.non_private:
                return 1.0
            with working_precision(128):
                return _float_up(_inf_mass(plan))
        Ep = parse_exact(target_epsilon, "target_epsilon")
        if Ep < 0:
            raise InvalidParameter("target_epsilon", f"target_epsilon={target_epsilon!r} must be >= 0")
        plan = self._plan()
        if plan.non_private:
            return 1.0
        grouped = plan.relation is not self._rel  # the add/remove plan of the group-privacy route
        with working_precision(128):
            sup = _sup_loss(plan)
            if sup is not None and ball(Ep) >= (2 * sup if grouped else sup):
                return 0.0
        if grouped:
            return _fraction_float(Fraction(GP.group_privacy_delta(self._curve, Ep, lower=False)["hi"]), up=True)
        try:
            return _float_up(self.answer(eps=Ep, afford_length=self._float_points).enclosure.hi)
        except PrecisionExhausted as exc:
            return self._best_upper(exc, math.inf)

    @staticmethod
    def _best_upper(exc: PrecisionExhausted, cap: float) -> float:
        best = getattr(exc, "best_enclosure", None)
        if best is not None and best[1] is not None:
            return _fraction_float(best[1], up=True)
        if cap < math.inf:
            return cap
        raise exc

    # -- certified extras
    def answer(self, *, delta: Any = None, eps: Any = None, afford_length: Optional[int] = None) -> A.EventAnswer:
        """The certified answer at ``rel_width`` (narrower where a grid of at most
        ``afford_length`` points reaches it: :func:`dpverify.pld.refine.tightened_width`)."""
        if (delta is None) == (eps is None):
            raise ValueError("give exactly one of delta= or eps=")
        if self._grouped():
            return self._grouped_answer(delta=delta, eps=eps)
        if delta is not None:
            return A.epsilon(self._tree(), delta, neighboring=self._rel, rel_width=self._rel_width,
                             time_budget=self._time_budget, afford_length=afford_length)
        return A.delta(self._tree(), eps, neighboring=self._rel, rel_width=self._rel_width,
                       time_budget=self._time_budget, afford_length=afford_length)

    def _grouped_answer(self, *, delta: Any, eps: Any) -> A.EventAnswer:
        """The group-privacy bracket as the library answers it (:func:`dpverify.epsilon` under
        replace-one): the lower end from the remove curve (a zero-contribution replacement),
        the upper end by group privacy."""
        if delta is not None:
            return A.epsilon(self._tree(), delta, neighboring=Relation.REPLACE_ONE, time_budget=self._time_budget)
        return A.delta(self._tree(), eps, neighboring=Relation.REPLACE_ONE, time_budget=self._time_budget)

    def enclosure(self, *, delta: Any = None, eps: Any = None):
        """The certified :class:`~dpverify.Enclosure` of epsilon(delta) or delta(eps)."""
        return self.answer(delta=delta, eps=eps).enclosure

    def check(self, eps: Any, delta: Any):
        """Three-valued verdict on "(eps, delta)-DP" for the composed events."""
        return A.check_claim(self._tree(), eps, delta, neighboring=self._rel, time_budget=self._time_budget)[0]

    def certificate(self, *, delta: Any = None, eps: Any = None) -> dict:
        """A dpverify certificate of the enclosure: ``events.epsilon`` / ``events.delta``, or
        under REPLACE_ONE with Poisson sampling ``replace.epsilon`` / ``replace.delta`` (the
        group-privacy bracket of the tree, both ends re-proved by ``dpverify verify``). What it hands
        out, verify accepts (the CLI's write-time contract, :func:`dpverify.certificate.writer.handed_out`):
        PrecisionExhausted where verify could not re-prove it within its caps."""
        from ..certificate.events_cert import answer_certificate
        from ..certificate.writer import handed_out

        return handed_out(answer_certificate(self._tree(), self.answer(delta=delta, eps=eps), delta=delta, eps=eps))

    @property
    def relation(self) -> Relation:
        return self._rel

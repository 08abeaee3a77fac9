"""``CertifiedPLDAccountant``: a ``dp_accounting.PrivacyAccountant`` whose
answers are the *upper ends* of certified enclosures (rounded up to the next
float), so that a float it returns is never below the truth for the exact
event parameters (floats in DpEvents are taken at their exact binary value).

Interface as dp_accounting's own accountants: ``supports(event)`` (a dry run
that never approximates: False with a reason for anything without a proved
dominating pair), ``compose(event, count=1)``, ``get_epsilon(delta)``,
``get_delta(eps)``; plus ``enclosure(delta=... | eps=...)``,
``check(eps, delta)`` and ``certificate(delta=... | eps=...)``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from dp_accounting import dp_event, privacy_accountant

from ..events import api as A
from ..events.convert import from_dp_event
from ..events.dispatch import Unsupported, compile_event
from ..relation import Relation, relation
from ..events import model as E

__all__ = ["CertifiedPLDAccountant"]

NeighborRel = privacy_accountant.NeighboringRelation


def _float_up(x: Any) -> float:
    """Smallest float >= the exact value of the arb point x (inf stays inf)."""
    if not x.is_finite():
        return math.inf
    man, exp = x.mid().man_exp()
    f = Fraction(int(man)) * Fraction(2) ** int(exp)
    v = float(f)
    while Fraction(v) < f:
        v = math.nextafter(v, math.inf)
    return v


class CertifiedPLDAccountant(privacy_accountant.PrivacyAccountant):
    """Certified PLD accountant for DpEvent trees (dpverify issue 12).

    ``neighboring_relation``: dp_accounting's ADD_OR_REMOVE_ONE, REPLACE_ONE or
    REPLACE_SPECIAL. ``rel_width``: requested relative width of the
    enclosures (the float answers are their upper ends). Sensitivity
    convention: :data:`dpverify.events.SENSITIVITY_CONVENTION`.
    """

    def __init__(self, neighboring_relation: NeighborRel = NeighborRel.ADD_OR_REMOVE_ONE,
                 rel_width: float = 1e-4, time_budget: float = 600.0) -> None:
        super().__init__(neighboring_relation)
        self._rel = relation(neighboring_relation)
        self._events: list = []
        self._rel_width = rel_width
        self._time_budget = time_budget
        self._last_reason = ""

    # -- PrivacyAccountant
    def _maybe_compose(self, event: dp_event.DpEvent, count: int, do_compose: bool
                       ) -> Optional[privacy_accountant.PrivacyAccountant.CompositionErrorDetails]:
        try:
            ev = from_dp_event(event)
            compile_event(ev, self._rel)
        except (Unsupported, ValueError) as exc:
            self._last_reason = str(exc)
            return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        if do_compose:
            self._events.append(E.SelfComposed(ev, int(count)))
        return None

    def _tree(self) -> Any:
        return E.Composed(tuple(self._events))

    def get_epsilon(self, target_delta: float) -> float:
        """Upper end of the certified enclosure of epsilon(target_delta), as a
        float rounded up."""
        return _float_up(self.enclosure(delta=target_delta).hi)

    def get_delta(self, target_epsilon: float) -> float:
        """Upper end of the certified enclosure of delta(target_epsilon),
        rounded up (1 for non-private events, as dp_accounting)."""
        return _float_up(self.enclosure(eps=target_epsilon).hi)

    # -- certified extras
    def answer(self, *, delta: Any = None, eps: Any = None) -> A.EventAnswer:
        if (delta is None) == (eps is None):
            raise ValueError("give exactly one of delta= or eps=")
        if delta is not None:
            return A.epsilon(self._tree(), delta, neighboring=self._rel, rel_width=self._rel_width,
                             time_budget=self._time_budget)
        return A.delta(self._tree(), eps, neighboring=self._rel, rel_width=self._rel_width,
                       time_budget=self._time_budget)

    def enclosure(self, *, delta: Any = None, eps: Any = None):
        """The certified :class:`~dpverify.Enclosure` of epsilon(delta) or delta(eps)."""
        return self.answer(delta=delta, eps=eps).enclosure

    def check(self, eps: Any, delta: Any):
        """Three-valued verdict on "(eps, delta)-DP" for the composed events."""
        return A.check_claim(self._tree(), eps, delta, neighboring=self._rel, time_budget=self._time_budget)[0]

    def certificate(self, *, delta: Any = None, eps: Any = None) -> dict:
        """A dpverify certificate (``events.epsilon`` / ``events.delta``) of the enclosure."""
        from ..certificate.events_cert import answer_certificate

        return answer_certificate(self._tree(), self.answer(delta=delta, eps=eps), delta=delta, eps=eps)

    @property
    def relation(self) -> Relation:
        return self._rel

"""GDPT's 4-output mechanism, checked exhaustively ("all 64 combinations").

The necessity half of GDPT Thm 3.1 (proof of Thm 2.1 in the appendix, file
000) uses Omega_e = {1, 2, 3, 4}, Omega_S = {0, 1}, alpha0 = e^eps0/(1+e^eps0):

    P(.|S=0) = (delta0, 0, (1-delta0) alpha0, (1-delta0)(1-alpha0))
    P(.|S=1) = (0, delta0, (1-delta0)(1-alpha0), (1-delta0) alpha0)

and states that "by checking all 64 combinations" its profile is
delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0).

What the 64 counts: 2^4 = 16 events E times the 4 ordered pairs (s, s') in
Omega_S x Omega_S of the inequality P(E|s) <= e^eps P(E|s') + delta. Only the
32 with s' = 1 - s are the DP condition the proof defines ("for all E and
s in Omega_S", with s' = 1 - s); the 32 with s' = s read (1 - e^eps) P(E|s),
which is <= 0 for eps >= 0, so they never bind (by the symmetry 1<->2, 3<->4
only 16 of the 32 genuine rows are distinct).

The check here enumerates all 64 rows in ball arithmetic and proves that the
supremum over the 32 neighbouring rows *equals* the worst-case profile
W(eps) (GDPT Cor 3.2, any real eps): every row value times 1 + e^eps0 is a
rational combination of exponentials of rational exponents, so
W - value >= 0 for every row and = 0 for some row are decided exactly
(:mod:`dpverify.dp.expsum`). The verdict then says whether the supremum equals
GDPT's printed formula: exactly when eps >= -eps0 (or delta0 = 1); below, the
printed formula misses the (1 - e^(eps+eps0))_+ term (GDPT states it for eps >= 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import ball, refine
from ..verdict import Enclosure, Outcome, Verdict
from .expsum import exp_sum_ball, exp_sum_sign, merge
from .implication import worst_case_delta, worst_case_terms

__all__ = ["RR64Row", "RR64Result", "rr64_check"]


@dataclass(frozen=True)
class RR64Row:
    event: tuple  # outputs in E (1-based)
    s: int
    s_ref: int
    value: Enclosure  # P(E|s) - e^eps P(E|s')
    neighbouring: bool
    attains_sup: bool  # exactly equal to the supremum (proved)


@dataclass(frozen=True)
class RR64Result:
    rows: tuple
    supremum: Enclosure
    gdpt_formula: Enclosure
    verdict: Verdict


def _scaled_pmfs(eps0: Fraction, delta0: Fraction) -> dict[int, list]:
    """(1 + e^eps0) P(output | s) as exp-sum term lists, outputs 1..4."""
    F0 = Fraction(0)
    d, c = delta0, 1 - delta0
    return {
        0: [[(d, F0), (d, eps0)], [], [(c, eps0)], [(c, F0)]],
        1: [[], [(d, F0), (d, eps0)], [(c, F0)], [(c, eps0)]],
    }


def rr64_check(eps0: ExactInput, delta0: ExactInput, eps: ExactInput, digits: int = 15) -> RR64Result:
    """Enumerate all 64 (event, s, s') rows and prove sup = W(eps) exactly."""
    e0 = V.eps0("eps0", eps0)
    d0 = V.closed_unit("delta0", delta0)
    e = V.real("eps", eps)
    pm = _scaled_pmfs(e0, d0)
    W = worst_case_terms(e0, d0, e)
    rows = []
    zero_found = False
    for s in (0, 1):
        for s_ref in (0, 1):
            for mask in range(16):
                ev = tuple(i + 1 for i in range(4) if mask >> i & 1)
                terms = [t for i in range(4) if mask >> i & 1 for t in pm[s][i]]
                terms += [(-c, a + e) for i in range(4) if mask >> i & 1 for c, a in pm[s_ref][i]]
                scaled = merge(terms)  # (1 + e^eps0) * value
                val, bits = refine(lambda: exp_sum_ball(scaled) / (1 + ball(e0).exp()),
                                   digits=digits + 1, what="a row value") if scaled else (arb(0), 0)
                attains = False
                if s != s_ref:
                    gap = exp_sum_sign(merge(W + [(-c, a) for a, c in scaled.items()]))
                    if gap < 0:  # impossible by GDPT Thm 3.1; kept as a real check
                        raise AssertionError(f"row {ev}, {s}|{s_ref} exceeds the worst-case profile")
                    attains = gap == 0
                    zero_found = zero_found or attains
                enc = Enclosure(arb(0), arb(0), digits, 0) if not scaled else Enclosure.from_ball(val, digits, bits)
                rows.append(RR64Row(ev, s, s_ref, enc, s != s_ref, attains))
    if not zero_found:
        raise AssertionError("no row attains the worst-case profile")
    sup = worst_case_delta(e0, d0, e, digits)
    printed = _printed(e0, d0, e, digits)
    same = d0 == 1 or e + e0 >= 0  # the missing term (1-delta0)(1 - e^(eps+eps0))_+ vanishes exactly
    outcome = Outcome.HOLDS if same else Outcome.FAILS
    reason = (
        f"sup over the 32 neighbouring rows = {sup.short(digits)} = W(eps) (proved exactly); "
        + ("it equals GDPT's formula" if same else
           f"GDPT's formula gives {printed.short(digits)}: it omits (1-delta0)(1-e^(eps+eps0))_+/(1+e^eps0), "
           "which is nonzero for eps < -eps0 (GDPT states it for eps >= 0)")
    )
    return RR64Result(tuple(rows), sup, printed, Verdict(outcome, reason, {"supremum": sup, "gdpt_formula": printed}))


def _printed(e0: Fraction, d0: Fraction, e: Fraction, digits: int) -> Enclosure:
    """GDPT's printed delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0)."""
    if e >= e0 or d0 == 1:  # exactly delta0 (possibly 0: no ball could refine it)
        return worst_case_delta(e0, d0, e, digits)

    def f() -> arb:
        u, E = ball(e0).exp(), ball(e).exp()
        return ball(d0) + (1 - ball(d0)) * (u - E).nonnegative_part() / (1 + u)

    x, bits = refine(f, digits=digits + 1, what="GDPT's formula")
    return Enclosure.from_ball(x, digits, bits)

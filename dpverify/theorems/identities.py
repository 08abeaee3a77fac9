"""Paper identities checked *exactly* on finite mechanisms with rational pmfs.

Each check takes a pair (P, Q) of rational pmfs and rational parameters, and
returns the exact residual (left side - right side) as a Fraction, so that a
check holds only when the residual is exactly 0. Where a statement is at
eps = log r, the parameter is r = e^eps itself (rational), which keeps both
sides rational; where it compares log-ratios with log r, the comparison is
done on the ratios.

Identities (statement, source):

* ``lt-eq7``: delta_{Q|P}(eps) = 1 - e^eps + e^eps delta_{P|Q}(-eps)      (LT eq. 7)
* ``afa-lemma46``: H_a(Q||P) = a H_{1/a}(P||Q) - a + 1                   (AFA Lemma 46)
* ``afa-lemma19``: H_a(P||Q) = F(-log a) - a G(-log a), with F, G the CDFs of
  log(dQ/dP) under P and under Q (as the proof of Lemma 19 uses them)       (AFA Lemma 19)
* ``lt-eq19``: f_Z(z) = e^z f_{Z'}(-z) for the PLD masses                  (LT eq. 19)
* ``lt-eq21``: E_P[e^{(q-1)Z}] = E_Q[e^{-q Z'}] (Renyi moment from either PLD;
  with LT eq. 9 this is the reversal E_q(P||Q) = E_{1-q}(Q||P)), integer q  (LT eq. 9, 21)
* ``lt-eq12``: the left-continuous inverse of f_{P|Q} is f_{Q|P}          (LT eq. 12)
* ``lt-thm5.1``: Poisson subsampling, P = l P_in + (1-l) Q_in, Q = Q_in:
  delta_{P|Q}(eps) = l delta_{P_in|Q_in}(log(1 + (e^eps - 1)/l)) if eps > log(1-l),
  else 1 - e^eps                                                           (LT Thm 5.1)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

from ..certificate.prose import IDENTITY_SOURCES
from ..errors import InvalidParameter
from ..limits import MAX_IDENTITY_ORDER
from ..mechanisms.finite import FiniteMechanism

__all__ = ["IDENTITIES", "residual", "tradeoff", "tradeoff_inverse"]

F = Fraction


def _hs(P: Sequence[F], Q: Sequence[F], a: F) -> F:
    """Hockey-stick H_a(P||Q) = sum (p - a q)_+ = delta_{P|Q}(log a)."""
    return FiniteMechanism.of(P, Q).delta_exact(a)


def _lt_eq7(P, Q, r: F) -> F:
    # eps = log r
    return _hs(Q, P, r) - (1 - r + r * _hs(P, Q, 1 / r))


def _afa_lemma46(P, Q, a: F) -> F:
    return _hs(Q, P, a) - (a * _hs(P, Q, 1 / a) - a + 1)


def _afa_lemma19(P, Q, a: F) -> F:
    # F(x) = P[log(q/p) <= x], G(x) = Q[log(q/p) <= x]; at x = -log a the event
    # is q/p <= 1/a, i.e. a q <= p (outcomes with p = 0 have log(q/p) = +inf).
    A = [i for i in range(len(P)) if P[i] > 0 and a * Q[i] <= P[i]]
    Fx = sum((P[i] for i in A), F(0))
    Gx = sum((Q[i] for i in A), F(0))
    return _hs(P, Q, a) - (Fx - a * Gx)


def _lt_eq19(P, Q, r: F) -> F:
    # mass of Z = log(p/q) at log r under P, against r times the mass of
    # Z' = log(q/p) at -log r under Q (the same outcomes: p = r q)
    mz = sum((p for p, q in zip(P, Q) if q > 0 and p == r * q), F(0))
    mzp = sum((q for p, q in zip(P, Q) if q > 0 and p == r * q), F(0))
    return mz - r * mzp


def _lt_eq21(P, Q, q_order: F) -> F:
    if q_order.denominator != 1 or not 2 <= q_order <= MAX_IDENTITY_ORDER:
        raise InvalidParameter("q", f"lt-eq21 is checked exactly at integer orders q in [2, {MAX_IDENTITY_ORDER}]")
    k = int(q_order)
    if any(qq == 0 and p > 0 for p, qq in zip(P, Q)):
        raise InvalidParameter("pmf", "E_q(P||Q) is infinite when P is not << Q")
    # E_P[e^{(q-1)Z}] = sum p (p/q)^{q-1};  E_Q[e^{-q Z'}] = sum q (p/q)^{q}
    left = sum((p * (p / qq) ** (k - 1) for p, qq in zip(P, Q) if p > 0), F(0))
    right = sum((qq * (p / qq) ** k for p, qq in zip(P, Q) if qq > 0), F(0))
    return left - right


def _np_order(P: Sequence[F], Q: Sequence[F]) -> list[int]:
    """Neyman-Pearson order: outcomes by increasing p/q, those with q = 0 last."""
    return sorted(range(len(P)), key=lambda i: (Q[i] == 0, P[i] / Q[i] if Q[i] > 0 else F(0)))


def tradeoff(P: Sequence[F], Q: Sequence[F], alpha: F) -> F:
    """f_{P|Q}(alpha) = inf{beta_phi : alpha_phi <= alpha} with alpha_phi = E_P[phi],
    beta_phi = 1 - E_Q[phi] (LT eq. 11), exactly, by Neyman-Pearson: reject
    (phi = 1) the outcomes with the smallest p/q first, randomising on the last."""
    order = _np_order(P, Q)
    used_a, gained = F(0), F(0)
    for i in order:
        if Q[i] == 0:
            break  # rejecting these costs alpha and gains nothing
        if used_a + P[i] <= alpha:
            used_a += P[i]
            gained += Q[i]
        else:
            frac = (alpha - used_a) / P[i] if P[i] > 0 else F(1)
            gained += frac * Q[i]
            used_a = alpha
            break
    return 1 - gained


def tradeoff_inverse(P: Sequence[F], Q: Sequence[F], beta: F) -> F:
    """inf{alpha in [0, 1] : f_{P|Q}(alpha) <= beta}, exactly: f is piecewise
    linear, convex and non-increasing with breakpoints at the partial sums of P
    in Neyman-Pearson order, so the infimum is found on the segment where f
    crosses beta."""
    order = _np_order(P, Q)
    pts = [F(0)]
    for i in order:
        pts.append(pts[-1] + P[i])
    vals = [tradeoff(P, Q, a) for a in pts]
    if vals[0] <= beta:
        return F(0)
    for (a0, f0), (a1, f1) in zip(zip(pts, vals), zip(pts[1:], vals[1:])):
        if f1 <= beta:
            if f1 == f0:
                return a1 if f0 > beta else a0
            return a0 + (f0 - beta) * (a1 - a0) / (f0 - f1)
    return F(1)


def _lt_eq12(P, Q, beta: F) -> F:
    return tradeoff_inverse(P, Q, beta) - tradeoff(Q, P, beta)


def _lt_thm51(P_in, Q_in, r: F, lam: F) -> F:
    P = [lam * p + (1 - lam) * q for p, q in zip(P_in, Q_in)]
    left = _hs(P, Q_in, r)
    if r > 1 - lam:  # eps > log(1 - lam)
        right = lam * _hs(P_in, Q_in, 1 + (r - 1) / lam)
    else:
        right = 1 - r
    return left - right


IDENTITIES: dict[str, tuple[str, Callable[..., F]]] = {
    "lt-eq7": (IDENTITY_SOURCES["lt-eq7"], _lt_eq7),
    "afa-lemma46": (IDENTITY_SOURCES["afa-lemma46"], _afa_lemma46),
    "afa-lemma19": (IDENTITY_SOURCES["afa-lemma19"], _afa_lemma19),
    "lt-eq19": (IDENTITY_SOURCES["lt-eq19"], _lt_eq19),
    "lt-eq21": (IDENTITY_SOURCES["lt-eq21"], _lt_eq21),
    "lt-eq12": (IDENTITY_SOURCES["lt-eq12"], _lt_eq12),
    "lt-thm5.1": (IDENTITY_SOURCES["lt-thm5.1"], _lt_thm51),
}


def residual(identity: str, P: Sequence[F], Q: Sequence[F], *args: F) -> F:
    """Exact left side minus right side of a registered identity."""
    if identity not in IDENTITIES:
        raise InvalidParameter("identity", f"unknown identity {identity!r}")
    FiniteMechanism.of(P, Q)  # validates the pmfs
    xs = [F(x) for x in args]
    # each source states its identity on this domain only; a residual outside it says nothing
    if identity == "lt-eq12":
        if not 0 <= xs[0] <= 1:
            raise InvalidParameter("beta", f"lt-eq12 is stated for beta in [0, 1] (beta = {xs[0]})")
    elif identity != "lt-eq21" and xs[0] <= 0:
        raise InvalidParameter("r", f"{identity} is stated for r = e^eps > 0 (r = {xs[0]})")
    if identity == "lt-thm5.1" and not 0 < xs[1] <= 1:
        raise InvalidParameter("lam", f"lt-thm5.1 is stated for lam in (0, 1] (lam = {xs[1]})")
    return IDENTITIES[identity][1]([F(x) for x in P], [F(x) for x in Q], *xs)

"""LT (Laplace-transform view) statements checked by rigorous integration.

Identities are checked as *residuals*: the certified enclosure of
(left side - right side) must lie within [-10^-20, 10^-20] at 128 bits. This is
numerical evidence for an identity at the given parameters, not a proof of it;
the divergence finding below, in contrast, is a proof (a positive integrand
with a certified partial integral).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from flint import acb

from ..ball import ball, working_precision
from ..transforms.laplace import (
    PLDPair,
    gaussian_pld,
    laplace_pld,
    partial_transform,
    profile_by_eq22,
    profile_by_eq23,
    renyi_moment,
    renyi_moment_by_eq27,
    rr_pld,
)
from ..verdict import Enclosure
from .registry import Claim, register

_BITS = 128
_FACTORIES: dict[str, Callable[[Fraction], PLDPair]] = {
    "gaussian": gaussian_pld,
    "laplace": laplace_pld,
    "rr": rr_pld,
}
TOLERANCE = {"kind": "in", "lo": "-1e-20", "hi": "1e-20"}


def profile_residual(identity: str, mechanism: str, param: str, eps: str) -> Enclosure:
    """(eq. 22 or 23 evaluated by integration) - (closed-form profile)."""
    with working_precision(_BITS):
        pair = _FACTORIES[mechanism](Fraction(param))
        e = Fraction(eps)
        lhs = (profile_by_eq22 if identity == "eq22" else profile_by_eq23)(pair, e)
        from ..transforms.laplace import _piece_at

        rhs = _piece_at(pair.profile, e)(acb(ball(e))).real
        return Enclosure.from_ball(lhs - rhs, 15, _BITS)


def moment_residual(mechanism: str, param: str, q_re: str, q_im: str) -> Enclosure:
    """|q(q-1) B{delta}(1-q) - E_q| (LT eq. 27; complex q is LT Thm 3.5)."""
    with working_precision(_BITS):
        pair = _FACTORIES[mechanism](Fraction(param))
        q = acb(ball(Fraction(q_re)), ball(Fraction(q_im)))
        r = renyi_moment_by_eq27(pair, q) - renyi_moment(pair, q)
        return Enclosure.from_ball(abs(r), 15, _BITS)


def partial(mechanism: str, param: str, q: str, A: int, B: int) -> Enclosure:
    with working_precision(_BITS):
        pair = _FACTORIES[mechanism](Fraction(param))
        return Enclosure.from_ball(partial_transform(pair, Fraction(q), A, B), 15, _BITS)


for ident, eq in (("eq22", "(22)"), ("eq23", "(23)")):
    for mech, param, eps in (("gaussian", "1", "1/2"), ("laplace", "3/2", "-1/4"), ("rr", "1", "1/2")):
        register(
            Claim(
                id=f"lt-thm3.2-{ident}-{mech}",
                source=f"LT Thm 3.2, eq. {eq}",
                statement=f"the Laplace-transform expression {eq} of the PLD equals the privacy "
                f"profile ({mech}, parameter {param}, eps = {eps}); residual within 1e-20",
                printed=f"delta(eps) = eq. {eq}",
                relation=TOLERANCE,
                quantity="lt.residual",
                inputs={"identity": ident, "mechanism": mech, "param": param, "eps": eps},
                compute=lambda i=ident, m=mech, p=param, e=eps: profile_residual(i, m, p, e),
                domain="all real eps",
            )
        )

for mech, param, q_re, q_im, src in (
    ("gaussian", "1", "3", "0", "LT Thm 3.3, eq. (27)"),
    ("laplace", "3/2", "2", "0", "LT Thm 3.3, eq. (27)"),
    ("rr", "1", "3/2", "0", "LT Thm 3.3, eq. (27)"),
    ("gaussian", "1", "2", "3", "LT Thm 3.5 (complex order)"),
    ("rr", "1", "3", "5", "LT Thm 3.5 (complex order)"),
):
    register(
        Claim(
            id=f"lt-thm3.3-{mech}-q{q_re.replace('/', '_')}{'' if q_im == '0' else 'i' + q_im}",
            source=src,
            statement=f"E_q(P||Q) = q(q-1) B{{delta}}(1-q) for {mech} (parameter {param}) at "
            f"q = {q_re}{'' if q_im == '0' else ' + ' + q_im + 'i'}; |residual| within 1e-20",
            printed="E_q = q(q-1) B{delta_{P|Q}}(1-q)",
            relation={"kind": "in", "lo": "0", "hi": "1e-20"},
            quantity="lt.residual",
            inputs={"identity": "eq27", "mechanism": mech, "param": param, "q_re": q_re, "q_im": q_im},
            compute=lambda m=mech, p=param, a=q_re, b=q_im: moment_residual(m, p, a, b),
            domain="Re q > 1 (the region of convergence)",
        )
    )

register(
    Claim(
        id="lt-thm3.3-roc-below-one",
        source="LT Sec 3, discussion after Thm 3.3 (p. 6)",
        statement="'if Q << P, [B{delta}(1-q)] converges for all q < 1, except for q = 0', so that "
        "eq. (27) gives E_q > 0 there. Checked at q = 1/2 for the Gaussian (mu = 1): the certified "
        "partial value q(q-1) int_{-40}^{40} e^{(q-1)t} delta(t) dt must be positive if it converged "
        "to E_q",
        printed="converges for q < 1, q != 0",
        relation={"kind": "gt", "bound": "0"},
        quantity="lt.partial-transform",
        inputs={"mechanism": "gaussian", "param": "1", "q": "1/2", "A": 40, "B": 40},
        compute=lambda: partial("gaussian", "1", "1/2", 40, 40),
        domain="q = 1/2, Gaussian mu = 1",
        note="delta(t) -> 1 as t -> -inf for every pair, so e^{(q-1)t} delta(t) is positive "
        "and not integrable for q < 1; q(q-1) times the partial integrals is negative and tends to "
        "-inf (about -2.4e8 already on [-40, 40]), while E_{1/2} = e^{-1/8} > 0. The transform "
        "converges only for Re q > 1; the q < 1 statement holds for delta_{Q|P} instead (reversal, LT eq. 9).",
    )
)

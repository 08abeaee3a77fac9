"""Claims of the (eps, delta) world: LT Fig 2 / Fig 4, LT Cor 4.7 vs Kairouz et
al. Thm 3.3, GDPT Thm 3.1's tightness example, GDPT Sec 5.2."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from ..composition import compose_delta, compose_eps
from ..dp.rr64 import rr64_check
from .registry import Claim, register


def _eps_claim(id_: str, source: str, statement: str, printed: str, relation: dict, eps: str, delta: str,
               budget: str, k: int, note: str = "") -> None:
    mech = f"{eps},{delta}"
    register(Claim(
        id=id_, source=source, statement=statement, printed=printed, relation=relation,
        quantity="composition.eps",
        inputs={"mechs": [mech], "k": k, "delta": budget, "digits": 15},
        compute=lambda: compose_eps([mech], budget, k=k, digits=15),
        domain=f"{k}-fold ({eps}, {delta})-DP, delta budget {budget}", note=note,
    ))


# LT Fig 4 caption: "at k = 100, the constraint on delta cannot be satisfied and so eps = inf"
_eps_claim(
    "lt-fig4-k100-infinite", "LT Fig 4 caption",
    "for the 100-fold composition of (0.1, 1e-10)-DP with budget delta < 1e-8 no finite eps exists",
    "eps = inf (k = 100)", {"kind": "gt", "bound": "1e100"}, "0.1", "1e-10", "1e-8", 100,
    note="FAILS: 1 - (1 - 1e-10)^100 = 9.9999999505e-9 < 1e-8 exactly, so delta(eps) < 1e-8 for eps "
    "near 10 and the smallest eps is about 7.96. In float64 1 - (1 - 1e-10)**100 evaluates to "
    "1.00000008e-8 > 1e-8: the caption's 'infinite' is a rounding artefact. Infinite only from k = 101.",
)
_eps_claim(
    "lt-fig4-k101-infinite", "LT Fig 4 (budget delta < 1e-8), dpverify's exact boundary",
    "for the 101-fold composition of (0.1, 1e-10)-DP with budget 1e-8 no finite eps exists",
    "eps = inf (k = 101)", {"kind": "gt", "bound": "1e100"}, "0.1", "1e-10", "1e-8", 101,
    note="1 - (1 - 1e-10)^101 > 1e-8, decided in exact rationals",
)
# LT Fig 2: k-fold (0.1, 1e-8), budget delta < 1e-6; the plotted Thm 4.6 curve is finite up to k = 100
_eps_claim(
    "lt-fig2-k100-finite", "LT Fig 2",
    "for the 100-fold composition of (0.1, 1e-8)-DP the budget delta < 1e-6 is met by a finite eps "
    "below the basic composition bound k * eps = 10",
    "finite, < 10 (k = 100)", {"kind": "lt", "bound": "10"}, "0.1", "1e-8", "1e-6", 100,
    note="certified eps = 6.96961878373656 (1 - (1 - 1e-8)^100 = 9.999995e-7 < 1e-6 leaves little room)",
)
_eps_claim(
    "lt-fig2-k101-infinite", "LT Fig 2 (budget delta < 1e-6), dpverify's exact boundary",
    "for the 101-fold composition of (0.1, 1e-8)-DP no finite eps meets delta < 1e-6",
    "eps = inf (k = 101)", {"kind": "gt", "bound": "1e100"}, "0.1", "1e-8", "1e-6", 101,
)


def _kairouz(eps: Fraction, delta: Fraction, k: int, i: int) -> str:
    """Kairouz et al. (2015) Thm 3.3 point delta_i for eps_i = (k - 2i) eps, in mpmath
    (their formula, not the LT recursion): 1 - (1-delta)^k (1 - delta'_i),
    delta'_i = sum_{l<i} C(k,l) (e^{(k-l)eps} - e^{(k-2i+l)eps}) / (1+e^eps)^k."""
    with mpmath.workdps(60):
        e = mpmath.mpf(eps.numerator) / eps.denominator
        d = mpmath.mpf(delta.numerator) / delta.denominator
        s = mpmath.fsum(math.comb(k, l) * (mpmath.exp((k - l) * e) - mpmath.exp((k - 2 * i + l) * e))
                        for l in range(i)) / (1 + mpmath.exp(e)) ** k
        return mpmath.nstr(1 - (1 - d) ** k * (1 - s), 22, min_fixed=1, max_fixed=0)


for _k, _i in ((10, 2), (30, 6), (100, 12)):
    _e, _d = Fraction(1, 10), Fraction(1, 10**8)
    _t = str(Fraction((_k - 2 * _i), 10))
    register(Claim(
        id=f"lt-cor4.7-kairouz-k{_k}-i{_i}",
        source="LT Sec 4 (Thm 4.6 matches Kairouz et al. Thm 3.3 points)",
        statement=f"the tight composed delta of {_k}-fold (0.1, 1e-8)-DP at eps = ({_k} - 2*{_i}) * 0.1 "
        "equals Kairouz et al.'s Thm 3.3 delta_i",
        printed=_kairouz(_e, _d, _k, _i) + " (Kairouz formula, 22 digits)",
        relation={"kind": "rounds_to", "printed": _kairouz(_e, _d, _k, _i)},
        quantity="composition.delta",
        inputs={"mechs": ["0.1,1e-8"], "k": _k, "eps": _t, "digits": 30},
        compute=(lambda k=_k, t=_t: compose_delta(["0.1,1e-8"], t, k=k, digits=30)),
        domain=f"k = {_k}, i = {_i}",
        note="the printed value is Kairouz's closed form evaluated independently (mpmath, 60 digits)",
    ))

# GDPT Thm 3.1 tightness: the 4-output mechanism of the necessity proof attains the bound.
# Example pair: GDPT Sec 3's SGD example (eps2, delta2) ~ (1.187, 0.244), at eps = 0.5.
_E0, _D0, _EPS = "1.187", "0.244", "0.5"
with mpmath.workdps(50):
    _u, _E = mpmath.exp(mpmath.mpf(_E0)), mpmath.exp(mpmath.mpf(_EPS))
    _W = mpmath.nstr(mpmath.mpf(_D0) + (1 - mpmath.mpf(_D0)) * (_u - _E) / (1 + _u), 20)
register(Claim(
    id="gdpt-thm3.1-tightness",
    source="GDPT Thm 3.1 / Cor 3.2 (necessity proof, appendix B.1)",
    statement="the supremum over all 64 event/input combinations of GDPT's 4-output (1.187, 0.244)-DP "
    "mechanism at eps = 0.5 equals delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0)",
    printed=_W + " (the closed form, 20 digits)",
    relation={"kind": "rounds_to", "printed": _W},
    quantity="dp.rr64",
    inputs={"eps0": _E0, "delta0": _D0, "eps": _EPS, "digits": 25},
    compute=lambda: rr64_check(_E0, _D0, _EPS, 25).supremum,
    domain="eps0 = 1.187, delta0 = 0.244, eps = 0.5",
    note="equality is proved exactly by dpverify check rr64 (exponential sums); the claim checks the digits",
))


# GDPT Sec 5.2: (0.2, e^-2) target; printed eps ~ 0.334, delta ~ 0.067, sigma ~ 8.086 C
def _sigma_claim(which: str, printed: str) -> None:
    from ..dp.sigma import refine_sigma

    register(Claim(
        id=f"gdpt-sec5.2-{which}",
        source="GDPT Sec 5.2 (App C)",
        statement=f"for sigma = -C log(delta0)/eps0 and target (0.2, e^-2)-DP the optimal refinement has "
        f"{which} ~ {printed}",
        printed=printed,
        relation={"kind": "rounds_to", "printed": printed},
        quantity="dp.sigma_refinement",
        inputs={"eps": "0.2", "log_delta": "-2", "which": which, "digits": 15},
        compute=lambda: getattr(refine_sigma("0.2", log_delta="-2", digits=15), which),
        domain="eps = 0.2, delta = e^-2",
        note="sigma in units of C; the naive choice is -log(e^-2)/0.2 = 10",
    ))


_sigma_claim("eps0", "0.334")
_sigma_claim("delta0", "0.067")
_sigma_claim("sigma", "8.086")

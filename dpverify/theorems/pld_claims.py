"""Claims about DP-SGD accounting numbers (dpverify issue #6 and the
prv_accountant issue tracker), re-derived by the certified PLD accountant.

Every claim is about epsilon(delta) of T steps of the Poisson-subsampled
Gaussian mechanism under add-remove neighbours (AFA Thm 10, Thm 11, Sec 4.1),
quantity ``pld.epsilon`` (re-checked by ``certificate/recheck_pld.py``).
"""

from __future__ import annotations

from functools import lru_cache

from ..pld import dpsgd as S
from ..verdict import Enclosure
from .registry import Claim, register


@lru_cache(maxsize=None)
def _certified(sigma: str, q: str, T: int, delta: str, digits: int) -> Enclosure:
    """One computation per case, shared by the claims about it."""
    return S.dpsgd_epsilon(sigma, q, T, delta, digits=digits).enclosure


def _claim(id: str, source: str, statement: str, printed: str, relation: dict,
           case: tuple, digits: int, note: str = "") -> None:
    """Register a claim about epsilon(delta) of one DP-SGD case (add-remove)."""
    sigma, q, T, delta = case
    register(
        Claim(
            id=id,
            source=source,
            statement=statement,
            printed=printed,
            relation=relation,
            quantity="pld.epsilon",
            inputs={"noise_multiplier": sigma, "sampling_rate": q, "steps": T, "delta": delta,
                    "neighboring": "add-remove", "digits": digits},
            compute=lambda: _certified(sigma, q, T, delta, digits),
            domain=f"sigma = {sigma}, q = {q}, T = {T}, delta = {delta}, add-remove",
            note=note,
        )
    )


_CASE1 = ("1", "0.01", 1000, "1e-5")
_C1 = "for sigma = 1, q = 0.01, T = 1000, delta = 1e-5 "

_claim("dpsgd-issue6-prv-bracket", "dpverify issue #6 (prv_accountant, eps_error best setting)",
       _C1 + "the PRV accountant brackets epsilon in [1.82711, 1.82937]",
       "[1.82711, 1.82937]", {"kind": "in", "lo": "1.82711", "hi": "1.82937"}, _CASE1, 4)

_claim("dpsgd-issue6-dp-accounting-pld", "dpverify issue #6 (dp_accounting PLD, pessimistic estimate)",
       _C1 + "dp_accounting's PLD accountant reports epsilon = 1.82824; read as the guarantee "
       "epsilon <= 1.82824", "1.82824", {"kind": "le", "bound": "1.82824"}, _CASE1, 5)

_claim("dpsgd-issue6-rdp", "dpverify issue #6 (RDP accountants)",
       _C1 + "the RDP accountants report epsilon = 2.101", "2.101",
       {"kind": "rounds_to", "printed": "2.101"}, _CASE1, 4,
       note="fails by design of RDP: 2.101 is a valid but loose upper bound (the RDP-to-DP "
       "conversion loses about 15 %); the exact epsilon is about 1.8282")

_claim("dpsgd-issue6-opacus-gdp", "dpverify issue #6 (Opacus GDP accountant)",
       _C1 + "Opacus' GDP accountant reports epsilon = 1.618", "1.618",
       {"kind": "rounds_to", "printed": "1.618"}, _CASE1, 4,
       note="fails: the GDP (CLT) approximation under-reports; the certified epsilon is about "
       "1.8282 > 1.618, so the reported guarantee does not hold")

_PRV17 = ("4", "0.00033", 10000, "1.1e-18")
_C17 = "for sigma = 4, q = 0.00033, T = 10000, delta = 1.1e-18 "

_claim("prv-accountant-17-bracket", "prv_accountant issue #17 (compute-dp-epsilon output)",
       _C17 + "the PRV accountant prints eps_lower = -0.044, eps_upper = 0.156", "[-0.044, 0.156]",
       {"kind": "in", "lo": "-0.044", "hi": "0.156"}, _PRV17, 3,
       note="holds: the bracket contains the truth (about 0.0672) although its lower end is "
       "negative; the RDP value 0.669 in the same report is ten times too loose")

_claim("prv-accountant-17-estimate", "prv_accountant issue #17 (compute-dp-epsilon output)",
       _C17 + "the PRV estimate is eps = 0.056", "0.056", {"kind": "rounds_to", "printed": "0.056"},
       _PRV17, 3,
       note="fails: the certified epsilon is about 0.0672; the PRV estimate at this delta "
       "under-reports by 17 % (its own error bars are +-0.1)")

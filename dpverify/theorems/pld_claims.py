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


def _eps(sigma: str, q: str, T: int, delta: str, digits: int):
    return lambda: _certified(sigma, q, T, delta, digits)


def _inputs(sigma: str, q: str, T: int, delta: str, digits: int) -> dict:
    return {"noise_multiplier": sigma, "sampling_rate": q, "steps": T, "delta": delta,
            "neighboring": "add-remove", "digits": digits}


_CASE1 = ("1", "0.01", 1000, "1e-5")

register(
    Claim(
        id="dpsgd-issue6-prv-bracket",
        source="dpverify issue #6 (prv_accountant, eps_error best setting)",
        statement="for sigma = 1, q = 0.01, T = 1000, delta = 1e-5 the PRV accountant brackets "
        "epsilon in [1.82711, 1.82937]",
        printed="[1.82711, 1.82937]",
        relation={"kind": "in", "lo": "1.82711", "hi": "1.82937"},
        quantity="pld.epsilon",
        inputs=_inputs(*_CASE1, 4),
        compute=_eps(*_CASE1, 4),
        domain="sigma = 1, q = 0.01, T = 1000, delta = 1e-5, add-remove",
    )
)

register(
    Claim(
        id="dpsgd-issue6-dp-accounting-pld",
        source="dpverify issue #6 (dp_accounting PLD, pessimistic estimate)",
        statement="for sigma = 1, q = 0.01, T = 1000, delta = 1e-5 dp_accounting's PLD accountant "
        "reports epsilon = 1.82824; read as the guarantee epsilon <= 1.82824",
        printed="1.82824",
        relation={"kind": "le", "bound": "1.82824"},
        quantity="pld.epsilon",
        inputs=_inputs(*_CASE1, 5),
        compute=_eps(*_CASE1, 5),
        domain="sigma = 1, q = 0.01, T = 1000, delta = 1e-5, add-remove",
    )
)

register(
    Claim(
        id="dpsgd-issue6-rdp",
        source="dpverify issue #6 (RDP accountants)",
        statement="for sigma = 1, q = 0.01, T = 1000, delta = 1e-5 the RDP accountants report "
        "epsilon = 2.101",
        printed="2.101",
        relation={"kind": "rounds_to", "printed": "2.101"},
        quantity="pld.epsilon",
        inputs=_inputs(*_CASE1, 4),
        compute=_eps(*_CASE1, 4),
        domain="sigma = 1, q = 0.01, T = 1000, delta = 1e-5, add-remove",
        note="fails by design of RDP: 2.101 is a valid but loose upper bound (RDP-to-DP "
        "conversion loses about 15 %); the exact epsilon is about 1.8282",
    )
)

register(
    Claim(
        id="dpsgd-issue6-opacus-gdp",
        source="dpverify issue #6 (Opacus GDP accountant)",
        statement="for sigma = 1, q = 0.01, T = 1000, delta = 1e-5 Opacus' GDP accountant reports "
        "epsilon = 1.618",
        printed="1.618",
        relation={"kind": "rounds_to", "printed": "1.618"},
        quantity="pld.epsilon",
        inputs=_inputs(*_CASE1, 4),
        compute=_eps(*_CASE1, 4),
        domain="sigma = 1, q = 0.01, T = 1000, delta = 1e-5, add-remove",
        note="fails: the GDP (CLT) approximation under-reports; the certified epsilon is about "
        "1.8282 > 1.618, so the reported guarantee does not hold",
    )
)

_PRV17 = ("4", "0.00033", 10000, "1.1e-18")

register(
    Claim(
        id="prv-accountant-17-bracket",
        source="prv_accountant issue #17 (compute-dp-epsilon output)",
        statement="for sigma = 4, q = 0.00033, T = 10000, delta = 1.1e-18 the PRV accountant "
        "prints eps_lower = -0.044, eps_upper = 0.156",
        printed="[-0.044, 0.156]",
        relation={"kind": "in", "lo": "-0.044", "hi": "0.156"},
        quantity="pld.epsilon",
        inputs=_inputs(*_PRV17, 3),
        compute=_eps(*_PRV17, 3),
        domain="sigma = 4, q = 0.00033, T = 10000, delta = 1.1e-18, add-remove",
        note="holds: the bracket contains the truth (about 0.0672) although its lower end is "
        "negative; the RDP value 0.669 in the same report is ten times too loose",
    )
)

register(
    Claim(
        id="prv-accountant-17-estimate",
        source="prv_accountant issue #17 (compute-dp-epsilon output)",
        statement="for sigma = 4, q = 0.00033, T = 10000, delta = 1.1e-18 the PRV estimate is "
        "eps = 0.056",
        printed="0.056",
        relation={"kind": "rounds_to", "printed": "0.056"},
        quantity="pld.epsilon",
        inputs=_inputs(*_PRV17, 3),
        compute=_eps(*_PRV17, 3),
        domain="sigma = 4, q = 0.00033, T = 10000, delta = 1.1e-18, add-remove",
        note="fails: the certified epsilon is about 0.0672; the PRV estimate at this delta "
        "under-reports by 17 % (its own error bars are +-0.1)",
    )
)

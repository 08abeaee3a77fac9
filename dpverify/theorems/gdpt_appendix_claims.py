"""Claims from the GDPT appendix (the cleaner copy, "GDPT-appendix" in
shared/seeds): the necessity proof's "64 combinations" (B.1) and the
Mills-ratio bounds its Proof B.2 (of Lemma 3) rests on."""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from ..ball import ball, normal_cdf, refine
from ..dp.rr64 import rr64_check
from ..verdict import Enclosure
from .registry import Claim, register

register(
    Claim(
        id="gdpt-appendix-b1-64-combinations",
        source="GDPT-appendix, proof of Thm 2.1 (necessity, B.1)",
        statement="'by checking all 64 combinations' (16 events x 4 ordered input pairs) the 4-output "
        "mechanism's profile is delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0); at eps0 = 1, "
        "delta0 = 0.1, eps = 0.5 the certified supremum over the 64 rows equals the formula's value "
        "0.3588842229804711324295393 (mpmath, 25 digits)",
        printed="0.3588842229804711324295393",
        relation={"kind": "rounds_to", "printed": "0.3588842229804711324295393"},
        quantity="dp.rr64",
        inputs={"eps0": "1", "delta0": "0.1", "eps": "0.5", "digits": 30},
        compute=lambda: rr64_check("1", "0.1", "0.5", 30).supremum,
        domain="eps0 = 1, delta0 = 0.1, eps = 0.5",
        note="the 64 counts 16 events x 4 (s, s') pairs; only the 32 rows with s' = 1 - s are the DP "
        "condition, the other 32 equal (1 - e^eps) P(E|s) <= 0",
    )
)


def mills_scaled(t: Fraction, digits: int = 30) -> Enclosure:
    """sqrt(pi/2) e^{t^2/2} Phi(t): the quantity Proof B.2 bounds for t < 0."""
    x, bits = refine(
        lambda: (arb.pi() / 2).sqrt() * (ball(t) ** 2 / 2).exp() * normal_cdf(ball(t)),
        digits=digits + 1,
        what="the scaled Mills ratio",
    )
    return Enclosure.from_ball(x, digits, bits)


# the bounds 1/(-t + sqrt(t^2 + 4)) and 1/(-t + sqrt(t^2 + 8/pi)) at t, rounded inward to
# 25 digits (so "holds" proves the printed strict inequalities there)
for _t, _lo, _hi in (
    ("-1", "0.3090169943749474241022935", "0.3468356710112112984507007"),
    ("-3", "0.1513878188659973232798054", "0.1562985734681376398003907"),
    ("-10", "0.04950975679639241501411206", "0.04968567958635413980282918"),
):
    register(
        Claim(
            id=f"gdpt-appendix-b2-mills-t{_t.lstrip('-')}",
            source="GDPT-appendix, Proof B.2 (of Lemma 3), citing its ref. [2]",
            statement=f"for t < 0: 1/(-t + sqrt(t^2 + 4)) < sqrt(pi/2) e^(t^2/2) Phi(t) < "
            f"1/(-t + sqrt(t^2 + 8/pi)); at t = {_t}",
            printed=f"in ({_lo}, {_hi})",
            relation={"kind": "in", "lo": _lo, "hi": _hi},
            quantity="gdp.mills_scaled",
            inputs={"t": _t, "digits": 30},
            compute=lambda t=_t: mills_scaled(Fraction(t)),
            domain=f"t = {_t}",
        )
    )

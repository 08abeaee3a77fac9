"""Second route for Poisson-sampled DP-SGD under replace-one (``replace.epsilon``,
``replace.claim``): both ends re-proved with the PLD re-check (:mod:`.pld`, mpmath
and GMP integers; nothing from the arb side).

* upper end hi: with eps* = hi / 2 (exact), the independent upper end of
  delta_add-remove(eps*) times (1 + e^eps*), rounded up in MPFR, must be <= delta; then group privacy
  (delta_replace(2 eps) <= delta_remove(eps) + e^eps delta_add(eps), Dwork and Roth
  2014 Thm 2.2) gives epsilon_replace(delta) <= hi;
* lower end lo: the independent enclosure of the remove direction's epsilon(delta)
  (a zero-gradient replacement realises removal under Poisson sampling; the pair is
  tight, AFA Thm 11 Remark), refined until it lies inside the recorded ``result.lower``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import CouldNotReprove, MalformedCertificate
from . import pld as P
from .core import arith, mpf_to_fraction
from .gdp import exact_input
from .verify import Recheck, check_enclosure, parse_bound, register

#: working precision of the group-privacy product (bits): one rounding of the factor and one of
#: the product, far below the margin a genuine bracket leaves
_BITS = 128
_KEYS = ("noise_multiplier", "sampling_rate", "steps", "dataset_size", "batch_size", "epochs", "steps_rule")


def _bracket(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> tuple[mpf, mpf]:
    if inputs.get("neighboring") != "replace-one":
        raise MalformedCertificate("inputs.neighboring must be 'replace-one' for this kind")
    base = {k: inputs[k] for k in _KEYS if k in inputs}
    delta = exact_input(inputs, "delta")
    enc, low, up = result.get("enclosure"), result.get("lower"), result.get("upper")
    if not all(isinstance(x, Mapping) for x in (enc, low, up)):
        raise MalformedCertificate("result.enclosure, result.lower and result.upper are required")
    hi_text = enc.get("hi")
    try:
        eps_star = Fraction(hi_text) / 2
    except (TypeError, ValueError, ZeroDivisionError):
        raise MalformedCertificate("result.enclosure.hi must be a decimal") from None
    if not 0 <= eps_star <= 10**6:
        raise MalformedCertificate("result.enclosure.hi out of range [0, 2e6]")
    up_re = P.recheck_delta(dict(base, neighboring="add-remove", eps=str(eps_star.numerator) + "/" +
                                 str(eps_star.denominator)), {"enclosure": dict(up)})
    # (1 + e^eps*) times the independent upper end, rounded up in MPFR (the factor's exp
    # correctly rounded upward, the product too), against delta rounded down
    A = arith(_BITS)
    up_hi = up_re.enclosure()[1]
    if not mpmath.isfinite(up_hi):
        raise CouldNotReprove("the add-remove upper end at eps* = hi/2 is not finite")
    factor = A.add(A.q(1), A.exp(A.q(eps_star)))
    total = A.up.mul(factor[1], A.q(mpf_to_fraction(up_hi))[1])  # the mpf's exact value, no rounding
    if not total <= A.q(delta)[0]:
        raise CouldNotReprove(f"(1 + e^eps*) delta_add-remove(eps*) <= {float(total):.8g} is not "
                              f"re-proved <= delta at eps* = hi/2")
    # the recorded details are certified numbers too: each independent enclosure must lie inside
    check_enclosure(dict(up), up_re)
    lo_re = P.recheck_epsilon(dict(base, neighboring="remove", delta=inputs["delta"]), {"enclosure": dict(low)})
    check_enclosure(dict(low), lo_re)
    lo = lo_re.enclosure()[0]
    rec_lo = parse_bound(enc.get("lo"), "result.enclosure.lo", 40)
    if lo < rec_lo:
        raise CouldNotReprove("the remove direction's lower end is not re-proved up to the recorded lower end")
    return rec_lo, parse_bound(hi_text, "result.enclosure.hi", 40)


@register("replace.epsilon", explain="Poisson-sampled DP-SGD under replace-one, bracket of epsilon(delta): "
          "hi by group privacy ((1 + e^(hi/2)) delta_add-remove(hi/2) <= delta, PLD re-check), lo by the "
          "remove direction's epsilon (PLD re-check)")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    lo, hi = _bracket(inputs, result)
    return Recheck(lo=lo, hi=hi, dps=40, proved=frozenset({"lower", "upper"}))


# a claim is decided on the same bracket (verify derives the verdict from claim.relation)
recheck_claim = register("replace.claim", explain="Poisson-sampled DP-SGD under replace-one, verdict on a claimed "
                         "epsilon: the bracket of replace.epsilon re-proved, holds iff hi <= claimed, fails iff "
                         "lo > claimed")(recheck_eps)

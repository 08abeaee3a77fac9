"""Relations between a certified value and a paper's printed number, as
recorded in claim certificates, re-checked on mpmath.

The first implementation (arb) lives in :mod:`dpverify.theorems.registry`;
this one is deliberately separate, so that a bug in one is caught by the other.
Kinds (``claim.relation.kind``):

* ``rounds_to``: the value rounds to the printed decimal, i.e. lies within half
  a unit of its last printed digit;
* ``order_of_magnitude``: printed ``1e-43`` means 10^-43 <= value < 10^-42;
* ``lt``, ``le``, ``gt``, ``ge``: comparison with ``bound``;
* ``in``: ``lo <= value <= hi``.
"""

from __future__ import annotations

from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, MalformedCertificate
from .decimals import parse_bound

__all__ = ["interval_of_truth", "check_recorded_verdict", "decide"]


def _dec(text: Any, dps: int) -> mpf:
    if not isinstance(text, str):
        raise MalformedCertificate(f"relation bound {text!r} must be a string")
    if len(text) > 1000:
        raise MalformedCertificate(f"relation bound {text[:40]!r}...: longer than 1000 characters")
    with mpmath.workdps(dps):
        try:
            if "/" in text:
                n, d = text.split("/")
                if int(d) == 0:
                    raise MalformedCertificate(f"relation bound {text!r}: division by zero")
                return mpf(int(n)) / int(d)
            return parse_bound(text, "claim.relation", dps)
        except ValueError:
            raise MalformedCertificate(f"relation bound {text[:40]!r} is not a number") from None


def _half_unit(printed: str) -> str:
    """Half a unit in the last printed digit of a decimal, as a decimal string."""
    mant, _, exp = printed.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    e = (int(exp) if exp else 0) - decimals
    return f"5e{e - 1}"


def interval_of_truth(relation: Mapping[str, Any], dps: int) -> tuple[mpf, mpf, bool, bool]:
    """(A, B, A_closed, B_closed): the set of values for which the relation holds."""
    kind = relation.get("kind")
    with mpmath.workdps(dps):
        if kind == "rounds_to":
            p = _dec(relation["printed"], dps)
            h = _dec(_half_unit(relation["printed"]), dps)
            return p - h, p + h, True, True
        if kind == "order_of_magnitude":
            p = _dec(relation["printed"], dps)
            return p, p * 10, True, False
        if kind in ("lt", "le"):
            return -mpmath.inf, _dec(relation["bound"], dps), True, kind == "le"
        if kind in ("gt", "ge"):
            return _dec(relation["bound"], dps), mpmath.inf, kind == "ge", True
        if kind == "in":
            return _dec(relation["lo"], dps), _dec(relation["hi"], dps), True, True
    raise MalformedCertificate(f"unknown relation kind {kind!r}")


def decide(lo: mpf, hi: mpf, relation: Mapping[str, Any], dps: int) -> str:
    """holds / fails / undecided for every value in [lo, hi]."""
    a, b, a_closed, b_closed = interval_of_truth(relation, dps)
    above_a = lo >= a if a_closed else lo > a
    below_b = hi <= b if b_closed else hi < b
    if above_a and below_b:
        return "holds"
    out_low = hi < a if a_closed else hi <= a
    out_high = lo > b if b_closed else lo >= b
    if out_low or out_high:
        return "fails"
    return "undecided"


def check_recorded_verdict(claim: Mapping[str, Any], result: Mapping[str, Any], re: Any) -> None:
    """Reject a claim certificate whose verdict does not follow from its numbers."""
    recorded = result.get("verdict")
    if recorded not in ("holds", "fails", "undecided"):
        raise MalformedCertificate(f"result.verdict={recorded!r} is not holds/fails/undecided")
    if re.verdict is not None:
        if recorded != "undecided" and re.verdict != "undecided" and recorded != re.verdict:
            raise CertificateRejected(
                f"recorded verdict {recorded!r}, but the re-derivation says {re.verdict!r}"
            )
        return
    relation = claim.get("relation")
    if not isinstance(relation, dict):
        raise MalformedCertificate("a claim certificate with a verdict needs claim.relation")
    if re.value is None:
        return
    dps = re.dps
    with mpmath.workdps(dps):
        again = decide(re.value - re.err, re.value + re.err, relation, dps)
        if recorded != "undecided" and again != "undecided" and again != recorded:
            raise CertificateRejected(
                f"recorded verdict {recorded!r}, but the re-derived value "
                f"{mpmath.nstr(re.value, 15)} makes it {again!r}"
            )
        enc = result.get("enclosure")
        if recorded != "undecided" and isinstance(enc, dict):
            lo, hi = _dec(enc["lo"], dps) if enc["lo"] != "-inf" else -mpmath.inf, (
                _dec(enc["hi"], dps) if enc["hi"] != "inf" else mpmath.inf
            )
            if decide(lo, hi, relation, dps) != recorded:
                raise CertificateRejected(
                    f"recorded verdict {recorded!r} does not follow from the recorded enclosure"
                )

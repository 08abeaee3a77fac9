"""Reading a certificate's decimal numbers into mpmath, the one reader every re-check uses.

A recorded endpoint is a decimal string (or "inf" / "-inf"). It is read as a fixed
function of its text, outward in the direction asked, so the same endpoint always
becomes the same binary number whatever precision a re-checker later works at.
Exponents are capped before ``int()`` sees them: a certificate of a few bytes cannot
make the reader build a 10^18-digit integer.

This module sits below :mod:`.verify` and :mod:`.relations`, which both read numbers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate

#: decimal exponents beyond this magnitude are refused (exit 2)
MAX_EXPONENT = 10**18  # delta_mu(eps) at large eps / mu is ~ e^-(eps/mu)^2/2: exponents of 10^12 are genuine


def _split_decimal(text: str) -> tuple[str, int]:
    mant, _, exp = text.lower().partition("e")
    if len(exp) > 24:  # int() of a 5000-digit exponent is itself refused by Python
        raise MalformedCertificate(f"{text[:40]!r}: decimal exponent beyond the cap 1e{MAX_EXPONENT}")
    try:
        e = int(exp) if exp else 0
    except ValueError:
        raise MalformedCertificate(f"{text[:40]!r} is not a decimal number") from None
    if abs(e) > MAX_EXPONENT:
        raise MalformedCertificate(f"{text[:40]!r}: decimal exponent beyond the cap 1e{MAX_EXPONENT}")
    return mant, e


def parse_bound(text: Any, where: str, dps: int = 30, rounding: str = "n") -> mpf:
    """A recorded decimal endpoint (or "inf"/"-inf") as an mpf; ``rounding``
    'f' / 'c' rounds toward -inf / +inf (for proofs at a nearby binary point)."""
    if not isinstance(text, str) or not text or len(text) > 10000:
        raise MalformedCertificate(f"{where} must be a decimal string, got {str(text)[:40]!r}")
    if text in ("inf", "-inf"):
        return mpmath.inf if text == "inf" else -mpmath.inf
    if text.strip().lower() in ("nan", "+nan", "-nan", "+inf", "infinity", "-infinity"):
        raise MalformedCertificate(f"{where}={text!r} is not a finite decimal or inf")
    _split_decimal(text)
    try:
        # a fixed function of the text (not of dps): the same endpoint always
        # becomes the same binary number, outward by at most 2^-prec relative
        prec = max(256, int(len(text) * 3.33) + 64)
        with mpmath.workprec(prec):  # mpf() rounds to the context precision
            return mpf(mpmath.libmp.from_str(text, prec, rounding))
    except (ValueError, TypeError):
        raise MalformedCertificate(f"{where}={text!r} is not a decimal number") from None


#: decimal exponents up to which a recorded decimal is expanded to an exact rational: past it the
#: rational's integers have 10^5 digits and more ("1e999999999999" held a re-check for its whole
#: budget while Python built 10^999999999999)
MAX_EXACT_EXPONENT = 10**5


def exact_decimal(text: Any, where: str) -> Fraction:
    """A recorded decimal as an exact rational, for a comparison with the decimal itself rather
    than with its binary reading (:func:`parse_bound`). Not a decimal string: exit 2; a decimal
    exponent past :data:`MAX_EXACT_EXPONENT`: not expanded, exit 3."""
    if not isinstance(text, str) or not text or len(text) > 10000:
        raise MalformedCertificate(f"{where} must be a decimal string, got {str(text)[:40]!r}")
    _, e = _split_decimal(text)
    if abs(e) > MAX_EXACT_EXPONENT:
        raise CouldNotReprove(f"{where}={text[:40]!r}: a decimal exponent past +-{MAX_EXACT_EXPONENT} is not "
                              "expanded to an exact rational")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise MalformedCertificate(f"{where}={text[:40]!r} is not a decimal number") from None


class Ends(tuple):
    """A recorded enclosure's ends read outward (the tuple: lo rounded down, hi up), with ``inner``
    the same ends read inward (lo up, hi down). The binary reading of a decimal is not the decimal:
    an independent enclosure inside the outward ends may still poke past a recorded end by up to
    2^-256 of it, and a truth there makes the recorded enclosure false. So acceptance asks for the
    inward ends and a refusal for the outward ones (:func:`.verify.accept_enclosure`): a recorded
    [0.1, 0.1] for a composed delta of 0.1 + 9e-102 was confirmed."""

    inner: tuple
    #: the recorded decimal texts (lo, hi), for a comparison with an exact value (:class:`ExactPoint`)
    texts: tuple


class ExactPoint(tuple):
    """An independent enclosure that is one exact rational, ``exact``, rounded outward
    (:func:`.core.exact_point`). Its readings cannot tell a decimal end from the binary numbers
    beside it (an exact 0.1 + 2^-260 and a recorded "0.1"), so the acceptance rule compares
    ``exact`` with the recorded decimals themselves, exactly, in both directions."""

    exact: Fraction


def exact_against_decimals(x: Fraction, texts: tuple) -> "tuple[bool, str] | None":
    """Does the exact ``x`` lie in the recorded decimal ends ``texts``, decided in exact rationals:
    (True, "") inside, (False, where) outside, ``where`` the gap in words ("1.04e-77 above the upper
    end of": to three digits, as the readings alone cannot show it); None when an end is infinite or
    too large to expand (:func:`exact_decimal`): then the readings decide, as for any enclosure."""
    lo_t, hi_t = texts
    if lo_t in ("inf", "-inf") or hi_t in ("inf", "-inf"):
        return None
    try:
        lo, hi = exact_decimal(lo_t, "lo"), exact_decimal(hi_t, "hi")
    except CouldNotReprove:
        return None
    if lo <= x <= hi:
        return True, ""
    gap, side = (x - hi, "above the upper end of") if x > hi else (lo - x, "below the lower end of")
    return False, f"{mpmath.nstr(mpf(gap.numerator) / gap.denominator, 3)} {side}"


def enclosure_of(obj: Any, where: str, dps: int = 30) -> tuple[mpf, mpf]:
    if not isinstance(obj, dict) or "lo" not in obj or "hi" not in obj:
        raise MalformedCertificate(f"{where} must be an object with lo and hi")
    lo = parse_bound(obj["lo"], f"{where}.lo", dps, "f")
    hi = parse_bound(obj["hi"], f"{where}.hi", dps, "c")
    if lo > hi:
        raise CertificateRejected(f"{where} has lo > hi ({obj['lo']} > {obj['hi']})")
    ends = Ends((lo, hi))
    ends.inner = (parse_bound(obj["lo"], f"{where}.lo", dps, "c"), parse_bound(obj["hi"], f"{where}.hi", dps, "f"))
    ends.texts = (obj["lo"], obj["hi"])
    return ends

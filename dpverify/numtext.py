"""The one grammar of an exact number text, declared once: ``"0.1"`` (exactly 1/10),
``"1e-5"``, ``".5"``, ``"2.5E+3"``, ``"256/60000"``; ASCII digits only (``re.ASCII``: a
full-width digit is an error, not a surprise), at most ``MAX_NUMBER_CHARS`` characters
and a decimal exponent within +-``MAX_DECIMAL_EXPONENT``.

Stdlib only: :func:`dpverify.ball.parse_exact` reads every text input through it, and
``verify``'s ``--time-budget`` too (verify must not load python-flint, and it read its
budget with a grammar of its own until adv43 F2 found it refusing "+5" and accepting
"1e-99999999").
"""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import InvalidParameter
from .limits import MAX_DECIMAL_EXPONENT, MAX_NUMBER_CHARS

__all__ = ["DECIMAL", "FRACTION", "clip", "is_digits", "read_exact_text"]

#: a decimal text; group 1 is its exponent
DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?", re.ASCII)
#: a fraction text a/b; groups 1 and 2 are its numerator and denominator
FRACTION = re.compile(r"([+-]?\d+)/(\d+)", re.ASCII)


def is_digits(text: str) -> bool:
    """Is ``text`` a run of ASCII digits, the one spelling of a count? str.isdigit alone also takes
    other scripts' digits, which int() reads ("\u0661\u0660" is 10), and superscripts, which it
    refuses with a ValueError."""
    return text.isascii() and text.isdigit()


def clip(text: str, n: int = 60) -> str:
    """A long user text shortened for a message (the message must stay readable)."""
    return text if len(text) <= n else text[: n - 3] + "..."


def read_exact_text(value: str, name: str) -> Fraction:
    """The exact rational a number text names; InvalidParameter naming ``name`` otherwise
    (too long, exponent beyond the cap, zero denominator, inf / nan, not a number)."""
    text = value.strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise InvalidParameter(
            name, f"{name}: a number of {len(text)} characters is too long (at most {MAX_NUMBER_CHARS})")
    m = DECIMAL.fullmatch(text)
    if m:
        if m.group(1) is not None and abs(int(m.group(1))) > MAX_DECIMAL_EXPONENT:
            raise InvalidParameter(
                name, f"{name}={clip(value)!r}: decimal exponent must be within +-{MAX_DECIMAL_EXPONENT}")
        return Fraction(text)
    m = FRACTION.fullmatch(text)
    if m:
        if int(m.group(2)) == 0:
            raise InvalidParameter(name, f"{name}={clip(value)!r} has a zero denominator")
        return Fraction(int(m.group(1)), int(m.group(2)))
    low = text.lower().lstrip("+-")
    if low in ("inf", "infinity", "nan"):
        raise InvalidParameter(name, f"{name}={value!r} must be a finite real number")
    raise InvalidParameter(
        name, f"{name}={clip(value)!r} is not a number (use a decimal like 0.1 or 1e-5, or a fraction a/b)")

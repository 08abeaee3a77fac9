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

import math
import re
import unicodedata
from fractions import Fraction

from typing import Any, Callable

from .errors import InvalidParameter, shown
from .limits import (MAX_DECIMAL_EXPONENT, MAX_NUMBER_CHARS, MAX_TIME_BUDGET_SECONDS, MIN_TIME_BUDGET_TEXT,
                     TIME_BUDGET_RANGE)

__all__ = ["DECIMAL", "FRACTION", "FloatOutOfRange", "JsonFloat", "LongInteger", "NUMBER_FORM", "bad_json_number", "clip",
           "digit_count", "is_digits", "json_float", "json_int", "not_ascii", "read_exact_text", "read_seconds",
           "too_long"]

#: a decimal text; group 1 is its exponent
DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?", re.ASCII)
#: a fraction text a/b; groups 1 and 2 are its numerator and denominator
FRACTION = re.compile(r"([+-]?\d+)/(\d+)", re.ASCII)


def is_digits(text: str) -> bool:
    """Is ``text`` a run of ASCII digits, the one spelling of a count? str.isdigit alone also takes
    other scripts' digits, which int() reads ("\u0661\u0660" is 10), and superscripts, which it
    refuses with a ValueError."""
    return text.isascii() and text.isdigit()


#: the ASCII characters a number text is written with
_NUMBER_CHARS = frozenset("0123456789+-./eE")


def not_ascii(text: str) -> "str | None":
    """Why ``text`` is no number when it is written with look-alike characters: a digit of another
    script or width ("\uff11\uff12", "\u0661"), or a full-width sign, point or slash; None
    otherwise. The grammar's own refusal ("does not match '^(-?([0-9]+)...'", "must be an integer")
    did not say what was wrong with a number that looks right (issue 22). One wording everywhere a
    number is read: options, input files, certificates."""
    for c in text:
        if not c.isascii() and (unicodedata.digit(c, None) is not None
                                or unicodedata.normalize("NFKC", c) in _NUMBER_CHARS):
            name = unicodedata.name(c, "")
            return (f"not a decimal number: {c!r} (U+{ord(c):04X}{' ' + name if name else ''}) is not ASCII; "
                    "use ASCII digits 0-9 (and ASCII . + - e /)")
    return None


#: the allowed form of one number, as every "too long" message states it
NUMBER_FORM = (f"a number has at most {MAX_NUMBER_CHARS} characters: a decimal like 0.1 or 1e-5, "
               "or a fraction a/b")


def too_long(count: int, unit: str = "characters", what: str = "a number") -> str:
    """What is wrong with a number past the length cap, and the allowed form: "a number of 5000
    digits is too long (a number has at most 1000 characters: ...)". The one wording of the
    event reader, the long-integer finders and :func:`read_exact_text` (issue 22: the events
    reader quoted its rule, "a number of more than 1000 digits", as if it were the input)."""
    return f"{what} of {count} {unit} is too long ({NUMBER_FORM})"


def digit_count(n: int) -> int:
    """The number of decimal digits of ``|n|`` (1 for 0), without str(): str() of an int past
    Python's 4,300-digit limit raises."""
    n = abs(n)
    d = max(0, int((n.bit_length() - 1) * 0.30102999566398120))  # floor((bits-1) log10 2) <= digits-1
    while 10 ** (d + 1) <= n:
        d += 1
    return d + 1


def clip(text: str, n: int = 60) -> str:
    """A long user text shortened for a message (the message must stay readable)."""
    return text if len(text) <= n else text[: n - 3] + "..."


def read_exact_text(value: str, name: str) -> Fraction:
    """The exact rational a number text names; InvalidParameter naming ``name`` otherwise
    (too long, exponent beyond the cap, zero denominator, inf / nan, not a number)."""
    text = value.strip()
    if len(text) > MAX_NUMBER_CHARS:
        digits = text.lstrip("+-")
        why = too_long(len(digits), "digits") if is_digits(digits) else too_long(len(text))
        raise InvalidParameter(name, f"{name}: {why}")
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
    why = not_ascii(text)
    if why is not None:
        raise InvalidParameter(name, f"{name}={clip(value)!r} is {why}")
    low = text.lower().lstrip("+-")
    if low in ("inf", "infinity", "nan"):
        raise InvalidParameter(name, f"{name}={value!r} must be a finite real number")
    raise InvalidParameter(
        name, f"{name}={clip(value)!r} is not a number (use a decimal like 0.1 or 1e-5, or a fraction a/b)")


def read_seconds(value: Any, name: str, read: "Callable[[Any, str], Fraction]" = read_exact_text) -> float:
    """A time budget in seconds, in :data:`~dpverify.limits.TIME_BUDGET_RANGE`, as a float (it only
    bounds wall-clock time, never a certified number): ``value`` read exactly by ``read`` (this
    module's grammar for verify, which loads no python-flint; ``ball.parse_exact`` on the producing
    side, which also takes ints and Fractions). The one range check of every ``--time-budget``.

    5e-324 and anything up to it that is still a double above 0 is the budget that runs out at once
    (tests and users give a tiny budget for that); a budget below 5e-324 (1e-400) rounds to 0 s, which
    was silently moved up to the least double (issue 22): refused, naming the option and the range,
    as 0, a negative, nan, inf and an unreadable text are."""
    try:
        x = read(value, name)
    except InvalidParameter as exc:
        raise InvalidParameter(name, f"{exc.message} ({name} takes seconds in {TIME_BUDGET_RANGE})") from None
    if not Fraction(MIN_TIME_BUDGET_TEXT) <= x <= MAX_TIME_BUDGET_SECONDS:
        why = f" ({MIN_TIME_BUDGET_TEXT}, the least positive double, is the budget that runs out at once)" if x > 0 else ""
        raise InvalidParameter(name, f"{name}={shown(value)} must be a number of seconds in {TIME_BUDGET_RANGE}{why}")
    return float(x)


class LongInteger:
    """A JSON integer literal longer than ``MAX_NUMBER_CHARS`` digits, left unconverted: int() of one
    past Python's 4300-digit limit raises a ValueError whose advice ("use sys.set_int_max_str_digits()")
    reached the user (issue 22), and no number dpverify reads is that long. Not a str and not an int,
    so no reader takes it for a number; :func:`bad_json_number` finds it and names its place."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def json_int(text: str) -> "int | LongInteger":
    """``json.loads``'s ``parse_int``: the int, or a :class:`LongInteger` past the number cap."""
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_NUMBER_CHARS else LongInteger(digits)


class FloatOutOfRange:
    """A JSON number literal with a fraction or exponent that no double holds: beyond about 1.8e308
    (``5e99999``, which ``json`` reads as ``inf``), or nonzero and below about 5e-324 (``1e-99999``,
    read as ``0.0``), or longer than ``MAX_NUMBER_CHARS``. Left unconverted, as :class:`LongInteger`:
    a message quoted the ``inf`` the reader made of it, which the user never wrote (issue 22)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def reason(self) -> str:
        if len(self.text) > MAX_NUMBER_CHARS:
            return too_long(len(self.text))
        return (f"the number {self.text} is out of range (a JSON number is read as a double: size from about "
                "5e-324 to 1.8e308, or 0; write an exact number as a string, e.g. \"1e-5\")")


class JsonFloat(float):
    """The double of a JSON number literal with a fraction or exponent, which remembers the literal:
    ``repr`` (what a message quotes, ``{value!r}``) is the text as the file writes it (``1e-5``), not
    Python's spelling of the double (``1e-05``, which the file does not hold; issue 22). Everything
    else is the float's: ``str``, ``json.dumps`` and arithmetic give Python's double, so no number a
    route reads depends on the spelling."""

    __slots__ = ("text",)

    def __new__(cls, text: str) -> "JsonFloat":
        obj = super().__new__(cls, text)
        obj.text = text
        return obj

    def __repr__(self) -> str:
        return self.text

    __str__ = float.__repr__

    def __reduce__(self) -> Any:  # pickled (the sweep's worker processes) as the literal it was read from
        return (JsonFloat, (self.text,))


def json_float(text: str) -> "JsonFloat | FloatOutOfRange":
    """``json.loads``'s ``parse_float``: the double (a :class:`JsonFloat`, quoted in messages as
    written), or a :class:`FloatOutOfRange` when the double is not the number written (it overflowed
    to inf, or a nonzero literal underflowed to 0)."""
    if len(text) > MAX_NUMBER_CHARS:
        return FloatOutOfRange(text)
    x = JsonFloat(text)
    mantissa = text.lower().partition("e")[0]
    if math.isinf(x) or (x == 0 and any(c in "123456789" for c in mantissa)):
        return FloatOutOfRange(text)
    return x


def bad_json_number(doc: Any) -> "tuple[str, str] | None":
    """(JSON path, reason) of the first number literal of a parsed document that no reader takes (a
    :class:`LongInteger` from :func:`json_int`, a :class:`FloatOutOfRange` from :func:`json_float`):
    ``inputs.steps``, ``events[0].count``; ``""`` for the top level. None when there is none."""
    stack: list = [(doc, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, LongInteger):
            return path, too_long(node.digits, "digits", "an integer")
        if isinstance(node, FloatOutOfRange):
            return path, node.reason()
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return None


def log_fraction(x: Fraction) -> float:
    """log x in binary64 for a positive rational of any size, from its integers (float(x) is 0.0
    below 1e-308, so log(1e-400) failed, and overflows above 1e308): a proposal only, never a bound."""
    return math.log(x.numerator) - math.log(x.denominator)

"""Boundary checks. Each converts a user value to an exact :class:`Fraction`
(or int) and raises :class:`InvalidParameter` whose message names the
argument and the allowed range, e.g. ``mu=-1 must be > 0``."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Optional, Union

from .ball import parse_exact
from .errors import InvalidParameter, shown
from .numtext import is_digits, not_ascii, read_seconds
from .limits import (MAX_ACCURACY_DIGITS, MAX_AFFORD_LENGTH, MAX_EPS0, MAX_GDP_EPS_OVER_MU, MAX_NOISE_MULTIPLIER)

ExactInput = Union[str, int, Fraction, float]


def real(name: str, value: ExactInput) -> Fraction:
    """Any finite real number."""
    return parse_exact(value, name)


def positive(name: str, value: ExactInput) -> Fraction:
    """A finite real number > 0."""
    x = parse_exact(value, name)
    if x <= 0:
        raise InvalidParameter(name, f"{name}={shown(value)} must be > 0")
    return x


def noise_multiplier(name: str, value: ExactInput) -> Fraction:
    """A Gaussian noise multiplier in (0, MAX_NOISE_MULTIPLIER] (limits.py: why the cap)."""
    x = positive(name, value)
    check_noise_multiplier(name, x)
    return x


def eps0(name: str, value: ExactInput) -> Fraction:
    """The eps0 of an (eps0, delta0) guarantee, in [0, MAX_EPS0] (limits.py: why the cap)."""
    x = parse_exact(value, name)
    if not 0 <= x <= MAX_EPS0:
        raise InvalidParameter(name, f"{name}={shown(value)} must be in [0, {MAX_EPS0}]")
    return x


def gdp_delta_inputs(mu: ExactInput, eps: ExactInput) -> tuple[Fraction, Fraction]:
    """(mu, eps) of a printed delta_mu(eps): mu > 0, eps real, eps / mu at most MAX_GDP_EPS_OVER_MU
    (limits.py: past it the decimal exponent leaves the printable range), refused before any work,
    naming --eps, --mu and the bound."""
    m, e = positive("mu", mu), real("eps", eps)
    if e > m * MAX_GDP_EPS_OVER_MU:
        raise InvalidParameter("eps", f"eps={shown(eps)} with mu={shown(mu)}: eps / mu must be at most "
                                      f"{MAX_GDP_EPS_OVER_MU} (delta_mu(eps) is below 10^(-2e15) there, and "
                                      "beyond about 6.8e8 it leaves the printable range 10^(+-10^17))")
    return m, e


def check_noise_multiplier(name: str, x: Fraction) -> None:
    """Refuse a noise multiplier above MAX_NOISE_MULTIPLIER, before any work, stating the range."""
    if x > MAX_NOISE_MULTIPLIER:
        raise InvalidParameter(name, f"{name}={_short(x)} is outside (0, 1e100]: the accountant's grid and "
                                     "float proposals need 1/sigma^2 in the binary64 range, and at sigma 1e100 the "
                                     "noise is already 1e100 times the sensitivity (eps(delta) = 0 long before)")


def _short(x: Fraction) -> str:
    """A huge rational shortly, for a message (1e3000 has 3001 digits)."""
    if x.denominator == 1 and x.numerator > 10**20:
        digits = str(x.numerator)  # at most 3001 digits: the input caps bound it
        return f"about {digits[0]}.{digits[1:4]}e{len(digits) - 1}"
    return str(x)


def nonnegative(name: str, value: ExactInput) -> Fraction:
    """A finite real number >= 0."""
    x = parse_exact(value, name)
    if x < 0:
        raise InvalidParameter(name, f"{name}={shown(value)} must be >= 0")
    return x


def open_unit(name: str, value: ExactInput) -> Fraction:
    """A probability strictly between 0 and 1."""
    x = parse_exact(value, name)
    if not 0 < x < 1:
        raise InvalidParameter(name, f"{name}={shown(value)} must be in (0, 1)")
    return x


def closed_unit(name: str, value: ExactInput) -> Fraction:
    """A probability in [0, 1]."""
    x = parse_exact(value, name)
    if not 0 <= x <= 1:
        raise InvalidParameter(name, f"{name}={shown(value)} must be in [0, 1]")
    return x


def half_open_unit(name: str, value: ExactInput) -> Fraction:
    """A probability in (0, 1] (e.g. a sampling rate)."""
    x = parse_exact(value, name)
    if not 0 < x <= 1:
        raise InvalidParameter(name, f"{name}={shown(value)} must be in (0, 1]")
    return x


def integer(name: str, value: object, *, lo: int, hi: int) -> int:
    """An integer in [lo, hi]; strings must be plain decimal integers."""
    if isinstance(value, bool):
        raise InvalidParameter(name, f"{name}={shown(value)} must be an integer in [{lo}, {hi}]")
    if isinstance(value, str):
        text = value.strip()
        # the length cap bounds int()'s work; it must admit every integer of the range
        # (12 characters refused hi = 10^12 itself, 13 characters)
        body = text[1:] if text[:1] in "+-" else text
        if not is_digits(body) or len(text) > len(str(max(abs(lo), abs(hi)))) + 1:
            why = not_ascii(text)
            raise InvalidParameter(name, f"{name}={shown(value)} must be an integer in [{lo}, {hi}]"
                                   + (f" ({why})" if why else ""))
        n = int(text)
    elif isinstance(value, int):
        n = value
    else:
        raise InvalidParameter(name, f"{name}={shown(value)} must be an integer in [{lo}, {hi}]")
    if not lo <= n <= hi:
        raise InvalidParameter(name, f"{name}={shown(value)} must be an integer in [{lo}, {hi}]")
    return n


def digits(value: object) -> int:
    """Requested relative accuracy 10^-digits of an enclosure."""
    return integer("digits", value, lo=1, hi=MAX_ACCURACY_DIGITS)




def seconds(name: str, value: ExactInput) -> float:
    """A time budget in seconds, in TIME_BUDGET_RANGE (a float from here on: it only bounds
    wall-clock time, never a certified number); :func:`dpverify.numtext.read_seconds`, the one
    check verify shares."""
    return read_seconds(value, name, parse_exact)


def relative_width(value: object, lo: str, hi: str, *, hi_open: bool = False, name: str = "rel_width") -> float:
    """A requested relative width in [lo, hi] (``hi_open``: [lo, hi)), read exactly like every
    other number (``"1/3"``; no Decimal, bool or NaN), a float from here on: it only steers a
    refinement, the certified width is computed from the enclosure."""
    x = parse_exact(value, name)
    # the ends as the floats nearest their texts: the float 1e-6 (just below 10^-6) is the end itself
    a, b = Fraction(float(lo)), Fraction(float(hi))
    if not a <= x or not (x < b if hi_open else x <= b):
        raise InvalidParameter(name, f"{name}={shown(value)} must be in [{lo}, {hi}{')' if hi_open else ']'}")
    return float(x)


def afford_length(name: str, value: object) -> Optional[int]:
    """None, or a grid length 0..MAX_AFFORD_LENGTH up to which an answer may be refined past
    its requested width (0: never)."""
    return None if value is None else integer(name, value, lo=0, hi=MAX_AFFORD_LENGTH)


def callback(name: str, value: object) -> Optional[Callable[..., Any]]:
    """None, or a callable (a progress report); anything else (0, False, a string) is refused
    rather than read as "none"."""
    if value is None or callable(value):
        return value
    raise InvalidParameter(name, f"{name}={shown(value)} must be a callable or None")


"""The numeric core: exact inputs, scoped precision, certified special functions,
outward-rounded output, certified decisions, precision escalation and root isolation.

Everything here knows nothing about privacy. Balls are python-flint ``arb``
values: an ``arb`` ``[m +/- r]`` is a proof that the true value lies in
``[m - r, m + r]``; every function below preserves that invariant.

Rules kept throughout (ARCHITECTURE.md, "Numerics rules"):

* inputs are exact (``Fraction``); a ball is made from them only at the
  current working precision, and always contains the exact value;
* a comparison of balls is a proof or it is :class:`~dpverify.errors.Undecided`
  (``not (x < y)`` is never taken as ``x >= y``: arb answers False when unsure);
* a result is returned only at the requested accuracy, else
  :class:`~dpverify.errors.PrecisionExhausted`.
"""

from __future__ import annotations

from contextlib import contextmanager
from fractions import Fraction
from typing import Callable, Iterator, Optional, Union

import flint
from flint import arb, ctx, fmpq, fmpz

from .errors import InvalidParameter, PrecisionExhausted, Undecided, ValueOutOfRange
from .limits import DEFAULT_MAX_BITS, MAX_DECIMAL_EXPONENT, MAX_NUMBER_CHARS
from .numtext import DECIMAL, clip, read_exact_text

__all__ = [
    "fresh_integration_state",
    "Exact",
    "parse_exact",
    "exact_str",
    "brief_str",
    "working_precision",
    "bits_for_digits",
    "ball",
    "point",
    "endpoints",
    "erfc",
    "normal_cdf",
    "normal_sf",
    "normal_logcdf",
    "normal_pdf",
    "positive_part",
    "sign",
    "sign_at",
    "is_accurate",
    "refine",
    "lower_decimal",
    "upper_decimal",
    "round_decimal_text",
    "isolate_increasing_root",
    "BACKEND",
    "DEFAULT_MAX_BITS",
    "MAX_NUMBER_CHARS",
    "MAX_DECIMAL_EXPONENT",
    "NUMBER_CAPS",
    "arb_to_fraction",
]

Exact = Union[Fraction, int]

BACKEND = f"python-flint {flint.__version__} arb"

#: Caps on one input number (stated in every command's --help): MAX_NUMBER_CHARS and
#: MAX_DECIMAL_EXPONENT (dpverify.limits) keep the numerator and the denominator of the
#: exact value below 4,000 decimal digits, under Python's 4,300-digit int/str
#: conversion limit, so that every number can be printed in a message or a
#: certificate (a 4,301-digit denominator used to crash `gdp mu --delta 1e-4301`).
#: The same bound for ints and Fractions handed to the library directly
_MAX_INT_DIGITS = 4000
_MAX_INT_BITS = int(_MAX_INT_DIGITS * 3.3219280948873626)

#: Results printed as decimals have a binary exponent of at most this many bits:
#: |exponent| < 2^59, so the decimal exponent is below 2^59 log10(2) < 1.8e17 and has
#: at most 18 digits, the most the certificate schema's decimal spelling allows
#: (a longer one made the writer refuse its own certificate, an internal error).
_MAX_EXPONENT_BITS = 59

#: One sentence for --help texts and docs/reference/inputs.md.
NUMBER_CAPS = (
    f"numbers are exact decimals (0.1, 1e-5) or fractions (1/3) of at most {MAX_NUMBER_CHARS} "
    f"characters with a decimal exponent within +-{MAX_DECIMAL_EXPONENT}"
)


# --------------------------------------------------------------------------- inputs


def parse_exact(value: object, name: str = "value") -> Fraction:
    """Exact rational value of a user input.

    Accepts decimal strings (``"0.1"`` is exactly 1/10, ``"1e-5"`` exactly
    1/100000), fractions ``"a/b"``, ints, :class:`Fraction`, and Python floats
    at their exact binary value (``0.1`` is 0.1000000000000000055...).
    NaN, infinities, non-numbers and absurd exponents raise
    :class:`InvalidParameter` naming ``name``.
    """
    if isinstance(value, bool):
        raise InvalidParameter(name, f"{name}={value!r} is not a number")
    if isinstance(value, (int, Fraction)):
        x = Fraction(value)
        if max(x.numerator.bit_length(), x.denominator.bit_length()) > _MAX_INT_BITS:
            raise InvalidParameter(
                name, f"{name}: a number with more than {_MAX_INT_DIGITS} digits is too long"
            )
        return x
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidParameter(name, f"{name}={value!r} must be a finite real number")
        return Fraction(value)
    if isinstance(value, (fmpq, fmpz)):
        return parse_exact(Fraction(int(value.p), int(value.q)) if isinstance(value, fmpq)
                           else int(value), name)
    if not isinstance(value, str):
        raise InvalidParameter(name, f"{name}={clip(repr(value))} is not a number")
    return read_exact_text(value, name)


def arb_to_fraction(x: arb) -> Fraction:
    """The exact rational value of an exact (radius 0) finite arb point.

    The one conversion from arb to ``Fraction``: every end of a ball turned into a
    rational goes through here (take :func:`endpoints` first for a wide ball).

    Raises:
        ValueError: ``x`` has a radius or is not finite; its midpoint is not its value,
            so returning it would lose the enclosure.
    """
    if not (x.is_exact() and x.is_finite()):
        raise ValueError(f"arb_to_fraction needs an exact finite point, not {x!r}")
    man, exp = x.mid().man_exp()
    m, e = int(man), int(exp)
    return Fraction(m * 2**e) if e >= 0 else Fraction(m, 2 ** (-e))


def _scientific(m: int, e: int) -> str:
    """``m * 10^e`` as ``"<m>e<e>"`` with the mantissa's trailing zeros moved to the exponent."""
    while m and m % 10 == 0:
        m //= 10
        e += 1
    return f"{m}e{e}"


def exact_str(x: Fraction) -> str:
    """Canonical exact text of a rational: a terminating decimal when there is
    one (``"0.00001"``; beyond 400 decimal places, or an integer of more than
    400 digits, in scientific notation: ``"1e-3000"``, ``"1e3000"``, which every
    reader of an input or a certificate accepts, where the plain text would
    pass the 1000-character cap on numbers), else ``"a/b"``."""
    x = Fraction(x)
    if x.denominator == 1:
        text = str(x.numerator)
        return _scientific(x.numerator, 0) if len(text) > 400 else text
    d = x.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:
        return f"{x.numerator}/{x.denominator}"
    k = max(twos, fives)
    if k > 400:
        return _scientific(x.numerator * 10**k // x.denominator, -k)
    digits = abs(x.numerator) * 10**k // x.denominator
    s = str(digits).rjust(k + 1, "0")
    sign = "-" if x < 0 else ""
    return f"{sign}{s[:-k]}.{s[-k:]}"


def brief_str(x: Fraction) -> str:
    """An exact value for a one-line message: :func:`exact_str` when short, else six
    significant digits, preceded by "about" when rounded (the exact value of 1e-3000
    is a 3,000-digit fraction, and float() of it is 0)."""
    text = exact_str(x)
    if len(text) <= 40:
        return text
    import decimal

    c = decimal.Context(prec=6, Emax=10**6, Emin=-(10**6), traps=[])
    d = c.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
    short = str(d.normalize(c)).lower().replace("e+", "e")
    return short if c.flags[decimal.Inexact] == 0 else "about " + short


# --------------------------------------------------------------------------- precision


def fresh_integration_state() -> None:
    """Empty flint's process-wide caches before a rigorous integral (``acb.integral``).

    arb keeps the Gauss-Legendre nodes it has computed, process-wide, and reuses nodes of a
    higher precision when a later integral asks for fewer bits. Every enclosure is still
    valid, but the same integral then came out with other (equally sound) last digits
    depending on what the process had integrated before: ``lt.residual`` of the Laplace pair
    differed in its sixth digit after an ``rdp divergence`` of the subsampled Gaussian. A
    certificate's bytes must be a function of its inputs alone, so each integrating routine
    starts from the empty cache (``flint_cleanup``; the working precision is untouched)."""
    ctx.cleanup()


@contextmanager
def working_precision(bits: int) -> Iterator[int]:
    """Scoped arb working precision; restores the previous one on exit."""
    old = ctx.prec
    ctx.prec = int(bits)
    try:
        yield int(bits)
    finally:
        ctx.prec = old


def bits_for_digits(digits: int) -> int:
    """A starting precision for ``digits`` decimal digits, with guard bits."""
    return int(digits * 3.33) + 40


def ball(x: Union[Exact, arb]) -> arb:
    """Ball containing the exact value ``x`` at the current precision."""
    if isinstance(x, arb):
        return x
    if isinstance(x, int):
        return arb(x)
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def point(x: arb) -> arb:
    """The exact midpoint of a ball, as a radius-0 ball (a dyadic number)."""
    return arb(x.mid())


def _exact_bits(x: arb) -> int:
    """Bits that hold the midpoint of ``x`` exactly, plus room for the radius: 64 more, and where
    the radius is further below the midpoint than that, enough that rounding an end outward (by
    at most 2^-p of its magnitude) adds under 1/256 of the radius, up to DEFAULT_MAX_BITS (no
    refinement goes finer). At 64 bits alone, delta_mu(1) for mu = 1e100 at 30 digits, a ball
    about 1 of radius 10^-(1.5e38), was printed [1 - 2^-65, 1 + 2^-64], 8e-20 wide, and its
    certificate was refuted for missing its recorded accuracy 1e-30 (adv53 M5)."""
    if not x.is_finite() or x.mid().is_zero():
        return 64
    man, exp = x.mid().man_exp()
    bits = int(man.bit_length()) + 64
    r = x.rad()
    if not r.is_zero():
        rman, rexp = r.mid().man_exp()
        # log2 |mid| - log2 rad, within one: the ends' ulp at p bits is 2^-p |mid| at most
        gap = int(exp + man.bit_length()) - int(rexp + rman.bit_length())
        bits = max(bits, min(gap + 9, DEFAULT_MAX_BITS))
    return bits


def endpoints(x: arb) -> tuple[arb, arb]:
    """Exact points lo <= every value of ``x`` <= hi.

    arb's ``lower()``/``upper()`` round (outward) to the *ambient* precision;
    taken at the default 53 bits they would silently throw away accuracy
    that a caller paid for, so they are taken at the ball's own precision.
    """
    with working_precision(max(ctx.prec, _exact_bits(x))):
        return x.lower(), x.upper()


# --------------------------------------------------------------------------- special functions


def erfc(z: arb) -> arb:
    """Enclosure of erfc(z) for every real ball ``z``.

    arb's own ``erfc`` is accurate at exact points but returns a useless
    ``[+/- ...]`` for an inexact huge argument (seen at z = 10^6/sqrt(2)).
    So erfc is evaluated at the exact midpoint m and the radius r is
    propagated by the mean value theorem:
    |erfc(t) - erfc(m)| <= r * sup_{|t-m|<=r} (2/sqrt(pi)) e^{-t^2}
    = r (2/sqrt(pi)) e^{-d^2}, with d = min |t| over the ball.
    """
    if not z.is_finite():
        raise Undecided("erfc of a non-finite ball")
    r = z.rad()
    m = point(z)
    value = m.erfc()
    if r == 0:
        return value
    d = z.abs_lower()
    slope = 2 / arb.pi().sqrt() * (-(d * d)).exp()
    err = (arb(r) * slope).upper()
    return value + arb(0, err)


def normal_sf(x: arb) -> arb:
    """Enclosure of 1 - Phi(x) = erfc(x / sqrt 2) / 2, any real x."""
    return erfc(x / arb(2).sqrt()) / 2


def normal_cdf(x: arb) -> arb:
    """Enclosure of Phi(x) = erfc(-x / sqrt 2) / 2, any real x (|x| <= 1e6
    tested; arb's exponent range is unbounded, so tiny values are kept)."""
    return erfc(-x / arb(2).sqrt()) / 2


def normal_logcdf(x: arb) -> arb:
    """Enclosure of log Phi(x). For x > 0, log1p(-Phi(-x)) avoids rounding
    Phi(x) to 1; for x <= 0 Phi(x) is small and its log is direct."""
    if x > 0:
        return (-normal_cdf(-x)).log1p()
    return normal_cdf(x).log()


def normal_pdf(x: arb) -> arb:
    """Enclosure of phi(x) = e^{-x^2/2} / sqrt(2 pi)."""
    return (-(x * x) / 2).exp() / (2 * arb.pi()).sqrt()


def positive_part(x: arb) -> arb:
    """Enclosure of max(x, 0) for every x in the ball."""
    return x.nonnegative_part()


# --------------------------------------------------------------------------- decisions


def sign(x: arb) -> int:
    """Certified sign of the value enclosed by ``x`` (-1, 0 only for an exact
    zero, +1); raises :class:`Undecided` when the ball straddles zero."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    if x.is_zero():
        return 0
    raise Undecided(f"sign of {x.str(5)} is not decided at {ctx.prec} bits")


def sign_at(
    f: Callable[[arb], arb],
    x: arb,
    *,
    what: str = "the function",
    start_bits: int = 64,
    max_bits: int = DEFAULT_MAX_BITS,
) -> int:
    """Certified sign of f(x), raising the precision until it is decided;
    PrecisionExhausted past ``max_bits`` (f(x) may be exactly at a root)."""
    bits = start_bits
    while True:
        with working_precision(bits):
            try:
                return sign(f(x))
            except Undecided:
                if bits >= max_bits:
                    raise PrecisionExhausted(
                        f"could not decide the sign of {what} at {x.str(20)} within {max_bits} bits"
                    ) from None
        bits = min(2 * bits, max_bits)


def is_accurate(x: arb, digits: int) -> bool:
    """True when the ball's width is certainly <= 10^-digits times the smallest
    absolute value it contains (relative width, both endpoints counted)."""
    if not x.is_finite():
        return False
    if x.is_exact():
        return True
    lower = x.abs_lower()
    if lower == 0:
        return False
    return bool(2 * arb(x.rad()) <= lower * arb(10) ** (-digits))


def refine(
    compute: Callable[[], arb],
    *,
    digits: int,
    start_bits: Optional[int] = None,
    max_bits: int = DEFAULT_MAX_BITS,
    what: str = "the value",
) -> tuple[arb, int]:
    """Run ``compute`` at rising precision until its ball has relative width
    <= 10^-digits; return the ball and the precision used.

    Raises :class:`PrecisionExhausted` past ``max_bits`` and says how close it
    got, instead of returning an answer that misses the requested accuracy.
    """
    bits = start_bits or bits_for_digits(digits)
    last: Optional[arb] = None
    while True:
        with working_precision(bits):
            try:
                x = compute()
            except Undecided:
                x = None
            if x is not None:
                last = x
                if is_accurate(x, digits):
                    return x, bits
        if bits >= max_bits:
            reached = "nothing" if last is None else last.str(5, radius=True)
            raise PrecisionExhausted(
                f"could not enclose {what} to relative width 1e-{digits} within "
                f"{max_bits} bits of precision (best enclosure: {reached})"
            )
        bits = min(2 * bits, max_bits)


# --------------------------------------------------------------------------- output


def _decimal_bound(x: arb, digits: int, upward: bool) -> str:
    """Decimal number with ``digits`` significant digits that is <= every value
    of the ball (upward=False) or >= every value (upward=True)."""
    if not x.is_finite():
        raise Undecided("cannot print a non-finite ball as a bound")
    lo, hi = endpoints(x)
    end = hi if upward else lo  # exact arb point
    if end.is_zero():
        return "0"
    if int(end.man_exp()[1]).bit_length() > _MAX_EXPONENT_BITS:
        # |end| is beyond 10^(+-10^17): its decimal exponent alone would have
        # more than 18 digits, more than a certificate's decimal may carry; no
        # dpverify quantity of a sensible input gets there (delta_mu(1) for
        # mu = 1e-300 is about 10^(-2e599))
        raise ValueOutOfRange(
            "a result is beyond the printable range: its magnitude is outside "
            "10^(+-10^17), so its decimal exponent alone would have more than 18 digits"
        )
    negative = bool(end < 0)
    # Rounding |end| toward zero or away from it depends on side and sign.
    away = upward != negative
    with working_precision(_exact_bits(end)):
        mag = -end if negative else end  # exact: the precision holds end's mantissa
        # a decimal exponent off by one merely prints one digit more or fewer
        with working_precision(64 + 4 * len(str(mag.man_exp()[1]))):
            e = _floor_int((mag.log() / arb(10).log()).lower())
        k = digits - 1 - e
        with working_precision(int(digits * 3.33) + 64 + 4 * len(str(abs(k)))):
            scaled = mag * arb(10) ** k
            if away:
                n = -_floor_int(-scaled.upper())
            else:
                n = _floor_int(scaled.lower())
    s = str(n)
    exp10 = -k + len(s) - 1
    if -5 <= exp10 <= 6:
        text = exact_str(Fraction(n) * Fraction(10) ** (-k))
    else:
        frac = s[1:].rstrip("0")
        text = f"{s[0]}.{frac}e{exp10}" if frac else f"{s[0]}e{exp10}"
    return ("-" if negative else "") + text


def _floor_int(x: arb) -> int:
    """floor of an exact point (an endpoint from .lower() / .upper()): exact, so unique."""
    n = x.floor().unique_fmpz()
    if n is None:  # only a non-exact ball could straddle an integer
        raise PrecisionExhausted(f"no unique floor of {x} at {ctx.prec} bits")
    return int(n)


def lower_decimal(x: arb, digits: int = 17) -> str:
    """A decimal string <= every value in the ball (rounded toward -inf)."""
    return _decimal_bound(x, digits, upward=False)


def upper_decimal(x: arb, digits: int = 17) -> str:
    """A decimal string >= every value in the ball (rounded toward +inf)."""
    return _decimal_bound(x, digits, upward=True)


def rational_decimal(x: Fraction, digits: int, *, upward: bool) -> str:
    """A decimal of ``digits`` significant digits at or below the rational x (at or above with
    ``upward``), for a printed bound: x enclosed in a ball at 128 bits, its end rounded outward."""
    with working_precision(128):
        return _decimal_bound(ball(x), digits, upward)


def round_decimal_text(text: str, digits: int, *, upward: bool) -> str:
    """A decimal string (an endpoint from a certificate) shortened to ``digits``
    significant digits, rounded outward: the result is >= the value when
    ``upward``, else <=. "inf"/"-inf" pass through. Cutting the text instead
    (``hi[:9]``) would round an upper bound down."""
    t = text.strip()
    if t.lower().lstrip("+-") in ("inf", "infinity"):
        return t
    m = DECIMAL.fullmatch(t)
    if m is not None:
        mantissa = t.lstrip("+-").split("e")[0].split("E")[0].replace(".", "")
        if len(mantissa.strip("0")) <= digits:  # already short: exact as it is
            return t
    # arb_set_str encloses the decimal rigorously; enough bits for every digit given
    with working_precision(64 + 4 * len(t)):
        x = arb(t)
    return _decimal_bound(x, digits, upward)


# --------------------------------------------------------------------------- roots


#: probes of :func:`_positive_lower_end`: a positive root below 2^-(2^this) times the bracket's upper
#: end keeps the absolute width (20: below 10^-315000 of it; 21 sign evaluations at most)
_ZERO_PROBES = 20


def _positive_lower_end(signed: Callable[[arb], tuple[int, arb]], b: arb,
                        fb: arb) -> Optional[tuple[tuple[arb, arb], tuple[arb, arb]]]:
    """A bracket of one sign, ((a, f(a)), (b', f(b'))) with 0 < a < b' <= b and f(a) < 0 < f(b')
    proved (``signed`` gives a certified sign and the ball; the f values are midpoints, proposals
    only), of the root of an increasing f whose bracket [., b] contains zero; ((0, .), (0, .)) when
    f(0) = 0 is proved (the root is 0); None where f(0) > 0 is proved (the root is negative) or no
    probe is proved below the root.

    Proof: f(0) < 0 puts the unique root r in (0, b]. The probes x_k = b_k 2^-(2^k), k = 0, 1, ...
    (b_0 = b, b_(k+1) = x_k whenever f(x_k) > 0 is proved, so r < x_k) are exact points; the first
    with f(x_k) < 0 proved has r in (x_k, b_k]. At most :data:`_ZERO_PROBES` + 1 probes (down to
    b 2^-(2^(K+1) - 1)), so a root at or within 2^-(2^K) b of zero ends it without a hang."""
    s0, v0 = signed(arb(0))
    if s0 == 0:
        return (arb(0), v0.mid()), (arb(0), v0.mid())
    if s0 > 0:
        return None
    for k in range(_ZERO_PROBES + 1):
        with working_precision(max(ctx.prec, 128)):
            x = point(b * arb(2) ** -(2 ** k))
        s, v = signed(x)
        if s == 0:
            return (x, v.mid()), (x, v.mid())
        if s < 0:
            return (x, v.mid()), (b, fb)
        b, fb = x, v.mid()
    return None


def isolate_increasing_root(
    f: Callable[[arb], arb],
    lo: arb,
    hi: arb,
    *,
    digits: int,
    start_bits: Optional[int] = None,
    max_bits: int = DEFAULT_MAX_BITS,
    what: str = "the root",
) -> tuple[arb, arb, int]:
    """Certified bracket [a, b] of the unique root of a strictly increasing f,
    and the highest precision (bits) the isolation needed.

    ``lo < hi`` are exact points with f(lo) < 0 < f(hi) (checked here, with a
    proof); f maps an exact point to a ball at the current precision. Every
    bracket update rests on a certified sign, so the root, which is unique by
    the caller's monotonicity proof, stays in [a, b]. Proposals come from
    Illinois regula falsi on the ball midpoints (fast, uncertified: only the
    *choice* of point), safeguarded by bisection (geometric when the bracket
    is positive and spans more than a factor 4). Stops when
    b - a <= 10^-digits * min(|a|, |b|) for a bracket of one sign. A bracket
    that still contains zero at b - a <= 10^-digits is met by the sign of f(0)
    (:func:`_positive_lower_end`): a root proved positive gets a positive
    lower end and is refined on to the relative width (a root of 9e-21 was
    returned as [-5e-7, 7.6e-6], relative width 1: adv48 L2); a root at
    zero, proved negative, or too near zero for the probes stops at the
    absolute width 10^-digits as before.
    """
    bits = start_bits or bits_for_digits(digits)

    def signed(x: arb) -> tuple[int, arb]:
        nonlocal bits
        while True:
            with working_precision(bits):
                v = f(x)
                try:
                    return sign(v), v
                except Undecided:
                    if bits >= max_bits:
                        raise PrecisionExhausted(
                            f"could not decide the sign of the equation for {what} at "
                            f"{x.str(20)} within {max_bits} bits"
                        ) from None
            bits = min(2 * bits, max_bits)

    s_lo, f_lo = signed(lo)
    s_hi, f_hi = signed(hi)
    if s_lo >= 0 or s_hi <= 0:
        raise ValueError(f"not a bracket for {what}: f(lo) sign {s_lo}, f(hi) sign {s_hi}")
    a, b = lo, hi
    fa, fb = f_lo.mid(), f_hi.mid()
    side = 0
    tol = arb(10) ** (-digits)
    stalls = 0
    probed = False
    for _ in range(100_000):
        with working_precision(max(bits, 128)):
            same_sign = a > 0 or b < 0
            scale = min(a.abs_lower(), b.abs_lower()) if same_sign else arb(1)
            met = b - a <= tol * scale
        if met and (same_sign or probed):
            return a, b, bits
        if met:
            # absolute width met around zero: a positive root is refined on to the relative width
            probed = True
            kept = bits
            try:
                got = _positive_lower_end(signed, b, fb)
            except PrecisionExhausted:
                got = None  # f(0) or a probe undecided at max_bits: the absolute width stands
            if got is None:
                return a, b, kept
            (a, fa), (b, fb) = got
            if a == b:
                return a, b, bits  # f proved 0 exactly at a probe
            side, stalls = 0, 0
            continue
        with working_precision(max(bits, 128)):
            width = b - a
            denom = arb(fb) - arb(fa)
            # after the probe near zero the bracket may span a factor 2^(2^20): regula falsi shrinks its
            # exponent about a bit every two steps (2^-(2^18) ran out of iterations, ref48), geometric
            # bisection halves it
            if stalls >= 2 or not denom > 0 or (probed and a > 0 and b > 4 * a):
                if a > 0 and b > 4 * a:
                    x = point((a * b).sqrt())
                else:
                    x = point((a + b) / 2)
                stalls = 0
            else:
                x = point(a - arb(fa) * width / denom)
                # keep the probe strictly inside, away from the ends by a hair
                # so that both ends can move (Illinois halving does the rest)
                margin = width * arb(2) ** -60
                if not (x > a + margin and x < b - margin):
                    x = point((a + b) / 2)
        s, v = signed(x)
        if s == 0:
            return x, x, bits
        old_width = b - a
        if s < 0:
            a, fa = x, v.mid()
            if side == -1:
                fb = fb / 2
            side = -1
        else:
            b, fb = x, v.mid()
            if side == 1:
                fa = fa / 2
            side = 1
        with working_precision(max(bits, 128)):
            stalls = stalls + 1 if (b - a) > old_width / 2 else 0
    raise PrecisionExhausted(f"root isolation for {what} did not converge")

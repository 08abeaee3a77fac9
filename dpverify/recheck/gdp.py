"""Second route for the Gaussian-DP quantities, on MPFR with directed rounding.

Deliberately shares no code with :mod:`dpverify.gdp`: inputs are re-parsed
here, and delta_mu (GDPT Thm 3.2 / eq. 2) is re-implemented as an interval
function on :mod:`.core` (MPFR through gmpy2, every end rounded outward), so
that each enclosure provably contains the true value at the exact inputs;
precision rises until the enclosure is narrow enough (its width is its own
error bound, nothing is estimated). mu_GDP and eps(delta) are re-derived by
evaluating delta_mu at the recorded endpoints (monotonicity makes that a
proof that they bracket the root).

Every accept rests on those enclosures; mpmath only proposes (mu_GDP's bisection,
the Thm 5.1 inverse), and each proposal is then proved or refused here.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Mapping

import gmpy2
import mpmath
from gmpy2 import mpfr
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, InvalidParameter, MalformedCertificate
from ..numtext import read_exact_text
from .core import CF_FROM, Arith, Iv, arith, mpf_to_fraction, mpfr_to_mpf, to_fraction
from .decimals import enclosure_of, exact_decimal
from .verify import Recheck, needed_digits, register


def exact_input(inputs: Mapping[str, Any], key: str) -> Fraction:
    """Re-parse an input exactly, without dpverify.ball: a count (a JSON integer) or a text in
    the producer's one grammar (:func:`dpverify.numtext.read_exact_text`, stdlib only). Python's
    ``Fraction(text)`` read more than the producer does (adv44 H1: ``"1/ 2"``, Arabic-Indic
    digits and ``"0.5_0"`` escaped the input-range table, which reads by the grammar, and a
    format-1 rdp.to_dp_eps at alpha = 1/2, where its formula is false, was confirmed)."""
    if key not in inputs:
        raise MalformedCertificate(f"missing inputs.{key}")
    text = inputs[key]
    if isinstance(text, int) and not isinstance(text, bool) and abs(text) < 10**1000:
        return Fraction(text)  # a count
    if not isinstance(text, str):
        raise MalformedCertificate(f"inputs.{key} must be a number string")
    try:
        return read_exact_text(text, f"inputs.{key}")
    except InvalidParameter as e:
        raise MalformedCertificate(str(e)) from None


def fraction_to_mpf(x: Fraction) -> mpf:
    """x as an mpf at the working precision (rounded to nearest: a proposal's input)."""
    return mpf(x.numerator) / x.denominator


# --------------------------------------------------------------------------- directed rounding

#: precision cap of the directed-rounding evaluations (bits); beyond it the enclosure is
#: returned as wide as it is (sound) and the acceptance rule decides (exit 3 when not inside)
MAX_BITS = 1 << 14


def start_bits(digits: int) -> int:
    """Working precision for an enclosure of ``digits`` significant digits (log2 10 < 3.33),
    with 64 guard bits for the cancellation in delta_mu's difference."""
    return int(digits * 3.33) + 64


def _bad(v: Iv) -> bool:
    return gmpy2.is_nan(v[0]) or gmpy2.is_nan(v[1])


def narrow(v: Iv, digits: int) -> bool:
    """Is the enclosure finite and of relative width <= 10^-(digits + 1)?"""
    lo, hi = v
    if _bad(v) or gmpy2.is_infinite(lo) or gmpy2.is_infinite(hi):
        return False
    if lo == hi:
        return True
    scale = max(abs(lo), abs(hi))
    return (hi - lo) <= scale * mpfr(2) ** -int((digits + 1) * 3.33 + 1)


def enclose(f: Callable[[Arith], Iv], digits: int) -> Recheck:
    """f evaluated in directed rounding at rising precision until its enclosure is
    narrow (:func:`narrow`) or :data:`MAX_BITS` is reached; the enclosure returned
    contains the true value at every precision, so stopping early only costs width."""
    bits = start_bits(digits)
    while True:
        v = f(arith(bits))
        if narrow(v, digits) or bits >= MAX_BITS:
            break
        bits = min(2 * bits, MAX_BITS)
    if _bad(v):
        raise CouldNotReprove("the directed-rounding evaluation gave no enclosure (overflow)")
    return Recheck(lo=mpfr_to_mpf(v[0]), hi=mpfr_to_mpf(v[1]), dps=digits + 20)


def side(f: Callable[[Arith], Iv], target: Callable[[Arith], Iv], digits: int, max_bits: int = MAX_BITS) -> int:
    """-1 / +1 when f's enclosure lies wholly below / above the target's, at the
    first precision (rising from :func:`start_bits` to :data:`MAX_BITS`) that
    separates them; 0 when none does (the value is within the route's width of
    the target, or over/underflow left the enclosures overlapping)."""
    bits = start_bits(digits)
    while True:
        A = arith(bits)
        v, t = f(A), target(A)
        if not (_bad(v) or _bad(t)):
            if v[1] < t[0]:
                return -1
            if v[0] > t[1]:
                return 1
        if bits >= max_bits:
            return 0
        bits = min(2 * bits, max_bits)


def delta_mu_iv(A: Arith, mu: Fraction, eps: Fraction) -> Iv:
    """An enclosure of delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    (GDPT Thm 3.2 / eq. 2), mu > 0, at the exact rationals mu and eps: the arguments are
    exact rationals rounded outward once, Phi is :meth:`Arith.ncdf` (MPFR's erfc, or
    the Mills ratio's continued fraction in the tails), e^eps MPFR's exp, each rounded
    outward. The result is intersected with [max(0, 1 - e^eps), 1], where every
    hockey-stick divergence e^eps of two probability measures lies (the whole space as
    the event gives 1 - e^eps; a probability is <= 1): sound, and what keeps an
    overflowing e^eps (a nan-free [-inf, x]) from reaching below 0."""
    dn, up = A.dn, A.up
    a = A.ncdf(A.q(-eps / mu + mu / 2))
    b = A.ncdf(A.q(-eps / mu - mu / 2))
    e = A.exp(A.q(eps))
    term = A.mul(e, b)
    y = eps / mu + mu / 2
    if not (term[1] <= 1) and y >= 1:
        # e^eps beyond MPFR's range (eps above about 7.4e8) times a Phi below it: the term is
        # e^eps Phi(-y) = phi(x) M(y), x = eps/mu - mu/2 (x^2 - y^2 = -2 eps), formed without
        # e^eps; an exponential below the range rounds up to the least positive mpfr and down
        # to 0, both sound (adv37 R2: gdp delta --mu 1e9 --eps 1e9 was [0, 1] and exit 3)
        x = A.q(eps / mu - mu / 2)
        phi = A.div(A.exp(A.neg(A.scale2(A.mul(x, x), -1))), A._sqrt2pi)
        yy = A.q(y)
        term = A.mul(phi, (A.mills(yy[1])[0], A.mills(yy[0])[1]))
    lo, hi = A.sub(a, term)
    floor = (max(mpfr(0), dn.sub(1, e[1])), max(mpfr(0), up.sub(1, e[0])))  # (1 - e^eps)_+
    if gmpy2.is_nan(lo):
        lo = floor[0]
    if gmpy2.is_nan(hi):
        hi = mpfr(1)
    return (max(lo, floor[0]), min(hi, mpfr(1)))


def delta_mu_limit0(A: Arith, eps: Fraction) -> Iv:
    """lim_{mu -> 0+} delta_mu(eps) = (1 - e^eps)_+ (N(0,1) against itself)."""
    e = A.exp(A.q(eps))
    return (max(mpfr(0), A.dn.sub(1, e[1])), max(mpfr(0), A.up.sub(1, e[0])))


def sqrt_bracket(x: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """Rationals lo <= sqrt(x) <= hi, hi - lo <= 2^-bits, for x >= 0: sqrt(n/d) = sqrt(n d 4^b) / (d 2^b),
    the integer square root rounded down and up (exact integers)."""
    n, d = x.numerator, x.denominator
    N = (n * d) << (2 * bits)
    s = gmpy2.isqrt(N)
    return Fraction(int(s), d << bits), Fraction(int(s) + (s * s != N), d << bits)


def composed_gaussian_delta_tail(mu2: Fraction, eps: Fraction) -> "mpf | None":
    """An upper bound 2^-n of delta_mu(eps) (mu = sqrt(mu2) > 0) for eps > mu2 / 2, where it underflows
    the closed form (:func:`composed_gaussian_delta_iv` needs a delta above MPFR's least exponent, and
    the producer's range stops at eps / mu = 10^8), else None. delta_mu(eps) = Phi(-t) - e^eps
    Phi(-t - mu) <= Phi(-t) with t = eps / mu - mu / 2 > 0 (GDPT eq. 2), and Phi(-t) <= e^(-t^2 / 2)
    (the Chernoff bound), t^2 / 2 = r = (eps - mu2 / 2)^2 / (2 mu2) exactly; e^(-r) = 2^(-r log2 e) <=
    2^(-floor(1.44 r)) since log2 e > 1.44. All exact: no rounding to direct."""
    if not (mu2 > 0 and eps > mu2 / 2):
        return None
    r = (eps - mu2 / 2) ** 2 / (2 * mu2)
    n = math.floor(r * Fraction(144, 100))
    return mpmath.ldexp(mpf(1), -n) if n > 0 else None


def composed_gaussian_delta_iv(A: Arith, mu2: Fraction, eps: tuple[Fraction, Fraction]) -> Iv:
    """An enclosure of delta_mu(eps) for mu = sqrt(mu2) > 0 and any eps in [eps[0], eps[1]]: the
    curve of T Gaussian steps at sampling rate 1 whose shifts mu_i have mu2 = sum mu_i^2 (the product
    of the pairs N(0, 1) vs N(mu_i, 1), AFA Thm 10, is N(0, I) vs N(m, I) with |m| = mu, and a rotation
    makes it one Gaussian pair: GDPT Sec 1, Dong et al. 2019 Cor 2). delta_mu(eps) decreases with eps
    (sup_S P(S) - e^eps Q(S), Q(S) >= 0) and increases with mu (x -> (mu'/mu) x + N(0, 1 - (mu'/mu)^2)
    maps the pair of mu onto the pair of mu' < mu, and post-processing does not raise a hockey-stick
    divergence), so delta_mu_lo(eps[1]) and delta_mu_hi(eps[0]) bound it for rationals mu_lo <= mu <= mu_hi
    (:func:`sqrt_bracket`, 64 bits past the precision)."""
    mu_lo, mu_hi = sqrt_bracket(mu2, A.prec + 64)
    lo = delta_mu_iv(A, mu_lo, eps[1])[0] if mu_lo > 0 else mpfr(0)
    return lo, delta_mu_iv(A, mu_hi, eps[0])[1]


def composed_gaussian_eps_iv(A: Arith, mu2: Fraction, delta: tuple[Fraction, Fraction],
                             max_steps: int = 600) -> "tuple[Fraction, Fraction] | None":
    """Rationals [a, b] enclosing eps(delta) = inf{eps >= 0 : delta_mu(eps) <= delta} for mu = sqrt(mu2)
    and any delta in [delta[0], delta[1]] (0 < delta[0]): :func:`decreasing_root_iv` of
    :func:`composed_gaussian_delta_iv` (decreasing in eps), the root proposed in mpmath
    (:func:`_propose_eps`). The bisection alone took about 300 steps at 320 bits, 0.6 CPU s of a rate-1
    replace-one certificate's verify; a root near 2^82 (noise multiplier 1e-12, 621 proofs) took 0.7
    CPU s, where the first pair now takes 2 proofs."""
    return decreasing_root_iv(lambda x: composed_gaussian_delta_iv(A, mu2, (x, x)), delta,
                              lambda: _propose_eps(mu2, (delta[0] + delta[1]) / 2, A.prec), A.prec, max_steps)


def decreasing_root_iv(at: Callable[[Fraction], Iv], delta: tuple[Fraction, Fraction],
                       propose: Callable[[], "Fraction | None"], prec: int,
                       max_steps: int = 600) -> "tuple[Fraction, Fraction] | None":
    """Rationals [a, b] enclosing eps(delta) = inf{eps >= 0 : f(eps) <= delta} of a nonincreasing curve f
    given by its enclosures ``at(x)`` at rationals x, for any delta in [delta[0], delta[1]] (0 < delta[0]),
    on proofs: every a kept has f(a) > delta[1] proved (or is 0), every b has f(b) < delta[0]. First a
    root proposed by ``propose()`` (floats only; called once f(0) >= delta[0] is not proved) is tried as
    x (1 -+ 2^-(prec - 15)): two proofs, and b - a <= b 2^-(prec - 16) when both hold; an end not proved
    there is moved out to the nearest one proved (:func:`_nearest_proved`) and the pair bisected. When
    the proposal brackets nothing within x (1 -+ 1/2), a power of two brackets the root, the proposal is tried again at x (1 -+ 2^-(prec - 64)), and what that does not
    prove is bisected (dyadic midpoints) until b - a <= b 2^-(prec - 16). Stops when a dyadic midpoint is
    not separated at this precision; None when no upper end is proved up to 2^127 (an absurd delta)."""
    def above(x: Fraction) -> bool:  # f(x) > every delta: eps(delta) > x
        return at(x)[0] > delta[1]

    def below(x: Fraction) -> bool:  # f(x) < every delta: eps(delta) <= x
        return at(x)[1] < delta[0]

    if below(Fraction(0)):
        return Fraction(0), Fraction(0)
    x = propose()
    if x is not None and x > 0:
        lo = _nearest_proved(above, x, -1, prec)
        hi = _nearest_proved(below, x, 1, prec) if lo is not None else None
        if lo is not None and hi is not None:
            return _bisect_root(above, below, lo, hi, prec, max_steps)
    a, b = Fraction(0), Fraction(1)
    # a Gaussian's eps(delta) <= mu^2/2 + mu sqrt(2 log(1/delta)): a noise multiplier of 1e-10 puts it near
    # 5e19, past 2^64 (the producer searches to 2^127, gdp.eps_for_delta.eps_root); one evaluation a doubling
    for _ in range(128):
        if below(b):
            break
        if above(b):
            a = b
        b *= 2
    else:
        return None
    if a == 0:
        a, b = _descend_to_root(above, below, b)
    if x is not None and x > 0:
        lo, hi = x - x / (1 << (prec - 64)), x + x / (1 << (prec - 64))
        if a < lo and above(lo):
            a = lo
        if hi < b and below(hi):
            b = hi
    return _bisect_root(above, below, a, b, prec, max_steps)


def _bisect_root(above: Callable[[Fraction], bool], below: Callable[[Fraction], bool], a: Fraction, b: Fraction,
                 prec: int, max_steps: int) -> tuple[Fraction, Fraction]:
    """[a, b] (``above(a)`` or a = 0, ``below(b)``) bisected at dyadic midpoints until b - a <= b 2^-(prec - 16)
    or a midpoint is not separated: every end kept is proved."""
    for _ in range(max_steps):
        if b - a <= b * Fraction(1, 1 << (prec - 16)):
            break
        c = (a + b) / 2
        if above(c):
            a = c
        elif below(c):
            b = c
        else:
            break
    return a, b


def _nearest_proved(ok: Callable[[Fraction], bool], x: Fraction, sign: int, prec: int) -> "Fraction | None":
    """x (1 + sign 2^-e) for the largest e <= prec - 15 that ``ok`` proves, up to one bit, or None when none
    with e >= 1 does. e falls by 32, 64, 128, ... bits and is then bisected: O(log prec) proofs. The
    proof's own width, not the proposal, sets how near x an end is proved: delta_mu at mu = 1e-100
    cancels about 340 bits, so at 1280 bits x (1 -+ 2^-1265) was not separated from the target and the
    root was bisected 600 steps from 0 (adv57 M1: 40-80 CPU s); here about 15 proofs find the 2^-900."""
    def at(e: int) -> Fraction:
        return x + sign * x / (1 << e)

    e, failed, step = prec - 15, None, 32
    while not ok(at(e)):
        if e <= 1:
            return None
        failed, e, step = e, max(1, e - step), 2 * step
    while failed is not None and failed - e > 1:
        m = (e + failed) // 2
        if ok(at(m)):
            e = m
        else:
            failed = m
    return at(e)


#: the deepest power of two :func:`_descend_to_root` probes below 1: an input delta has a decimal exponent
#: within +-3000 and at most 1000 characters, so TV(mu) - delta, and with it a positive root, lies far above 2^-(2^20)
_DESCENT_EXPONENT = 1 << 20


def _descend_to_root(above: Callable[[Fraction], bool], below: Callable[[Fraction], bool],
                     b: Fraction) -> tuple[Fraction, Fraction]:
    """[a, b] with a > 0 and b <= 2 a around a root in (0, b] (``below(b)`` proved), where the proofs
    allow it; else the narrowest [0, b] proved. Arithmetic bisection from [0, b] gains one bit of b per
    step, so a root near 2^-860 (a noise multiplier of 1e100 with delta a hair below the total variation
    distance) ended at [0, 2^-600] after 600 steps and the certificate was refused (adv49 M1). Here the
    exponent is probed at 2^-1, 2^-2, 2^-4, ... below b (the producer's geometric probe,
    ball._positive_lower_end) and then bisected: O(log log (b / root)) proofs. Each step keeps the
    invariants of :func:`composed_gaussian_eps_iv` (a kept has ``above(a)``, b has ``below(b)``); a
    point neither proves stops the descent."""
    j = 1
    while True:
        if j > _DESCENT_EXPONENT:
            return Fraction(0), b
        c = b / (1 << j)
        if below(c):
            b, j = c, 2 * j
        elif above(c):
            break
        else:
            return Fraction(0), b
    lo_e, hi_e = 0, j  # root in (b 2^-hi_e, b 2^-lo_e]: bisect the exponent
    while hi_e - lo_e > 1:
        m = (lo_e + hi_e) // 2
        c = b / (1 << m)
        if below(c):
            lo_e = m
        elif above(c):
            hi_e = m
        else:
            break
    return b / (1 << hi_e), b / (1 << lo_e)


def _mills_proposal(y: mpf, prec: int) -> mpf:
    """The Mills ratio M(y) = Phi(-y) / phi(y), y > 0, at about ``prec`` bits (a proposal's value; it
    proves nothing). Where e^(y^2 / 2) stays modest it is erfc's, in mpmath; beyond, mpmath's exp of a
    huge argument can abort the process inside GMP (adv48 M1), and the value is the lower end of
    :meth:`.core.Arith.mills`, Laplace's continued fraction in MPFR (at y^2 >= 8 (prec + 32) it takes
    a few dozen terms)."""
    if y * y < 8 * (prec + 32):
        return mpmath.sqrt(mpmath.pi / 2) * mpmath.erfc(y / mpmath.sqrt(2)) * mpmath.exp(y * y / 2)
    A = arith(prec + 32)
    return mpfr_to_mpf(A.mills(A.q(mpf_to_fraction(y))[0])[0])


def delta_mu_at_t(mu: mpf, t: mpf) -> mpf:
    """delta_mu(eps) at t = eps / mu - mu / 2, in mpmath at the working precision (a proposal's value; it
    proves nothing): Phi(-t) - phi(t) M(t + mu), where e^eps Phi(-y) = phi(t) M(y), y = t + mu
    (t^2 - y^2 = -2 eps), keeps every magnitude modest at any eps (GDPT eq. 2)."""
    return mpmath.ncdf(-t) - mpmath.npdf(t) * _mills_proposal(t + mu, mpmath.mp.prec)


def cancel_bits(mu: mpf) -> int:
    """Bits that delta_mu's difference Phi(-t) - phi(t) M(t + mu) cancels (a proposal's working precision):
    both terms are about phi(t) / t and their difference phi(t) (M(t) - M(t + mu)) about mu phi(t) / t^2, so
    a small mu loses about log2(t / mu) bits, t below 2^7 for any delta the producer reads (adv57 M1: at
    mu = 1e-100 the 64-bit bisection saw 0 everywhere, no proposal was made and the proofs bisected 600
    steps at 1280 bits, 40-80 CPU s)."""
    return max(0, -int(mpmath.mag(mu))) + 8


def _propose_eps(mu2: Fraction, d: Fraction, prec: int) -> "Fraction | None":
    """A proposal (mpmath; it proves nothing) of the eps with delta_mu(eps) = d, mu = sqrt(mu2), as an
    exact rational, or None. It is solved for s = eps / mu >= 0, on t = s - mu/2 (GDPT eq. 2):
    delta_mu = Phi(-t) - e^eps Phi(-t - mu) = Phi(-t) - phi(t) M(t + mu), where the identity
    e^eps Phi(-y) = phi(t) M(y), y = t + mu (t^2 - y^2 = -2 eps), keeps every magnitude modest even at
    eps = 5e24; d delta_mu / ds = -mu phi(t) M(t + mu). Only t in [-K, t_hi] is ever evaluated:
    t_hi = sqrt(2 log(1 / d)) has Phi(-t_hi) <= d (the Chernoff bound), and below -K, K^2 / 2 =
    (prec + 64) log 2, delta_mu is within 2^-(prec + 64) of 1 (None there). A 64-bit bisection of s,
    then Newton's method at prec + 32 bits (each plus :func:`cancel_bits`) until a step is below 2^-(prec + 8) s (None where it does not
    settle in 40 steps). The root is where the proofs look first (:func:`composed_gaussian_eps_iv`)."""
    if not 0 < d < 1:
        return None
    with mpmath.workprec(64):
        extra = cancel_bits(mpmath.sqrt(mpf(mu2.numerator) / mu2.denominator))
    with mpmath.workprec(prec + 32 + extra):
        mu, target = mpmath.sqrt(mpf(mu2.numerator) / mu2.denominator), mpf(d.numerator) / d.denominator
        K = mpmath.sqrt(2 * (prec + 64) * mpmath.log(2))
        t_hi = mpmath.sqrt(2 * mpmath.log(1 / target)) + 1
        s_lo, s_hi = max(mpf(0), mu / 2 - K), mu / 2 + t_hi

        def g(s: mpf) -> mpf:
            return delta_mu_at_t(mu, s - mu / 2)

        with mpmath.workprec(64 + extra):
            if not g(s_lo) > target:
                return None  # the root is at 0 (the proofs' first test) or within 2^-(prec + 64) of 1
            a, b = s_lo, s_hi
            for _ in range(80):
                c = (a + b) / 2
                a, b = (c, b) if g(c) > target else (a, c)
        s = (a + b) / 2
        if not s > 0:
            return None
        for _ in range(40):
            t = s - mu / 2
            slope = mu * mpmath.npdf(t) * _mills_proposal(t + mu, mpmath.mp.prec)
            if not slope > 0:
                return None
            step = (g(s) - target) / slope
            s = s + step
            if not s > 0:
                return None
            if abs(step) <= s * mpf(2) ** -(prec + 8):
                return mpf_to_fraction(mu * s)
        return None


def bracket_root_iv(f: Callable[[Arith, Fraction], Iv], target: "Fraction | Callable[[Arith], Iv]",
                    result: Mapping[str, Any], increasing: bool, what: str) -> Recheck:
    """Prove that the root r of the monotone f(x) = target lies in the recorded
    enclosure [lo, hi], by f's directed-rounding enclosure at lo and at hi (each
    read as a binary number rounded outward from the recorded decimal): f(lo) on
    the root's near side proves r >= lo, f(hi) on the far side r <= hi (f
    monotone). The independent enclosure is then [lo, hi] itself. An evaluation
    on the wrong side refutes the certificate; one that no precision up to
    :data:`MAX_BITS` separates from the target is "could not re-prove".
    ``f(A, x: Fraction) -> Iv``; ``target`` an exact rational or its enclosure ``(A) -> Iv``."""
    from .verify import enclosure_of

    enc = result.get("enclosure")
    digits = needed_digits(result) + 5
    ends = enclosure_of(enc, "result.enclosure", digits + 20)
    if not (mpmath.isfinite(ends[0]) and mpmath.isfinite(ends[1])):
        raise CouldNotReprove(f"{what}: infinite endpoints cannot bracket a finite root")
    # f is evaluated at the recorded decimals themselves, so that a proof is a proof of the recorded
    # ends, and a refusal too: at their binary readings (outward) the proof reached only the binary
    # number, which lies up to 2^-256 past the decimal, and a root between the two was confirmed
    a, b = exact_decimal(enc["lo"], "result.enclosure.lo"), exact_decimal(enc["hi"], "result.enclosure.hi")

    def t(A: Arith) -> Iv:
        return target(A) if callable(target) else A.q(target)

    sa = side(lambda A: f(A, a), t, digits)
    sb = side(lambda A: f(A, b), t, digits)
    near, far = (-1, 1) if increasing else (1, -1)
    if sa == far:
        raise CertificateRejected(f"{what}: the value at the recorded lower end is already past the target: "
                                  "the root is below it")
    if sb == near:
        raise CertificateRejected(f"{what}: the value at the recorded upper end has not reached the target: "
                                  "the root is above it")
    if sa == near and sb == far:
        return Recheck(lo=ends.inner[0], hi=ends.inner[1], dps=digits + 20)
    raise CouldNotReprove(f"{what}: the target is within the second route's width at a recorded end")


def _positive(x: Fraction, what: str) -> None:
    if x <= 0:
        raise CertificateRejected(f"{what} is not > 0")


#: from this x = eps/mu - mu/2 on, delta_mu < phi(x)/x < e^(-x^2/2) is below 2^-(2^30), MPFR's
#: least exponent in gmpy2 (x^2/2 >= 8 10^8 > 2^30 log 2): the direct enclosure is skipped
_UNDERFLOW_X = 40000


def log_delta_mu_iv(A: Arith, mu: Fraction, eps: Fraction) -> "Iv | None":
    """An enclosure of log delta_mu(eps) for x = eps/mu - mu/2 >= 1, in directed rounding,
    without forming delta_mu itself (which leaves MPFR's exponent range, about
    2^-(2^30), for x beyond about 38600). With y = x + mu = eps/mu + mu/2,
    Phi(-x) = phi(x) M(x) and e^eps Phi(-y) = e^eps phi(y) M(y) = phi(x) M(y)
    (x^2 - y^2 = -2 eps: e^eps phi(y) = phi(x)), M the Mills ratio, so
    delta_mu(eps) = phi(x) (M(x) - M(y)) and
    log delta_mu(eps) = -x^2/2 - log(2 pi)/2 + log(M(x) - M(y)),
    M enclosed by its continued fraction (:meth:`Arith.mills`, decreasing: each end at the
    other end of its argument). None when the difference is not proved positive at this
    precision (the caller raises it)."""
    x, y = A.q(eps / mu - mu / 2), A.q(eps / mu + mu / 2)
    if not x[0] >= 1:
        return None
    mx = (A.mills(x[1])[0], A.mills(x[0])[1])
    my = (A.mills(y[1])[0], A.mills(y[0])[1])
    diff = A.sub(mx, my)
    if not diff[0] > 0:
        return None
    half_sq = A.scale2((A.dn.square(x[0]), A.up.square(x[1])), -1)
    return A.sub(A.sub(A.log(diff), half_sq), A.log(A._sqrt2pi))


def exp_to_mpf(A: Arith, L: Iv) -> "tuple[mpf, mpf]":
    """[e^L0, e^L1] as mpmath numbers, for L far below MPFR's exponent range: with an integer
    k near L0 / log 2, e^L = 2^k e^(L - k log 2), the second factor in range and enclosed in
    MPFR (directed), the first an exact shift of the exponent (mpmath.ldexp is exact)."""
    lg = A.log2_const()
    k = int(A.dn.floor(A.dn.div(L[0], lg[1])))
    r = A.sub(L, A.mul(A.q(k), lg))
    m = A.exp(r)
    return mpmath.ldexp(mpfr_to_mpf(m[0]), k), mpmath.ldexp(mpfr_to_mpf(m[1]), k)


@register("gdp.delta")
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta_mu(eps) (GDPT Thm 3.2 / eq. 2) enclosed in MPFR directed rounding
    (:func:`delta_mu_iv`), precision rising until the enclosure is narrow. Below MPFR's
    exponent range (the enclosure underflows to [0, 2^-(2^30)]) the logarithm is enclosed
    instead (:func:`log_delta_mu_iv`) and exponentiated by an exact power of two
    (:func:`exp_to_mpf`): directed rounding throughout, no estimate."""
    mu = exact_input(inputs, "mu")
    eps = exact_input(inputs, "eps")
    if mu <= 0:
        raise CertificateRejected(f"mu={inputs['mu']} is not > 0")
    digits = needed_digits(result)
    x = eps / mu - mu / 2
    re = None
    if x < _UNDERFLOW_X:
        re = enclose(lambda A: delta_mu_iv(A, mu, eps), digits)
        if not (re.lo == 0 and re.hi is not None and re.hi < mpf(2) ** -(2**29)):
            return re
    # log delta_mu is about -x^2/2: its own bits add to the precision its exponential needs
    bits = start_bits(digits) + max(x.numerator.bit_length() - x.denominator.bit_length(), 0) * 2 + 8
    while True:
        A = arith(min(bits, MAX_BITS))
        L = log_delta_mu_iv(A, mu, eps)
        if L is not None:
            lo, hi = exp_to_mpf(A, L)
            if bits >= MAX_BITS or hi - lo <= hi * mpf(2) ** -int((digits + 1) * 3.33 + 1):
                return Recheck(lo=lo, hi=hi, dps=digits + 20)
        elif bits >= MAX_BITS:
            # [0, the least positive number]: sound; exit 3 against a positive recorded end
            return re or Recheck(lo=mpf(0), hi=mpf(2) ** -(2**30), dps=digits + 20)
        bits *= 2


@register("gdp.mu")
def recheck_mu(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """mu_GDP(eps, delta): the recorded [lo, hi] brackets the root of
    delta_mu(eps) = delta, proved by delta_mu(lo) < delta < delta_mu(hi) in MPFR
    directed rounding. mu -> delta_mu(eps) is strictly increasing for every real eps
    (the pair N(0,1), N(mu,1) is a post-processing of N(0,1), N(mu',1) for mu < mu':
    data processing for the hockey-stick divergence), negative eps included; at an end
    mu <= 0 its infimum (1 - e^eps)_+ stands in."""
    eps = exact_input(inputs, "eps")
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise CertificateRejected(f"delta={inputs['delta']} is not in (0, 1)")
    if not isinstance(result.get("enclosure"), dict):
        raise MalformedCertificate("gdp.mu needs result.enclosure with lo and hi")

    def f(A: Arith, m: Fraction) -> Iv:
        return delta_mu_iv(A, m, eps) if m > 0 else delta_mu_limit0(A, eps)

    if eps <= _LOG_ROUTE_EPS:
        try:
            return bracket_root_iv(f, delta, result, True, "mu_GDP")
        except CouldNotReprove:
            if not eps > 0:
                raise
    # e^eps leaves MPFR's exponent range (eps beyond about 7e8) or delta_mu underflows: the
    # same comparison in log space, where neither e^eps nor delta_mu is formed (the log is
    # increasing, so the bracket's logic is unchanged)
    return bracket_root_iv(lambda A, m: log_delta_mu_wide_iv(A, m, eps), lambda A: A.log(A.q(delta)),
                           result, True, "mu_GDP")


#: from this eps on, e^eps is near the top of MPFR's exponent range (2^(2^30) = e^(7.4e8)):
#: gdp.mu is bracketed in log space only
_LOG_ROUTE_EPS = 10**8


def log_delta_mu_wide_iv(A: Arith, mu: Fraction, eps: Fraction) -> Iv:
    """An enclosure of log delta_mu(eps) for eps > 0 at any magnitude, [-inf, +inf] when
    this precision gives none. x = eps/mu - mu/2 >= 1: :func:`log_delta_mu_iv`. Else, with
    y = x + mu = eps/mu + mu/2 >= 1, the identity e^eps phi(y) = phi(x) (x^2 - y^2 = -2 eps)
    gives delta_mu(eps) = Phi(-x) - phi(x) M(y) (M the Mills ratio, decreasing: each end at
    the other end of y), which never forms e^eps; it is intersected with [0, 1] (a
    hockey-stick divergence with eps > 0) before its logarithm."""
    whole = (mpfr("-inf"), mpfr("inf"))
    if mu <= 0:
        return whole
    x, y = eps / mu - mu / 2, eps / mu + mu / 2
    if x >= 1:
        return log_delta_mu_iv(A, mu, eps) or whole
    if y < 1:
        return whole
    X, Y = A.q(x), A.q(y)
    sq = (A.dn.square(X[1]) if X[1] <= 0 else mpfr(0) if X[0] <= 0 else A.dn.square(X[0]),
          A.up.square(max(-X[0], X[1])))  # x^2, x of either sign
    phi = A.div(A.exp(A.neg(A.scale2(sq, -1))), A._sqrt2pi)
    m = (A.mills(Y[1])[0], A.mills(Y[0])[1])
    d = A.sub(A.ncdf(A.neg(X)), A.mul(phi, m))
    lo, hi = max(d[0], mpfr(0)), min(d[1], mpfr(1))
    return (A.dn.log(lo) if lo > 0 else mpfr("-inf"), A.up.log(hi))


def _propose_mu(eps: Fraction, delta: Fraction, dps: int) -> mpf:
    """A proposal (not a proof) of mu_GDP: bisection on log mu at 20 digits, then Newton
    with d delta_mu / d mu = phi(-eps/mu + mu/2) at ``dps`` digits. The caller proves a
    bracket around it in directed rounding."""
    def f(m: mpf) -> mpf:
        e = fraction_to_mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    # delta_mu(eps) cancels about log10(1/delta) digits near eps = 0 (Phi(m/2) - Phi(-m/2)
    # for a tiny mu): the proposal works above that many digits
    lost = max(0, len(str(delta.denominator)) - len(str(delta.numerator))) + 5
    dps = dps + lost
    with mpmath.workdps(20 + lost):
        t = fraction_to_mpf(delta)
        lo, hi = mpf(1), mpf(1)
        n = 0
        while f(lo) > t and n < 400:
            lo /= 16
            n += 1
        while f(hi) < t and n < 800:
            hi *= 2
            n += 1
        for _ in range(80):
            mid = mpmath.sqrt(lo * hi)
            if f(mid) < t:
                lo = mid
            else:
                hi = mid
        m = (lo + hi) / 2
    with mpmath.workdps(dps + 10):
        t = fraction_to_mpf(delta)
        e = fraction_to_mpf(eps)
        m = mpf(m)
        for _ in range(60):
            d = mpmath.npdf(-e / m + m / 2)
            if d == 0:
                break
            step = (f(m) - t) / d
            m -= step
            if abs(step) <= abs(m) * mpf(10) ** (-dps):
                break
        return m


def _square(A: Arith, x: Iv) -> Iv:
    if x[0] >= 0:
        return (A.dn.square(x[0]), A.up.square(x[1]))
    if x[1] <= 0:
        return (A.dn.square(x[1]), A.up.square(x[0]))
    return (mpfr(0), max(A.up.square(x[0]), A.up.square(x[1])))


def _slope_iv(A: Arith, eps: Fraction, M: Iv) -> Iv:
    """e^eps Phi(-eps/mu - mu/2) / phi(eps/mu - mu/2) on the interval M of mu (> 0)."""
    E = A.q(eps)
    inv = A.div(E, M)
    half = A.scale2(M, -1)
    num = A.mul(A.exp(E), A.ncdf(A.sub(A.neg(inv), half)))
    sq = _square(A, A.sub(inv, half))
    phi = A.div(A.exp(A.neg(A.scale2(sq, -1))), A._sqrt2pi)
    return A.div(num, phi)


def _thm45_verdict(A: Arith, lo: Fraction, hi: Fraction) -> str:
    """GDPT Thm 4.5's verdict on a slope enclosure [lo, hi] (exact ends): holds when it lies in
    [0, sqrt(2 pi)/2], fails when it lies outside, else undecided; sqrt(2 pi)/2 rounded outward
    at A's precision, so a decided verdict is proved."""
    b = A.scale2((A.dn.sqrt(A.dn.mul_2exp(A.dn.const_pi(), 1)), A.up.sqrt(A.up.mul_2exp(A.up.const_pi(), 1))), -1)
    if lo >= 0 and hi <= to_fraction(b[0]):
        return "holds"
    if hi < 0 or lo > to_fraction(b[1]):
        return "fails"
    return "undecided"


@register("gdp.thm4.5")
def recheck_thm45(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Slope d mu_GDP / d eps = e^eps Phi(-eps/mu - mu/2) / phi(eps/mu - mu/2)
    (implicit differentiation of delta_mu(eps) = delta, GDPT Thm 4.5), in MPFR
    directed rounding on an interval of mu: a proposal of mu_GDP (mpmath Newton, not
    trusted) is widened to [m-, m+] and proved to bracket the root by
    delta_mu(m-) < delta < delta_mu(m+) (monotone in mu), then the slope is enclosed
    on all of [m-, m+]. The verdict 0 <= slope <= sqrt(2 pi)/2 is decided on that
    enclosure, precision rising until it is decided (at eps = 0 the slope tends to
    the bound itself as mu -> 0). A recorded 'undecided' must be what the recorded slope
    enclosure decides: the writer compares its own enclosure with the bound and writes
    'undecided' only where that enclosure straddles 0 or sqrt(2 pi)/2 (adv39 V1c: a 'holds'
    relabelled 'undecided' was confirmed)."""
    eps = exact_input(inputs, "eps")
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1 or eps < 0:
        raise MalformedCertificate("GDPT Thm 4.5 needs eps >= 0 and 0 < delta < 1")
    rec = result.get("enclosure")
    if result.get("verdict") == "undecided" and isinstance(rec, Mapping):
        lo_r, hi_r = enclosure_of(rec, "result.enclosure", 60)
        if mpmath.isfinite(lo_r) and mpmath.isfinite(hi_r):
            if _thm45_verdict(arith(128), mpf_to_fraction(lo_r), mpf_to_fraction(hi_r)) != "undecided":
                raise CertificateRejected("result.verdict: recorded 'undecided', but the recorded slope enclosure "
                                          f"[{lo_r}, {hi_r}] decides Thm 4.5's bound (the writer decides on it)")
    digits = needed_digits(result)
    while True:
        bits = start_bits(digits)
        with mpmath.workdps(digits + 40):  # mpf() inside rounds to the working precision
            m = mpf_to_fraction(_propose_mu(eps, delta, digits + 20))
        if m <= 0:
            raise CouldNotReprove("gdp.thm4.5: no positive proposal of mu_GDP")
        for widen in (16, 64, 256):
            w = m * Fraction(1, 2 ** max(bits - widen, 8))
            lo_m, hi_m = m - w, m + w

            def t(A: Arith) -> Iv:
                return A.q(delta)

            if lo_m > 0 and side(lambda A: delta_mu_iv(A, lo_m, eps), t, digits) == -1 and \
                    side(lambda A: delta_mu_iv(A, hi_m, eps), t, digits) == 1:
                break
        else:
            raise CouldNotReprove("gdp.thm4.5: mu_GDP could not be bracketed in directed rounding")
        A = arith(bits)
        M = (A.q(lo_m)[0], A.q(hi_m)[1])
        try:
            s = _slope_iv(A, eps, M)
        except ZeroDivisionError:
            raise CouldNotReprove("gdp.thm4.5: phi(eps/mu - mu/2) underflows the second route's range") from None
        if _bad(s):
            raise CouldNotReprove("gdp.thm4.5: the slope over/underflows the second route's range")
        verdict = _thm45_verdict(A, to_fraction(s[0]), to_fraction(s[1]))
        if verdict != "undecided" and narrow(s, needed_digits(result)) or bits >= MAX_BITS // 4:
            return Recheck(lo=mpfr_to_mpf(s[0]), hi=mpfr_to_mpf(s[1]), dps=digits + 20, verdict=verdict)
        digits *= 2


@register("gdp.eps")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta_mu is decreasing in eps, so [lo, hi] holds the root iff
    delta_mu(lo) > delta > delta_mu(hi), each enclosed in MPFR directed rounding."""
    mu = exact_input(inputs, "mu")
    delta = exact_input(inputs, "delta")
    if mu <= 0 or not 0 < delta < 1:
        raise MalformedCertificate("needs mu > 0 and 0 < delta < 1")
    return bracket_root_iv(lambda A, e: delta_mu_iv(A, mu, e), delta, result, False, "eps(delta)")


def mills_scaled_iv(A: Arith, t: Fraction) -> Iv:
    """sqrt(pi/2) e^(t^2/2) Phi(t) (GDPT App B.2) in directed rounding. For t <= -5 it
    is M(-t) / 2 exactly (Phi(t) = phi(-t) M(-t), M the Mills ratio, and
    sqrt(pi/2) / sqrt(2 pi) = 1/2), with M from the continued fraction
    (:meth:`Arith.mills`; M decreasing: the lower end at the larger argument), which
    never overflows; otherwise the product of MPFR's exp and :meth:`Arith.ncdf`."""
    if t <= -CF_FROM:  # (the fraction converges slowly near t = -1: erfc is faster there)
        x = A.q(-t)
        return (A.dn.mul_2exp(A.mills(x[1])[0], -1), A.up.mul_2exp(A.mills(x[0])[1], -1))
    x = A.q(t)
    h = A.scale2(_square(A, x), -1)
    c = (A.dn.sqrt(A.dn.mul_2exp(A.dn.const_pi(), -1)), A.up.sqrt(A.up.mul_2exp(A.up.const_pi(), -1)))
    return A.mul(A.mul(c, A.exp(h)), A.ncdf(x))


@register("gdp.mills_scaled")
def recheck_mills(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """sqrt(pi/2) e^{t^2/2} Phi(t) in MPFR directed rounding (:func:`mills_scaled_iv`;
    the arb route uses its own erfc at exact midpoints)."""
    t = exact_input(inputs, "t")
    return enclose(lambda A: mills_scaled_iv(A, t), needed_digits(result))

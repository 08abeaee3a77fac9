"""Independent re-verification of certificates: one acceptance rule for every kind.

Trust boundary. ``verify`` trusts only the claim: ``claim.quantity`` and the
inputs that define the quantity. Accuracy fields (``inputs.digits``), method
fields, hints (breakpoints, argmax, alpha*, grid exponents, cell lists) and
comments (``result.reason``) are untrusted; the words that state the claim
(``claim.statement``, ``claim.source``, the sampled kinds' ``result.theorems``)
are rebuilt from the kind and the inputs by :mod:`dpverify.certificate.prose`
and must match (exit 1). A hint may guide the search, and everything it
implies is re-proved, so a forged hint can make ``verify`` slow or undecided,
never accepting.

Order of checks for one certificate (:func:`verify_certificate`):

1. the JSON Schema of its format (``schema.json`` for format 1,
   ``schema-2.json`` for format 2, both shipped in this package); unknown
   fields of a format-2 certificate are refused (exit 2, naming the JSON path
   and the allowed keys);
2. the digest (it only detects accidents), then the producer's input ranges
   (:func:`dpverify.certificate.ranges.check_input_ranges`, one table for every kind):
   an input the producer would refuse is exit 2 before any route runs;
3. the re-checker registered for ``claim.quantity`` runs on mpmath within a
   budget (time and precision caps, :data:`BUDGET_SECONDS`, :data:`MAX_DIGITS`);
4. the acceptance rule (:func:`accept_enclosure`, :func:`accept_verdict`):

   * quantities: the independent enclosure [lo', hi'] must lie inside the
     recorded [lo, hi] -> accepted; disjoint -> refused (exit 1); otherwise
     "could not re-prove" (exit 3, never an accept). An infinite recorded
     endpoint asserts that the value is infinite: it is refused when the
     independent route shows a finite value there. A root that a route proves
     only at points (epsilon(delta) of shuffled, balls-in-bins, replace-one
     and RDP brackets) gets its independent enclosure from
     :func:`root_enclosure`, which also seeks a proof just past a recorded end
     that does not hold, so that a provably false bracket is disjoint (exit 1)
     rather than merely not re-proved;
   * checks: the independent verdict must equal the recorded
     ``result.verdict`` -> accepted; the opposite decided verdict -> refused;
     an undecided re-derivation -> exit 3. Claim certificates additionally
     need the recorded verdict to follow from the recorded enclosure and the
     relation, and ``claim.printed`` to match ``claim.relation``.

The re-checker API (for authors of a new kind)
----------------------------------------------
Write ``dpverify/recheck/<topic>.py`` importing nothing from the
arb side (gmpy2, mpmath and the standard library only) and register a function::

    @register("topic.quantity", explain="what is re-proved, by which route")
    def recheck(inputs, result) -> Recheck: ...

Return either

* ``Recheck(lo=..., hi=...)``: an independent enclosure of the quantity
  (mpf endpoints; ``mpmath.inf`` allowed), or
* ``Recheck(value=v, err=e, dps=p)``: the format-1-era form, read as the
  enclosure [v - e, v + e] rounded outward (so ``err`` must be a proved bound of
  the error of ``v``: today only exact zeros use it), and/or
* ``verdict="holds" | "fails" | "undecided"``: an independent verdict.

Choose the working precision from :func:`needed_digits` (derived from the
recorded enclosure's width), never from ``inputs.digits``. Raise
:class:`~dpverify.errors.CertificateRejected` when the route refutes the
certificate, :class:`~dpverify.errors.CouldNotReprove` when it cannot decide,
:class:`~dpverify.errors.MalformedCertificate` for a field it cannot read.
Parse numbers with :func:`dpverify.recheck.gdp.exact_input` (it
caps sizes). A re-checker that crashes is reported as "could not re-prove".
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional

import mpmath
from mpmath import mpf

from ..files import NotText, TooLarge, decode_text, json_loads, read_regular
from ..numtext import bad_json_number, json_float, json_int
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from . import kinds, limits, relations
from .core import exact_enclosure, exact_point, mpf_to_fraction
from .decimals import MAX_EXPONENT, _split_decimal, enclosure_of, exact_against_decimals, parse_bound
from ..certificate.format import FORMAT_1, NARROW_FACTOR, check_schema, compute_digest
from ..certificate.comments import check_comments, narrowly_missed
from ..certificate.ranges import check_input_ranges
from ..certificate.prose import check_quantity, check_statement, check_theorems

__all__ = [
    "Recheck", "register", "verify_certificate", "confirm", "Confirmed", "UNCONFIRMED", "verify_file", "RECHECKERS", "EXPLAIN",
    "needed_digits", "parse_bound", "accept_enclosure", "root_enclosure", "accept_verdict", "BUDGET_SECONDS",
    "MAX_DIGITS", "MAX_EXPONENT", "MAX_FILE_BYTES", "explain_text", "enclosure_of", "parse_json", "check_width",
]

#: wall-clock budget for one certificate's re-derivation (seconds); beyond: exit 3
BUDGET_SECONDS = 300.0
#: the largest number of significant digits a re-checker is asked for; a
#: recorded enclosure narrower than 10^-MAX_DIGITS (relative) cannot be re-proved
MAX_DIGITS = 2000
#: certificates larger than this are refused unread (exit 2)
MAX_FILE_BYTES = 64 * 2**20

VERDICTS = ("holds", "fails", "undecided")


@dataclass(frozen=True)
class Recheck:
    """What the second route re-derived: an enclosure and/or a verdict.

    ``lo``/``hi`` give the independent enclosure directly; otherwise
    ``value`` +- ``err`` is read as one (the format-1-era form). ``dps`` is
    the decimal precision the numbers were computed at.
    """

    value: "mpf | None" = None
    err: "mpf" = field(default_factory=lambda: mpf(0))
    dps: int = 30
    verdict: "str | None" = None
    lo: "mpf | None" = None
    hi: "mpf | None" = None
    #: result fields (paths such as ``head.enclosure``) the re-checker re-proved itself
    proved: frozenset = frozenset()
    #: result field path -> independent (lo, hi) enclosure, checked by the acceptance rule
    details: Mapping[str, tuple] = field(default_factory=dict)
    #: what the certificate states that no route here can re-prove or bind (named in the
    #: summary as not part of what is confirmed, as format 1's unverifiable fields are)
    unconfirmed: tuple = ()
    #: the producer decides this verdict from fields this re-check confirmed exactly (an oracle's
    #: rows; dp.implies' and dp.rr64's inputs, decided by exact signs), so it wrote that very
    #: verdict and never 'undecided': a recorded 'undecided' there is false, or not re-proved
    verdict_of_record: bool = False
    #: the quantity is this rational exactly (``lo``, ``hi`` its outward rounding): compared with the recorded
    #: decimals themselves (:class:`.decimals.ExactPoint`)
    exact: "Fraction | None" = None

    @classmethod
    def of_exact(cls, x: "Fraction | int", **kw: Any) -> "Recheck":
        """A quantity that is the rational ``x`` exactly: ``lo`` / ``hi`` its outward rounding
        (:func:`.core.exact_enclosure`, for routes that read the ends), ``exact`` the rational the
        acceptance rule compares with the recorded decimals; ``kw`` the other fields (``dps`` 60
        unless given)."""
        lo, hi = exact_enclosure(x)
        return cls(lo=lo, hi=hi, exact=Fraction(x), **{"dps": 60, **kw})

    def enclosure(self) -> "Optional[tuple[mpf, mpf]]":
        if self.exact is not None:
            return exact_point(self.exact)
        if self.lo is not None and self.hi is not None:
            return self.lo, self.hi
        if self.value is None:
            return None
        # rounded outward (exact for the value = err = 0 the re-checkers still write)
        prec = max(mpmath.mp.prec, self.dps * 4 + 40)
        return (mpmath.fsub(self.value, abs(self.err), prec=prec, rounding="f"),
                mpmath.fadd(self.value, abs(self.err), prec=prec, rounding="c"))


Rechecker = Callable[[Mapping[str, Any], Mapping[str, Any]], Recheck]
#: quantity name -> re-checker(inputs, result) ; filled by this package's re-checker modules
RECHECKERS: dict[str, Rechecker] = {}
#: quantity name -> one paragraph: what is re-proved and by which route
EXPLAIN: dict[str, str] = {}


def register(quantity: str, explain: "str | None" = None) -> Callable[[Rechecker], Rechecker]:
    """Register the re-checker of ``quantity`` (``explain``: for ``verify --explain``;
    default: the function's docstring)."""

    def deco(fn: Rechecker) -> Rechecker:
        RECHECKERS[quantity] = fn
        import sys

        mod_doc = (getattr(sys.modules.get(fn.__module__), "__doc__", None) or "").strip().split("\n\n")
        text = explain or (fn.__doc__ or "").strip() or " ".join(mod_doc[:2]) or "re-derived by its re-checker"
        EXPLAIN[quantity] = " ".join(text.split())
        return fn

    return deco


#: modules of this package that hold the acceptance rule, not re-checkers, and the Fourier
#: kernel (registers nothing; :mod:`.pld` imports it, and numpy, on the first power that may use it)
_CORE_MODULES = frozenset({"verify", "relations", "kinds", "core", "limits", "fourier"})


def _load_recheckers() -> None:
    """Import every re-checker module of this package (each registers its
    quantities); a new area adds a module, not a line here."""
    import importlib
    import pkgutil

    from .. import recheck

    for info in pkgutil.iter_modules(recheck.__path__):
        if info.name not in _CORE_MODULES and not info.name.startswith("_"):
            importlib.import_module(f"{recheck.__name__}.{info.name}")


# --------------------------------------------------------------------------- numbers


def needed_digits(result: Mapping[str, Any], extra: int = 4, floor: int = 15) -> int:
    """Significant digits a re-checker needs for its enclosure to fit inside
    the recorded one: from the recorded enclosure's relative width (never
    from ``inputs.digits``), plus ``extra``. Raises CouldNotReprove beyond
    :data:`MAX_DIGITS`."""
    enc = result.get("enclosure") if isinstance(result, Mapping) else None
    if not isinstance(enc, dict):
        return floor
    try:
        lo, hi = enclosure_of(enc, "result.enclosure", 40)
    except (MalformedCertificate, CertificateRejected):
        return floor
    if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
        return floor
    with mpmath.workdps(40):
        scale = max(abs(lo), abs(hi))
        if scale == 0:
            return floor
        width = hi - lo
        if width == 0:
            return floor + extra
        digits = int(mpmath.ceil(-mpmath.log10(width / scale))) + extra
    if digits > MAX_DIGITS:
        raise CouldNotReprove(
            f"the recorded enclosure is narrower than 1e-{MAX_DIGITS} (relative): beyond the precision cap"
        )
    return max(floor, digits)


# --------------------------------------------------------------------------- acceptance rule


def accept_enclosure(recorded: tuple[mpf, mpf], independent: tuple[mpf, mpf], what: str) -> None:
    """The one acceptance rule for quantities. Returns when [lo', hi'] lies
    inside [lo, hi]; raises CertificateRejected when they are disjoint or an
    infinite recorded endpoint meets a finite value, CouldNotReprove otherwise."""
    lo, hi = recorded
    # inside the ends read inward (a binary reading of a decimal end may lie past it: decimals.Ends),
    # disjoint from the ends read outward; a pair that is neither is not decided. No exception: a
    # route that proves a recorded end at the decimal itself states it read inward, as the rule reads it
    inner_lo, inner_hi = getattr(recorded, "inner", recorded)
    a, b = independent
    x, texts = getattr(independent, "exact", None), getattr(recorded, "texts", None)
    against = exact_against_decimals(x, texts) if x is not None and texts is not None else None
    if against is not None:
        if against[0]:
            return
        raise CertificateRejected(f"{what}: the value is an exact rational {against[1]} the recorded "
                                  f"[{texts[0]}, {texts[1]}] (compared exactly)")
    if any(mpmath.isnan(x) for x in (a, b)) or a > b:
        raise CouldNotReprove(f"the independent route gave no enclosure of {what}")
    if (hi == mpmath.inf and b < mpmath.inf) or (lo == -mpmath.inf and a > -mpmath.inf):
        raise CertificateRejected(
            f"{what}: an infinite recorded endpoint asserts an infinite value, but the "
            f"independent route shows it is finite ([{_s(a)}, {_s(b)}])"
        )
    if inner_lo <= a and b <= inner_hi:
        return
    if b < lo or a > hi:
        # ends that part past the 17th digit (a refutation just past a recorded end) are shown to
        # as many digits as tell them apart, up to 120 (ref52: 1e-40 apart, 24 showed them equal)
        n = 17
        while n < 120 and (_s(b, n) == _s(lo, n) or _s(a, n) == _s(hi, n)):
            n += 8
        raise CertificateRejected(
            f"{what}: the independent enclosure [{_s(a, n)}, {_s(b, n)}] is disjoint from the recorded "
            f"[{_s(lo, n)}, {_s(hi, n)}]"
        )
    raise CouldNotReprove(
        f"{what}: the independent enclosure [{_s(a)}, {_s(b)}] is not inside the recorded "
        f"[{_s(lo)}, {_s(hi)}] and not disjoint from it"
    )


#: how far past a recorded end (relative) :func:`root_enclosure` seeks a refuting proof: a proof
#: at the end itself would leave the independent end equal to the recorded one, which the rule
#: reads as overlap, not as disjoint
_PAST = Fraction(1, 2**64)


def root_enclosure(enc: Mapping[str, Any], at_least: "Optional[Callable[[Fraction], bool]]",
                   at_most: "Optional[Callable[[Fraction], bool]]", floor: mpf = mpf(0),
                   ceiling: mpf = mpmath.inf) -> tuple[mpf, mpf]:
    """The independent enclosure of a root x* >= 0 (an epsilon(delta)) that a re-checker
    proves at points, for :func:`accept_enclosure` to judge against the recorded ``enc``.

    ``at_least(x)`` proves x* >= x, ``at_most(x)`` proves x* <= x (each False when its proof
    does not go through; None: the route has no such point proof); ``floor`` / ``ceiling``
    are ends the route proved on its own. The recorded ends are tried first (read inward, so a
    proof there is a proof at the recorded end), and a genuine certificate gets its recorded
    ends back read inward, as the rule reads them. When an end is not proved, a proof just past the
    other end is sought: x* > hi (at_least at hi (1 + 2^-64)) or x* < lo (at_most at
    lo (1 - 2^-64)); either makes the independent enclosure disjoint from the recorded one and
    the rule refuses the certificate (exit 1: its statement is proved false). Otherwise what
    was proved is returned and the rule answers exit 3."""
    lo_m = parse_bound(enc.get("lo"), "result.enclosure.lo", rounding="f")
    hi_m = parse_bound(enc.get("hi"), "result.enclosure.hi", rounding="c")
    if ceiling < lo_m or floor > hi_m:
        return floor, ceiling  # disjoint on the route's own ends: no point proof needed

    def point(v: mpf, sign: int = 0) -> "Fraction | None":
        """v (moved past itself by 2^-64 relative when ``sign``) as an exact rational, or None
        outside [2^-4096, 2^4096] (no eps there is proved at a point: not expanded)."""
        if not mpmath.isfinite(v) or v != 0 and not mpf(2) ** -4096 < abs(v) < mpf(2) ** 4096:
            return None
        x = mpf_to_fraction(v)
        return x + sign * (abs(x) or 1) * _PAST

    lo_r = parse_bound(enc.get("lo"), "result.enclosure.lo", rounding="c")
    hi_r = parse_bound(enc.get("hi"), "result.enclosure.hi", rounding="f")
    lo_in, hi_in = point(lo_r), point(hi_r)
    above_hi, below_lo = point(hi_m, 1), point(lo_m, -1)
    a, b = floor, ceiling
    if ceiling <= hi_m or hi_m == mpmath.inf:
        b = min(ceiling, hi_m)
    elif at_most is not None and hi_in is not None and at_most(hi_in):
        b = hi_r
    elif at_least is not None and above_hi is not None and at_least(above_hi):
        return max(floor, exact_enclosure(above_hi)[0]), ceiling
    if lo_m <= floor:
        a = floor
    elif at_least is not None and lo_in is not None and at_least(lo_in):
        a = lo_r
    elif at_most is not None and below_lo is not None and below_lo >= 0 and at_most(below_lo):
        return floor, min(ceiling, exact_enclosure(below_lo)[1])
    return a, b


def accept_verdict(recorded: Any, independent: Optional[str], what: str, of_record: bool = False) -> None:
    """The one acceptance rule for checks: equal verdicts, or a recorded 'undecided'.

    'undecided' asserts neither holds nor fails, so it is never false where the producer's
    route may be weaker than this one (the 0.1.0 'head only' gdp.certify of randomized
    response, which this route now decides 'holds', was a true certificate; the re-checker
    binds such a verdict to what the certificate's own recorded fields decide, e.g.
    gdpt._status_of_record). Where the producer decides the verdict from fields confirmed
    exactly (``of_record``: an oracle's re-classified rows, dp.implies' and dp.rr64's inputs
    by exact signs), it wrote that verdict and never 'undecided': 'undecided' is refused
    where this route decides (adv38 V1b: an oracle's 'fails', an unsafe accountant,
    relabelled 'undecided' was confirmed; issue 22 for dp.implies and dp.rr64) and not
    re-proved (exit 3) where it does not. Its numbers (the enclosure) are re-proved
    separately, whatever the verdict."""
    if recorded not in VERDICTS:
        raise MalformedCertificate(f"{what}={recorded!r} is not one of {', '.join(VERDICTS)}")
    if recorded == "undecided":
        if of_record and independent in ("holds", "fails"):
            raise CertificateRejected(f"{what}: recorded 'undecided', which the producer never writes here (it "
                                      f"decides from fields re-proved exactly), and the verdict is {independent!r}")
        if of_record:
            raise CouldNotReprove(f"{what}: recorded 'undecided', which the producer never writes here, and "
                                  "the independent route did not decide the verdict")
        return
    if independent is None or independent == "undecided":
        raise CouldNotReprove(f"{what}: the independent route could not decide {recorded!r}")
    if independent == recorded:
        return
    raise CertificateRejected(f"{what}: recorded {recorded!r}, the independent route decides {independent!r}")


def _s(x: mpf, digits: int = 17) -> str:
    return mpmath.nstr(x, digits) if mpmath.isfinite(x) else str(x)


# --------------------------------------------------------------------------- budget


class BudgetExceeded(CouldNotReprove):
    """The time budget ran out: re-checkers that catch CouldNotReprove to try another
    route must re-raise this one."""


@contextlib.contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Raise CouldNotReprove after ``seconds`` of wall time (main thread only,
    via SIGALRM; elsewhere no time cap, the precision caps still apply)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise BudgetExceeded(f"not re-proved within the budget of {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------- verify


def _verdict_of(cert: Mapping[str, Any], fmt: str) -> Any:
    """The recorded verdict; format 1 kept some under other names."""
    result = cert["result"]
    if "verdict" in result:
        return result["verdict"]
    name = _format1_verdict_name(cert, fmt)
    if name is None:
        return None
    if name == "status":  # gdp.certify's status names its verdict
        return kinds.CERTIFY_VERDICTS.get(result["status"], result["status"])
    return result[name]


def _format1_verdict_name(cert: Mapping[str, Any], fmt: str) -> "str | None":
    """The format-1 field that holds the verdict of this certificate's kind, if present."""
    name = kinds.FORMAT1_VERDICT_NAMES.get(cert["claim"]["quantity"])
    return name if fmt == FORMAT_1 and name in cert["result"] else None


def _verdict_key_present(cert: Mapping[str, Any], fmt: str) -> bool:
    return "verdict" in cert["result"] or _format1_verdict_name(cert, fmt) is not None


def _check_claim_fields(claim: Mapping[str, Any]) -> None:
    """``claim.printed`` must state the number ``claim.relation`` compares
    with (for ``rounds_to`` and ``order_of_magnitude``, where the printed
    number *is* the relation; '10^-43' and '1e-43' are one number)."""
    rel = claim.get("relation")
    if not isinstance(rel, dict) or "printed" not in claim:
        return
    if rel.get("kind") in ("rounds_to", "order_of_magnitude"):
        printed = str(claim["printed"]).replace("10^", "1e").replace("\u2212", "-")
        if not _mentions(printed, [rel.get("printed")]):
            raise CertificateRejected(
                f"claim.printed={claim['printed']!r} does not state claim.relation.printed={rel.get('printed')!r}"
            )


def _mentions(printed: str, numbers: list) -> bool:
    """Every number appears in the printed text (as written, or as the same
    value: '1e-5' and '0.00001' are one number)."""
    import re
    from decimal import Decimal, InvalidOperation

    # Decimal compares 1e-5 with 0.00001 without expanding 10^exponent (a Fraction of
    # "1e999999999999999999" would build a 10^18-digit integer)
    found = []
    for tok in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d{1,6})?", printed[:10000]):
        try:
            found.append(Decimal(tok))
        except InvalidOperation:
            pass
    for n in numbers:
        if not isinstance(n, str):
            return False
        if n in printed:
            continue
        try:
            _split_decimal(n)
            d = Decimal(n)
            if not d.is_finite() or not any(d == f for f in found):
                return False
        except (InvalidOperation, MalformedCertificate):
            return False
    return True


#: the words that introduce, on a verify line, the fields verify names as not confirmed
UNCONFIRMED = "not re-proved and not part of what is confirmed"


@dataclass(frozen=True)
class Confirmed:
    """An accepted certificate: the summary line, and the fields it names as not part of what
    is confirmed (a caller that needs all of it confirmed, the sweep cache, reads these, not
    the line)."""

    line: str
    unconfirmed: tuple = ()


def confirm(cert: Any, *, budget_seconds: "float | None" = None) -> Confirmed:
    """Re-verify one certificate (parsed JSON); raises CertificateRejected (exit 1),
    MalformedCertificate (exit 2) or CouldNotReprove (exit 3)."""
    _load_recheckers()
    with budget(BUDGET_SECONDS if budget_seconds is None else budget_seconds):
        return _verify(cert)


def verify_certificate(cert: Any, *, budget_seconds: "float | None" = None) -> str:
    """Re-verify one certificate (parsed JSON). Returns a one-line summary;
    raises CertificateRejected (exit 1), MalformedCertificate (exit 2) or
    CouldNotReprove (exit 3)."""
    return confirm(cert, budget_seconds=budget_seconds).line


def _verify(cert: Any) -> Confirmed:
    _no_surrogates(cert, "")
    fmt = check_schema(cert)
    claim, inputs, result = cert["claim"], cert["inputs"], cert["result"]
    quantity = claim["quantity"]
    if quantity not in RECHECKERS:
        raise MalformedCertificate(
            f"claim.quantity: {quantity!r} is not a known kind (known: {', '.join(sorted(RECHECKERS))})"
        )
    if cert["digest"] != compute_digest(cert):
        raise CertificateRejected("digest does not match the certificate's contents")
    # the producer's input ranges, one table for every kind (issue 22): exit 2 before any route. First,
    # so that a kind with a row for digits (the PLD kinds, oracle: 1..8) is refused in its producer's words
    check_input_ranges(quantity, inputs, result)
    digits = inputs.get("digits")
    if digits is not None and (not isinstance(digits, int) or isinstance(digits, bool) or not 0 < digits <= 10**4):
        raise MalformedCertificate(f"inputs.digits={str(digits)[:40]!r} must be an integer in [1, 10000]")
    if quantity.startswith("events.") and "enclosure" in result and "theorems" not in result:
        # every events writer (0.1.0 on) records the list beside an answer, which verify rebuilds from
        # inputs.event; without it the certificate does not say what its numbers rest on (adv43 F1: a
        # deleted list was confirmed without a word). Here, not in the events route, which the replace
        # kinds also run on their own upper and lower results
        raise MalformedCertificate("result.theorems: missing; an events certificate records the theorems its "
                                   "steps cite beside its enclosure (certificate.prose.event_theorem)")
    _check_claim_fields(claim)
    # the parts agree (keys the kind reads, mirrored fields, the claim's relation) before any number is
    # weighed: a key the kind does not take was exit 1 on the width it implied, not exit 2 naming it (adv50 L2)
    kinds.check_agreement(quantity, claim, inputs, result)
    recorded_verdict = _verdict_of(cert, fmt)
    enc = result.get("enclosure")
    if enc is None and recorded_verdict is None:
        raise MalformedCertificate("result has neither an enclosure nor a verdict")
    recorded = enclosure_of(enc, "result.enclosure", 60) if enc is not None else None
    if recorded is not None and digits is not None:
        if narrowly_missed(quantity, result.get("note"), digits):
            check_width(recorded, digits, enc, NARROW_FACTOR, "the narrowly missed width its note states")
        else:
            check_width(recorded, digits, enc)
    kind = kinds.require_proving_routes(quantity, recorded is not None, recorded_verdict is not None)
    kinds.require_format(kind, fmt)
    kinds.check_result_keys(kind, result)
    kinds.check_hints(kind, result)
    if isinstance(claim.get("relation"), dict) and not _verdict_key_present(cert, fmt):
        raise MalformedCertificate(f"{quantity} states a claim (claim.relation): result.verdict is missing")
    if kind.verdict is kinds.CLAIM_VERDICT and "verdict" in result and not isinstance(claim.get("relation"), dict):
        # the converse (a relation without a verdict) is exit 2 above; this was exit 3 (adv41 C3)
        raise MalformedCertificate(f"result.verdict: a {quantity} certificate has a verdict only as the verdict of "
                                   "a claim (claim.relation), and this one states none")
    ignored = _unverifiable(kind, result, fmt)
    if fmt != FORMAT_1 and "why_upper_only" in result and "relative_width" in result:
        # an upper-only answer's relative_width was the upper end's own accuracy (its lower
        # end, another pair's, is not recorded), which nothing here can re-prove; this
        # release no longer writes it, and one written earlier is named as not confirmed
        ignored.append("result.relative_width (the upper end's own accuracy, not the recorded bracket's)")
    limits.check_work(quantity, claim, inputs, result)
    # the words are the kind's template filled from these inputs (or the shipped claim's):
    # a statement saying more than what is re-proved below is refused (adv34 F2)
    ignored += check_statement(fmt, claim, inputs, result)
    cited = frozenset({"theorems"}) if check_theorems(fmt, quantity, inputs, result) else frozenset()
    if quantity in kinds.MECHANISM_KINDS:
        kinds.check_mechanism_options(inputs)
    ignored += check_quantity(fmt, quantity, inputs, result)
    try:
        re = RECHECKERS[quantity](inputs, result)
    except (CertificateRejected, MalformedCertificate, CouldNotReprove):
        raise
    except RecursionError:
        raise CouldNotReprove("the independent re-derivation exceeded the recursion limit") from None
    except (OverflowError, ZeroDivisionError, ArithmeticError) as exc:
        # an overflow or underflow of the second route confirms nothing (never a floor)
        raise CouldNotReprove(f"the independent re-derivation failed: it left its range ({type(exc).__name__})") from None
    except Exception as exc:  # a crash of the second route confirms nothing
        raise CouldNotReprove(
            f"the independent re-derivation failed ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    if not isinstance(re, Recheck):
        raise CouldNotReprove("the re-checker returned no result")
    for path, ind in re.details.items():
        accept_enclosure(enclosure_of(_field(result, path), f"result.{path}", 60), ind, f"result.{path}")
    ignored += list(re.unconfirmed)
    proved = frozenset(re.proved) | frozenset(re.details) | _verdict_aliases(cert, fmt) | cited
    kinds.check_details(kind, result, proved)
    shown = ""
    if recorded is not None:
        ind = re.enclosure()
        if ind is None:
            raise CouldNotReprove(f"{quantity}: the independent route gave no enclosure")
        accept_enclosure(recorded, ind, "result.enclosure")
        shown = f" (independent enclosure [{_s(ind[0])}, {_s(ind[1])}])"
    if recorded_verdict is None and re.verdict is not None and _verdict_key_present(cert, fmt) is False:
        raise MalformedCertificate(f"{quantity} is a check: result.verdict is missing")
    if recorded_verdict is not None or _verdict_key_present(cert, fmt):
        independent = re.verdict
        if isinstance(claim.get("relation"), dict):
            # the relation is the claim as stated: decided on the independent enclosure even
            # where the kind has a verdict of its own (a pld.claim relation rewritten to
            # "delta(2) <= 1e-40" kept its kind's verdict "holds" and passed: adv34 F4)
            if re.enclosure() is None:
                raise MalformedCertificate(f"claim.relation: {quantity} has no enclosure for a relation to bound")
            by_relation = _claim_verdict(claim, result, re, recorded, recorded_verdict)
            if independent is None or by_relation != "undecided":
                if independent not in (None, "undecided") and by_relation != independent:
                    raise CertificateRejected(f"claim.relation decides {by_relation!r} on the independent enclosure, "
                                              f"the kind's own re-derivation {independent!r}: the relation is not "
                                              "the claim this certificate proves")
                independent = by_relation
        elif quantity in kinds.CLAIM_BOUNDS and re.enclosure() is not None:
            # a kind whose writers state no relation (kinds.ClaimBound): its verdict bound all the same
            implied = {"kind": "le", "bound": inputs.get(kinds.CLAIM_BOUNDS[quantity].key)}
            _claim_verdict({"relation": implied}, result, re, recorded, recorded_verdict)
        # a claim's verdict is its relation's, bound to the recorded enclosure by _claim_verdict
        accept_verdict(recorded_verdict, independent, "result.verdict",
                       re.verdict_of_record and not isinstance(claim.get("relation"), dict))
    # the writer's comments last, on a certificate otherwise confirmed (its enclosure and verdict
    # are re-proved by now): a reason in a writers' form is re-derived, other text is named (adv36 F3)
    # (a comment the re-checker re-derived itself, e.g. gdp.certify's tail.reason, is in ``proved``)
    ignored += check_comments(quantity, tuple(c for c in kind.comments if c not in proved), inputs, result,
                              recorded_verdict)
    what = claim.get("id") or quantity
    if ignored:
        shown += f"; {UNCONFIRMED}: {', '.join(ignored)}"
    return Confirmed(f"{what}: confirmed{shown}", tuple(ignored))


def _field(result: Mapping[str, Any], path: str) -> Any:
    obj: Any = result
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _verdict_aliases(cert: Mapping[str, Any], fmt: str) -> frozenset:
    """Format-1 names of the verdict (compared by :func:`accept_verdict` like the verdict)."""
    name = _format1_verdict_name(cert, fmt)
    return frozenset() if name is None else frozenset({name})


def _unverifiable(kind: "kinds.Kind", result: Mapping[str, Any], fmt: str) -> list:
    """Format 2: a field the table calls unverifiable is refused. Format 1 (the frozen
    0.1.0 writer's output, which must stay verifiable): such fields are named as not
    re-proved and excluded from what is confirmed."""
    if fmt != FORMAT_1:
        kinds.classify_result(kind, result)
        return []
    return [f"result.{k}" for k in kinds.unverifiable_present(kind, result)]


def _claim_verdict(claim: Mapping[str, Any], result: Mapping[str, Any], re: Recheck,
                   recorded: "Optional[tuple[mpf, mpf]]", recorded_verdict: Any) -> str:
    """A claim certificate's verdict: the relation decided on the independent
    enclosure; the recorded verdict must also be the one the recorded enclosure decides.
    That includes 'undecided': an enclosure confirmed to hold the truth is a proof, and a
    claim is decided by any certified enclosure that decides it, so a certificate whose own
    enclosure refutes its claim cannot call it undecided (adv37 V1: a 'fails' relabelled
    'undecided' was confirmed)."""
    relation = claim["relation"]
    ind = re.enclosure()
    if ind is None:
        raise CouldNotReprove("no independent enclosure to decide the claim on")
    dps = max(re.dps, 30)
    with mpmath.workdps(dps):
        again = relations.decide(ind[0], ind[1], relation, dps)
        if recorded is not None and recorded_verdict in VERDICTS:
            texts = getattr(recorded, "texts", None)
            own = relations.decide_decimals(texts, relation) if texts is not None else None
            if own is None:
                own = relations.decide(recorded[0], recorded[1], relation, dps)
            if own != recorded_verdict:
                raise CertificateRejected(
                    f"recorded verdict {recorded_verdict!r} is not what the recorded enclosure decides ({own!r})"
                )
    return again


def check_width(recorded: tuple[mpf, mpf], digits: int, enc: Mapping[str, Any], factor: int = 1, why: str = "",
                where: str = "the enclosure") -> None:
    """``inputs.digits`` can only refuse: an enclosure wider than the accuracy
    it records is not what it says it is: hi - lo <= factor 10^-digits min(|lo|, |hi|)
    (absolute for an enclosure that reaches 0), within 10^-6 of it. ``factor`` > 1 where the
    producer's contract allows a wider enclosure, ``why`` says which: a ``result.note`` that is
    the writer's narrow-miss sentence (:func:`dpverify.certificate.comments.narrowly_missed`;
    ref43 P0: such a genuine certificate was refused, exit 1), or an oracle configuration, whose
    PLD answer may be so without a note (recheck/oracle.py). Width is never what makes an
    enclosure true; the route re-proves that it contains the value."""
    lo, hi = recorded
    if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
        return
    with mpmath.workdps(60):
        scale = min(abs(lo), abs(hi)) if lo * hi > 0 else mpf(1)
        allowed = mpf(10) ** (-min(digits, 10**4)) * factor
        if hi - lo > allowed * scale * (1 + mpf(10) ** -6):
            size = f"relative width {mpmath.nstr((hi - lo) / scale, 3)}" if lo * hi > 0 else \
                f"width {mpmath.nstr(hi - lo, 3)}"
            raise CertificateRejected(
                f"{where} [{enc['lo']}, {enc['hi']}] ({size}) is wider than its recorded accuracy 1e-{digits}"
                + (f" (x {factor}, {why})" if factor != 1 else "")
            )


class _Unreadable(MalformedCertificate):
    """A path that is not a readable regular file (exit 2, as a malformed one): nothing was read, so
    the message does not call it a certificate."""


def _load(path: Path) -> Any:
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except TooLarge:
        raise MalformedCertificate(f"file is larger than the cap of {MAX_FILE_BYTES // 2**20} MiB") from None
    except OSError as exc:  # a FIFO or a device is refused unread (it would block or never end)
        raise _Unreadable(f"cannot read the file ({exc.strerror})") from None
    return parse_json(raw)


def parse_json(raw: bytes) -> Any:
    """A certificate's bytes read by verify's grammar: UTF-8 (a leading byte-order mark dropped, as
    every input file's: files.decode_text), JSON without constants (NaN, Infinity) and with every
    number literal one a double holds as written (numtext.json_float), no key twice in one object,
    bounded nesting. MalformedCertificate otherwise. The one reader of certificate text (verify's
    files, the sweep cache's entries)."""
    try:
        # the one text decoder of every input file: the byte, its line and the remedy ("not UTF-8
        # (byte 0)" for a UTF-16 file before, issue 22); a leading byte-order mark is dropped
        text = decode_text(raw, "certificate")
    except NotText as exc:
        raise MalformedCertificate(exc.strerror) from None
    try:
        # a literal no reader takes is kept as what it was (5e99999 was read as inf and quoted so,
        # "inputs.delta: inf is not of type 'string'", issue 22) and named at its path below
        doc = json_loads(text, parse_int=json_int, parse_float=json_float)
    except json.JSONDecodeError as exc:
        raise MalformedCertificate(f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise MalformedCertificate("JSON nested too deeply") from None
    except ValueError as exc:
        raise MalformedCertificate(f"not acceptable JSON ({str(exc)[:120]})") from None
    found = bad_json_number(doc)
    if found is not None:  # a 5,000-digit integer or 5e99999, named with its place (issue 22)
        raise MalformedCertificate(f"{found[0] or '(top level)'}: {found[1]}")
    return doc


def verify_file(path: "str | Path", *, budget_seconds: "float | None" = None) -> tuple[int, str]:
    """Exit code and message for one file: 0 accepted, 1 refused, 2 malformed,
    3 could not re-prove. Never raises for a bad file."""
    try:
        cert = _load(Path(path))
        return 0, f"{path}: {verify_certificate(cert, budget_seconds=budget_seconds)}"
    except CouldNotReprove as exc:  # a CertificateRejected subclass: caught first
        return 3, f"{path}: could not re-prove (exit 3, never an accept): {exc}"
    except CertificateRejected as exc:
        return 1, f"{path}: REFUSED: {exc}"
    except _Unreadable as exc:
        return 2, f"{path}: {exc}"
    except MalformedCertificate as exc:
        return 2, f"{path}: malformed certificate: {exc}"
    except RecursionError:
        return 2, f"{path}: malformed certificate: nested too deeply"
    except MemoryError:
        return 3, f"{path}: could not re-prove: out of memory"
    except Exception as exc:  # never let one file hide the others: a crash confirms nothing
        return 3, (f"{path}: could not re-prove (exit 3, never an accept): the verifier failed "
                   f"({type(exc).__name__}: {str(exc)[:200]!r})")


def _no_surrogates(obj: Any, where: str) -> None:
    """A lone UTF-16 surrogate (JSON "\\ud800") is no Unicode text: the digest's UTF-8
    encoding is undefined for it. Refused, naming the JSON path."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedCertificate(f"{where or '(top)'}: a lone UTF-16 surrogate is not text") from None
    elif isinstance(obj, dict):
        for k, v in obj.items():
            key = str(k).encode('utf-8', 'backslashreplace').decode()
            path = f"{where}.{key}" if where else key  # "claim.source", as every other message names it
            _no_surrogates(k, path)
            _no_surrogates(v, path)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _no_surrogates(v, f"{where}[{i}]")


def explain_text() -> str:
    """What each kind re-proves and by which route, and which of its steps are
    proofs and which estimates (``verify --explain``)."""
    from .kinds import explain_steps

    _load_recheckers()
    lines = []
    for q in sorted(EXPLAIN):
        # which steps are proofs (directed rounding, exact) and which remain estimates
        lines.append(f"{q}:\n  {EXPLAIN[q]}\n{explain_steps(q)}")
    return "\n".join(lines)


# the name used before format 2
def check_enclosure(enclosure: Any, re: Recheck, digits: "int | None" = None, where: str = "enclosure") -> None:
    """Apply the acceptance rule to one recorded enclosure object, named ``where`` in a refusal
    (a replace-one curve detail: ``result.lower`` / ``result.upper``)."""
    ind = re.enclosure()
    if ind is None:
        raise CouldNotReprove("no independent enclosure")
    accept_enclosure(enclosure_of(enclosure, where, max(re.dps, 30)), ind, where)


"""Certificate writer: assembles a format-2 certificate, seals it with its
digest (:mod:`.format`) and validates it against the shipped schema before it
leaves the process (docs/reference/architecture.md, "Certificates").

Write-time contract: a certificate that would not validate is a bug of the
writer, raised as :class:`~dpverify.errors.InternalError` (exit 4), never
written to a file; :mod:`dpverify.recheck.verify` re-derives the numbers.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from .._version import __version__
from ..errors import CertificateRejected, CouldNotReprove, InternalError, MalformedCertificate, PrecisionExhausted
from ..limits import MAX_NUMBER_CHARS
from .format import (COUNT_KEYS, FORMAT, FORMAT_1, UNVERIFIABLE_DETAILS, canonical_bytes, compute_digest,
                     foreign_inputs, schema_errors)
from .prose import source, statement

__all__ = ["FORMAT", "FORMAT_1", "COUNT_KEYS", "canonical_bytes", "compute_digest", "make_certificate",
           "unverifiable", "handed_out", "grid_past_cap", "level_check", "LevelCheck", "PRICED_KINDS", "validate_written", "dumps", "write"]


def _backend() -> str:
    # read on use: verify imports this module and must not load python-flint
    from ..ball import BACKEND

    return BACKEND


def make_certificate(
    *,
    claim: Mapping[str, Any],
    inputs: Mapping[str, Any],
    result: Mapping[str, Any],
    precision_bits: int,
    algorithm: str,
    extra_method: Optional[Mapping[str, Any]] = None,
    software: Optional[list] = None,
) -> dict[str, Any]:
    """Assemble a format-2 certificate and seal it with its digest.

    ``claim`` needs at least ``quantity``; its ``statement`` and ``source`` are the kind's,
    filled from the inputs (:func:`.prose.statement`, :func:`.prose.source`; a registry claim,
    with an ``id``, brings its own);
    ``inputs`` holds the exact input strings as the user gave them (counts as
    integers: :data:`COUNT_KEYS`). ``software`` lists every other program that
    produced a number in the certificate: ``{"name", "version", "settings"}``.
    """
    for key in ("quantity",) + (("statement", "source") if "id" in claim else ()):
        if key not in claim:
            raise ValueError(f"certificate claim lacks {key!r}")
    typed = typed_inputs(inputs)
    # an absent detail is left out, not written as null (the schema types every field);
    # details the second route cannot re-prove stay out of every certificate
    kept = {k: v for k, v in result.items() if v is not None and k not in UNVERIFIABLE_DETAILS}
    claim = dict(claim)
    if "id" not in claim:
        # the statement is the kind's template filled from these inputs, the one verify
        # rebuilds (prose.py); a writer does not word it itself
        try:
            words = statement(claim["quantity"], typed, kept)
        except (KeyError, ValueError) as exc:
            raise InternalError(f"no statement for this {claim['quantity']} certificate: {exc}") from None
        cited = source(claim["quantity"], typed)
        if cited is None:
            raise InternalError(f"no source for this {claim['quantity']} certificate")
        for key, text in (("statement", words), ("source", cited)):
            if claim.get(key, text) != text:
                raise InternalError(f"{claim['quantity']}: the writer's {key} {claim[key]!r} is not the kind's "
                                    f"{text!r}")
        # key order as the writers always wrote it (the file's bytes; the digest sorts keys)
        claim = {"quantity": claim["quantity"], "statement": words, "source": cited,
                 **{k: v for k, v in claim.items() if k not in ("quantity", "statement", "source")}}
    method: dict[str, Any] = {
        "backend": _backend(),
        "precision_bits": int(precision_bits),
        "algorithm": algorithm,
    }
    if extra_method:
        method.update(extra_method)
    if software:
        method["software"] = [dict(s) for s in software]
    cert: dict[str, Any] = {
        "format": FORMAT,
        "dpverify": __version__,
        "claim": claim,
        "inputs": typed,
        "result": kept,
        "method": method,
    }
    cert["digest"] = compute_digest(cert)
    validate_written(cert)
    return cert


def validate_written(cert: Mapping[str, Any]) -> None:
    """The write-time contract: ``cert`` validates against its format's shipped
    schema, or it is a bug of the writer (:class:`InternalError`), never a file."""
    errors = schema_errors(cert)
    claim = cert.get("claim") if isinstance(cert, Mapping) else None
    inputs = cert.get("inputs") if isinstance(cert, Mapping) else None
    if isinstance(claim, Mapping) and isinstance(inputs, Mapping):
        # the kind's own input list, which verify holds every certificate to
        foreign = foreign_inputs(str(claim.get("quantity")), inputs)
        if foreign is not None and foreign[0]:
            errors = errors + [f"inputs: {', '.join(foreign[0])} is not an input of its kind (KIND_INPUTS)"]
    if errors:
        kind = (cert.get("claim") or {}).get("quantity", "?") if isinstance(cert, Mapping) else "?"
        raise InternalError(
            f"dpverify wrote a {kind} certificate that does not validate against its schema: "
            + "; ".join(errors[:3])
        )


def printed_without_certificate(what: str = "enclosure") -> str:
    """The remedy a write-time refusal names beside :func:`fewer_digits`: the answer itself is still
    printed without a certificate."""
    return f" (the {what} itself is printed without --certificate / --json)"


def fewer_digits(digits: object, why: str, done: str = "no certificate written") -> str:
    """The refusal of a certificate :func:`unverifiable` found ``why`` for, where the digits asked for
    (``digits``: the value, or words for a default) set its grid; ``done``: what became of it (a
    producer that refuses before the grid is computed says so). One wording for every writer. At one
    digit, the least, fewer is no remedy: the inputs themselves (a tiny delta, a large eps: the mass
    unit's bits) set that work (adv56 LOW: delta 1e-1000 at digits 1 was told to ask for fewer)."""
    if str(digits) == "1":
        return f"1 needs {why}: {done}; even one digit needs this work, which the inputs themselves set"
    return f"{digits} needs {why}: {done}; ask for fewer digits"


def unverifiable(cert: Mapping[str, Any], grids: "Optional[Sequence[Optional[int]]]" = None) -> Optional[str]:
    """What ``cert`` needs that ``dpverify verify`` could not re-prove within its caps, or None.
    First the verifier's own price of its dearest PLD query on the grid 2^-m the producer needed,
    in the direction that costs most and for both of its sides (:func:`_grid_price`, a few tail
    evaluations per step law; from 2^20 steps with the tilted lower pair's exact products, which no
    Fourier power answers: a T = 10^7 certificate on 2^-30 priced 7.0e6 by its knots was written
    unasked and verify charged past its cap, session 55): past :data:`dpverify.recheck.limits.PLD_MAX_GRID_WORK`, or where one
    step's loss spans more knots than the re-check discretises, it is refused at once.
    That price leaves out the search's coarser grids, the other direction and the finer grid the
    re-check needs where its pair is looser than the producer's, and the exact products past half a
    grid's price (up to about 8x the price in all, :data:`dpverify.recheck.limits.PLD_PRICE_SPREAD`), so
    a certificate priced above 1 / that of the cap is re-proved by the verifier itself before it is
    written (:func:`dpverify.recheck.verify.confirm` with no time budget: its static caps alone, so
    the choice does not depend on the clock): `--digits 6` at T = 10^5 and 10^6 and on the
    `audit dpsgd --help` example, priced at 0.5-0.96 of the cap, were written and answered exit 3
    (ref50 MEDIUM-1, adv48 M5). The second half of the write-time contract: what dpverify writes,
    verify accepts (a claim refined to 2^-18 near its boundary, a sweep row at 7 digits: adv50 M2;
    the same configuration as an event tree or an oracle row, issue 22). A choice of what to write,
    never of a number. A certificate the verifier refutes is a bug (:class:`InternalError`).
    ``grids``: the producer's grid exponent per ``result.configs`` entry of an ``oracle.rows``
    certificate (None: no grid), which that kind does not record. Kinds without a grid: None, but a registry claim of a
    pld.* or events.* quantity (no grid recorded, so no price) is re-proved, and so is a calibrate.bracket
    of the Poisson or fixed-batch template (its curves' exact products, held to the re-check's static budget,
    have no price before their work) or with an end on the re-check's finest grid, and every replace-one
    bracket (:func:`_replace_reproved`)."""
    claim, inputs, result = cert.get("claim"), cert.get("inputs"), cert.get("result")
    if not (isinstance(claim, Mapping) and isinstance(inputs, Mapping) and isinstance(result, Mapping)):
        return None
    quantity = str(claim.get("quantity"))
    needs = "a re-proof"
    if "grid" in result or (quantity == "oracle.rows" and grids):
        from ..recheck.limits import PLD_MAX_GRID_WORK, PLD_PRICE_SPREAD

        # a claim's re-check starts 4 halvings coarser than its recorded grid and may decide there, so
        # its price on the recorded grid is no lower bound of verify's work: past the cap it is
        # re-proved rather than refused (ref51b MEDIUM-2: an events.claim priced past the knot cap at
        # 2^-18 that verify accepts at 2^-14 in 4 s)
        why, got = _past_cap(quantity, inputs, result, grids)
        if why is not None and not quantity.endswith(".claim"):
            return why
        if why is None and (got is None or PLD_PRICE_SPREAD * got[0] <= PLD_MAX_GRID_WORK):
            return None
        # past the knot cap there (no price) or priced past 1 / PLD_PRICE_SPREAD of the cap: re-proved below
        needs = f"the grid {result.get('grid')}" if got is None else f"the grid 2^-{got[1]}"
    elif quantity == "calibrate.bracket":
        # an end decided on the re-check's finest grid leaves verify no finer one to try, and its bounds
        # there may be looser than the calibration's (issue 22: `calibrate dpsgd --target-eps 3 --delta
        # 1e-5 --sampling-rate 256/60000 --steps 14063 --digits 6` wrote a safe end with delta(3) <=
        # 9.99998e-6 on 2^-16, which verify bounds by 1.0000003e-5 there: exit 3 after 58 CPU s)
        from ..recheck.calibrate import FINEST_GRID

        ends = result.get("ends")
        finest = f"2^-{FINEST_GRID}"
        if isinstance(ends, Mapping) and any(isinstance(e, Mapping) and e.get("grid") == finest
                                             for e in ends.values()):
            needs = f"an end on the grid {finest}, the finest `dpverify verify` tries"
        elif inputs.get("template") in ("dpsgd", "dpsgd-wor"):
            # the grid route's curves are held to one static budget (recheck.limits.CALIBRATE_MAX_WORK),
            # their exact products priced by their bits, which no count before the work bounds (their
            # length is the composed support, about T and K times the step's knots): re-proved, so what
            # verify refuses by its meter is not written (adv53 M1; 1-2 CPU s for the committed brackets)
            needs = "its ends' grids within the re-check's work budget"
        else:
            return None
    elif _replace_reproved(quantity):
        needs = "its curves' grid searches"
    elif not ("id" in claim and quantity.startswith(("pld.", "events."))):
        return None  # no grid to price (and no import of the re-check for it)
    # a registry claim of a PLD kind (`dpverify reproduce`) records no grid, so nothing prices it
    # (adv51 M1: MNIST at digits 7 was written and answered exit 3): it is re-proved (1-3 s each in
    # certificates/)
    from ..progress import Progress
    from ..recheck.verify import confirm

    # seconds to a minute with nothing else on the terminal (T = 10^7: about 15 CPU s); on stderr,
    # and only where it is a terminal (the certificate's bytes never depend on it)
    bar = Progress("re-proving before writing (dpverify verify)", total=1, unit="certificate")
    try:
        confirm(dict(cert), budget_seconds=0)
    except CouldNotReprove as exc:
        return f"{needs}, where `dpverify verify` could not re-prove it: {exc}"
    except (CertificateRejected, MalformedCertificate) as exc:
        raise InternalError(f"`dpverify verify` refuses a {claim.get('quantity')} certificate dpverify wrote: "
                            f"{exc}") from None
    finally:
        bar.close()
    return None


def handed_out(cert: dict[str, Any]) -> dict[str, Any]:
    """``cert``, which a library function (an accountant adapter, the pytest plugin, a sampling
    bracket) returns instead of writing it: the same write-time contract as the CLI's (:func:`unverifiable`:
    what dpverify hands out, ``dpverify verify`` accepts). Raises :class:`PrecisionExhausted` naming
    what the certificate needs where verify could not re-prove it; a certificate verify refutes is
    an :class:`InternalError` (a bug)."""
    why = unverifiable(cert)
    if why is not None:
        kind = cert["claim"]["quantity"]
        raise PrecisionExhausted(f"no {kind} certificate returned: it needs {why}; ask for a wider relative "
                                 "width (rel_width) or fewer digits")
    return cert


def _replace_reproved(quantity: str) -> bool:
    """Whether a certificate of ``quantity`` is a replace-one bracket (``replace.*``), which
    :func:`unverifiable` re-proves before it is written. It records no grid (its curve details are
    searched from the start a hint sets, :func:`dpverify.recheck.replace._refined`), so nothing
    prices it statically, and its searches share one budget
    (:data:`dpverify.recheck.limits.REPLACE_MAX_WORK`), which a genuine certificate of a tiny delta
    comes near (the T = 200 epochs schedule at eps 4: 2.95e9 units, 25 CPU s; the re-proof takes
    what verify takes, 0.3 .. 25 CPU s for the brackets `audit dpsgd` writes, about what they cost
    to produce). Issue 22, deliverable 4: what dpverify writes, verify accepts."""
    return quantity.startswith("replace.")


def _knot_cap_message(exc: Exception) -> str:
    """Why a grid past the re-check's knot cap is not written (:func:`unverifiable`, :func:`grid_past_cap`)."""
    return f"a grid `dpverify verify` cannot re-prove within its caps ({exc})"


def _work_cap_message(got: "tuple[int, int]") -> str:
    """Why a grid priced past :data:`PLD_MAX_GRID_WORK` is not written (:func:`unverifiable`, :func:`grid_past_cap`)."""
    from ..recheck.limits import PLD_MAX_GRID_WORK

    return (f"the grid 2^-{got[1]}, which `dpverify verify` cannot re-prove within its work cap "
            f"({got[0]:.2e} > {PLD_MAX_GRID_WORK:.1e} knots x bits x log2 steps x sides)")


def _past_cap(quantity: str, inputs: Mapping[str, Any], result: Mapping[str, Any],
              grids: "Optional[Sequence[Optional[int]]]") -> "tuple[Optional[str], Optional[tuple[int, int]]]":
    """(why, price): why a certificate recording ``result`` is past the re-check's caps by the price
    alone (its grid past the knot cap, or priced past :data:`PLD_MAX_GRID_WORK`), else None; and the
    price (:func:`_grid_price`; None past the knot cap or where no grid is priced). The one price
    test of :func:`unverifiable` (after the run) and :func:`grid_past_cap` (before each grid level)."""
    from ..recheck.limits import PLD_MAX_GRID_WORK

    try:
        got = _grid_price(quantity, inputs, result, grids)
    except CouldNotReprove as exc:
        return _knot_cap_message(exc), None
    if got is not None and got[0] > PLD_MAX_GRID_WORK:
        return _work_cap_message(got), got
    return None, got


#: the kinds whose certificate records its grid, priced before each level (:func:`grid_past_cap`)
PRICED_KINDS = ("pld.epsilon", "pld.delta", "pld.claim", "events.epsilon", "events.delta", "events.claim")


def grid_past_cap(quantity: str, inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Optional[str]:
    """Why a pld.* / events.* (:data:`PRICED_KINDS`) certificate recording ``result`` (its grid and
    enclosure) is past the re-check's caps by the price alone, or None: its recorded grid past the
    re-check's knot cap or priced past :data:`PLD_MAX_GRID_WORK` (for an enclosure, the refusals of
    :func:`unverifiable` that need no re-proof: the same test, :func:`_past_cap`, and the same
    messages). A count (:func:`_grid_price`), no masses: the producer asks it before a grid level is
    computed (:func:`level_check`, issue 22: work is bounded before it starts), so a certificate the
    writer would refuse after the run is refused at once. A claim past the cap is re-proved by
    :func:`unverifiable` instead (verify may decide it on a coarser grid); its producer does not
    compute such a grid (the claim's check). None for any other quantity."""
    if quantity not in PRICED_KINDS:
        return None
    return _past_cap(quantity, inputs, result, None)[0]


def level_check(quantity: str, inputs: Mapping[str, Any], digits: Optional[int],
                refuse: "Callable[[str, str], Exception]") -> "LevelCheck":
    """The ``check_grid`` of :func:`dpverify.pld.refine.refine_query` for a query or claim of a kind
    in :data:`PRICED_KINDS` whose certificate will be written (``inputs``: as the certificate records
    them; ``digits``: the accuracy asked of an enclosure, None for a claim): it prices each grid level
    before it is computed as the certificate it would write (:func:`grid_past_cap`, the writer's own
    price) and declines a level past verify's caps (issue 22: work is bounded before it starts; the
    MNIST ``--eps 2.38 --digits 6`` delta query ran 2^-17 and 2^-18 for minutes, ``--claimed-eps
    2.38169`` decided on 2^-18 in 128 CPU s, and neither was then written). An enclosure: raises
    ``refuse(why, "")``, as the writer refuses it after the run. A claim (verify may decide it on a
    grid coarser than the producer's, so the writer re-proves it): a level past the cap is replaced by
    the one halving below it where that one is within the cap and still finer than the last level,
    else raises ``refuse(why, shown)``, ``shown`` naming the enclosure so far. ``refuse`` words the
    refusal for its producer (:func:`dpverify.cli._common.grid_check`: exit 2 naming --digits, or
    exit 3; a sweep row: undecided).

    The enclosure priced is one the certificate may record, chosen so the price is at most the
    final one (nothing the writer would accept is refused): an eps query's unit grows with the
    recorded upper end (the re-check's e^eps bits), and the lower end found so far (or the plan's
    float estimate) is at most it, and its delta scale grows with the recorded relative width; a
    delta query's unit shrinks with the recorded upper end and its relative width, and the upper end
    so far is at least the final one. Either width is taken as the widest an answer may have
    (``NARROW_FACTOR`` times the width asked; a claim's as the last level's, which a finer level only
    narrows: ref52 LOW-1, the h^2 law's 4 per halving priced one claim 1.3e-5 above its final price).
    The recorded grid is the last level's, at least any level's m, and the price grows with m."""
    from ..ball import rational_decimal
    from ..limits import NARROW_FACTOR

    eps_kind = quantity.endswith(".epsilon")
    claim = quantity.endswith(".claim")
    width = min(Fraction(1, 2), NARROW_FACTOR * Fraction(1, 10 ** digits)) if digits is not None else None
    last: list[int] = []  # the claim's grids computed so far (the check precedes each)

    def priced(m: int, lo: Optional[Fraction], hi: Optional[Fraction], w: Optional[Fraction]) -> Optional[str]:
        result: dict[str, Any] = {"grid": f"2^-{m}"}

        def below(x: Fraction, w: Fraction) -> str:  # the lower end of a record of relative width w ending at x
            return rational_decimal(x * (1 - min(w, Fraction(1, 2))), 17, upward=False)

        if eps_kind and lo is not None and lo > 0:
            # its delta scale grows with the recorded width (recheck.pld._eps_scale): the widest an
            # answer may have; a zero-width record read back at 17 digits is a width of 1e-17
            e = rational_decimal(lo, 17, upward=False)
            result["enclosure"] = {"lo": e if w is None else below(lo, w), "hi": e}
        elif not eps_kind and hi is not None and hi > 0 and w is not None:
            result["enclosure"] = {"lo": below(hi, w), "hi": rational_decimal(hi, 17, upward=True)}
        return grid_past_cap(quantity, inputs, result)

    def check(m: int, lo: Optional[Fraction], hi: Optional[Fraction]) -> Optional[int]:
        if not claim:
            why = priced(m, lo, hi, width)
            if why is not None:
                raise refuse(why, "")
            return None
        prev = last[-1] if last else None
        w = (hi - lo) / hi if prev is not None and hi is not None and hi > 0 and lo is not None else None
        why = priced(m, lo, hi, w)
        if why is None:
            last.append(m)
            return None
        if prev is not None and prev < m - 1 and priced(m - 1, lo, hi, w) is None:
            return m - 1  # asked again for m - 1 (refine_query), then recorded
        shown = "" if prev is None or lo is None or hi is None else (
            f"; delta(claimed eps) in [{rational_decimal(lo, 6, upward=False)}, "
            f"{rational_decimal(hi, 6, upward=True)}] on 2^-{prev}, which does not decide it")
        raise refuse(why, shown)

    def predicted_past(m: int) -> bool:
        # no enclosure recorded: the eps query's unit at its least (hint 0), the delta query's at its
        # coarsest, so the price is at most the one of any enclosure on 2^-m
        return not claim and priced(m, None, None, width) is not None
    return LevelCheck(check, predicted_past)


class LevelCheck:
    """The ``check_grid`` :func:`level_check` returns: called as ``check(m, lo, hi)`` before each
    level (it raises to refuse, or returns a coarser m'), and ``past_cap(m)``: whether a certificate
    recording the grid 2^-m (any enclosure) would be priced past verify's caps, the writer's own
    refusal (:func:`grid_past_cap`), False for a claim. :func:`dpverify.pld.refine.refine_query`
    asks it of the grid the width model predicts before the first level, to choose a cheap probe
    level first (a choice of grid only: the refusal stays the per-level price, issue 22)."""

    __slots__ = ("_check", "_past")

    def __init__(self, check: "Callable[[int, Optional[Fraction], Optional[Fraction]], Optional[int]]",
                 past: "Callable[[int], bool]") -> None:
        self._check, self._past = check, past

    def __call__(self, m: int, lo: Optional[Fraction], hi: Optional[Fraction]) -> Optional[int]:
        return self._check(m, lo, hi)

    def past_cap(self, m: int) -> bool:
        return self._past(m)


def _grid_price(quantity: str, inputs: Mapping[str, Any], result: Mapping[str, Any],
                grids: "Optional[Sequence[Optional[int]]]") -> "Optional[tuple[int, int]]":
    """(work, m) of the dearest PLD query the re-check of ``cert`` makes, priced by the re-check's own
    meter on the producer's grid: pld.* (:func:`dpverify.recheck.pld.recorded_grid_price`), events.*
    (:func:`dpverify.recheck.events.recorded_grid_price`, which raises :class:`CouldNotReprove` where a
    leaf spans more knots than that route discretises), oracle.rows per configuration, as the pld.epsilon
    query its re-check makes (:func:`dpverify.recheck.oracle.config_query`) on the grid ``grids`` gives
    it. None: no grid to price."""
    if quantity.startswith("pld."):
        from ..recheck.pld import recorded_grid_price

        return recorded_grid_price(inputs, quantity, result)
    if quantity.startswith("events."):
        from ..recheck.events import recorded_grid_price as events_price

        return events_price(inputs, quantity, result)
    if quantity != "oracle.rows" or not grids:
        return None
    from ..recheck.oracle import config_query
    from ..recheck.pld import recorded_grid_price

    configs = result.get("configs")
    if not isinstance(configs, list) or len(configs) != len(grids):
        raise InternalError("unverifiable: one producer grid per oracle configuration")
    prices = []
    for c, m in zip(configs, grids):
        if m:
            q_inputs, q_result = config_query(c)
            got = recorded_grid_price(q_inputs, "pld.epsilon", dict(q_result, grid=f"2^-{m}"))
            if got is not None:
                prices.append(got)
    return max(prices, default=None)


#: the schema's spelling of an input number (schema-2.json, $defs/number)
_SCHEMA_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]{1,18})?|-?[0-9]+/[1-9][0-9]*|-?inf",
                            re.ASCII)
# the other spellings dpverify.ball.parse_exact reads as the same exact value:
# surrounding blanks, a "+" sign, ".5", "5.", exponents with leading zeros
_LOOSE_DECIMAL = re.compile(r"\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*", re.ASCII)
_LOOSE_FRACTION = re.compile(r"\s*([+-]?)(\d+)/0*([1-9]\d*)\s*", re.ASCII)


def _schema_spelling(text: str) -> str:
    """``text`` in the schema's spelling of a number, when it is another spelling of
    the same exact value that the input parser accepts ("+1" -> "1", " .5" -> "0.5",
    "1.e-05" -> "1e-5"); anything else unchanged (the schema then names it)."""
    if _SCHEMA_NUMBER.fullmatch(text):
        return text
    m = _LOOSE_FRACTION.fullmatch(text)
    if m:
        return ("-" if m.group(1) == "-" else "") + f"{m.group(2)}/{m.group(3)}"
    m = _LOOSE_DECIMAL.fullmatch(text)
    if not m or not (m.group(2) or m.group(3)):
        return text
    sign, whole, frac, exp = m.groups()
    out = ("-" if sign == "-" else "") + (whole or "0") + (f".{frac}" if frac else "")
    return out + (f"e{int(exp)}" if exp is not None else "")


def typed_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Inputs typed one way: counts as integers, every other number as an
    exact decimal string in the schema's spelling (a bool stays a bool, lists
    and objects are kept). A count text longer than any number text (MAX_NUMBER_CHARS) stays text, for
    the schema to name: int() of 5,000 digits raised Python's own limit, exit 4 (adv51 L4)."""
    out: dict[str, Any] = {}
    for key, v in inputs.items():
        if (key in COUNT_KEYS and isinstance(v, str) and v.strip().isascii() and v.strip().isdigit()
                and len(v.strip()) <= MAX_NUMBER_CHARS):
            v = int(v)
        elif key not in COUNT_KEYS and isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        elif isinstance(v, str):
            v = _schema_spelling(v)
        out[key] = v
    return out


def dumps(cert: Mapping[str, Any]) -> str:
    """Human-friendly JSON text (key order kept; the digest does not depend on it)."""
    return json.dumps(cert, indent=2, ensure_ascii=False) + "\n"


def write(cert: Mapping[str, Any], path: "os.PathLike[str] | str") -> Path:
    validate_written(cert)
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    from ..files import open_output

    with open_output(p, encoding="utf-8") as fh:
        fh.write(dumps(cert))
    return p

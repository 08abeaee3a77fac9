"""Second route for ``oracle.rows`` certificates.

Each configuration's certified enclosure is re-derived by the PLD second
route (:mod:`.pld`: its own discretisation in directed rounding and big-integer
convolution, grid refined until its enclosure lies inside the recorded one:
containment, not intersection). Every row is re-classified from its reported
number by exact comparisons of rationals, by the rule of docs/reference/certificates.md,
"Oracle rows" (the producer, dpverify/oracle/classify.py, has its own copy; neither imports
the other): 'unsafe' (reported < epsilon*) and 'loose' (reported > epsilon* (1 + tolerance))
are accepted when the recorded enclosure (its printed decimals) or the independent one
decides them; 'consistent' when the recorded enclosure does not decide the row and is no
wider than ``inputs.digits`` allows (:func:`_check_config_width`), so that a vacuous recorded
enclosure cannot make an unsafe number consistent; where it is wider than 10^-digits (inside only the
narrowly missed allowance), when the independent enclosure does not decide the row and is itself
within 10^-digits (:func:`_check_row`). ``crashed`` is accepted only for a row
without a reported number, so it cannot hide one; format 2 records ``inputs.row_count`` and
a row count that differs is refused. The overall verdict is fails iff a row is unsafe.

Rows and their input file. A certificate of ``dpverify oracle --input FILE`` written by
this release records the file's text (``inputs.input_text``; ``inputs.input_sha256`` is
its sha256, which the user compares with their file): every row is re-read from that
text here (CSV or JSON, by the producer's rule on the recorded file name) and must
state the same accountant, configuration and reported number, in the same order, as
the certificate's row (:func:`check_rows_against_source`), so no row can say that the
file reported what it did not. A sha256 without the text is refused (exit 2): it names a
file whose rows verify could not re-read, and a certificate stripped of its text would
otherwise pass for an unbound one. Format-1 certificates (0.1.0) name the file only by
its name, and battery certificates record what the accountants returned when the battery
ran: there the rows' accountants and reported numbers are not bound to anything verify
can read, and the summary says so (the classification of each recorded number is
still re-proved).
"""

from __future__ import annotations

import csv
import hashlib
import io
from fractions import Fraction
from pathlib import PurePath
from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..certificate.format import (NARROW_FACTOR, ORACLE_ALIASES, ORACLE_BATTERIES, ORACLE_FIELDS, ORACLE_INFINITY,
                                  ORACLE_MECHANISMS)
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from ..files import json_loads
from .core import mpf_to_fraction
from .decimals import enclosure_of
from .gdp import exact_input
from .kinds import last_digit_unit
from .pld import recheck_epsilon
from .verify import Recheck, check_enclosure, check_width, parse_bound, register

_DPS = 50
_FIELDS = ("mechanism", "noise_multiplier", "sampling_rate", "steps", "delta")


def _row_verdict(reported: Fraction, lo: Fraction, hi: "Fraction | None", tol: Fraction) -> str:
    """What the enclosure [lo, hi] decides of a reported epsilon: 'unsafe' below lo, 'loose'
    above hi (1 + tol), else 'consistent' (not decided). Exact rationals (hi None: +inf): a
    rounded comparison could move a row that sits on a bound into the other class."""
    if reported < lo:
        return "unsafe"
    if hi is not None and reported > hi * (1 + tol):
        return "loose"
    return "consistent"


def _check_row(i: int, row: Mapping[str, Any], reported: Fraction, recorded: "tuple[Fraction, Fraction | None]",
               independent: "tuple[Fraction, Fraction | None]", tol: Fraction, digits: Any) -> str:
    """Accept a row's verdict or raise: the rule of docs/reference/certificates.md, "Oracle rows".

    'unsafe' and 'loose' are statements about the true epsilon* (reported < epsilon*, reported >
    epsilon* (1 + tol)): accepted when a certified enclosure decides them, the recorded one (its
    decimals, re-proved by check_enclosure) or the independent one inside it. 'consistent' says
    the recorded enclosure does not decide the row at the accuracy the certificate states:
    accepted when the recorded enclosure does not decide it, and is bounded and, as every
    configuration's (:func:`_check_config_width`, before the rows), no wider than inputs.digits
    allows, so that a vacuous enclosure such as [0, 100] cannot make an unsafe number consistent.
    Where the recorded enclosure is wider than 10^-digits (inside only the x NARROW_FACTOR allowance
    of a narrowly missed PLD answer), the independent enclosure [a, b] carries the statement alone:
    exit 1 where it decides the row, accepted where it does not and is within 10^-digits, exit 3
    otherwise. Then the row is consistent at 10^-digits on a certified enclosure: a <= reported <=
    b (1 + tol), [a, b] an enclosure of epsilon* no wider than 10^-digits."""
    verdict, who = row["verdict"], f"row {i} ({str(row.get('accountant'))[:40]})"
    own = _row_verdict(reported, *recorded, tol)
    ind = _row_verdict(reported, *independent, tol)
    if verdict in ("unsafe", "loose"):
        if verdict in (own, ind):
            return verdict
        raise CertificateRejected(f"{who}: recorded {verdict!r}, re-derived {own!r} on the recorded enclosure and "
                                  f"{ind!r} on the independent one [{_show_ends(independent)}]")
    if verdict != "consistent":
        raise CertificateRejected(f"{who}: recorded {str(verdict)[:40]!r}, re-derived {own!r}")
    if own != "consistent":
        raise CertificateRejected(f"{who}: recorded 'consistent', but the recorded enclosure decides {own!r}")
    if digits is None:
        raise MalformedCertificate(f"{who}: a 'consistent' row is judged at inputs.digits, the accuracy of its "
                                   "enclosure, which the certificate does not state (every oracle writer records it)")
    if recorded[1] is None:
        raise CertificateRejected(f"{who}: 'consistent' on an enclosure unbounded above, which decides no row at any "
                                  f"accuracy; on the independent enclosure [{_show_ends(independent)}] it is {ind!r}")
    if recorded[0] <= 0 and ind == "unsafe":
        # an enclosure that reaches 0 is measured absolutely (10 x 10^-digits): at a small stated digits
        # [0, 1] passed, and made rows reporting 0.6 and 0.1 against eps* = 0.718 'consistent', the
        # certificate's verdict 'holds' (ref48 HIGH-2); such an enclosure may not hide a row that the
        # independent enclosure proves unsafe
        raise CertificateRejected(f"{who}: 'consistent' on a recorded enclosure that reaches 0 (its width measured "
                                  f"absolutely), but the independent enclosure [{_show_ends(independent)}] proves the "
                                  "reported number below epsilon*: unsafe")
    if _within_digits(enclosure_of(row["certified"], "certified", 60), digits, row["certified"]):
        # at the stated 10^-digits itself, 'consistent' is what a genuine run at those digits could state
        return verdict
    # The recorded enclosure is wider than 10^-digits: within only the x NARROW_FACTOR allowance of
    # _check_config_width, which admits a producer's narrowly missed width (no note says so) and does not
    # extend to a row. Verify's own enclosure [a, b] must then carry the statement: a forged enclosure
    # 0.0099 wide at digits 3 made a row 0.4% below epsilon* 'consistent' and the verdict 'holds' (adv48b,
    # where [a, b] proved it unsafe), and one 9.8e-4 wide at digits 4 a row 2e-4 below epsilon*, where
    # [a, b], refined only until it fits inside the recorded enclosure, did not decide it (issue 22).
    show = f"[{_show_ends(independent)}]"
    if ind != "consistent":
        below = "below epsilon*" if ind == "unsafe" else "above epsilon* (1 + tolerance)"
        raise CertificateRejected(f"{who}: 'consistent' on a recorded enclosure wider than its recorded accuracy "
                                  f"1e-{digits} (the narrowly missed allowance does not extend to a row), and the "
                                  f"independent enclosure {show} proves the reported number {below}: {ind}")
    if _within_digits(_mpf_ends(independent), digits, {"lo": show, "hi": ""}):
        # [a, b] contains epsilon*, is as narrow as the stated digits and does not decide the row: the row is
        # consistent at the stated accuracy on verify's own enclosure
        return verdict
    raise CouldNotReprove(f"{who}: 'consistent' on a recorded enclosure wider than its recorded accuracy 1e-{digits} "
                          "(the narrowly missed allowance does not extend to a row), and the independent enclosure "
                          f"{show}, refined only until it fits inside it, is too wide to confirm the row at that "
                          "accuracy")


def _within_digits(ends: "tuple[mpf, mpf]", digits: int, enc: Mapping[str, Any]) -> bool:
    """Whether ``ends`` are no wider than 10^-digits: verify's one width rule
    (:func:`.verify.check_width` at factor 1) asked, not enforced; an unbounded end is never narrow."""
    if not (mpmath.isfinite(ends[0]) and mpmath.isfinite(ends[1])):
        return False
    try:
        check_width(ends, digits, enc)
    except CertificateRejected:
        return False
    return True


def _mpf_ends(ends: "tuple[Fraction, Fraction | None]") -> "tuple[mpf, mpf]":
    """Exact rational ends as mpf at 60 digits, outward (a width measured on them is at least the true one)."""
    a, b = ends
    with mpmath.workdps(60):
        lo = mpmath.fdiv(a.numerator, a.denominator, rounding="d")
        hi = mpmath.inf if b is None else mpmath.fdiv(b.numerator, b.denominator, rounding="u")
    return lo, hi


def _show_ends(ends: "tuple[Fraction, Fraction | None]") -> str:
    a, b = ends
    return f"{float(a):.10g}, {'inf' if b is None else f'{float(b):.10g}'}"


def _check_config_width(enc: Mapping[str, Any], digits: Any, where: str) -> None:
    """A configuration's recorded enclosure must be as narrow as ``inputs.digits`` = d makes the
    producer's: the PLD answer at relative width 10^-d, or up to NARROW_FACTOR wider where a
    static cap stopped the refinement (pld/refine.py; the oracle records no note), an enclosure
    that reaches 0 measured absolutely (:func:`.verify.check_width`, the rule of every PLD
    enclosure; an unbounded one is judged by the rows, :func:`_check_row`). A 'consistent' row
    says the enclosure does not decide it at that accuracy, so a vacuous [0, 100] must not pass;
    a wider enclosure is not what the certificate states, whatever its rows (exit 1)."""
    if digits is None:
        return  # a 'consistent' row needs it (_check_row: exit 2); every oracle writer records it
    check_width(enclosure_of(enc, "certified", 60), digits, enc, NARROW_FACTOR,
                "the PLD answer's narrowly missed width", where=f"{where}: the recorded enclosure")


def _exact_bound(text: Any, where: str) -> "Fraction | None":
    """A recorded decimal bound as an exact rational ("inf": None), size-checked by
    :func:`parse_bound` first."""
    parse_bound(text, where, _DPS)
    if text == "inf":
        return None
    if text == "-inf":
        raise CertificateRejected(f"{where} = -inf is not an epsilon bound")
    return exact_input({where: text}, where)


def _check_excess(i: int, text: Any, reported: Fraction, ends: "tuple[Fraction, Fraction | None]",
                  texts: "tuple[str, str]", verdict: str) -> None:
    """A row's ``excess`` is (reported - nearest bound) / nearest bound of the recorded
    enclosure, printed to four digits rounded so that it stays a bound on the true relative
    excess: up below the lower end (unsafe), down above the upper end (the 0.1.0 writer
    rounded to nearest). Recomputed here exactly: the printed value must be within one unit
    of its own last digit of the exact one (a display value, so its rounding direction is
    not what is confirmed; its value is). Writers before this release measured it from the
    unprinted binary end, which lies within one unit u of the printed end's last digit, so
    their value differs from the one here by less than (1 + |excess|) u / bound; (2 + |excess|)
    u / bound more is allowed (u / bound <= 1e-16 at the 17 digits every writer prints): a
    reported number on a printed end (excess 0 here, -1.3e-17 there) was refused."""
    if text is None:
        return
    if not isinstance(text, str):
        raise MalformedCertificate(f"row {i}: excess must be a decimal string")
    hi = ends[1]
    side = 0 if verdict == "unsafe" else 1 if verdict == "loose" or hi is not None and reported > hi else None
    bound = None if side is None else ends[side]
    if bound == 0:
        # eps* = 0 exactly ([0, 0]): no relative excess is finite, and the writer records none
        raise CertificateRejected(f"row {i}: excess {text[:40]} is relative to a bound of 0, which no finite "
                                  "number is")
    e = exact_input({"x": text}, "x")
    x = Fraction(0) if bound is None else (reported - bound) / bound
    allowed = last_digit_unit(text) or Fraction(0)
    if bound is not None and side is not None:
        allowed += (2 + abs(x)) * (last_digit_unit(texts[side]) or Fraction(0)) / bound
    if abs(e - x) > allowed:
        raise CertificateRejected(f"row {i}: excess {text[:40]} does not fit the reported number and the recorded "
                                  f"enclosure (exactly {float(x):.6g})")


#: what the summary says is not confirmed when the rows are not bound to an input text
UNBOUND_INPUT = ("result.rows' accountants and reported numbers (this certificate names its input file only by its "
                 "name, as the format-1 writer, dpverify 0.1.0, did; the format-2 writer records the file's text, "
                 "inputs.input_text, and verify re-reads every row from it)")
UNBOUND_BATTERY = ("result.rows' accountants and reported numbers (what the accountants returned when the battery "
                   "ran; verify does not run accountants)")


def _source_records(inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records of the recorded input text, read as the producer reads its input file:
    JSON when the recorded name ends in .json (or, not ending in .csv, the text starts with
    '['), else CSV with a header line (names and cells stripped, blank lines skipped). A
    text the producer would not read is refused: no certificate can come from it."""
    text, name = inputs["input_text"], inputs.get("input", "")
    if not isinstance(text, str) or not isinstance(name, str):
        raise MalformedCertificate("inputs.input_text and inputs.input must be strings")
    suffix = PurePath(name).suffix.lower()
    if suffix == ".json" or (suffix != ".csv" and text.lstrip().startswith("[")):
        try:
            data = json_loads(text, parse_float=str, parse_int=str)
        except (ValueError, RecursionError):
            raise CertificateRejected("inputs.input_text is not the JSON list of rows the oracle reads") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise CertificateRejected("inputs.input_text is not a JSON list of row objects")
        return data
    records = []
    try:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        names = [h.strip() for h in next(reader, [])]
        if sorted(names) != sorted(ORACLE_FIELDS):
            raise CertificateRejected(f"inputs.input_text: its header is not the oracle's columns "
                                      f"({', '.join(ORACLE_FIELDS)})")
        for cells in reader:
            if not cells or all(not c.strip() for c in cells) and len(cells) <= 1:
                continue  # a blank line, skipped by the producer too
            if len(cells) != len(names):
                raise CertificateRejected(f"inputs.input_text line {reader.line_num}: {len(cells)} cells for "
                                          f"{len(names)} columns")
            records.append({h: c.strip() for h, c in zip(names, cells)})
    except csv.Error as exc:
        raise CertificateRejected(f"inputs.input_text is not CSV ({exc})") from None
    return records


def _number(text: Any, where: str) -> Fraction:
    try:
        return exact_input({"x": str(text).strip()}, "x")
    except MalformedCertificate:
        raise CertificateRejected(f"{where} = {str(text)[:40]!r} is not a number the oracle reads") from None


def _row_key(i: int, accountant: Any, conf: Mapping[str, Any], reported: Any, where: str) -> tuple:
    """(accountant, mechanism, sigma, q, T, delta, reported) with the numbers as exact rationals
    and a reported +inf as "inf": how a file row and a certificate row are compared."""
    mech = str(conf.get("mechanism", "")).strip()
    rep = str(reported).strip()
    return (str(accountant).strip(), ORACLE_ALIASES.get(mech, mech),
            *(_number(conf.get(k), f"{where} {k}") for k in ("noise_multiplier", "sampling_rate", "steps", "delta")),
            "inf" if rep.lower() in ORACLE_INFINITY else _number(rep, f"{where} reported"))


def check_rows_against_source(inputs: Mapping[str, Any], rows: list) -> None:
    """Refuse (exit 1) unless the recorded input text is the one ``inputs.input_sha256`` names
    and every row of it appears, in order, as the certificate's row: same accountant,
    mechanism, exact numbers and reported number (an unsafe row rewritten as consistent, or
    dropped with ``row_count``, no longer matches the text it claims to come from)."""
    text = inputs["input_text"]
    if not isinstance(inputs.get("input_sha256"), str):
        raise MalformedCertificate("inputs.input_text needs inputs.input_sha256 (the sha256 the user compares "
                                   "with their file)")
    if not isinstance(text, str) or hashlib.sha256(text.encode("utf-8")).hexdigest() != inputs["input_sha256"]:
        raise CertificateRejected("inputs.input_sha256 is not the sha256 of inputs.input_text")
    records = _source_records(inputs)
    if len(records) != len(rows):
        raise CertificateRejected(f"the input text has {len(records)} rows, result.rows {len(rows)}: a row was "
                                  "dropped or added")
    for i, (src, row) in enumerate(zip(records, rows), start=1):
        if not isinstance(row, dict) or not isinstance(row.get("configuration"), dict):
            raise MalformedCertificate(f"row {i} is malformed")
        if set(src) != set(ORACLE_FIELDS):
            raise CertificateRejected(f"inputs.input_text row {i}: not the oracle's columns")
        mine = _row_key(i, src["accountant"], src, src["reported_eps"], f"inputs.input_text row {i}")
        theirs = _row_key(i, row.get("accountant"), row["configuration"],
                          row.get("reported_exact", row.get("reported")) if row.get("reported") != "inf" else "inf",
                          f"result.rows[{i}]")
        if mine != theirs:
            raise CertificateRejected(
                f"row {i} ({str(row.get('accountant'))[:40]}): result.rows states "
                f"{_show(theirs)}, the recorded input file {_show(mine)}")


def _show(key: tuple) -> str:
    acct, mech, s, q, t, d, rep = key
    r = rep if rep == "inf" else f"{float(rep):.10g}"
    return f"{acct!r} {mech} sigma={float(s):.6g} q={float(q):.6g} T={t} delta={float(d):.3g} reported {r}"


def config_query(config: Mapping[str, Any]) -> "tuple[dict[str, Any], dict[str, Any]]":
    """(inputs, result) of the pld.epsilon query that re-derives one configuration's certified
    enclosure: its sigma, q, T and delta under add-remove (the oracle's relation), the recorded
    enclosure as the only hint (the kind records no grid). The writer prices the same query
    (:func:`dpverify.certificate.writer.unverifiable`)."""
    inputs = {k: config[k] for k in ("noise_multiplier", "sampling_rate", "steps", "delta")}
    inputs["neighboring"] = "add-remove"
    return inputs, {"enclosure": config["certified"]}


@register("oracle.rows")
def recheck_oracle(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    configs, rows = result.get("configs"), result.get("rows")
    if not isinstance(configs, list) or not isinstance(rows, list):
        raise MalformedCertificate("oracle certificates need result.configs and result.rows lists")
    if not rows:
        # no writer makes a run without rows (oracle --input refuses an empty file, a battery has rows;
        # format 2 says so in inputs.row_count >= 1, certificate/ranges.py): a verdict on no row is no claim
        raise MalformedCertificate("result.rows is empty: an oracle certificate has at least one row")
    # the rows first (exact, cheap): a row the input text does not state is refused before any PLD work
    if "input_text" in inputs:
        if "battery" in inputs:
            raise MalformedCertificate("inputs.input_text belongs to an --input certificate, not a battery")
        check_rows_against_source(inputs, rows)
        unbound: tuple = ()
    elif "input_sha256" in inputs:
        # a file named by its hash is a claim about that file: without its text the claim cannot be
        # re-read, and a certificate stripped of the text must not pass as one that never had it
        # (adv34 F1; no released writer recorded input_sha256 without input_text)
        raise MalformedCertificate("inputs.input_sha256 needs inputs.input_text (the text of the file it names): "
                                   "an --input certificate of format 2 records both, and verify re-reads every "
                                   "row from the text")
    elif "battery" in inputs:
        if inputs["battery"] not in ORACLE_BATTERIES:
            raise MalformedCertificate(f"inputs.battery={str(inputs['battery'])[:40]!r} is no battery `oracle --battery` "
                                       f"runs (allowed: {', '.join(ORACLE_BATTERIES)})")
        unbound = (UNBOUND_BATTERY,)
    elif "input" not in inputs:
        # neither source: read as an --input certificate, it was "named its input file only by its name"
        raise MalformedCertificate("inputs: an oracle certificate names where its rows come from: inputs.battery "
                                   "(oracle --battery NAME) or inputs.input (oracle --input FILE, with inputs.input_text "
                                   "and inputs.input_sha256 in format 2); this one names neither")
    elif "row_count" in inputs:
        # only the format-2 writer records row_count, and it records the file's text beside it: a certificate
        # stripped of both was read as a format-1 one, its rows bound to nothing (adv48b)
        raise MalformedCertificate("inputs.input_text and inputs.input_sha256: missing. This --input certificate records "
                                   "inputs.row_count, which only the format-2 writer writes, and that writer records the "
                                   "input file's text and its sha256 beside it (verify re-reads every row from the text); "
                                   "without them no row is bound to the file")
    else:
        unbound = (UNBOUND_INPUT,)
    with mpmath.workdps(_DPS):
        # tolerance >= 0 (certificate.ranges): a negative one made an exact row "loose" (adv42 F1)
        tol = exact_input(inputs, "tolerance")
        certified: dict[tuple, tuple[Fraction, "Fraction | None"]] = {}
        independent: dict[tuple, tuple[Fraction, "Fraction | None"]] = {}
        for c in configs:
            if not isinstance(c, dict) or any(k not in c for k in _FIELDS) or "certified" not in c:
                raise MalformedCertificate("a configuration lacks a field")
            if c["mechanism"] not in ORACLE_MECHANISMS:
                raise MalformedCertificate(f"configuration mechanism {str(c['mechanism'])[:40]!r} is not one "
                                           f"the oracle certifies (allowed: {', '.join(ORACLE_MECHANISMS)})")
            if c["mechanism"] == "gaussian" and exact_input(c, "sampling_rate") != 1:
                # the plain Gaussian is the subsampled one at rate 1, and only there
                raise MalformedCertificate("a configuration of mechanism 'gaussian' needs sampling_rate 1 "
                                          f"(got {str(c['sampling_rate'])[:40]})")
            # the width first: it costs nothing, and a vacuous enclosure is refused before any PLD work
            _check_config_width(c["certified"], inputs.get("digits"),
                                f"configuration sigma={str(c['noise_multiplier'])[:20]}, q={str(c['sampling_rate'])[:20]}, "
                                f"T={str(c['steps'])[:20]}, delta={str(c['delta'])[:20]}")
            re = recheck_epsilon(*config_query(c))
            check_enclosure(c["certified"], re, None)
            key = tuple(str(c[k]) for k in _FIELDS)
            lo_x = _exact_bound(c["certified"]["lo"], "certified.lo")
            if lo_x is None:
                raise CertificateRejected("certified.lo = inf is not an enclosure's lower end")
            certified[key] = (lo_x, _exact_bound(c["certified"]["hi"], "certified.hi"))
            a, b = re.enclosure()
            independent[key] = (mpf_to_fraction(a), None if mpmath.isinf(b) else mpf_to_fraction(b))
        if "row_count" in inputs and inputs["row_count"] != len(rows):
            raise CertificateRejected(
                f"inputs.row_count = {inputs['row_count']} but result.rows has {len(rows)} rows: a row was dropped or added"
            )
        any_unsafe = False
        for i, r in enumerate(rows, start=1):
            if not isinstance(r, dict) or "configuration" not in r or "verdict" not in r:
                raise MalformedCertificate(f"row {i} is malformed")
            key = tuple(str(r["configuration"].get(k)) for k in _FIELDS)
            if key not in certified:
                raise CertificateRejected(f"row {i} names a configuration without a certified enclosure")
            lo, hi = certified[key]
            if not isinstance(r.get("certified"), dict) or not {"lo", "hi"} <= set(r["certified"]):
                raise MalformedCertificate(f"row {i}: certified must be an object with lo and hi")
            if (_exact_bound(r["certified"]["lo"], "lo"), _exact_bound(r["certified"]["hi"], "hi")) != (lo, hi):
                raise CertificateRejected(f"row {i}: its certified bounds differ from its configuration's")
            if r["verdict"] == "crashed":
                if str(r.get("reported", "")).strip() or r.get("reported_exact"):
                    raise CertificateRejected(f"row {i}: labelled 'crashed' but it reports a number")
                continue
            if r.get("reported") == "inf":
                # "returned-inf" since an infinite epsilon got its own verdict (it is no number to compare);
                # "loose" in earlier certificates
                if r["verdict"] not in ("returned-inf", "loose"):
                    raise CertificateRejected(f"row {i}: an infinite epsilon is 'returned-inf', not {r['verdict']!r}")
                continue
            reported = exact_input({"x": r.get("reported_exact", r.get("reported"))}, "x")
            if "reported_exact" in r:
                # reported_exact is the exact value of the double whose repr is the shown number:
                # the two must name the same double, or the row shows one number and is judged
                # on another (adv34 F3)
                shown = r.get("reported")
                try:
                    same = isinstance(shown, str) and len(shown) <= 40 and Fraction(float(shown)) == reported
                except (ValueError, OverflowError):
                    same = False
                if not same:
                    raise CertificateRejected(f"row {i}: reported {str(shown)[:40]} is not the double whose exact "
                                              f"value reported_exact records")
            again = _check_row(i, r, reported, (lo, hi), independent[key], tol, inputs.get("digits"))
            _check_excess(i, r.get("excess"), reported, (lo, hi), (r["certified"]["lo"], r["certified"]["hi"]), again)
            any_unsafe |= again == "unsafe"
        return Recheck(value=None, err=mpf(0), dps=_DPS, verdict="fails" if any_unsafe else "holds", verdict_of_record=True,
                       proved=frozenset({"configs", "rows"}), unconfirmed=unbound)

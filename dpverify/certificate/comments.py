"""The writer's comments on a result: ``result.reason`` of a verdict, ``result.note``,
``tail.reason`` and the other free-text fields of the kind table's
``comments`` column (:mod:`dpverify.recheck.kinds`). Shared by the writers, which word a
verdict's reason here (:func:`claim_reason`, :func:`bracket_reason`, :func:`registry_reason`),
and by ``verify`` (:func:`check_comments`).

Why bound. A comment is what a reader sees beside the numbers; before this module
``result.reason = "this run is (0.01, 1e-9)-DP (certified)"`` on a certificate whose re-proved
epsilon is 0.798 was accepted, and the ``verify`` line did not name it (adv36 F3).

The rule. ``verify`` reads a comment only after the certificate is otherwise confirmed, so the
recorded enclosure and verdict are re-proved by then:

* a reason in one of the writers' forms (:data:`REASONS`) is re-derived: its verdict word must be
  the recorded verdict, the inputs it names (claimed eps, delta) the certificate's inputs by
  exact value, every bound it calls certified must follow from the recorded enclosure (a lower
  end at most the recorded lower end, an upper end at least the recorded upper end; the
  writers print the same ball rounded outward to fewer digits) and every comparison it states
  must hold exactly between its own numbers. Anything false is refused (exit 1);
* a calibration's ``monotonicity`` and ``pairs`` (the writer's arguments, which no number
  re-proves) must be the text its writer states for the template and free parameter
  (:func:`pinned`, the tables in :mod:`.prose` the writer reads): any other text is refused
  (exit 1), as a rewritten ``claim.statement`` is;
* a comment a kind's re-checker re-derives itself is not passed here (``gdp.certify``'s
  ``tail.reason`` in one of its writer's forms: recheck/gdpt.py ``_tail_reason_bound``);
* any other comment text (a reason the writers word otherwise, a note, a tail reason in no
  writer's form) is named on the
  ``verify`` line as the writer's text, not re-proved and not part of what is confirmed
  (``--quiet`` stays silent on an accept).

Standard library only (``dpverify.recheck`` imports it; no arb).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional, Union

from ..errors import CertificateRejected
from ..limits import NARROW_FACTOR
from .prose import CALIBRATE_MONOTONICITY, CALIBRATE_PAIRS, _value

__all__ = ["REASONS", "claim_reason", "bracket_reason", "registry_reason", "check_comments", "pinned", "COMMENT_FIELDS",
           "NARROW_NOTE_KINDS", "narrow_note", "narrowly_missed"]

Number = Union[Fraction, float]  # float only for +-inf

#: result paths that hold the writer's free text (the kind table's ``comments``, in one place)
COMMENT_FIELDS = ("reason", "note", "tail.reason", "monotonicity", "pairs", "notes")

_WORD = {"holds": "satisfies", "fails": "contradicts", "undecided": "straddles"}


def registry_reason(outcome: str, short: str) -> str:
    """A registry claim's reason: ``short`` is the certified value ``[lo, hi]`` rounded outward."""
    return f"the certified value {short} {_WORD[outcome]} the printed claim"


def claim_reason(outcome: str, eps: Any, bound: str, delta: Any) -> str:
    """A (claimed_eps, delta) claim decided on delta(claimed_eps): ``bound`` is the certified
    upper end (holds) or lower end (fails) of that delta."""
    op = "<= {} <=" if outcome == "holds" else ">= {} >"
    return f"certified delta({eps}) {op.format(bound)} {delta}"


#: the bracket reasons' clauses after the comparison, per sampling scheme's writer
BRACKET_TAILS = {"holds": ("", " (group privacy)"),
                 "fails": (": a concrete dataset pair violates the claim", " (zero-contribution replacement)")}


def bracket_reason(outcome: str, lo: str, hi: str, claimed_eps: Any, scheme: int) -> str:
    """A claim "epsilon(delta) <= claimed_eps" decided on an epsilon bracket [lo, hi]; ``scheme``
    0 for shuffled and balls-in-bins batches, 1 for group privacy (replace-one)."""
    if outcome == "holds":
        return f"certified upper end {hi} <= claimed {claimed_eps}" + BRACKET_TAILS["holds"][scheme]
    if outcome == "fails":
        return f"certified lower end {lo} > claimed {claimed_eps}" + BRACKET_TAILS["fails"][scheme]
    return f"claimed {claimed_eps} lies in the certified bracket [{lo}, {hi}]"


_N = r"-?inf|[0-9.eE+/-]{1,6300}"


def _opt(*alts: str) -> str:
    return "(?:" + "|".join(re.escape(a) for a in alts) + ")"


#: the kinds each claim writer words its reason for: a delta claim decided on delta(claimed_eps)
#: (pld.claim, events.claim), an epsilon bracket with scheme 0's clauses (shuffled and
#: balls-in-bins batches, also inside event trees) or scheme 1's (group privacy, replace-one)
_DELTA_KINDS = frozenset({"pld.claim", "events.claim"})
_BRACKET_KINDS = (frozenset({"shuffle.claim", "bins.claim", "events.claim"}),
                  frozenset({"replace.claim", "events.claim"}))


_DELTA, _EPSILON = "delta(", "epsilon("


def _bracket_forms() -> list:
    out = []
    for scheme, kinds in enumerate(_BRACKET_KINDS):
        out.append((rf"certified upper end (?P<hi>{_N}) <= claimed (?P<eps>{_N})"
                    + re.escape(BRACKET_TAILS["holds"][scheme]), "holds", kinds, _EPSILON, (("hi", "<=", "eps"),)))
        out.append((rf"certified lower end (?P<lo>{_N}) > claimed (?P<eps>{_N})"
                    + re.escape(BRACKET_TAILS["fails"][scheme]), "fails", kinds, _EPSILON, (("lo", ">", "eps"),)))
    return out


#: (form, the verdict it states, kinds it is written for or None for any, the quantity its
#: certified ends belong to or None for any, the checks on its numbers). Groups: lo / hi (a
#: certified end), eps (inputs.claimed_eps), delta (inputs.delta). Checks name comparisons the
#: text states: ("hi", "<=", "delta") is hi <= delta. A form of another kind is no form there
#: (named, not confirmed), and a form whose ends belong to another quantity than
#: ``result.quantity`` (a delta form's ends are an enclosure of delta(...), a bracket form's of
#: epsilon(...)) is no form there either: adv38 C1, "certified delta(1) >= 2 > 1e-5" on shuffle's
#: epsilon bracket passed as the claim's reason.
REASONS: tuple[tuple[str, str, Optional[frozenset[str]], Optional[str], tuple[tuple[str, str, str], ...]], ...] = (
    *[(rf"the certified value \[(?P<lo>{_N}), (?P<hi>{_N})\] {word} the printed claim", outcome, None, None, ())
      for outcome, word in _WORD.items()],
    (rf"certified delta\((?P<eps>{_N})\) <= (?P<hi>{_N}) <= (?P<delta>{_N})", "holds", _DELTA_KINDS, _DELTA,
     (("hi", "<=", "delta"),)),
    (rf"certified delta\((?P<eps>{_N})\) >= (?P<lo>{_N}) > (?P<delta>{_N})", "fails", _DELTA_KINDS, _DELTA,
     (("lo", ">", "delta"),)),
    *_bracket_forms(),
    (rf"claimed (?P<eps>{_N}) lies in the certified bracket \[(?P<lo>{_N}), (?P<hi>{_N})\]",
     "undecided", _BRACKET_KINDS[0] | _BRACKET_KINDS[1], _EPSILON, (("lo", "<=", "eps"), ("eps", "<", "hi"))),
    # GDPT Thm 4.5's slope bound (gdp/mu_gdp.py) and the finite identities' exact residual
    (re.escape("0 <= slope <= sqrt(2 pi)/2"), "holds", frozenset({"gdp.thm4.5"}), None, ()),
    (re.escape("slope outside [0, sqrt(2 pi)/2]"), "fails", frozenset({"gdp.thm4.5"}), None, ()),
    (re.escape("exact residual 0"), "holds", frozenset({"finite.identity"}), None, ()),
)


_OPS: dict[str, Callable[[Number, Number], bool]] = {
    "<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _number(text: Any) -> Optional[Number]:
    """An exact number of a reason: "inf" / "-inf" or what :func:`.prose._value` reads (a delta of
    1e-1700 is printed 1/10^1700 by the claim writers)."""
    if text in ("inf", "-inf"):
        return math.inf if text == "inf" else -math.inf
    return _value(text) if isinstance(text, str) else None


def _field(result: Mapping[str, Any], path: str) -> Any:
    cur: Any = result
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _check_reason(kind: str, text: str, inputs: Mapping[str, Any], result: Mapping[str, Any],
                  verdict: Any) -> bool:
    """True when ``text`` is a writers' form whose every statement follows from the re-proved
    enclosure and verdict; CertificateRejected when it is a form and says something else;
    False when it is no form (the caller names it)."""
    enc = result.get("enclosure")
    rec = (_number(enc.get("lo")), _number(enc.get("hi"))) if isinstance(enc, Mapping) else (None, None)
    quantity = result.get("quantity")
    for form, outcome, only, of, checks in REASONS:
        m = re.fullmatch(form, text)
        if m is None or (only is not None and kind not in only):
            continue
        if of is not None and not (isinstance(quantity, str) and quantity.startswith(of)):
            continue  # its ends would be read against another quantity's enclosure: named
        if verdict != outcome:
            raise CertificateRejected(f"result.reason={text[:80]!r} states the verdict {outcome!r}; the re-proved "
                                      f"verdict is {verdict!r}")
        got = {k: _number(v) for k, v in m.groupdict().items()}
        want = {"eps": _number(inputs.get("claimed_eps")), "delta": _number(inputs.get("delta"))}
        if any(v is None for v in got.values()) or any(got[k] is not None and want[k] is None
                                                         for k in want if k in got):
            return False  # a number this reader cannot read exactly: named, not confirmed
        for k in ("eps", "delta"):
            if k in got and got[k] != want[k]:
                raise CertificateRejected(f"result.reason={text[:80]!r} names {k} = {m.group(k)}, not the "
                                          f"certificate's inputs ({inputs.get('claimed_eps' if k == 'eps' else k)})")
        for end, i, op in (("lo", 0, "<="), ("hi", 1, ">=")):  # a certified end follows from the recorded one
            if end in got:
                if rec[i] is None:
                    return False
                if not _OPS[op](got[end], rec[i]):  # type: ignore[arg-type]
                    raise CertificateRejected(
                        f"result.reason={text[:80]!r} calls {m.group(end)} a certified {'lower' if i == 0 else 'upper'} "
                        f"end; the re-proved enclosure is [{_field(result, 'enclosure.lo')}, "
                        f"{_field(result, 'enclosure.hi')}]")
        for a, op, b in checks:
            if not _OPS[op](got[a], got[b]):  # type: ignore[arg-type]
                raise CertificateRejected(f"result.reason={text[:80]!r} states {m.group(a)} {op} {m.group(b)}, "
                                          "which is false")
        return True
    return False


def pinned(kind: str, path: str, inputs: Mapping[str, Any]) -> tuple[bool, Optional[str]]:
    """(True, the writer's text) for a comment whose text follows from the kind and the inputs
    (None: the writer writes none), else (False, None). A calibration's ``monotonicity`` and
    ``pairs`` are its writer's arguments for the template and free parameter
    (:data:`.prose.CALIBRATE_MONOTONICITY`, :data:`.prose.CALIBRATE_PAIRS`)."""
    if kind == "calibrate.bracket" and path == "monotonicity":
        table = CALIBRATE_MONOTONICITY.get(str(inputs.get("template")), {})
        return True, table.get(str(inputs.get("parameter")))
    if kind == "calibrate.bracket" and path == "pairs":
        return True, CALIBRATE_PAIRS.get(str(inputs.get("template")))
    return False, None


def check_comments(kind: str, comments: tuple[str, ...], inputs: Mapping[str, Any], result: Mapping[str, Any],
                   verdict: Any) -> list[str]:
    """Re-derive ``result.reason`` where it is in a writers' form (refusing a false one, exit 1),
    hold a pinned comment (:func:`pinned`) to its writer's text (exit 1 otherwise: an argument
    the writer does not make, "eps is nonincreasing in the steps", is not confirmed by numbers
    that are true) and return the comment fields present that nothing binds, for the ``verify``
    line (module docstring). ``comments``: the kind's comment paths; ``verdict``: the re-proved
    verdict (None for a certificate without one)."""
    named = []
    for path in comments:
        value = _field(result, path)
        if value is None or value == "" or value == []:
            continue
        is_pinned, text = pinned(kind, path, inputs)
        if is_pinned:
            if value != text:
                raise CertificateRejected(f"result.{path}={str(value)[:80]!r} is not the argument a {kind} certificate "
                                          f"with these inputs states" + (f" ({text[:80]!r}...)" if text else
                                                                         " (its writer writes none)"))
            continue
        if path == "reason" and isinstance(value, str) and _check_reason(kind, value, inputs, result, verdict):
            continue
        named.append(f"result.{path}")
    return [f"{', '.join(named)} (the writer's text)"] if named else []


#: the kinds whose writer may return an enclosure that narrowly missed its digits (a static cap
#: stopped the PLD refinement within NARROW_FACTOR of the width asked: pld/refine.py), saying so in
#: ``result.note`` by :func:`narrow_note`
NARROW_NOTE_KINDS = frozenset({"pld.epsilon", "pld.delta", "events.epsilon", "events.delta"})
_NARROW = re.compile(r"the requested relative width (\S+) was not reached \((.+)\); "
                     r"this certified enclosure has relative width (\S+)", re.S)


def narrow_note(asked: float, why: str, got: float) -> str:
    """The note of an enclosure of relative width ``got`` returned for ``asked`` (``why``: the cap)."""
    return (f"the requested relative width {asked:g} was not reached ({why}); "
            f"this certified enclosure has relative width {got:.3g}")


def narrowly_missed(quantity: str, note: Any, digits: int) -> bool:
    """Whether ``note`` is :func:`narrow_note` for the width 10^-digits on a kind whose writer states
    it, with a width within NARROW_FACTOR of it: only then may ``verify`` take the enclosure up to
    NARROW_FACTOR wider than its digits (adv44 N1: any note, even an empty one, on any kind had
    that allowance). The width itself is still measured on the recorded ends."""
    if quantity not in NARROW_NOTE_KINDS or not isinstance(note, str) or len(note) > 2000:
        return False
    m = _NARROW.fullmatch(note)
    if m is None or m.group(1) != f"{10.0 ** -digits:g}":
        return False
    try:
        got = float(m.group(3))
    except ValueError:
        return False
    return math.isfinite(got) and 0 <= got <= NARROW_FACTOR * 10.0 ** -digits

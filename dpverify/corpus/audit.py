"""Audit a corpus of published DP-SGD claims: a verdict with reasons per claim.

For each claim the certified PLD accountant (:func:`dpverify.pld.dpsgd.epsilon`
/ :func:`~dpverify.pld.dpsgd.delta`, AFA Thm 10/11) encloses the claimed
quantity of the stated configuration: epsilon(delta) for a ``claimed_eps``
claim, delta(eps) for a ``claimed_delta`` claim; then

* ``holds``: certified upper end <= claimed value (the claim is a valid
  guarantee: eps(delta) <= E implies delta(E) <= delta, as delta(.) is
  non-increasing; delta(eps) <= D is the guarantee itself);
* ``fails``: certified lower end > claimed value (the stated parameters do not
  give that guarantee);
* ``undecided``: the enclosure straddles the claim even after refining.

A record with ``other_version`` (the same printed number elsewhere with other
parameters, e.g. an earlier commit) is certified under both parameter sets and
the reason says which one the number fits: the verdict is about the stated
parameters only.

A printed interval "(a, b)" is read as the guarantee eps <= b; whether the
interval also contains the certified value is reported separately.
Identical configurations (mechanism, sigma, q, T, delta, relation, exactly)
are computed once, and so are the configurations of the sensitivity check
(the other plausible step counts; the add and remove directions of an
add-remove claim come out of the same computation).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional

from flint import arb

from .. import _validate as V
from ..ball import ball, exact_str, working_precision
from ..errors import InvalidParameter, PrecisionExhausted
from ..limits import DEFAULT_TIME_BUDGET_SECONDS
from ..pld import dpsgd as S
from ..verdict import Enclosure
from .claims import CorpusClaim, describe

__all__ = ["AuditRow", "audit", "FIRST_DIGITS", "REFINE_DIGITS"]

#: relative width of the first computation (enough for most verdicts) and of the
#: one refinement done for a configuration whose verdict it leaves undecided
FIRST_DIGITS = 3
REFINE_DIGITS = 6


@dataclass(frozen=True)
class AuditRow:
    claim: CorpusClaim
    verdict: str
    enclosure: Enclosure
    tightness: Optional[float]  # claimed / certified upper end
    reason: str
    sensitivity: tuple[str, ...]
    interval_contains: Optional[str]  # for printed intervals: yes / no / undecided

    other: Optional[dict[str, Any]] = None  # the other_version's certified value, when given
    # the clock stopped a computation of this row (a refinement, a variant): what the row
    # says then follows the machine's load, so the CLI answers exit 3 (a stop, not an answer)
    stopped_by_clock: bool = False

    def to_json(self) -> dict[str, Any]:
        c = self.claim
        return {
            "id": c.id,
            "record": c.number,
            "verdict": self.verdict,
            "target": c.target,
            "claimed": c.claimed_text,
            "certified": self.enclosure.to_json(),
            "certified_short": self.enclosure.short(4),
            "tightness": None if self.tightness is None else f"{self.tightness:.4g}",
            "reason": self.reason,
            "sensitivity": list(self.sensitivity),
            "interval_contains_certified": self.interval_contains,
            "quantity": c.quantity,
            "inputs": _inputs(c),
            **({"other_version": self.other} if self.other is not None else {}),
            **({"stopped_by_clock": True} if self.stopped_by_clock else {}),
            "neighboring_defaulted": c.neighboring_defaulted,
            "accountant": c.record["accountant"],
            "source": c.record["source"],
            "location": c.record["location"],
            "quote": c.record["quote"],
        }


def _inputs(c: CorpusClaim) -> dict[str, Any]:
    return {"noise_multiplier": exact_str(c.noise_multiplier), "sampling_rate": exact_str(c.sampling_rate),
            "steps": c.steps, ("delta" if c.target == "eps" else "eps"): exact_str(c.given),
            "neighboring": c.neighboring}


def _cmp(enc_lo: arb, enc_hi: arb, claimed: Fraction) -> str:
    """holds / fails / undecided of "eps <= claimed" over [lo, hi] (exact endpoints)."""
    with working_precision(256):
        c = ball(claimed)
        if bool(enc_hi <= c):
            return "holds"
        if bool(enc_lo > c):
            return "fails"
    return "undecided"


@dataclass(frozen=True)
class _Bracket:
    """A certified bracket that is not a PLD enclosure (no per-direction split)."""

    enclosure: Enclosure
    directions: dict


def _replace_one(c: CorpusClaim, steps: int, time_budget: float) -> _Bracket:
    """Poisson sampling under replace-one: the group-privacy / zero-gradient bracket
    (:mod:`dpverify.sampling.replace`) of epsilon(delta) or delta(eps)."""
    from ..sampling.replace import poisson_replace_one_delta, poisson_replace_one_epsilon

    bracket = poisson_replace_one_epsilon if c.target == "eps" else poisson_replace_one_delta
    b = bracket([S.GaussianSteps.of(c.noise_multiplier, c.sampling_rate, steps)], c.given, time_budget=time_budget)
    with working_precision(256):
        return _Bracket(Enclosure.from_bounds(ball(Fraction(b["lo"])), ball(Fraction(b["hi"])), 3, 256), {})


def _unanswered(c: CorpusClaim, why: str) -> "AuditRow":
    """A record no certified route covers: an undecided row with the reason (the rest of the
    file is still audited; a malformed record is refused earlier, when the file is read)."""
    with working_precision(64):
        enc = Enclosure(arb(0), arb("inf"), 3, 0)
    return AuditRow(c, "undecided", enc, None, f"no certified answer for this record: {why} ({describe(c)})",
                    (), None, None)


class _Engine:
    """Certified eps(delta) or delta(eps) per configuration, each computed once."""

    def __init__(self, tick: Callable[[], None], time_budget: float) -> None:
        self.time_budget = time_budget  # per computation; it can stop one, never shape a completed one
        self.cache: dict[tuple, S.PldAnswer] = {}
        self.tick = tick
        self.computations = 0
        self.clock_stops = 0  # computations the time budget stopped (see AuditRow.stopped_by_clock)

    def stopped(self, exc: Exception) -> None:
        """Count a run the clock stopped (PrecisionExhausted with ``timed``), not a static cap."""
        if getattr(exc, "timed", False):
            self.clock_stops += 1

    def answer(self, c: CorpusClaim, steps: int, digits: int, rel: Optional[str] = None) -> S.PldAnswer:
        key = (c.noise_multiplier, c.sampling_rate, steps, c.target, c.given, rel or c.neighboring, digits)
        if key not in self.cache:
            better = [a for k, a in self.cache.items() if k[:6] == key[:6] and k[6] >= digits]
            if better:
                return better[0]
            self.computations += 1
            if (rel or c.neighboring) == "replace-one" and c.sampling_rate != 1:
                self.cache[key] = _replace_one(c, steps, self.time_budget)
            elif c.target == "eps":
                self.cache[key] = S.dpsgd_epsilon(c.noise_multiplier, c.sampling_rate, steps, c.given,
                                                  neighboring=rel or c.neighboring, digits=digits,
                                                  time_budget=self.time_budget)
            else:
                # refined to the width asked, not stopped once the verdict is decided: a tiny delta's
                # query starts on a coarse grid (an unconfirmed plan), whose decided enclosure can
                # span decades ([9e-40, 7e-27] for Koskela's 1.006e-34), and the report states the
                # number, not only the verdict (the width costs about 5 s on that row)
                self.cache[key] = S.delta([S.GaussianSteps.of(c.noise_multiplier, c.sampling_rate, steps)],
                                          c.given, neighboring=rel or c.neighboring, digits=digits,
                                          time_budget=self.time_budget)
            self.tick()
        return self.cache[key]

    def verdict(self, c: CorpusClaim, steps: int, rel: Optional[str] = None, *,
                refine: bool = True) -> tuple[str, Any]:
        ans = self.answer(c, steps, FIRST_DIGITS, rel)
        v = _cmp(ans.enclosure.lo, ans.enclosure.hi, c.claimed)
        if v == "undecided" and refine:
            try:
                ans = self.answer(c, steps, REFINE_DIGITS, rel)
            except PrecisionExhausted as exc:
                self.stopped(exc)
                # the refinement was stopped (time or memory): every enclosure it reached
                # is certified, so the best one decides the claim when it can; else the
                # completed first answer stands, undecided (never a lost row)
                best = getattr(exc, "best_enclosure", None)
                if best is not None and best[1] is not None:
                    with working_precision(256):
                        enc = Enclosure.from_bounds(ball(best[0]), ball(best[1]), REFINE_DIGITS, 256)
                    decided = _cmp(enc.lo, enc.hi, c.claimed)
                    if decided != "undecided":
                        return decided, _Bracket(enc, {})
                return v, ans
            v = _cmp(ans.enclosure.lo, ans.enclosure.hi, c.claimed)
        return v, ans


def _direction_verdicts(ans: S.PldAnswer, claimed: Fraction) -> dict[str, str]:
    out = {}
    with working_precision(256):
        for name, (lo, hi) in ans.directions.items():
            a = ball(lo if lo is not None else Fraction(0))
            b = ball(hi) if hi is not None else arb("inf")
            out[name] = _cmp(a.lower(), b.upper(), claimed)
    return out


def _tightness(claimed: Fraction, enc: Enclosure) -> Optional[float]:
    """claimed / certified upper end (a float: it is only displayed)."""
    with working_precision(128):
        hi = float(enc.hi.mid()) if enc.hi.is_finite() else None
    return float(claimed) / hi if hi else None


def _loose(tight: Optional[float]) -> str:
    if tight is None or tight <= 1.01:
        return ""
    return f", loose by {100 * (tight - 1):.0f} %" if tight < 2 else f", loose by a factor {tight:.3g}"


def _other(engine: _Engine, c: CorpusClaim, tight: Optional[float]) -> tuple[str, dict[str, Any]]:
    """Certify the claim under the other version's parameters and say which
    parameter set the printed number fits."""
    o = c.other
    assert o is not None
    try:
        # the first answer only: another version's parameters are context, not the claim, and
        # their refinement (Koskela's 10^4 steps to six digits: 100 CPU s) could run past its
        # time budget under load, so the row would then differ from run to run
        v, ans = engine.verdict(o, o.steps, refine=False)
    except (InvalidParameter, PrecisionExhausted) as exc:
        engine.stopped(exc)
        return (f"the same {c.claimed_text} is printed with {c.other_changes}: no certified answer for "
                f"those parameters ({exc})"), None
    enc = ans.enclosure
    t2 = _tightness(o.claimed, enc)
    name = "eps" if c.target == "eps" else f"delta(eps={exact_str(c.given)})"
    inside = o.claimed_lo is None and bool(enc.contains(o.claimed))
    where = c.record["other_version"]["location"]
    text = (f"the same {c.claimed_text} is printed with {c.other_changes} ({o.derivation}) at {where}: "
            f"certified {name} there {enc.short(4)}")
    if inside:
        text += ", which contains the printed number: it is the value for those parameters, not for the stated ones"
    elif t2 is not None and tight is not None and abs(t2 - 1) < abs(tight - 1):
        text += (f", claimed / certified {t2:.3g} there against {tight:.3g} here: the number fits those "
                 "parameters, not the stated ones")
    else:
        text += f", claimed / certified {t2:.3g} there" if t2 is not None else ""
    return text, {"location": where, "changes": c.other_changes, "inputs": _inputs(o), "verdict": v,
                  "certified": enc.to_json(), "certified_short": enc.short(4),
                  "tightness": None if t2 is None else f"{t2:.4g}", "contains_claimed": inside}


def _one(engine: _Engine, c: CorpusClaim) -> AuditRow:
    before = engine.clock_stops
    row = _row(engine, c)
    if engine.clock_stops == before:
        return row
    return replace(row, stopped_by_clock=True,
                   reason=row.reason + "; a computation of this row was stopped by its time budget, so the row "
                                       "follows the machine's load (every enclosure shown is still certified)")


def _row(engine: _Engine, c: CorpusClaim) -> AuditRow:
    try:
        v, ans = engine.verdict(c, c.steps)
    except (InvalidParameter, PrecisionExhausted) as exc:
        engine.stopped(exc)
        return _unanswered(c, str(exc))
    enc = ans.enclosure
    tight = _tightness(c.claimed, enc)
    claimed_txt = c.claimed_text
    cert_txt = enc.short(4)
    name = "eps" if c.target == "eps" else f"delta(eps={exact_str(c.given)})"
    head = {
        "holds": f"certified {name} {cert_txt} <= claimed {claimed_txt}: a valid guarantee",
        "fails": f"certified {name} {cert_txt} > claimed {claimed_txt}: the stated parameters do not give it",
        "undecided": f"certified {name} {cert_txt} straddles the claimed {claimed_txt}",
    }[v]
    if v == "holds":
        head += _loose(tight)
    reason = f"{head} ({c.derivation}; {describe(c)})"
    sens = []
    for rule, t in c.alternatives:
        try:
            v2, a2 = engine.verdict(c, t)
        except (InvalidParameter, PrecisionExhausted) as exc:
            engine.stopped(exc)
            continue  # a variant without a certified answer flips nothing that is known
        if v2 != v:
            sens.append(f"flips to {v2} with steps by {rule} (T = {t}: {name} {a2.enclosure.short(4)})")
    if c.neighboring == "add-remove":
        for dname, v2 in _direction_verdicts(ans, c.claimed).items():
            if v2 != v and v2 != "undecided":
                sens.append(f"flips to {v2} under the {dname} relation alone")
    contains = None
    if c.claimed_lo is not None:
        inside = _cmp(enc.lo, enc.hi, c.claimed)
        below = _cmp(enc.lo, enc.hi, c.claimed_lo)  # "holds" here means value <= lo: below the interval
        contains = "no" if inside == "fails" or below == "holds" else (
            "yes" if inside == "holds" and below == "fails" else "undecided")
        reason += f"; the printed interval {claimed_txt} " + {
            "yes": "contains the certified value", "no": "misses the certified value",
            "undecided": "may or may not contain the certified value"}[contains]
    other = None
    if c.other is not None:
        text, other = _other(engine, c, tight)
        reason += "; " + text
    impl = c.record.get("implementation_sampling")
    if impl in ("shuffle", "shuffle-persistent", "balls-in-bins"):
        try:
            v, enc, text = _as_run(c, impl, v)
        except (InvalidParameter, PrecisionExhausted) as exc:
            v, text = "undecided", f"the implementation drew {impl} batches and no certified answer covers it ({exc})"
        reason += "; " + text
    return AuditRow(c, v, enc, tight, reason, tuple(sens), contains, other)


def _as_run(c: CorpusClaim, impl: str, poisson_verdict: str) -> tuple[str, Enclosure, str]:
    """The verdict for what was run when the implementation shuffled or drew balls-in-bins batches:
    decided on the certified shuffled bracket (lower end from a concrete dataset pair, so a claim
    below it fails) or the balls-in-bins enclosure (E epochs each re-allocated independently:
    the one-epoch pair composed by AFA Thm 10)."""
    from ..sampling import shuffle as SH

    rec = c.record
    if c.target != "eps" or not all(k in rec for k in ("dataset_size", "batch_size", "epochs")):
        raise InvalidParameter("implementation_sampling", f"implementation_sampling={impl!r} needs an eps claim "
                                                          "with dataset_size, batch_size and epochs")
    if impl == "balls-in-bins":  # the pair of Chua et al. 2025 per epoch (dpverify.sampling.balls), AFA Thm 10
        from ..sampling import bins as BB

        b = BB.enclose_eps(BB.run(c.noise_multiplier, rec["dataset_size"], rec["batch_size"], rec["epochs"],
                                  c.neighboring), c.given)
        how = "both ends from the balls-and-bins dominating pair (Chua et al. 2025)" + (
            "" if str(rec["epochs"]) == "1" else ", composed over independently re-allocated epochs (AFA Thm 10)")
    else:
        r = SH.run(c.noise_multiplier, rec["dataset_size"], rec["batch_size"], rec["epochs"], impl, c.neighboring)
        b = SH.bracket_eps(r, c.given)
        how = "lower end: a concrete dataset pair; upper end: no amplification"
    lo, hi = Fraction(b["lo"]), Fraction(b["hi"])
    v = "holds" if hi <= c.claimed else "fails" if lo > c.claimed else "undecided"
    with working_precision(256):
        enc = Enclosure.from_bounds(ball(lo), ball(hi), 3, 256)
    text = (f"the implementation drew {impl} batches (the number was computed for Poisson sampling, "
            f"{poisson_verdict} there): certified eps for what was run in [{b['lo']}, {b['hi']}] ({how}), so for "
            f"what was run the claim: {v}")
    return v, enc, text


def audit(claims: Iterable[CorpusClaim], progress: bool = False, *,
          time_budget: float = DEFAULT_TIME_BUDGET_SECONDS) -> tuple[list[AuditRow], dict[str, Any]]:
    """Audit every claim; returns the rows and run statistics (seconds,
    claims, distinct configurations computed). ``time_budget`` bounds each certified
    computation; a row one of them was stopped in says so (``stopped_by_clock``)."""
    time_budget = V.seconds("time_budget", time_budget)
    claims = list(claims)
    t0 = time.monotonic()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(claims), unit="claim", desc="audit corpus", leave=False)
    engine = _Engine(lambda: None, time_budget)
    rows = []
    for c in claims:
        rows.append(_one(engine, c))
        if bar is not None:
            bar.set_postfix_str(c.id[:30])
            bar.update(1)
    if bar is not None:
        bar.close()
    stats = {"claims": len(claims), "configurations_computed": engine.computations,
             "distinct_claim_configurations": len({c.config for c in claims}),
             "seconds": round(time.monotonic() - t0, 1)}
    return rows, stats

"""The kind table: for every certificate kind, how ``verify`` re-proves each end.

One row per quantity kind and claim kind the writer can emit (the names of
:mod:`dpverify.theorems.quantities` and the CLI writers; every key of
:data:`~dpverify.recheck.verify.RECHECKERS` has a row, a test reads both).
A row states

* ``lower`` / ``upper``: the route that re-proves the lower end and the upper
  end of the recorded enclosure, or (``verdict``) the route that re-decides a
  recorded verdict. Each is a :class:`Route` whose ``status`` is ``"proved"``
  (an independent bound that the acceptance rule compares with the recorded
  end), ``"exact"`` (decided in exact rational arithmetic), or
  ``"consistency"`` (only checked to agree with a recorded hint, which proves
  nothing). The acceptance rule (:func:`require_proving_routes`) refuses to
  accept a kind whose needed end is not ``proved`` or ``exact``: such a
  certificate answers exit 3, never 0.
* ``certified``: result fields besides ``enclosure`` / ``verdict`` that the
  certificate presents as certified numbers, verdicts or labels. The re-checker must
  report each one it re-proved in :attr:`Recheck.proved` (or an independent
  enclosure in :attr:`Recheck.details`); one that is present but was not
  re-proved makes the certificate exit 3. Labels (``theorems`` of the sampled
  kinds and the per-step ``theorems`` and ``why_upper_only`` of ``events.*``,
  ``tail.kind``) are rebuilt from the kind and the inputs
  (:mod:`dpverify.certificate.prose`, recheck/events.py, recheck/gdpt.py) and
  refused (exit 1) when they differ.
* ``hints``: untrusted guidance (argmax, breakpoints, grids, alpha*); they may
  steer the search, everything they imply is re-proved.
* ``info``: counters, labels and echoes of the inputs that state no number
  of the claim (evaluation counts, grid steps); verify does not read them and
  they are not part of what it confirms.
* ``comments``: the writer's free text (``reason``, ``note``, ``tail.reason``,
  a calibration's ``monotonicity`` and ``pairs``; :mod:`dpverify.certificate.comments`). A
  ``reason`` in one of the writers' forms is re-derived from the re-proved
  enclosure, verdict and inputs (a false one is exit 1); a calibration's
  ``monotonicity`` and ``pairs`` are pinned to its writer's argument for the
  template and free parameter (other text is exit 1); ``gdp.certify``'s
  ``tail.reason`` in one of its writer's forms is re-derived by that kind's
  re-checker (recheck/gdpt.py, a false one is exit 1); any other text present
  is named on the verify line as the writer's text, not part of what is confirmed.
* ``unverifiable``: fields that would state a number the second route cannot
  re-prove; a certificate that carries one is refused (exit 1).

Run ``python -m dpverify.recheck.kinds`` for the Markdown table that
docs/reference/certificates.md carries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping

import mpmath

from ..certificate.format import (ALL_MECHANISM_OPTIONS, KIND_INPUTS, MECHANISM_KINDS, MECHANISM_OPTIONS,
                                  UNVERIFIABLE_DETAILS, foreign_inputs)
from ..certificate.ranges import (MECHANISM_OPTION_OVERRIDES, MECHANISM_OPTION_RANGES, MECHANISM_RATIO_RANGES,
                                  exact_number as _exact)
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from ..numtext import is_digits

__all__ = ["Route", "Kind", "KINDS", "require_proving_routes", "classify_result", "check_details",
           "markdown_table", "require_format", "MECHANISM_OPTIONS", "MECHANISM_KINDS", "check_mechanism_options", "PROVING",
           "STEPS", "PROOF", "ESTIMATE", "accept_rests_on", "explain_steps", "CLAIM_VERDICT"]

#: route statuses that can accept
PROVING = ("proved", "exact")


@dataclass(frozen=True)
class Route:
    """How one end (or the verdict) is re-derived: ``status`` in proved /
    exact / consistency, ``how`` one sentence naming the route."""

    status: str
    how: str


@dataclass(frozen=True)
class Kind:
    name: str
    lower: "Route | None" = None
    upper: "Route | None" = None
    verdict: "Route | None" = None
    certified: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    info: tuple[str, ...] = ()
    #: the writer's free text (:mod:`dpverify.certificate.comments`): a reason in a writers' form is
    #: re-derived, a pinned text (comments.pinned) held to its writer's, any other text is named on
    #: the verify line as not re-proved
    comments: tuple[str, ...] = ("reason", "note")
    unverifiable: tuple[str, ...] = ()
    claim: bool = False
    #: the first certificate format that defines the kind: a certificate of an earlier format
    #: cannot be one of it (the 0.1.0 writer, the last of format 1, never wrote shuffle.*,
    #: bins.* or replace.*: they came with format 2)
    since: int = 1

    def routes(self) -> dict[str, Route]:
        return {k: v for k, v in (("lower", self.lower), ("upper", self.upper), ("verdict", self.verdict))
                if v is not None}


def P(how: str) -> Route:
    return Route("proved", how)


def X(how: str) -> Route:
    return Route("exact", how)


_MPFR = ("MPFR directed rounding (gmpy2: erfc, exp, log correctly rounded outward; Phi's tails by the "
         "Mills ratio's continued fraction), precision raised until narrow")
#: the verdict route of a kind whose verdict is only that of a claim's relation (claim.relation)
CLAIM_VERDICT = X("the claim's relation decided on the independent enclosure (and on the recorded one)")
_COMMON_INFO = ("quantity",)
_SUPPORT = ("a direction whose steps' losses are bounded (each bound the least point of the grid 2^-40 at "
            "which the interval tail P(L > e) is proved 0) has composed loss <= B = sum T_i sup L_i: delta(eps) "
            "= E_P[(1 - e^(eps - L))_+] = 0 exactly for eps >= B (AFA Lemma 37)")
_PLD_LO = P("lower discretisation of every step's pair (pessimistic Q / optimistic P), exact big-integer "
            "convolution on GMP, directed rounding to units 2^-K; delta (or eps) read off as a lower bound; "
            "below a bounded loss's end B also delta(eps) >= (1 - e^(-g/2)) prod_i P(L > s_i - g/2N)^T_i, "
            "g = B - eps (one event of the product), in directed rounding")
_PLD_HI = P("connect-the-dots upper pair of every step (Doroshenko et al. 2022), exact convolution, truncated "
            "mass charged upward; " + _SUPPORT + ", and eps(delta) <= B")
#: events.*: a tree of Gaussian / Laplace leaves (Poisson-sampled Gaussians included) under add / remove
#: also has a Renyi tail bound of delta, which settles a recorded [0, hi] far in the tail first
_EVENTS_HI = P(_PLD_HI.how + "; for a delta far in the tail of a Gaussian / Laplace tree under add / remove, "
               "also delta <= zeta_a e^(K(a) - (a-1) eps), K the leaves' summed Renyi cumulants (MTZ 2019 "
               "binomial sum, Mironov 2017 Prop 1, 7) and zeta_a of Balle et al. 2020 Thm 21, directed rounding")
_PLD_HINTS = ("grid", "mass_unit", "relative_width")
_GDPT_LO = P("G_f at head.argmax (a hint) >= m, m proposed by mpmath bisection and proved by delta_m(argmax) "
             "< f(argmax) in MPFR directed rounding; G_f(x) <= sup G_f")
_GDPT_HI = P("every cell of [0, eps_h] proved sup_cell f <= delta_mu(b) at mu = hi in MPFR directed rounding "
             "(GDPT Thm 4.6, monotone mu_GDP, App A.5), or, for the profiles of a pair (convex in e^eps, as "
             "delta_mu), f's chord below delta_mu's tangent at the cell ends; at most GDP_CELL_WORK_CAP cell "
             "units (beyond: exit 3); tail beyond eps_h re-derived per mechanism, [eps_h, L] below the largest "
             "privacy loss L (where f = 0) proved by the same cells (gdp.certify: its recorded bridge; "
             "gdp.optimal_mu: up to L itself)")

_ROWS: list[Kind] = [
    Kind("gdp.delta", P("delta_mu(eps) (GDPT Thm 3.2) in " + _MPFR), P("same enclosure, upper end"),
         verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("gdp.mu", P("delta_mu(lo) < delta in " + _MPFR + " (increasing in mu: the root is >= lo; eps > 1e8: "
                     "log delta_mu from Phi(-x) - phi(x) M(y), without e^eps)"),
         P("delta_mu(hi) > delta in " + _MPFR + " (the root is <= hi)"), verdict=CLAIM_VERDICT,
         info=_COMMON_INFO),
    Kind("gdp.eps", P("delta_mu(lo) > delta in " + _MPFR + " (decreasing in eps)"),
         P("delta_mu(hi) < delta in " + _MPFR), info=_COMMON_INFO),
    Kind("gdp.mills_scaled", P("sqrt(pi/2) e^(t^2/2) Phi(t) in " + _MPFR + " (t <= -5: M(-t)/2, the Mills "
                               "ratio's continued fraction)"),
         P("same enclosure, upper end"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("gdp.refinement_point", P("GDPT App B's k(x): signs at a bracket proved in " + _MPFR + " (the positive "
                                   "zero is unique; findroot only proposes); delta^ = naive(eps_i) decreasing"),
         P("same enclosure, upper end"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("gdp.tail_limit", X("GDPT Thm 4.4 limit in closed form per mechanism"),
         X("GDPT Thm 4.4 limit in closed form per mechanism"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("gdp.optimal_mu", _GDPT_LO, _GDPT_HI, verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("gdp.thm51", P("mu = -2 Phi^-1(1/(1+e^eps)) bracketed: Phi(-lo/2) > 1/(1+e^eps) in " + _MPFR
                        + " (proposal by mpmath erfinv, untrusted)"),
         P("Phi(-hi/2) < 1/(1+e^eps) in " + _MPFR), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("gdp.thm4.5", P("slope e^eps Phi(-eps/mu - mu/2)/phi(eps/mu - mu/2) in " + _MPFR + " over a bracket "
                         "of mu_GDP proved by delta_mu at its ends"),
         P("same enclosure, upper end"),
         verdict=P("0 <= slope <= sqrt(2 pi)/2 re-decided on the directed-rounding enclosure; a recorded "
                   "'undecided' must be what the recorded enclosure decides"),
         info=_COMMON_INFO),
    Kind("gdp.clip_rectify", X("(y+ - y-)/eps_h in exact rationals"), X("(y+ - y-)/eps_h in exact rationals"),
         info=_COMMON_INFO),
    Kind("gdp.certify", _GDPT_LO, _GDPT_HI,
         verdict=P("tail re-derived (support end, Gaussian mu0, Mills conditions, not-GDP tails); head.unbounded "
                   "only where f(argmax) = 1 is decided exactly; the recorded status and verdict must be the "
                   "producer's reading of the recorded head and tail (not GDP: head.unbounded or a not-GDP tail; "
                   "GDP: a certified tail; else head only), and tail.status the one its recorded kind forces "
                   "(power, constant: not GDP; zero past an exact support end, gaussian with mu_hi_exact > mu0: "
                   "certified)"),
         certified=("status", "head.enclosure", "head.unbounded", "head.mu_hi_exact", "tail.status",
                    "tail.limit", "tail.kind"),
         hints=("head.argmax", "head.breakpoints", "tail.bridge_to", "tail.bridge_breakpoints"),
         info=_COMMON_INFO + ("head.eps_h", "head.margin", "head.algorithm", "head.profile_evaluations",
                              "head.delta_mu_evaluations", "head.root_isolations", "head.cells",
                              "head.taylor_cells", "head.closed_form",
                              # the naive staircase's step D and its own error bound sqrt(2 pi) D
                              # (GDPT Alg 3): how the producer reached head.enclosure, which is
                              # re-proved cell by cell whatever they say
                              "head.grid_step", "head.gap_bound_sqrt2pi_D"),
         comments=("reason", "note", "tail.reason"),
         # a head-only answer's gap delta_mu(eps_h) - f(eps_h): no second route re-proves it
         unverifiable=("tail.gap_delta_mu_at_eps_h",)),
    Kind("dp.profile", P("the mechanism's closed-form profile (GDPT eq. 2, Laplace cdfs, 4-output and rr sums, "
                         "subsampling, App B refinement, interval walk of an expression) in " + _MPFR),
         P("same enclosure, upper end"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("dp.implies", P("sup over the 4-output mechanism's 32 rows by brute force in MPFR directed rounding "
                         "(delta0 exactly when eps >= eps0)"),
         P("same enclosure, upper end"),
         verdict=P("given delta against the directed enclosure; for eps >= eps0 against delta0 in exact "
                   "rationals; 'undecided', which the producer's exact sign never writes, is refused where this "
                   "decides"), certified=("implies",), info=_COMMON_INFO),
    Kind("dp.rr64", P("max over the 32 neighbouring rows by brute force in MPFR directed rounding"),
         P("same enclosure"),
         verdict=X("the sup equals GDPT's formula iff delta0 = 1 or eps >= -eps0 (GDPT Cor 3.2: the missing term "
                   "(1-delta0)(1-e^(eps+eps0))_+/(1+e^eps0)), decided in exact rationals, as the producer "
                   "decides it: 'undecided' is refused"),
         certified=("gdpt_formula", "equals_gdpt_formula", "rows"), info=_COMMON_INFO),
    Kind("dp.sigma_refinement", P("the minimiser of sigma bracketed by bisection on the proved sign of the "
                                  "numerator of d sigma / d eps0 (strictly increasing), delta0 and sigma "
                                  "enclosed over the bracket in MPFR directed rounding"), P("same enclosure"),
         verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("composition.delta", P("LT Cor 4.7 binomial sum / Thm 4.6 recursion / the law on the shifts' lattice "
                                "in MPFR directed rounding (exact shifts; binomial weights by their ratio "
                                "recurrence; (1 - delta)^k exact or as exp(k log1p(-delta)) outward)"),
         P("same enclosure; grid certificates: both rounded compositions"),
         certified=("lower", "upper", "gap"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("composition.eps", P("composed profile at lo > delta in directed rounding (monotone bracket)"),
         P("composed profile at hi < delta in directed rounding"), certified=("lower", "upper", "gap"),
         verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("rdp.divergence", P("k K(alpha) / (alpha - 1) in " + _MPFR + ": Gaussian exact rational, Laplace / rr / "
                             "pure closed forms, subsampled Gaussian by the exact binomial sum (integer alpha) "
                             "or the two binomial series with a proved tail bound (fractional alpha); an order "
                             "above the producer's cap for the subsampled Gaussian is refused before any work "
                             "(exit 2)"),
         P("same enclosure, upper end"), info=_COMMON_INFO),
    Kind("rdp.epsilon", P("cells of log2(alpha - 1) with convex minorants of (alpha-1) D_alpha, every bound "
                          "in " + _MPFR + "; Gaussian + classic: the closed form c + 2 sqrt(cL); the same cells "
                          "just above a recorded upper end that does not hold refute the bracket"),
         P("the conversion at one order (alpha*, a hint) in " + _MPFR + "; optimal: ABC's gamma at the "
           "recorded upper end proved >= D_alpha* (or just below a recorded lower end that does not hold: "
           "refuted)"), hints=("alpha",), verdict=CLAIM_VERDICT,
         info=_COMMON_INFO),
    Kind("rdp.to_dp_eps", P("classic, Balle: the closed form in " + _MPFR + "; optimal: gamma(lo) < rdp "
                            "(gamma at one p, an upper bound)"),
         P("classic, Balle: same enclosure; optimal: gamma(hi) > rdp (the p-minimum bounded below by "
           "convexity, ABC Thm 3); optimal ends that do not hold are refuted just past the other end "
           "(verify.root_enclosure, the one rule for roots)"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("rdp.to_dp_delta", P("classic, Balle: the closed form in " + _MPFR + ", the cap at 1 decided exactly "
                              "or on the exponent's enclosure, an underflow gives [0, tiny] (exit 3 against a "
                              "positive recorded end); optimal: gamma at the recorded lo below rdp"),
         P("same enclosure; optimal: gamma at the recorded hi above rdp (convexity in p); optimal ends "
           "that do not hold are refuted just past the other end (verify.root_enclosure)"),
         verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("rdp.abc_gain", P("eps_MA (closed form) minus an upper bound of eps_0 (Balle at one order), in "
                           + _MPFR),
         P("eps_MA minus eps_0's lower end proved on cells of orders <= 1/delta"), verdict=CLAIM_VERDICT,
         info=_COMMON_INFO),
    Kind("rdp.abc_extra_iterations", P("T_MA's floor decided on an enclosure; T_0 by eps_0(T_0) <= eps (one "
                                       "order) and eps_0(T_0 + 1) > eps (cells), exact integers"),
         P("same integers"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("lt.residual", P("each integral in closed form (piecewise exponentials between the kinks; the Gaussian "
                          "by parts) and each side from its own formula, in " + _MPFR + "; complex orders as "
                          "rectangles, cos / sin widened by the argument's width"),
         P("same enclosure, upper end"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("lt.partial-transform", P("the integral over [-A, B] in closed form (piecewise exponentials; the "
                                   "Gaussian by parts) in " + _MPFR),
         P("same enclosure, upper end"), verdict=CLAIM_VERDICT, info=_COMMON_INFO),
    Kind("finite.identity", verdict=X("both sides re-computed from the rational pmfs in exact rationals, "
                                      "holds iff the residual is exactly 0 (never 'undecided'); parameters "
                                      "outside the source's domain refused"),
         info=_COMMON_INFO),
    Kind("pld.epsilon", _PLD_LO, _PLD_HI, verdict=CLAIM_VERDICT, hints=_PLD_HINTS,
         info=_COMMON_INFO + ("neighboring",), certified=("directions",)),
    Kind("pld.delta", _PLD_LO, _PLD_HI, verdict=CLAIM_VERDICT, hints=_PLD_HINTS,
         info=_COMMON_INFO + ("neighboring",), certified=("directions",)),
    Kind("pld.claim", _PLD_LO, _PLD_HI, verdict=P("claimed delta against the independent enclosure"),
         hints=_PLD_HINTS, info=_COMMON_INFO + ("neighboring",), certified=("directions",)),
    Kind("events.epsilon", _PLD_LO, _PLD_HI, verdict=CLAIM_VERDICT, hints=_PLD_HINTS + ("method",),
         certified=("rho", "xi", "upper_bound_only", "neighboring", "sensitivity_convention", "theorems",
                    "why_upper_only"),
         info=_COMMON_INFO, comments=("reason", "note"),
         unverifiable=UNVERIFIABLE_DETAILS),
    Kind("events.delta", _PLD_LO, _EVENTS_HI, verdict=CLAIM_VERDICT, hints=_PLD_HINTS + ("method",),
         certified=("rho", "xi", "upper_bound_only", "neighboring", "sensitivity_convention", "theorems",
                    "why_upper_only"),
         info=_COMMON_INFO, comments=("reason", "note"),
         unverifiable=UNVERIFIABLE_DETAILS),
    Kind("events.claim", _PLD_LO, _EVENTS_HI, verdict=P("claimed delta against the independent enclosure"),
         hints=_PLD_HINTS + ("method",),
         certified=("rho", "xi", "upper_bound_only", "neighboring", "sensitivity_convention", "theorems",
                    "why_upper_only"),
         info=_COMMON_INFO, comments=("reason", "note"),
         unverifiable=UNVERIFIABLE_DETAILS),
    *[Kind(name, P("the max-of-batch-sums dataset pair (Chua et al. 2024) cut into cells at the recorded edges "
                   "(a hint), cell masses in MPFR directed rounding, composed over epochs by exact GMP products, "
                   "P rounded down and Q up: delta(lo) > delta (eps kinds; a proof just above a recorded upper end that "
                   "does not hold refutes the bracket) or the composed lower curve (delta)"),
           P("the no-amplification Gaussian mu = Delta sqrt(E)/sigma (AFA Thm 10, joint convexity over "
             "permutations): delta_mu in MPFR directed rounding at a rational mu+ >= mu"),
           verdict=CLAIM_VERDICT if name != "shuffle.claim" else P("claimed eps against the re-derived bracket"),
           certified=("mu", "theorems"), hints=("shuffle_lower",), info=_COMMON_INFO + ("neighboring",),
           since=2)
      for name in ("shuffle.epsilon", "shuffle.delta", "shuffle.claim")],
    *[Kind(name, P("the balls-in-bins pair (Chua et al. 2025) on the recorded grid (a hint): cells rounded to "
                   "their lower edge, masses and T-fold GMP products rounded down, delta_remove = E[Y_dn] - c + "
                   "E[(c - S_dn/T)_+] and delta_add = E[(1 - c S_up/T)_+] on MPFR intervals; E > 1 epochs: "
                   "a sub-measure of the per-epoch loss (rounded down to the loss grid), composed E times (AFA "
                   "Thm 10), E[(1 - e^(eps - X))_+]: delta(lo) > delta (eps kinds; a proof just above a recorded upper "
                   "end that does not hold refutes the bracket) or the re-derived lower end (delta)"),
           P("the same pair with cells rounded to their upper edge, masses and products rounded up (tail at the "
             "top edge); E > 1: a super-measure of a per-epoch loss rounded up, unrepresented mass at +inf, "
             "composed E times, the +inf part bounded by |nu|^E - |nu_f|^E: delta(hi) <= delta (eps kinds; a "
             "proof just below a recorded lower end that does not hold refutes the bracket) or the re-derived "
             "upper end (delta)"),
           verdict=CLAIM_VERDICT if name != "bins.claim" else P("claimed eps against the re-proved enclosure"),
           certified=("theorems",), hints=("bins_grid", "bins_epochs"), info=_COMMON_INFO + ("neighboring",),
           since=2)
      for name in ("bins.epsilon", "bins.delta", "bins.claim")],
    *[Kind(name, P("the remove direction's epsilon(delta) by the PLD second route of a DP-SGD schedule or of "
                   "an event tree of Gaussian / Laplace steps (a zero-contribution replacement realises removal; "
                   "tight pair, AFA Thm 11 remark)"),
           P("group privacy (Dwork-Roth Thm 2.2): (1 + e^(hi/2)) delta_add-remove(hi/2) <= delta by the PLD "
             "second route, the factor and the product rounded up in MPFR; when the recorded lower end is not "
             "re-proved, the same bound just below it refutes the bracket"),
           verdict=CLAIM_VERDICT if name != "replace.claim" else P("claimed eps against the re-derived bracket"),
           certified=("lower", "upper", "theorems"), info=_COMMON_INFO + ("neighboring",), since=2)
      for name in ("replace.epsilon", "replace.claim")],
    Kind("replace.delta", P("the remove direction's delta(eps) by the PLD second route (schedule or event tree; "
                            "a zero-contribution replacement realises removal), its lower end >= lo"),
         P("group privacy (Dwork-Roth Thm 2.2): (1 + e^(eps/2)) delta_add-remove(eps/2) <= hi by the PLD second "
           "route, the factor and the product rounded up in MPFR (hi >= 1 holds for every delta); the product is "
           "the independent upper end, so an enclosure recorded wholly above it is refuted"),
         verdict=CLAIM_VERDICT, certified=("lower", "upper", "theorems"), info=_COMMON_INFO + ("neighboring",),
         since=2),
    Kind("calibrate.bracket",
         verdict=P("each end re-proved by the PLD second route: delta(target) <= delta at the safe end (upper "
                   "curve), > delta at the unsafe end (lower curve); shuffled and balls-in-bins templates by "
                   "those schemes' second routes (no-amplification Gaussian / max-of-batch-sums pair; Chua et "
                   "al.'s pair at the recorded grid)"),
         certified=("ends.*.value", "ends.*.verdict", "ends.*.delta_at_target"),
         hints=("ends.*.grid", "ends.*.shuffle_lower", "ends.*.bins_grid", "ends.*.bins_epochs", "proposal",
                "relative_width"),
         # mechanism_relative_width: |safe - unsafe| / min of the two, recomputed exactly from the
         # re-proved ends by check_agreement
         info=_COMMON_INFO + ("mechanism_relative_width",),
         comments=("reason", "note", "monotonicity", "pairs")),
    Kind("oracle.rows",
         verdict=P("every configuration's enclosure re-derived by the PLD second route and no wider than "
                   "inputs.digits allows, every row re-classified from its reported number by exact comparisons "
                   "(unsafe and loose where the recorded or the independent enclosure decides them, consistent "
                   "where the recorded one does not), and its "
                   "relative excess recomputed exactly from the reported number and the recorded enclosure; "
                   "every row re-read from the recorded input text (inputs.input_text, whose sha256 is "
                   "inputs.input_sha256) and compared exactly; a sha256 without its text is refused. Without a "
                   "hash (battery certificates, and format-1 --input ones, which name the file only) the rows' "
                   "accountants and reported numbers are bound to nothing verify reads: named in the summary "
                   "as not confirmed"),
         certified=("configs", "rows"), info=_COMMON_INFO, comments=("reason", "note", "notes")),
]

KINDS: dict[str, Kind] = {k.name: k for k in _ROWS}


def require_proving_routes(quantity: str, has_enclosure: bool, has_verdict: bool) -> Kind:
    """The row of ``quantity``; CouldNotReprove when an end the certificate
    records has no proving route (a consistency check cannot accept)."""
    kind = KINDS.get(quantity)
    if kind is None:
        raise MalformedCertificate(f"claim.quantity: {quantity!r} has no row in the kind table")
    needed = []
    if has_enclosure:
        needed += [("lower end", kind.lower), ("upper end", kind.upper)]
    if has_verdict and kind.verdict is not None:
        needed.append(("verdict", kind.verdict))
    for what, route in needed:
        if route is None or route.status not in PROVING:
            raise CouldNotReprove(f"{quantity}: the {what} has no proving route "
                                  f"({'none' if route is None else route.status}); it cannot be accepted")
    return kind


def require_format(kind: Kind, fmt: str) -> None:
    """Refuse (exit 2) a kind under a certificate format that did not define it: a shuffled
    bracket relabelled ``dpverify-certificate/1`` claims an origin (the 0.1.0 writer) that never
    wrote one, and format 1's looser schema and verdict names would apply to it."""
    m = re.fullmatch(r"dpverify-certificate/(\d+)", fmt)
    if m is not None and int(m.group(1)) < kind.since:
        raise MalformedCertificate(
            f"claim.quantity: {kind.name!r} is not a kind of format {fmt!r}: format {kind.since} introduced it "
            "(the last format-1 writer, dpverify 0.1.0, never wrote one)")


def _match(pattern: str, path: str) -> bool:
    a, b = pattern.split("."), path.split(".")
    return len(a) == len(b) and all(x == "*" or x == y for x, y in zip(a, b))


def _paths(result: Mapping[str, Any]) -> list[str]:
    """Top-level result keys and, for object-valued ones, their sub-keys
    (``head.enclosure``, ``ends.safe.value``)."""
    out = []
    for k, v in result.items():
        out.append(k)
        if isinstance(v, dict) and k not in ("enclosure",):
            for k2, v2 in v.items():
                out.append(f"{k}.{k2}")
                if isinstance(v2, dict) and k == "ends":
                    out.extend(f"{k}.{k2}.{k3}" for k3 in v2)
    return out


def classify_result(kind: Kind, result: Mapping[str, Any], refuse: bool = True) -> list[str]:
    """The certified paths present in ``result``; refuses a field the table
    calls unverifiable (exit 1)."""
    present = _paths(result)
    for p in unverifiable_present(kind, result) if refuse else ():
        raise CertificateRejected(
            f"result.{p}: a number the second route does not re-prove (unverifiable for {kind.name}); "
            "a certificate must not present it as certified")
    return [p for p in present if any(_match(c, p) for c in kind.certified)]


def unverifiable_present(kind: Kind, result: Mapping[str, Any]) -> list[str]:
    """The fields of ``result`` that the row calls unverifiable (a field such as
    ``directions`` with everything inside it, or a nested one such as
    ``tail.gap_delta_mu_at_eps_h``)."""
    return [p for p in _paths(result) if any(_match(u, p) for u in kind.unverifiable)]


def check_details(kind: Kind, result: Mapping[str, Any], proved: "frozenset[str]") -> None:
    """Every certified field present must have been re-proved by the re-checker."""
    for p in classify_result(kind, result, refuse=False):
        if not any(_match(q, p) or p.startswith(q + ".") for q in proved):
            raise CouldNotReprove(f"result.{p} is presented as certified but was not re-proved "
                                  f"by the second route of {kind.name}")


#: the written form of each numeric hint. A hint only steers the second route (where a search
#: starts, which order is tried), but text the producer never writes there ("abc", "nan",
#: "2^-99999999999", "1e99999", a negative argmax, an empty breakpoint list) is refused with exit 2
#: naming the path and the form, as any other malformed field (adv37 H1). Structured hints
#: (``bins_grid``, ``shuffle_lower``, ...) are checked by the routes that read them.
HINT_FORMS = {
    "grid": "pow2", "mass_unit": "pow2", "ends.*.grid": "pow2",
    "relative_width": "width", "head.argmax": "nonnegative", "tail.bridge_to": "nonnegative",
    "proposal": "positive", "alpha": "positive",
    "head.breakpoints": "nondecreasing", "tail.bridge_breakpoints": "nondecreasing",
}
_FORM_TEXT = {"pow2": "a grid 2^-N, N a whole number of at most 9 digits without leading zeros",
              "nonnegative": "a decimal or fraction >= 0 within the input caps",
              "width": "a decimal or fraction >= 0 within the input caps, or null (an upper-only answer)",
              "positive": "a decimal or fraction > 0 within the input caps",
              "nondecreasing": "a non-empty list of decimals or fractions >= 0, nondecreasing, within the input caps"}


def grid_exponent(v: Any) -> "int | None":
    """N of a grid hint written ``2^-N`` (N ASCII digits, at most 9 of them, without leading
    zeros: the writer prints str(N); adv39 H2), else None: the one reading of the form, for the
    hint check and for calibrate's start grid."""
    if isinstance(v, str) and v.startswith("2^-") and is_digits(v[3:]) and len(v) <= 12 \
            and str(int(v[3:])) == v[3:]:
        return int(v[3:])
    return None


def _hint_number(v: Any, where: str) -> "Fraction":
    from .limits import _FRACTION, _NUMBER, check_number_text

    if not (isinstance(v, str) and v.isascii() and (_NUMBER.fullmatch(v) or _FRACTION.fullmatch(v))):
        raise ValueError
    check_number_text(v, where)  # length and exponent caps first: Fraction("1e99999") is not built
    return Fraction(v)


def check_hints(kind: Kind, result: Mapping[str, Any]) -> None:
    """Refuse (MalformedCertificate, exit 2) a hint of ``kind`` not written in its form
    (:data:`HINT_FORMS`)."""
    for p in _paths(result):
        form = next((f for h, f in HINT_FORMS.items() if h in kind.hints and _match(h, p)), None)
        if form is None:
            continue
        v: Any = result
        for part in p.split("."):
            v = v[part]
        try:
            if form == "pow2":
                if grid_exponent(v) is None:
                    raise ValueError
            elif form == "nondecreasing":
                if not isinstance(v, list) or not v:
                    raise ValueError
                xs = [_hint_number(x, f"result.{p}") for x in v]
                if xs[0] < 0 or any(b < a for a, b in zip(xs, xs[1:])):
                    raise ValueError
            elif not (form == "width" and v is None):
                x = _hint_number(v, f"result.{p}")
                if x < 0 or (form == "positive" and x == 0):
                    raise ValueError
        except (ValueError, ZeroDivisionError):
            raise MalformedCertificate(f"result.{p}={str(v)[:40]!r} is not written as the producer writes this "
                                       f"hint (allowed: {_FORM_TEXT[form]})") from None


#: format-1 names of the verdict, by kind (the 0.1.0 writer's spelling; format 2 writes ``verdict``)
FORMAT1_VERDICT_NAMES = {"dp.implies": "implies", "dp.rr64": "equals_gdpt_formula", "gdp.certify": "status"}
#: gdp.certify's ``result.status`` -> the verdict it names (the writer's ``result.verdict`` beside it;
#: format 1's only verdict)
CERTIFY_VERDICTS = {"GDP": "holds", "not GDP": "fails", "head only": "undecided"}


def declared_fields(kind: Kind) -> tuple[str, ...]:
    """The result paths a certificate of ``kind`` may carry: its enclosure and verdict
    (where the kind has those routes), and every field its row names as certified,
    hint, information or unverifiable."""
    own = (("enclosure",) if kind.lower is not None else ()) + (("verdict",) if kind.verdict is not None else ())
    return own + kind.certified + kind.hints + kind.info + kind.comments + kind.unverifiable + MIRRORED


def check_result_keys(kind: Kind, result: Mapping[str, Any]) -> None:
    """Refuse (exit 2) a result field that the kind's row does not declare. The schema's
    result section allows the union of every kind's fields, so a field of another kind
    (``mu`` or ``upper`` beside a ``gdp.delta`` enclosure, a ``head`` on ``bins.epsilon``)
    would pass it; no second route reads such a field, so it would be confirmed unread."""
    declared = declared_fields(kind)
    alias = FORMAT1_VERDICT_NAMES.get(kind.name)
    pats = [d.split(".") for d in declared + ((alias,) if alias else ())]

    def known(path: str) -> bool:
        parts = path.split(".")
        # a declared field, a container of one (``head`` of ``head.enclosure``), or inside a
        # field declared whole (``directions.add`` of ``directions``)
        return any(_match(".".join(p[:len(parts)]), path) if len(p) >= len(parts)
                   else _match(".".join(p), ".".join(parts[:len(p)])) for p in pats)

    for path in _paths(result):
        if not known(path):
            raise MalformedCertificate(
                f"result.{path}: not a field of {kind.name} (allowed: {', '.join(sorted(set(declared)))})")


# --------------------------------------------------------------------------- mechanisms

def check_mechanism_options(inputs: Mapping[str, Any]) -> None:
    """Refuse (exit 2) a mechanism whose options are not one of the sets its
    producer reads (both ``mu`` and ``noise_multiplier``, ``sensitivity`` with
    ``mu``, an option another mechanism takes) or lie outside the ranges its
    builder enforces (randomized response needs p in [1/2, 1))."""
    name = inputs.get("mechanism")
    if name not in MECHANISM_OPTIONS:
        return  # the kind's re-checker names the mechanisms it knows
    given = frozenset(k for k in inputs if k in ALL_MECHANISM_OPTIONS)
    allowed = MECHANISM_OPTIONS[name]
    if given not in allowed:
        forms = " | ".join("{" + ", ".join(sorted(s)) + "}" for s in allowed)
        raise MalformedCertificate(
            f"inputs: mechanism {name!r} takes exactly one of the option sets {forms}; got "
            f"{{{', '.join(sorted(given))}}} (an option the mechanism does not read defines nothing)")
    ranges = {**MECHANISM_OPTION_RANGES, **MECHANISM_OPTION_OVERRIDES.get(name, {})}
    for key in sorted(given):
        if key not in ranges:
            continue
        text = inputs[key]
        x = _exact(text)
        if x is None:
            raise MalformedCertificate(f"inputs.{key}={str(text)[:40]!r} is not an exact number")
        if not ranges[key].contains(x):
            raise MalformedCertificate(f"inputs.{key}={str(text)[:40]}: mechanism {name!r} needs {key} in "
                                       f"{ranges[key].text()}")
    if name in MECHANISM_RATIO_RANGES:
        MECHANISM_RATIO_RANGES[name].check(inputs, "inputs", f"mechanism {name!r}")
    if "refined" in given and inputs["refined"] not in ("true", "false"):
        raise MalformedCertificate("inputs.refined must be 'true' or 'false'")


# --------------------------------------------------------------------------- docs


def markdown_table() -> str:
    """The table of docs/reference/certificates.md (``python -m dpverify.recheck.kinds``)."""
    lines = ["| kind | lower end | upper end | verdict | certified fields (re-proved) | refused as unverifiable "
             "| the writer's text (a reason in a writers' form re-derived, a calibration's arguments pinned, "
             "a gdp.certify tail reason re-derived, other text named) |",
             "|---|---|---|---|---|---|---|"]

    def r(x: "Route | None") -> str:
        return "-" if x is None else f"**{x.status}**: {x.how}"

    for k in sorted(KINDS):
        row = KINDS[k]
        since = f" (format {row.since} on)" if row.since > 1 else ""
        lines.append(f"| `{k}`{since} | {r(row.lower)} | {r(row.upper)} | {r(row.verdict)} | "
                     f"{', '.join(f'`{c}`' for c in row.certified) or '-'} | "
                     f"{', '.join(f'`{c}`' for c in row.unverifiable) or '-'} | "
                     f"{', '.join(f'`{c}`' for c in row.comments) or '-'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())


# --------------------------------------------------------------------------- proofs and estimates
# The second facet of the same table: for every kind, the steps of its re-check, each a
# proof (directed rounding or exact integers / rationals) or an estimate (mpmath
# quadrature, mpmath's non-directed evaluation, float searches), for ``verify --explain``.

PROOF = "proof"
ESTIMATE = "estimate"

#: kind -> steps of its re-check, each (what, PROOF | ESTIMATE, on_accept_path). A step on
#: the accept path is one an accept depends on; an estimate there means the kind's accept
#: rests on an estimate (``tests/recheck/test_core.py`` lists the kinds where that is so
#: and fails once one of them is proved, so the list only shrinks). Steps off the accept
#: path only choose (grids, orders, brackets) or only refute.
STEPS: dict[str, list[tuple[str, str, bool]]] = {}


def _steps(kinds: Iterable[str], steps: list[tuple[str, str, bool]]) -> None:
    for k in kinds:
        STEPS[k] = steps


_PLD_STEPS = [
    ("per-step pair tails in MPFR with directed rounding (Gaussian: erfc at anchors j/16 and "
     "a Taylor expansion with a Cramer-inequality remainder between them, Laplace's continued "
     "fraction beyond |x| = 16, expm1, log; on grids 2^-13 and finer, blocks of knots away from the "
     "support end from one Taylor series in the loss with fixed-point ball coefficients and a Lagrange "
     "remainder enclosed over the block, summed exactly at each knot; Laplace: exp, log; finite pairs: "
     "exact sums)",
     PROOF, True),
    ("connect-the-dots and bucket masses rounded outward to integer units 2^-K", PROOF, True),
    ("T-fold composition: exact integer products (Kronecker substitution on GMP integers)", PROOF, True),
    ("delta(eps) / eps(delta) read off the composed integers with directed exp, expm1, log", PROOF, True),
    ("grid, knot range and scale chosen from the recorded enclosure (untrusted hints)", ESTIMATE, False),
    ("bounded losses: each step's bound searched on the grid 2^-40 (accepted only where the interval "
     "tail P(L > e) is proved 0); delta = 0 exactly at or past the composed end, eps(delta) capped by it, "
     "the product-event lower bound below it (directed rounding)", PROOF, True),
    ("a schedule whose every step is a Gaussian at sampling rate 1: one Gaussian pair, mu^2 the sum of the "
     "steps' mu_i^2 (AFA Thm 10, a rotation of N(0, I)), mu bracketed by exact integer square roots; "
     "delta_mu(eps) (GDPT eq. 2) in MPFR directed rounding and eps(delta) by a bisection on proved signs "
     "(recheck.pld.gaussian_bounds)", PROOF, True),
]
#: the Renyi tail bound that settles a recorded delta enclosure far in the tail (events.* and pld.delta /
#: pld.claim: recheck.events.leaves_delta_upper)
_TAIL_STEP = ("a delta enclosure [0, hi] (or a lower end above it) with hi below 1e-30, of Gaussian / Laplace "
              "steps, Poisson-sampled Gaussians included, under add / remove: settled first by delta <= zeta_a "
              "e^(K(a) - (a-1) eps), K the sum of the steps' Renyi cumulants (Mironov 2017 Prop 1, 7; MTZ 2019 "
              "binomial sum; the add pair's loss bound or weighted AM-GM, the smaller) and zeta_a of Balle et al. "
              "2020 Thm 21, in directed rounding; the order is a float proposal", PROOF, True)
#: the schedules of the pld.*, events.* and replace.* routes (recheck.pld._bounds, recheck.events._bounds;
#: calibrate.bracket's templates do not reach it)
_ONE_STEP = ("a schedule that is one Poisson-subsampled Gaussian step (T = 1, rate q < 1, add / remove): no grid; "
             "delta(eps) = q delta_mu(v), v = log1p(expm1(eps) / q) (remove) and (1 - (1 - q) e^eps) delta_mu(v), "
             "v = -log(1 + expm1(-eps) / q), 0 past eps = -log(1 - q) (add), the half line {L > eps} read as the "
             "Gaussian curve at v (GDPT eq. 2), in MPFR directed rounding; eps(delta) a root proposed in mpmath "
             "(untrusted) and proved by two directed evaluations of the decreasing curve, else a bisection on proved "
             "signs (recheck.poisson_step)", PROOF, True)
_steps(["pld.epsilon"], _PLD_STEPS + [_ONE_STEP])
_steps(["pld.delta", "pld.claim"], _PLD_STEPS + [_ONE_STEP, _TAIL_STEP])
_steps(["events.epsilon", "events.delta", "events.claim"], _PLD_STEPS + [
    _ONE_STEP,
    _TAIL_STEP,
    ("epsilon(delta) = inf where a direction's composed P(L = +inf) = 1 - prod_i (1 - a_i)^T_i exceeds delta "
     "(AFA Lemma 37, Thm 10): the leaves' exact rational masses at +inf, the product rounded up in MPFR, "
     "compared with delta in exact rationals", PROOF, True),
    ("Gaussian and Laplace leaves, Poisson-sampled or without replacement (AFA Thm 11, "
     "Prop 30 + Cor 32 maximum curve): interval tails in directed rounding", PROOF, True),
    ("discrete Laplace / Gaussian leaves: exact rational losses, masses in directed rounding, suffix "
     "sums rounded outward, the discrete Gaussian's unlisted mass bounded by a ratio test; epsilon_delta "
     "and randomized response: finite pairs decided exactly or on the enclosures", PROOF, True),
    ("mixture of Gaussians: the loss root proposed by Newton (untrusted) and bracketed by S(t - r) < e^eps "
     "< S(t + r) in directed rounding, or, where every mu_i is n_i g (degree <= 64), in z = e^(g x) by "
     "F(z(1 - r)) < e^eps < F(z(1 + r)), F(z) = sum a_i z^n_i rounded toward each end; normal tails over "
     "the bracket; one positive mu: the Poisson Gaussian pair (the same laws)", PROOF, True),
    ("zCDP conversion: delta by CKS20 Prop 12 at orders whose sign of f' is proved (convexity gives "
     "the lower end); epsilon by ABC Thm 3 at one order, gamma > rdp proved through a tangent of the "
     "convex S(p) at a proved bracket of its minimiser; order, value and p* proposed in floats", PROOF, True),
])
_steps(["calibrate.bracket"], _PLD_STEPS + [
    ("without-replacement (Cor 32) pair: the larger of two Poisson curves, chosen only where "
     "the intervals prove it, else the hull of both pairs' tails", PROOF, True),
    ("each end's verdict compared with the exact delta (rationals)", PROOF, True),
    ("shuffled template: safe end and pair limit by delta_mu of the no-amplification Gaussian in MPFR directed "
     "rounding at a rational mu+ / mu- around Delta sqrt(E) / sigma; unsafe end by the max-of-batch-sums pair "
     "at the recorded cells, exact GMP class products, A_J - e^eps B_J against delta in integers", PROOF, True),
    ("balls-in-bins template: each end by the enclosure of Chua et al.'s pair at the recorded grid (MPFR "
     "intervals, exact GMP products rounded outward)", PROOF, True),
    ("cells, class grids and balls-in-bins grids read from the recorded hints (untrusted: any hint gives "
     "valid bounds)", ESTIMATE, False),
])
_steps(["shuffle.epsilon", "shuffle.delta", "shuffle.claim"], [
    ("upper end: delta_mu of the no-amplification Gaussian in MPFR directed rounding at a rational mu+ >= mu "
     "(delta_mu increases in mu); for epsilon, a proposed end (mpmath bisection) proved above the root by "
     "delta_mu < delta", PROOF, True),
    ("epsilon's upper end proposed by mpmath bisection, classes grouped and ordered by floats (untrusted)",
     ESTIMATE, False),
    ("lower end: normal-cdf cell masses in MPFR directed rounding (Phi to absolute accuracy, pow correctly "
     "rounded), P rounded down and Q up to units 2^-128, exact GMP products; A_J - e^eps B_J against delta "
     "in exact integers with e^eps rounded up", PROOF, True),
    ("result.mu: Delta^2 E / sigma^2 against the recorded [lo, hi] squared, in exact rationals", PROOF, True),
])
_steps(["bins.epsilon", "bins.delta", "bins.claim"], [
    ("cell masses Phi(sigma log y + 1/(2 sigma)) and the log-normal tail means on MPFR intervals (directed)",
     PROOF, True),
    ("masses rounded outward to units 2^-128, T-fold exact GMP products rounded the same way, cut at the "
     "degree where the integrands vanish", PROOF, True),
    ("hinge sums from exact integer prefix sums, e^eps and the means on MPFR intervals", PROOF, True),
    ("E > 1 epochs: log(j h / T) 2^m floored / ceiled on MPFR intervals (raised precision where undecided), "
     "E-fold exact GMP powers rounded outward, sum C_k (1 - e^(eps - s_k))_+ by exact suffix sums and a "
     "fixed-point Horner sum with e^(-2^-m) rounded the sound way", PROOF, True),
    ("grid chosen from the recorded hints (untrusted: any grid gives valid bounds)", ESTIMATE, False),
])
_steps(["replace.epsilon", "replace.claim"], _PLD_STEPS + [
    _ONE_STEP,
    ("group-privacy factor (1 + e^(hi/2)) times the PLD upper end, rounded up in MPFR against delta rounded "
     "down", PROOF, True),
    ("an event tree: its Gaussian / Laplace leaves (Poisson-sampled or not) as in events.* (interval tails in "
     "directed rounding); any other step refused", PROOF, True),
])
_steps(["replace.delta"], _PLD_STEPS + [
    _ONE_STEP,
    ("group-privacy factor (1 + e^(eps/2)) times the PLD upper end at eps/2, rounded up in MPFR against the "
     "recorded upper end rounded down", PROOF, True),
    ("an event tree: its Gaussian / Laplace leaves (Poisson-sampled or not) as in events.* (interval tails in "
     "directed rounding); any other step refused", PROOF, True),
])
_steps(["oracle.rows"], [
    ("certified enclosure per row by the PLD route", PROOF, True),
    ("each configuration's recorded enclosure no wider than inputs.digits allows; each accountant's reported "
     "number compared with its decimals and with the independent enclosure (exact rationals)", PROOF, True),
    ("each row re-read from the recorded input text (CSV or JSON) and compared exactly; the text's sha256 "
     "against inputs.input_sha256 (no text recorded: the rows are named as not confirmed)", PROOF, True),
])
_RDP_CURVE_STEP = (
    "D_alpha in MPFR directed rounding: the Gaussian's exact rational alpha mu^2 / 2; Laplace, randomized "
    "response and pure eps0 in closed form (exp, expm1, log1p outward); the subsampled Gaussian by the exact "
    "binomial sum at integer orders and, at fractional ones, the two binomial series of the split integral "
    "(Phi by MPFR's erfc or the Mills ratio's continued fraction), their tail a Hausdorff moment sequence "
    "summed by Cohen-Rodriguez Villegas-Zagier acceleration with its proved bound a_0 / T_n(3)", PROOF, True)
_GAMMA_STEP = ("ABC Thm 3's gamma_alpha^eps(delta): at one p an upper bound; below, a bracket of the minimiser "
               "over p by proved signs of S'(p) and the tangent at a point of it (S convex in p); alpha delta >= 1 "
               "by ABC Thm 4 eq. 17", PROOF, True)
_steps(["rdp.divergence"], [_RDP_CURVE_STEP])
_steps(["rdp.epsilon"], [
    ("Gaussian + classic: the closed form c + 2 sqrt(cL) (AM-GM) in MPFR directed rounding", PROOF, True),
    _RDP_CURVE_STEP,
    ("upper end: the conversion at the recorded order (classic, Balle: closed forms outward; optimal: gamma at "
     "the recorded upper end proved >= D_alpha*)", PROOF, True),
    ("lower end: cells of log2(alpha - 1) at exact dyadic orders, linear minorants of the convex (alpha - 1) "
     "D_alpha with rounded-down coefficients, the conversions' Moebius / convex bounds at the cell ends, the "
     "ends near alpha = 1 and alpha -> inf by monotonicity", PROOF, True),
    _GAMMA_STEP,
    ("order of the upper end when none is recorded, and the cells' grid (untrusted: any order bounds the "
     "infimum from above, any grid is sound)", ESTIMATE, False),
])
_steps(["rdp.to_dp_eps", "rdp.to_dp_delta"], [
    ("classic and Balle conversions: closed forms in MPFR directed rounding (exp, log, log1p outward; the cap "
     "delta <= 1 decided on exact rationals or an enclosure excluding it)", PROOF, True),
    _GAMMA_STEP,
    ("optimal: the root bracketed at the recorded ends (gamma non-decreasing in eps and in delta)", PROOF, True),
])
_steps(["rdp.abc_gain", "rdp.abc_extra_iterations"], [
    ("eps_MA = rho T + sqrt(4 rho T L) and T_MA's floor in MPFR directed rounding", PROOF, True),
    ("eps_0 (ABC Lemma 2): Balle's conversion at one order <= 1/delta as the upper end, the lower end on "
     "cells (exact Gaussian curve), T_0 by the two proofs at T_0 and T_0 + 1", PROOF, True),
    ("orders and counts proposed on floats (untrusted)", ESTIMATE, False),
])
_DELTA_MU_STEP = ("delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) enclosed in MPFR "
                  "directed rounding (erfc for |x| < 5, the Mills ratio's continued fraction beyond, exp; "
                  "arguments exact rationals rounded outward once), precision raised until narrow", PROOF, True)
_steps(["gdp.delta"], [_DELTA_MU_STEP,
    ("below MPFR's exponent range (delta_mu under about 10^-(3.2e8)): log delta_mu = -x^2/2 - log sqrt(2 pi) "
     "+ log(M(x) - M(x + mu)), x = eps/mu - mu/2, the Mills ratios by their continued fraction, in directed "
     "rounding; exponentiated as 2^k e^(L - k log 2) (an exact shift of the exponent)", PROOF, True)])
_steps(["gdp.mu", "gdp.eps"], [
    _DELTA_MU_STEP,
    ("the recorded ends bracket the root: delta_mu at each end on its side of delta (monotone in mu and "
     "in eps), compared with delta rounded outward", PROOF, True),
])
_steps(["gdp.thm4.5"], [
    ("mu_GDP proposed by mpmath bisection and Newton (untrusted)", ESTIMATE, False),
    _DELTA_MU_STEP,
    ("a bracket [m-, m+] of mu_GDP proved by delta_mu at its ends (monotone in mu)", PROOF, True),
    ("the slope e^eps Phi(-eps/mu - mu/2) / phi(eps/mu - mu/2) enclosed over the bracket in directed rounding; "
     "the verdict against sqrt(2 pi)/2 decided on it", PROOF, True),
])
_steps(["gdp.mills_scaled"], [
    ("sqrt(pi/2) e^(t^2/2) Phi(t) in MPFR directed rounding; t <= -5 as M(-t)/2 with the Mills ratio's "
     "continued fraction enclosed by backward recursion", PROOF, True),
])
_steps(["gdp.thm51"], [
    ("mu proposed by mpmath erfinv (untrusted)", ESTIMATE, False),
    ("a bracket [m-, m+] proved by Phi(-m/2) against 1/(1+e^eps) at its ends in MPFR directed rounding "
     "(Phi(-mu/2) decreasing in mu)", PROOF, True),
])
_steps(["gdp.tail_limit"], [
    ("GDPT Thm 4.4's limit per mechanism in closed form: 0 (Laplace, pure), +inf (ICEA example), 1/sqrt(2) "
     "(SGD example, MPFR's sqrt rounded outward) or the Gaussian's exact mu rounded outward", PROOF, True),
])
_steps(["gdp.clip_rectify"], [
    ("b = (y+ - y-)/eps_h (GDPT Thm 4.7) in exact rationals, rounded outward once", PROOF, True),
])
_steps(["gdp.certify", "gdp.optimal_mu"], [
    ("argmax, breakpoints and mu_GDP at the argmax proposed (hints, mpmath bisection; untrusted)", ESTIMATE, False),
    ("profiles as MPFR directed-rounding enclosures at exact eps (closed forms, finite pairs, the App B "
     "refinement point bracketed by proved signs; expr: the expression walked on MPFR intervals, over a "
     "whole cell for the upper end)",
     PROOF, True),
    ("lower end: delta_m(argmax) < f(argmax) proved, so G_f(argmax) >= m", PROOF, True),
    ("upper end: each cell's sup f below delta_mu(b) at mu = hi, directed erfc / Mills ratio at the matching "
     "end", PROOF, True),
    ("tail status and limit in exact rationals or directed rounding (support ends, mu0, Mills-ratio "
     "conditions)", PROOF, True),
    ("gdp.certify: the recorded status and verdict re-read from the recorded head and tail by the "
     "producer's rule, the tail status from its recorded kind where that kind forces it (exact "
     "comparisons); tail.reason in a writer's form re-derived (its kind and status, a zero point "
     "against the largest privacy loss in exact rationals or directed rounding, bridge end, argmax, delta0)",
     PROOF, True),
])
_steps(["gdp.refinement_point"], [
    ("eps_i proposed by mpmath findroot (untrusted)", ESTIMATE, False),
    ("k's signs at the bracket ends in MPFR directed rounding; the positive zero is unique (monotonicity, "
     "derived in recheck.gdpt.refinement_bracket); delta^ = naive(eps_i) on the bracket", PROOF, True),
])
_steps(["composition.delta"], [
    ("composed profile: exact rational shifts; R = prod (1 - delta_i)^k_i exact below 2^16 bits, else "
     "exp(L), 1 - R = -expm1(L), L = sum k_i log1p(-delta_i), outward; the binomial weights from p^c "
     "(MPFR pow) by the ratio recurrence w_(y-1) = w_y y/(c-y+1) e^-eps, the hinge by expm1 and the sums "
     "in MPFR directed rounding (LT Cor 4.7, the Thm 4.6 recursion for up to 12 mechanisms, or one "
     "binomial law per guarantee type multiplied on the lattice of the shifts as exact packed integer "
     "products at unit 2^-K rounded outward, or convolved on exact keys)", PROOF, True),
    ("grid certificates: both rounded compositions re-derived, each inside its recorded enclosure; "
     "the gap compared with the rounded ends", PROOF, True),
])
_steps(["composition.eps"], [
    ("no finite eps, eps = 0 and eps = the total eps decided in exact rationals; d(0) <= delta proved "
     "in directed rounding for eps = 0", PROOF, True),
    ("the recorded ends bracket the root: the composed profile (directed rounding, as for "
     "composition.delta) above delta at lo and below at hi (non-increasing in eps)", PROOF, True),
])
_steps(["dp.rr64", "dp.implies"], [
    ("the 32 rows of GDPT's 4-output mechanism summed in MPFR directed rounding, the max taken end "
     "by end; delta0 exactly where eps >= eps0", PROOF, True),
    ("verdicts in exact rationals (rr64: delta0 = 1 or eps >= -eps0; implies for eps >= eps0: "
     "delta >= delta0) or on the directed enclosure against delta (implies); a recorded 'undecided' "
     "(the producer decides exactly) is refused where these decide", PROOF, True),
])
_steps(["dp.sigma_refinement"], [
    ("the minimiser bracketed by bisection on the sign of h = x (1-D) e^x / N + log(N / (1+a)), "
     "each sign proved in directed rounding (h strictly increasing: a unique root)", PROOF, True),
    ("delta0 = N / (1 + a) and sigma = -log(delta0) / x enclosed over the bracket in directed rounding",
     PROOF, True),
])
_steps(["dp.profile"], [
    ("each mechanism's closed form (GDPT eq. 2 with erfc / the Mills ratio, Laplace cdfs, 4-output and "
     "randomized-response hinge sums, subsampling, GDPT App B's eps_i by bisection on k's proved sign) "
     "in MPFR directed rounding", PROOF, True),
    ("expression profiles walked on MPFR intervals; an operation undefined on its enclosure answers "
     "exit 3", PROOF, True),
])
_steps(["finite.identity"], [
    ("both sides from the rational pmfs in exact rational arithmetic (hinge sums, PLD masses, the "
     "Neyman-Pearson trade-off and its inverse along its linear pieces, integer-order moments); "
     "holds iff the residual is exactly 0; parameters outside the source's domain refused", PROOF, True),
])
_steps(["lt.residual", "lt.partial-transform"], [
    ("integrals of e^(kt) delta(t) and of the PLD tails in closed form between the kinks (exact rational "
     "exponents and bounds; the Gaussian's two integrals by parts, derived in recheck/transforms.py), "
     "outside the region of convergence exit 3", PROOF, True),
    ("exp, expm1, Phi, log, cos / sin (widened by the argument's width) and the complex rectangle "
     "arithmetic in MPFR directed rounding; the profile and E_q from their own formulas", PROOF, True),
])


def accept_rests_on(kind: str) -> str:
    """PROOF when every step on ``kind``'s accept path is a proof, else ESTIMATE
    (also for a kind missing from :data:`STEPS`: unclassified is not proved)."""
    steps = STEPS.get(kind)
    if not steps:
        return ESTIMATE
    return PROOF if all(s == PROOF for _, s, on in steps if on) else ESTIMATE


def explain_steps(kind: str) -> str:
    """The lines ``verify --explain`` prints under a kind."""
    steps = STEPS.get(kind)
    if not steps:
        return "  steps: not classified (an accept of this kind is not a proof)"
    out = [f"  accept rests on: {accept_rests_on(kind)}"]
    for what, status, on in steps:
        tag = status if on else f"{status}, only chooses or refutes"
        out.append(f"  - [{tag}] {what}")
    return "\n".join(out)


# --------------------------------------------------------------------------- inputs that must agree

@dataclass(frozen=True)
class ClaimBound:
    """A claim kind whose verdict is "x <= inputs.KEY". ``stated``: its writers state that relation in
    ``claim.relation``, which must then be exactly {le, inputs.KEY}, the statement the kind prints (a pld.claim
    relation rewritten to "<= 1" beside inputs.delta 1e-5 was confirmed: adv49 L4). Not stated: no relation
    may be added (one beside inputs.delta replaced an undecided route verdict and confirmed a false 'holds':
    ref49 HIGH-1), and verify binds the recorded verdict to what the recorded enclosure decides against
    inputs.KEY all the same (an events.claim 'fails' relabelled 'undecided' was confirmed: adv49 L2)."""

    key: str
    stated: bool


#: every claim kind decided against an input bound: eps <= claimed_eps for those decided on an epsilon
#: bracket, delta(claimed_eps) <= delta for pld.claim and events.claim
CLAIM_BOUNDS = {"replace.claim": ClaimBound("claimed_eps", True), "bins.claim": ClaimBound("claimed_eps", True),
                "shuffle.claim": ClaimBound("claimed_eps", True), "pld.claim": ClaimBound("delta", True),
                "events.claim": ClaimBound("delta", False)}

#: result fields that repeat an input: a result that says otherwise states something false
MIRRORED = ("neighboring", "sensitivity_convention", "sampling")
#: an end of a calibrate.bracket named by its statement ("fails at result.ends.unsafe.value")
_END_NAME = re.compile(r"result\.ends\.([A-Za-z_]+)\.value")

#: the sampled-batch kinds read every key of their list (a missing one is refused too)
EXACT_INPUT_KINDS = frozenset(q for q in KIND_INPUTS if q.startswith(("bins.", "shuffle.")))


def check_agreement(quantity: str, claim: Mapping[str, Any], inputs: Mapping[str, Any],
                    result: Mapping[str, Any]) -> None:
    """Refuse a certificate whose parts state different things: a mirrored result field
    that differs from its input, an input key a sampled-batch kind does not read, or an
    claim whose relation is not the one its kind states (:data:`CLAIM_BOUNDS`)."""
    for key in MIRRORED:
        if key in result and key not in inputs:  # missing, not different: exit 2 naming it (adv50 L3)
            raise MalformedCertificate(f"inputs.{key} is missing (result.{key} repeats it; a certificate states "
                                       "its inputs)")
        if key in result and result[key] != inputs.get(key):
            raise CertificateRejected(f"result.{key}={str(result[key])[:40]!r} differs from "
                                      f"inputs.{key}={str(inputs.get(key))[:40]!r}")
    foreign = foreign_inputs(quantity, inputs)
    if foreign is not None:
        extra, allowed = foreign
        missing = sorted(allowed - set(inputs)) if quantity in EXACT_INPUT_KINDS else []
        if extra or missing:
            raise MalformedCertificate(f"inputs of {quantity}: " + "; ".join(
                ([f"unknown {', '.join(extra)}"] if extra else []) + ([f"missing {', '.join(missing)}"] if missing
                                                                      else []))
                + f" (allowed: {', '.join(sorted(allowed))}; a key the kind does not read defines nothing)")
    bound = CLAIM_BOUNDS.get(quantity)
    missing = [k for k in ("claimed_eps", "delta") if k not in inputs] if bound is not None else []
    if missing:  # every claim kind states both (a deleted one was exit 1, "differs", adv50 L3)
        raise MalformedCertificate(f"inputs of {quantity}: missing {', '.join(missing)} (a claim states "
                                   "(claimed_eps, delta))")
    if bound is not None and not bound.stated and "relation" in claim:
        raise MalformedCertificate(f"claim.relation: {quantity} states no relation (its claim is delta(claimed_eps) "
                                   f"<= inputs.{bound.key}, which verify reads from the inputs)")
    if bound is not None and bound.stated:
        rel = claim.get("relation")
        claimed = _exact(inputs.get(bound.key))
        # a missing or misshapen relation is malformed (exit 2); one of the right shape that states
        # another claim is false (exit 1, adv36 W1)
        shaped = claimed is not None and isinstance(rel, dict) and set(rel) == {"kind", "bound"}
        if not shaped or rel["kind"] != "le" or _exact(rel["bound"]) != claimed:
            said = "eps" if bound.key == "claimed_eps" else "delta(claimed_eps)"
            raise (CertificateRejected if shaped else MalformedCertificate)(
                f"{quantity}: claim.relation must be {{kind: le, bound: inputs.{bound.key}}} "
                f"(the claim is {said} <= {str(inputs.get(bound.key))[:40]!r}); got {str(rel)[:80]}")
    if quantity == "calibrate.bracket":
        # the statement says what holds or fails at each end it names: an end it names must be in
        # result.ends, where it is re-proved (a deleted end would leave "fails at ..." unproved)
        statement = claim.get("statement")
        ends = result.get("ends")
        named = sorted(set(_END_NAME.findall(statement))) if isinstance(statement, str) else []
        missing = [n for n in named if not isinstance(ends, Mapping) or n not in ends]
        if missing:
            raise MalformedCertificate(f"result.ends.{missing[0]} is missing, but claim.statement names it (a "
                                       "calibrate.bracket certificate re-proves every end its statement names)")
        _check_bracket_widths(result)
    else:
        _check_relative_width(result)


def _check_bracket_widths(result: Mapping[str, Any]) -> None:
    """A calibration states two widths to three digits, |a - b| / min(a, b) of two of its
    recorded ends (each re-proved by the second route): ``relative_width`` of the safe end
    and the first end that fails (``unsafe``, or ``pair_limit`` for fixed batches), and
    ``mechanism_relative_width`` of the safe and the ``unsafe`` end. Both are recomputed
    here exactly and rounded as the writer rounds."""
    ends = result.get("ends") if isinstance(result.get("ends"), Mapping) else {}

    def value(name: str) -> "Fraction | None":
        v = ends.get(name, {}).get("value") if isinstance(ends.get(name), Mapping) else None
        if isinstance(v, int) and not isinstance(v, bool):  # integer parameters (steps, epochs)
            return Fraction(v)
        return _exact(v)

    def width(a: "Fraction | None", b: "Fraction | None") -> "str | None":
        if a is None or b is None or min(a, b) <= 0:
            return None
        r = abs(a - b) / min(a, b)
        if r > 10**300:  # no float: no writer states it (a forged end of 1e3000 crashed here, exit 3, adv47 L2)
            return "a width past 1e300"
        return f"{float(r):.3g}"

    safe = value("safe")
    for key, partners in (("relative_width", ("unsafe", "pair_limit")), ("mechanism_relative_width", ("unsafe",))):
        stated = result.get(key)
        if stated is None:
            continue
        again = [w for w in (width(safe, value(p)) for p in partners) if w is not None]
        if stated not in again:
            raise CertificateRejected(f"result.{key}={str(stated)[:40]!r}, but the recorded ends give "
                                      f"{' or '.join(again) or 'no width (an end is missing)'}")


def last_digit_unit(text: str) -> "Fraction | None":
    """One unit in the last printed digit of a decimal (``2.50e-3``: 1e-5); None for what
    is not a plain decimal."""
    mant, _, exp = text.lower().partition("e")
    digits = mant.lstrip("+-")
    if not digits or len(text) > 1000 or not is_digits(digits.replace(".", "", 1)):
        return None
    try:
        e = int(exp) if exp else 0
    except ValueError:
        return None
    if abs(e) > 3000:
        return None
    decimals = len(digits.partition(".")[2])
    return Fraction(1, 10 ** (decimals - e)) if decimals >= e else Fraction(10 ** (e - decimals))


def _g3(x: Fraction) -> str:
    """x to 3 significant digits for a message, at any size: float() overflows past 1e308 (a
    0.1e-3000 end made the width 1e3000 and verify answered exit 3, OverflowError, adv51 L2)."""
    return mpmath.nstr(mpmath.mpf(x.numerator) / x.denominator, 3)


def _check_relative_width(result: Mapping[str, Any]) -> None:
    """``relative_width`` states (hi - lo) / lo of the producer's exact enclosure, to three
    digits; the recorded ends are its outward roundings, so exact lo is in [lo_p, lo_p + ulp]
    and exact hi in [hi_p - ulp, hi_p] (one unit of each end's last printed digit). The
    stated width must lie within those bounds (1% for its own three-digit rounding). Not for
    brackets whose lower end comes from another pair than the width (``why_upper_only``)."""
    stated, enc = result.get("relative_width"), result.get("enclosure")
    if stated is None or not isinstance(enc, Mapping) or "why_upper_only" in result:
        return
    r = _exact(stated)
    lo_t, hi_t = enc.get("lo"), enc.get("hi")
    lo, hi = _exact(lo_t), _exact(hi_t)
    if r is None or r < 0:
        raise MalformedCertificate(f"result.relative_width={str(stated)[:40]!r} is not a width")
    if lo is None or hi is None or lo <= 0 or hi < lo:
        return
    most = (hi - lo) / lo
    ulo, uhi = last_digit_unit(lo_t), last_digit_unit(hi_t)
    least = (hi - uhi - lo - ulo) / (lo + ulo) if ulo is not None and uhi is not None else Fraction(0)
    if r > most * Fraction(101, 100) or r < least * Fraction(99, 100):
        raise CertificateRejected(
            f"result.relative_width={str(stated)[:40]} does not fit the recorded enclosure, whose exact "
            f"width is between {_g3(max(least, Fraction(0)))} and {_g3(most)}")

"""`dpverify audit dpsgd`: certified two-sided DP-SGD accounting.

Schedule: ``--noise-multiplier S --sampling-rate Q --steps T``, or TF-Privacy
style ``--noise-multiplier S --dataset-size N --batch-size B --epochs E``
(q = B/N, T = ceil(E N / B)), or ``--events FILE`` (JSON, see
:func:`dpverify.pld.dpsgd.parse_events`). Query: ``--delta D`` gives the
enclosure of epsilon(D); ``--eps E`` the enclosure of delta(E);
``--claimed-eps E --delta D`` the verdict on "(E, D)-DP" (exit 0 holds,
1 fails, 3 undecided).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Optional

from .. import _validate as V
from ..certificate.build import PLD_SOURCE, pld_answer_certificate, pld_claim_certificate
from ..certificate.writer import typed_inputs
from ..errors import InvalidParameter, PrecisionExhausted
from ..limits import MAX_STEPS, SUPPLEMENTARY_EPS_MAX_WORK
from ..pld import dpsgd as S
from ..relation import SCHEDULE_RELATIONS, relation as _relation
from ..progress import Progress
from ..vocabulary import DIGITS_PLD, EVENTS, NEIGHBORING, SAMPLING, TIME_BUDGET
from ._common import (add_concept, add_output_options, add_schedule_options, emit, given_options, grid_check,
                      refuse_inapplicable)

ORDER = 60
SAMPLINGS = SAMPLING.choices

SOURCE = PLD_SOURCE


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("audit", help="certified audits of training-privacy claims",
                       description="Certified two-sided privacy accounting of training runs.")
    asub = p.add_subparsers(dest="audit_command", metavar="COMMAND", required=True)
    d = asub.add_parser(
        "dpsgd",
        help="DP-SGD (Poisson-subsampled Gaussian): enclosure of eps or delta, or a verdict",
        description="Certified enclosure of epsilon(delta) (--delta) or delta(eps) (--eps) of T "
        "steps of the Poisson-subsampled Gaussian mechanism, from a privacy-loss-distribution "
        "accountant whose every number is an upper or lower bound with a proof (AFA Thm 10/11, "
        "connect-the-dots discretisation, composition by a Fourier power with a proven "
        "floating-point error bound or by exact integer convolution). With --claimed-eps E and "
        "--delta D: the verdict on the claim (E, D)-DP: exit 0 holds, 1 fails, 3 undecided. "
        "Example: dpverify audit dpsgd --noise-multiplier 1.1 --dataset-size 60000 --batch-size 256 "
        "--epochs 60 --delta 1e-5 --claimed-eps 3",
    )
    add_schedule_options(d, sampling=SAMPLING, neighboring=NEIGHBORING)
    add_concept(d, EVENTS, dest="events")
    d.add_argument("--delta", metavar="D", help="delta budget in (0, 1): certify epsilon(D)")
    d.add_argument("--eps", metavar="E", help="epsilon >= 0: certify delta(E)")
    d.add_argument("--claimed-eps", metavar="E", help="with --delta: verdict on the claim (E, D)-DP, E >= 0")
    add_concept(d, DIGITS_PLD)
    add_concept(d, TIME_BUDGET)
    d.add_argument("--strict-width", action="store_true",
                   help="exit 3 when the memory cap leaves no finer grid and the width is missed, even "
                        "narrowly (by default a certified enclosure within 10x of the requested width is "
                        "then printed with a note, exit 0; a function of the inputs only). A time budget "
                        "that runs out is exit 3 either way, so the load never shapes an answer; e.g. "
                        "--digits 4 --time-budget 30 --strict-width")
    d.add_argument("--plot-eps", metavar="FILE", help="draw eps over training steps with its certified band (.png/.svg)")
    d.add_argument("--plot-profile", metavar="FILE", help="draw delta(eps) on a log scale with its band (.png/.svg)")
    d.add_argument("--plot-tradeoff", metavar="FILE", help="draw the f-DP trade-off curve with its band (.png/.svg)")
    d.add_argument("--statement", choices=("md", "tex", "txt"),
                   help="also print a ready-to-paste privacy statement (with --delta, or a claim that holds)")
    add_output_options(d)
    d.set_defaults(func=_dpsgd)
    from .corpus import add_corpus_parser

    add_corpus_parser(asub)


def _schedule(args: argparse.Namespace) -> tuple[list, dict[str, Any], Optional[str]]:
    """Events and the exact input strings to record."""
    if args.events:
        if any(getattr(args, k) for k in ("noise_multiplier", "sampling_rate", "steps", "dataset_size", "batch_size", "epochs")):
            raise InvalidParameter("events", "give either --events or the schedule options, not both")
        from ..events import json_format as J
        from ..schemas import read_text

        # the one input-file reader: size cap, folder, byte-order mark and bytes that
        # are not UTF-8 (a UnicodeDecodeError here was an internal error, exit 4)
        text, _ = read_text(args.events, "events")

        tree, rel = J.parse_document(text, where=f"{args.events}: ")  # strict: unknown/missing keys exit 2
        if not J.legacy_only(text):
            return ("tree", tree), {}, rel
        # legacy items (all keys present, checked above): the pld.* route and certificates
        events, _ = S.parse_events(text)
        return events, {"events": [e.to_json() for e in events]}, rel
    if args.noise_multiplier is None:
        raise InvalidParameter("noise_multiplier", "--noise-multiplier S is required (> 0)")
    tf = [args.dataset_size, args.batch_size, args.epochs]
    if any(x is not None for x in tf):
        if args.sampling_rate is not None or args.steps is not None:
            raise InvalidParameter("dataset_size", "give --dataset-size/--batch-size/--epochs or "
                                   "--sampling-rate/--steps, not both")
        for name, x in zip(("dataset_size", "batch_size", "epochs"), tf):
            if x is None:
                raise InvalidParameter(name, f"--{name.replace('_', '-')} is required with the TF-Privacy style options")
        ev, rec = S.tf_privacy_inputs(args.noise_multiplier, args.dataset_size, args.batch_size, args.epochs)
        return [ev], rec, None
    if args.sampling_rate is None:
        raise InvalidParameter("sampling_rate", "--sampling-rate Q is required (in (0, 1])")
    if args.steps is None:
        raise InvalidParameter("steps", f"--steps T is required (an integer in [1, {MAX_STEPS}])")
    ev = S.GaussianSteps.of(args.noise_multiplier, args.sampling_rate, args.steps)
    return [ev], {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate,
                  "steps": ev.count}, None


#: the options that belong to one way of giving the schedule or one query
#: (every other option applies to all); docs/reference/inputs.md, "refusal rules"
_APPLIES = {
    "events": {"events"},
    "noise_multiplier": {"steps", "tf"},
    "sampling_rate": {"steps"},
    "steps": {"steps"},
    "dataset_size": {"tf"},
    "batch_size": {"tf"},
    "epochs": {"tf"},
    "digits": {"enclosure"},
}
_MODES = {
    "schedule": {
        "events": "--events FILE",
        "steps": "--noise-multiplier/--sampling-rate/--steps",
        "tf": "--noise-multiplier/--dataset-size/--batch-size/--epochs",
    },
    "query": {"enclosure": "--delta D or --eps E (an enclosure)", "claim": "--claimed-eps E (a verdict)"},
}


def _modes(args: argparse.Namespace) -> dict[str, str]:
    tf = any(x is not None for x in (args.dataset_size, args.batch_size, args.epochs))
    return {"schedule": "events" if args.events else ("tf" if tf else "steps"),
            "query": "claim" if args.claimed_eps is not None else "enclosure"}


def _dpsgd(args: argparse.Namespace) -> int:
    refuse_inapplicable(args, _APPLIES, _MODES, _modes(args))
    if args.sampling != "poisson":
        return _other_sampling(args)
    events, inputs, rel_json = _schedule(args)
    if isinstance(events, tuple) and events and events[0] == "tree":
        try:
            return _tree(args, events[1], rel_json)
        except InvalidParameter as exc:
            # a refusal of the tree's contents names the file, as the reader's refusals do (the
            # library's "the event tree repeats a mechanism ... times" did not, adv47 L4)
            if exc.name != "events" or exc.message.startswith(f"{args.events}:"):
                raise
            raise InvalidParameter("events", f"{args.events}: {exc.message}") from None
    rel = _relation(args.neighboring or rel_json or "add-remove", allowed=SCHEDULE_RELATIONS)
    budget = V.seconds("time_budget", args.time_budget)
    inputs["neighboring"] = rel.value
    if args.delta is None and args.eps is None:
        raise InvalidParameter("delta", "give --delta D (certify epsilon) or --eps E (certify delta)")
    if args.delta is not None and args.eps is not None:
        raise InvalidParameter("eps", "give either --delta or --eps, not both")
    if args.statement and (args.eps is not None or args.events):
        raise InvalidParameter("statement", "--statement needs one DP-SGD schedule and --delta "
                               "(a statement gives epsilon for a delta)")
    plots = {k: getattr(args, f"plot_{k}") for k in ("eps", "profile", "tradeoff") if getattr(args, f"plot_{k}")}
    if plots:
        from ..plots import check_output

        if args.events:
            raise InvalidParameter("plot_eps", "pictures cover one DP-SGD schedule (not --events)")
        if "eps" in plots and args.delta is None:
            raise InvalidParameter("plot_eps", "--plot-eps needs --delta D")
        for k, f in plots.items():
            check_output(f, f"plot_{k}")
    if rel.value == "replace-one" and any(getattr(e, "sampling_rate", 1) != 1 for e in events):
        return _poisson_replace_one(args, events, inputs, budget)
    progress = Progress("audit")
    try:
        if args.claimed_eps is not None:
            if args.delta is None:
                raise InvalidParameter("claimed_eps", "--claimed-eps needs --delta D")
            if args.strict_width:
                raise InvalidParameter("strict_width", "--strict-width applies to enclosures, not to "
                                       "--claimed-eps verdicts")
            return _claim(args, events, inputs, rel, budget, progress)
        digits = V.integer("digits", args.digits, lo=1, hi=DIGITS_PLD.hi)
        # the certificate as it will be written, priced before each grid level (grid_check)
        priced = dict(inputs, digits=digits)
        if args.delta is not None:
            V.open_unit("delta", args.delta)
            priced["delta"] = args.delta
            ans = S.epsilon(events, args.delta, neighboring=rel, digits=digits,
                            time_budget=budget, progress=progress, strict_width=args.strict_width,
                            check_grid=grid_check(args, "pld.epsilon", typed_inputs(priced), digits))
            quantity, name = "pld.epsilon", "epsilon(delta)"
            inputs["delta"] = args.delta
        else:
            priced["eps"] = args.eps
            ans = S.delta(events, args.eps, neighboring=rel, digits=digits,
                          time_budget=budget, progress=progress, strict_width=args.strict_width,
                          check_grid=grid_check(args, "pld.delta", typed_inputs(priced), digits))
            quantity, name = "pld.delta", "delta(eps)"
            inputs["eps"] = args.eps
    finally:
        progress.close()
    inputs["digits"] = digits
    cert = pld_answer_certificate(quantity=quantity, inputs=inputs, answer=ans)
    rw = ans.details()["relative_width"]
    width = "relative width unbounded (lower end 0)" if rw is None else f"relative width {rw}"
    emit(args, cert, f"{name} in {ans.enclosure.short(digits + 3)} ({rel.value}; {width}, {ans.seconds:.1f} s)")
    if ans.note:
        print(f"note: {ans.note}", file=sys.stderr)
    _statement(args, cert)
    _plots(args, events, rel.value, inputs)
    return 0


def _tree(args: argparse.Namespace, tree: Any, rel_json: Optional[str]) -> int:
    """The --events path for DpEvent-style trees."""
    from ..certificate.events_cert import answer_certificate, claim_certificate
    from ..events import api as A
    from ..relation import relation

    rel = relation(args.neighboring) if args.neighboring else None
    rel = A.relation_of(rel_json, rel)
    budget = V.seconds("time_budget", args.time_budget)
    if args.delta is None and args.eps is None:
        raise InvalidParameter("delta", "give --delta D (certify epsilon) or --eps E (certify delta)")
    if args.delta is not None and args.eps is not None:
        raise InvalidParameter("eps", "give either --delta or --eps, not both")
    for opt in ("statement", "plot_eps", "plot_profile", "plot_tradeoff"):
        if getattr(args, opt, None):
            raise InvalidParameter(opt, f"--{opt.replace('_', '-')} does not apply to DpEvent-tree --events files "
                                        "(only to Poisson-subsampled Gaussian schedules)")
    from ..events import model as EM
    from ..sampling import replace as GP

    if isinstance(tree, EM.BallsInBins):  # answered whole, by the bins.* kinds
        try:
            r = A.bins_run(tree, rel)
        except InvalidParameter as exc:  # name the file and the node's key, not the schedule option
            key = {"noise_multiplier": "event.noise_multiplier"}.get(exc.name, exc.name)
            where = "neighboring" if key == "neighboring" else f"balls_in_bins.{key}"
            raise InvalidParameter("events", f"{args.events}: {where}: {exc.message}") from None
        return _bins_answer(args, r)
    if GP.tree_route(tree, rel):  # raises with both reasons when neither route covers the tree
        from ..certificate import replace_cert as RC

        return _replace_one_answer(
            args, RC.tree_inputs(tree),
            lambda: A.epsilon(tree, args.delta, neighboring=rel, time_budget=budget).details["bracket"],
            lambda: A.delta(tree, args.eps, neighboring=rel, time_budget=budget).details["bracket"], "the event tree")
    from ..ball import exact_str, parse_exact
    from ..events.json_format import event_to_json

    def priced(quantity: str, digits: int, **query: str) -> Any:
        # an enclosure's certificate, as certificate.events_cert records its inputs, priced before each
        # grid level (the writer refuses it after the run past the same price)
        return grid_check(args, quantity, typed_inputs({"event": event_to_json(tree), "neighboring": rel.value,
                                                        **query}), digits)

    progress = Progress("audit")
    try:
        if args.claimed_eps is not None:
            if args.delta is None:
                raise InvalidParameter("claimed_eps", "--claimed-eps needs --delta D")
            V.open_unit("delta", args.delta)
            V.nonnegative("claimed_eps", args.claimed_eps)  # named as --claimed-eps (the library says eps)
            # not priced: the writer re-proves an events.claim past the cap, which verify may decide on a
            # coarser grid (ref51b MEDIUM-2: priced past the knot cap at 2^-18, accepted at 2^-14)
            verdict, ans = A.check_claim(tree, args.claimed_eps, args.delta, neighboring=rel,
                                         time_budget=budget, progress=progress)
            cert = claim_certificate(tree, verdict, ans, rel.value, claimed_eps=args.claimed_eps, delta=args.delta)
            emit(args, cert, f"({args.claimed_eps}, {args.delta})-DP under {rel.value}: "
                             f"{verdict.outcome.value} ({verdict.reason})")
            return verdict.exit_code()
        digits = V.integer("digits", args.digits, lo=1, hi=DIGITS_PLD.hi)
        if args.delta is not None:
            V.open_unit("delta", args.delta)
            ans = A.epsilon(tree, args.delta, neighboring=rel, digits=digits, time_budget=budget, progress=progress,
                            check_grid=priced("events.epsilon", digits, delta=exact_str(parse_exact(args.delta, "delta"))))
        else:
            ans = A.delta(tree, args.eps, neighboring=rel, digits=digits, time_budget=budget, progress=progress,
                          check_grid=priced("events.delta", digits, eps=exact_str(parse_exact(args.eps, "eps"))))
    finally:
        progress.close()
    cert = answer_certificate(tree, ans, delta=args.delta, eps=args.eps, digits=digits)
    rw = ans.to_json().get("relative_width")
    if ans.details.get("upper_bound_only") or ans.details.get("why_upper_only"):
        width = f"an upper bound only: {ans.details.get('why_upper_only', 'not tight')}"
    elif rw is None:
        width = "no relative width (an exact or one-sided end)"
    else:
        width = f"relative width {rw}"
    emit(args, cert, f"{ans.quantity} in {ans.enclosure.short(digits + 3)} ({rel.value}; {ans.method}; "
                     f"{width}, {ans.seconds:.1f} s)")
    return 0


def _plots(args: argparse.Namespace, events: list, rel: str, inputs: dict) -> None:
    from ..plots import figures as F

    per = None
    if "batch_size" in inputs:
        per = int(inputs["batch_size"]) / int(inputs["dataset_size"])
    for key, draw in (("eps", lambda f: F.eps_over_steps(events, args.delta, rel, f, per)),
                      ("profile", lambda f: F.privacy_profile(events, rel, f)),
                      ("tradeoff", lambda f: F.tradeoff_curve(events, rel, f))):
        f = getattr(args, f"plot_{key}", None)
        if f:
            draw(f)
            print(f"wrote {f}", file=sys.stderr)


def _statement(args: argparse.Namespace, cert: dict) -> None:
    if getattr(args, "statement", None):
        from ..statement import statement

        print(statement(cert, args.statement), end="")


def _claim(args, events, inputs, rel, budget, progress) -> int:
    t0 = time.monotonic()
    inputs.update({"claimed_eps": args.claimed_eps, "delta": args.delta})
    verdict, ans = S.check_claim(events, args.claimed_eps, args.delta, neighboring=rel,
                                 time_budget=budget, progress=progress,
                                 check_grid=grid_check(args, "pld.claim", typed_inputs(inputs), None))
    cert = pld_claim_certificate(inputs=inputs, verdict=verdict, answer=ans)
    line = (f"({args.claimed_eps}, {args.delta})-DP under {rel.value}: "
            f"{verdict.outcome.value} ({verdict.reason})")
    # the one --time-budget covers the claim and this line together (it had a whole budget of its
    # own: a 5 s budget ran 11 s); a line the clock stops says so, and is never in the certificate
    left = budget - (time.monotonic() - t0)
    try:  # the certified epsilon itself, not only delta at the claimed eps: informational, so at a
        # static cost (the claim is decided above; adv35 P1)
        if left <= 0:
            raise PrecisionExhausted(f"the time budget of {budget:g} s was spent on the claim")
        eps_ans = S.epsilon(events, args.delta, neighboring=rel, digits=3, time_budget=left,
                            max_work=SUPPLEMENTARY_EPS_MAX_WORK)
        line += f"; certified eps({args.delta}) in {eps_ans.enclosure.short(6)}"
    except PrecisionExhausted as exc:
        line += f"; certified eps({args.delta}): not resolved ({exc})"
    emit(args, cert, line)
    if verdict.outcome.value == "holds":
        _statement(args, cert)
    elif getattr(args, "statement", None):
        print("dpverify: no statement: the claim is not proved", file=sys.stderr)
    return verdict.exit_code()


def _other_sampling(args: argparse.Namespace) -> int:
    """``--sampling`` other than Poisson: shuffling answers a certified bracket
    (:mod:`dpverify.sampling.shuffle`); the rest is refused with the route that covers it."""
    if args.sampling == "without-replacement":
        # the events file states each step's sampling itself; a flag beside it could only contradict it
        # (it said "give them as --events" to a user who had: adv47 L3)
        if args.events:
            raise InvalidParameter("sampling", f"{args.events} states each step's sampling itself (a "
                                   "sampled_without_replacement event for fixed batches): drop --sampling "
                                   "without-replacement and give --events alone")
        raise InvalidParameter("sampling", "fixed batches drawn independently at every step: describe them in an "
                               "--events file (a sampled_without_replacement event) and give --events without "
                               "--sampling; --sampling without-replacement takes no schedule options here")
    if "digits" in given_options(args):
        # read nowhere on these routes: --digits 16 was accepted and ignored (the width is the route's own)
        raise InvalidParameter("digits", f"--digits does not apply with --sampling {args.sampling}: its enclosure's "
                               "width is the route's own (shuffling: the gap between two theorems; balls-in-bins: "
                               "the grid of Chua et al.'s pair), not a requested accuracy")
    if args.sampling == "balls-in-bins":
        return _balls_in_bins(args)
    from ..certificate import shuffle_cert as C
    from ..sampling import shuffle as SH

    _epoch_form(args)
    r = SH.run(args.noise_multiplier, args.dataset_size, args.batch_size, args.epochs, args.sampling,
               args.neighboring or "add-remove")
    budget = V.seconds("time_budget", args.time_budget)  # stops the run (exit 3), never shapes it
    return _epoch_answer(
        args, C, lambda: SH.bracket_eps(r, args.delta, time_budget=budget),
        lambda: SH.bracket_delta(r, args.eps, time_budget=budget), r,
        f"{r.sampling} batches ({r.relation.value}, T={r.batches} batches x {r.epochs} epochs)",
        "lower end from a concrete dataset pair (max of batch sums), upper end without amplification (mu = "
        f"{SH.sensitivity(r.relation)} sqrt(E)/sigma)")


def _epoch_form(args: argparse.Namespace) -> None:
    """The options of the epochs form (--sampling other than poisson), checked before any work."""
    for opt in ("events", "sampling_rate", "steps"):
        if getattr(args, opt):
            raise InvalidParameter(opt, f"--sampling {args.sampling} takes --noise-multiplier, --dataset-size, "
                                        "--batch-size and --epochs (every record in exactly one batch per epoch)")
    for opt in ("statement", "plot_eps", "plot_profile", "plot_tradeoff"):
        if opt == "statement":
            continue  # a statement states the certified upper end and names each bound (:mod:`dpverify.statement`)
        if getattr(args, opt, None):
            raise InvalidParameter(opt, f"--{opt.replace('_', '-')} covers Poisson sampling only (not --sampling "
                                        f"{args.sampling})")
    if getattr(args, "statement", None) and args.delta is None:
        raise InvalidParameter("statement", "--statement needs --delta (a statement gives epsilon for a delta)")
    for name in ("noise_multiplier", "dataset_size", "batch_size", "epochs"):
        if getattr(args, name) is None:
            raise InvalidParameter(name, f"--{name.replace('_', '-')} is required with --sampling {args.sampling}")
    if args.delta is None and args.eps is None:
        raise InvalidParameter("delta", "give --delta D (certify epsilon) or --eps E (certify delta)")
    if args.delta is not None and args.eps is not None:
        raise InvalidParameter("eps", "give either --delta or --eps, not both")
    if args.claimed_eps is not None:
        if args.delta is None:
            raise InvalidParameter("claimed_eps", "--claimed-eps needs --delta D")
        V.nonnegative("claimed_eps", args.claimed_eps)  # E >= 0 on every sampling, as --help says


def _epoch_answer(args: argparse.Namespace, C: Any, eps_of: Any, delta_of: Any, r: Any, where: str,
                  note: str) -> int:
    """Answer a verdict (--claimed-eps), epsilon(delta) or delta(eps) from a certificate module
    ``C`` (bracket_certificate, claim_certificate, decide) and the two enclosure functions."""
    if args.claimed_eps is not None:
        b = eps_of()
        verdict, why = C.decide(b, args.claimed_eps)
        cert = C.claim_certificate(r, b, verdict, why, claimed_eps=args.claimed_eps, delta=args.delta)
        emit(args, cert, f"({args.claimed_eps}, {args.delta})-DP with {where}: {verdict} ({why})")
        if verdict == "holds":
            _statement(args, cert)
        elif getattr(args, "statement", None):
            print("dpverify: no statement: the claim is not proved", file=sys.stderr)
        return {"holds": 0, "fails": 1}.get(verdict, 3)
    if args.delta is not None:
        b = eps_of()
        cert = C.bracket_certificate(r, b, delta=args.delta)
        name = f"epsilon({args.delta})"
    else:
        b = delta_of()
        cert = C.bracket_certificate(r, b, eps=args.eps)
        name = f"delta({args.eps})"
    emit(args, cert, f"{name} with {where} in [{b['lo']}, {b['hi']}]: {note}")
    if args.delta is not None:
        _statement(args, cert)
    return 0


def _balls_in_bins(args: argparse.Namespace) -> int:
    """Balls-in-bins batches: the certified enclosure of the pair of Chua et al. (AISTATS
    2025) for one epoch (:mod:`dpverify.sampling.balls`), composed over E independently
    re-allocated epochs by AFA Thm 10 (:mod:`dpverify.sampling.balls_epochs`)."""
    from ..sampling import bins as BB

    _epoch_form(args)
    return _bins_answer(args, BB.run(args.noise_multiplier, args.dataset_size, args.batch_size, args.epochs,
                                     args.neighboring or "add-remove"))


def _bins_answer(args: argparse.Namespace, r: Any) -> int:
    """The bins.* answer of one balls-in-bins run (options or a balls_in_bins event document)."""
    from ..certificate import bins_cert as C
    from ..sampling import bins as BB

    if args.claimed_eps is not None:
        if args.delta is None:
            raise InvalidParameter("claimed_eps", "--claimed-eps needs --delta D")
        V.nonnegative("claimed_eps", args.claimed_eps)  # E >= 0 on every sampling, as --help says
    budget = V.seconds("time_budget", args.time_budget)  # stops the run (exit 3), never shapes it
    return _epoch_answer(
        args, C, lambda: BB.enclose_eps(r, args.delta, time_budget=budget),
        lambda: BB.enclose_delta(r, args.eps, time_budget=budget), r,
        f"balls-in-bins batches ({r.relation.value}, T={r.batches} batches, "
        + ("1 epoch)" if r.epochs == 1 else f"{r.epochs} epochs, each re-allocated independently)"),
        "the dominating pair of Chua et al. (AISTATS 2025), enclosed on a linear grid with outward rounding"
        + ("" if r.epochs == 1 else f", composed over {r.epochs} epochs (AFA Thm 10)"))


def _poisson_replace_one(args: argparse.Namespace, events: list, inputs: dict, budget: float) -> int:
    """Poisson sampling under replace-one: no dominating pair is proved, so a bracket
    from two theorems about the whole run (:mod:`dpverify.sampling.replace`)."""
    from ..sampling import replace as R

    if args.events:
        raise InvalidParameter("neighboring", "Poisson sampling under replace-one: give the schedule as a DpEvent "
                               "tree (an --events document with \"event\") or as schedule options")
    for opt in ("plot_eps", "plot_profile", "plot_tradeoff"):
        if getattr(args, opt, None):
            raise InvalidParameter(opt, f"--{opt.replace('_', '-')} does not apply to the replace-one bracket "
                                        "of Poisson sampling")
    return _replace_one_answer(args, inputs, lambda: R.poisson_replace_one_epsilon(events, args.delta, time_budget=budget),
                               lambda: R.poisson_replace_one_delta(events, args.eps, time_budget=budget),
                               "Poisson-sampled DP-SGD")


def _replace_one_answer(args: argparse.Namespace, inputs: dict, eps_of: Any, delta_of: Any, what: str) -> int:
    """The group-privacy bracket of a schedule or an event tree (kinds replace.*): a verdict
    (--claimed-eps), epsilon(delta) or delta(eps)."""
    from ..certificate import replace_cert as RC

    if getattr(args, "statement", None):
        raise InvalidParameter("statement", "--statement does not apply to the replace-one bracket of Poisson "
                                            "sampling (a statement states one certified epsilon of a tight pair)")
    if args.strict_width:
        raise InvalidParameter("strict_width", "--strict-width does not apply to the replace-one bracket of "
                                               "Poisson sampling (its width is the gap between two theorems)")
    if "digits" in given_options(args):  # read nowhere here: accepted and ignored, --digits 16 wrote a certificate
        raise InvalidParameter("digits", "--digits does not apply to the replace-one bracket of Poisson sampling "
                                         "(its width is the gap between two theorems, not a requested accuracy)")
    if args.claimed_eps is not None:
        if args.delta is None:
            raise InvalidParameter("claimed_eps", "--claimed-eps needs --delta D")
        V.nonnegative("claimed_eps", args.claimed_eps)  # E >= 0 on every sampling, as --help says
    if args.delta is not None:
        V.open_unit("delta", args.delta)
        b = eps_of()
    else:
        V.nonnegative("eps", args.eps)
        b = delta_of()
    where = f"{what} under replace-one (Poisson sampling)"
    if args.claimed_eps is not None:
        verdict, why = RC.decide(b, args.claimed_eps)
        cert = RC.claim_certificate(inputs, b, verdict, why, claimed_eps=args.claimed_eps, delta=args.delta)
        emit(args, cert, f"({args.claimed_eps}, {args.delta})-DP for {where}: {verdict} ({why})")
        return {"holds": 0, "fails": 1}.get(verdict, 3)
    if args.delta is not None:
        cert = RC.bracket_certificate(inputs, b, delta=args.delta)
        name = f"epsilon({args.delta})"
    else:
        cert = RC.bracket_certificate(inputs, b, eps=args.eps)
        name = f"delta({args.eps})"
    emit(args, cert, f"{name} for {where} in [{b['lo']}, {b['hi']}]: lower end from a zero-contribution "
                     "replacement (the remove direction), upper end by group privacy over add/remove "
                     f"({b['seconds']:.1f} s)")
    return 0

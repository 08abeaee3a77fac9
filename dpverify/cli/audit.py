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
from ..ball import exact_str
from ..certificate import make_certificate, quantity_certificate
from ..errors import InvalidParameter
from ..pld import dpsgd as S
from ..pld.pairs import neighboring as parse_relation
from ._common import add_output_options, emit

ORDER = 60

SOURCE = "AFA Def 7, Thm 10, Thm 11; Doroshenko et al. 2022 (connect-the-dots)"


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
        "connect-the-dots discretisation, exact integer convolution). With --claimed-eps E and "
        "--delta D: the verdict on the claim (E, D)-DP: exit 0 holds, 1 fails, 3 undecided.",
    )
    d.add_argument("--noise-multiplier", metavar="S", help="noise multiplier sigma, > 0")
    d.add_argument("--sampling-rate", metavar="Q", help='Poisson rate q in (0, 1]; fractions like "256/60000"')
    d.add_argument("--steps", metavar="T", help=f"number of steps, 1..{S.MAX_STEPS}")
    d.add_argument("--dataset-size", metavar="N", help="TF-Privacy style: dataset size (q = B/N)")
    d.add_argument("--batch-size", metavar="B", help="TF-Privacy style: expected batch size")
    d.add_argument("--epochs", metavar="E", help="TF-Privacy style: epochs; steps = ceil(E N / B)")
    d.add_argument("--events", metavar="FILE", help="JSON event description (heterogeneous steps)")
    d.add_argument("--delta", metavar="D", help="delta budget in (0, 1): certify epsilon(D)")
    d.add_argument("--eps", metavar="E", help="epsilon >= 0: certify delta(E)")
    d.add_argument("--claimed-eps", metavar="E", help="with --delta: verdict on the claim (E, D)-DP")
    d.add_argument("--neighboring", default=None, metavar="REL",
                   help="add-remove (default), add, remove, or replace-one (sampling rate 1 only)")
    d.add_argument("--digits", default="4", metavar="N",
                   help="requested relative width 10^-N of the enclosure (1..8, default 4)")
    d.add_argument("--time-budget", default="600", metavar="SEC",
                   help="give up (exit 3, stating the width reached) after about SEC seconds (default 600)")
    add_output_options(d)
    d.set_defaults(func=_dpsgd)


class _Progress:
    """A tiny progress line on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()
        self.t0 = time.monotonic()

    def __call__(self, frac: float, msg: str) -> None:
        if self.on:
            bar = "#" * int(20 * frac)
            sys.stderr.write(f"\r[{bar:<20}] {msg} ({time.monotonic() - self.t0:.1f} s)   ")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * 78 + "\r")
            sys.stderr.flush()


def _schedule(args: argparse.Namespace) -> tuple[list, dict[str, Any], Optional[str]]:
    """Events and the exact input strings to record."""
    if args.events:
        if any(getattr(args, k) for k in ("noise_multiplier", "sampling_rate", "steps", "dataset_size")):
            raise InvalidParameter("events", "give either --events or the schedule options, not both")
        try:
            text = open(args.events, encoding="utf-8").read()
        except OSError as exc:
            raise InvalidParameter("events", f"cannot read {args.events!r} ({exc.strerror})") from None
        events, rel = S.parse_events(text)
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
        q, steps = S.tf_privacy_schedule(args.dataset_size, args.batch_size, args.epochs)
        ev = S.GaussianSteps.of(args.noise_multiplier, q, steps)
        rec = {"noise_multiplier": args.noise_multiplier, "sampling_rate": exact_str(q), "steps": steps,
               "dataset_size": args.dataset_size, "batch_size": args.batch_size, "epochs": args.epochs,
               "steps_rule": "steps = ceil(epochs * dataset_size / batch_size), q = batch_size / dataset_size"}
        return [ev], rec, None
    if args.sampling_rate is None:
        raise InvalidParameter("sampling_rate", "--sampling-rate Q is required (in (0, 1])")
    if args.steps is None:
        raise InvalidParameter("steps", f"--steps T is required (an integer in [1, {S.MAX_STEPS}])")
    ev = S.GaussianSteps.of(args.noise_multiplier, args.sampling_rate, args.steps)
    return [ev], {"noise_multiplier": args.noise_multiplier, "sampling_rate": args.sampling_rate,
                  "steps": ev.count}, None


def _dpsgd(args: argparse.Namespace) -> int:
    events, inputs, rel_json = _schedule(args)
    rel = parse_relation(args.neighboring or rel_json or "add-remove")
    budget = float(V.positive("time_budget", args.time_budget))
    inputs["neighboring"] = rel.value
    if args.delta is None and args.eps is None:
        raise InvalidParameter("delta", "give --delta D (certify epsilon) or --eps E (certify delta)")
    if args.delta is not None and args.eps is not None:
        raise InvalidParameter("eps", "give either --delta or --eps, not both")
    progress = _Progress()
    try:
        if args.claimed_eps is not None:
            if args.delta is None:
                raise InvalidParameter("claimed_eps", "--claimed-eps needs --delta D")
            return _claim(args, events, inputs, rel, budget, progress)
        digits = V.integer("digits", args.digits, lo=1, hi=8)
        if args.delta is not None:
            V.open_unit("delta", args.delta)
            ans = S.epsilon(events, args.delta, neighboring=rel, digits=digits,
                            time_budget=budget, progress=progress)
            quantity, name = "pld.epsilon", "epsilon(delta)"
            inputs["delta"] = args.delta
        else:
            ans = S.delta(events, args.eps, neighboring=rel, digits=digits,
                          time_budget=budget, progress=progress)
            quantity, name = "pld.delta", "delta(eps)"
            inputs["eps"] = args.eps
    finally:
        progress.close()
    inputs["digits"] = digits
    cert = quantity_certificate(
        quantity=quantity,
        statement=f"{name} of the composed (Poisson-subsampled) mechanisms under the "
        f"{rel.value} relation lies in [lo, hi]",
        source=SOURCE,
        inputs=inputs,
        enclosure=ans.enclosure,
        algorithm="pessimistic connect-the-dots and optimistic quantised pairs on the grid "
        f"2^-{ans.grid_exponent}, exact fmpz_poly convolution in units of 2^-{ans.unit_bits}, "
        "square-and-multiply, certified suffix-sum queries",
        extra_result=ans.details(),
    )
    emit(args, cert, f"{name} in {ans.enclosure.short(digits + 3)} ({rel.value}; relative width "
                     f"{ans.details()['relative_width']}, {ans.seconds:.1f} s)")
    return 0


def _claim(args, events, inputs, rel, budget, progress) -> int:
    verdict, ans = S.check_claim(events, args.claimed_eps, args.delta, neighboring=rel,
                                 time_budget=budget, progress=progress)
    inputs.update({"claimed_eps": args.claimed_eps, "delta": args.delta})
    result: dict[str, Any] = {"verdict": verdict.outcome.value, "reason": verdict.reason}
    if ans is not None:
        result["quantity"] = f"delta(eps={args.claimed_eps})"
        result["enclosure"] = ans.enclosure.to_json()
        result.update(ans.details())
    cert = make_certificate(
        claim={"quantity": "pld.claim",
               "statement": f"the composed mechanism is (claimed_eps, delta)-DP under {rel.value}: "
                            "certified delta(claimed_eps) <= delta",
               "source": SOURCE, "relation": {"kind": "le", "bound": exact_str(V.open_unit("delta", args.delta))}},
        inputs=inputs,
        result=result,
        precision_bits=ans.unit_bits if ans is not None else 0,
        algorithm="PLD accountant, grid refined until the verdict is decided",
    )
    emit(args, cert, f"({args.claimed_eps}, {args.delta})-DP under {rel.value}: "
                     f"{verdict.outcome.value} ({verdict.reason})")
    return verdict.exit_code()

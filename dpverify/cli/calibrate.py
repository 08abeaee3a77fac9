"""`dpverify calibrate dpsgd`: a certified bracket for the one DP-SGD parameter
left out (noise multiplier, steps, sampling rate or batch size) meeting a
target (eps, delta).

Example::

    dpverify calibrate dpsgd --target-eps 3 --delta 1e-5 \\
        --sampling-rate 256/60000 --steps 14063

Exit 0: bracket proved; 2: bad input, or a bracket whose ends `dpverify verify` could
not re-prove within its budget (priced before the work; the message names --digits or
--delta and the cap); 3: budget spent or no value meets the target (the message says
which, with its proof).
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import _validate as V
from ..ball import brief_str, exact_str
from ..api import calibrate
from ..calibration import Calibration
from ..certificate import make_certificate
from ..errors import InvalidParameter
from ..progress import Progress
from ..vocabulary import DIGITS_CALIBRATE, NEIGHBORING_CALIBRATE, SAMPLING_CALIBRATE, TIME_BUDGET
from ._common import add_concept, add_output_options, add_schedule_options, emit, given_options

ORDER = 62




def safe_epochs(steps: int, batch_size: int, dataset_size: int) -> str:
    """The epochs of ``steps`` safe steps at batch B of N records, to 6 digits rounded DOWN: epochs E
    run ceil(E N / B) steps (the TF Privacy rule the audit reads), so only an E at most S B / N keeps
    the safe S steps. To nearest, 2761 steps at 256 of 60000 printed 11.7803 epochs, which runs 2762
    steps and fails the target (adv47 H1)."""
    from fractions import Fraction

    from ..ball import rational_decimal

    return rational_decimal(Fraction(steps * batch_size, dataset_size), 6, upward=False)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("calibrate", help="certified calibration: which sigma / steps / rate meets (eps, delta)",
                       description="Certified calibration of one free parameter.")
    csub = p.add_subparsers(dest="calibrate_command", metavar="TEMPLATE", required=True)
    d = csub.add_parser(
        "dpsgd",
        help="DP-SGD (Poisson sampling, add-remove): leave out the parameter to calibrate",
        description="Leave out exactly one of --noise-multiplier, --steps (or --epochs), "
        "--sampling-rate (or --batch-size with --dataset-size): dpverify returns a bracket "
        "[lo, hi] for it with (target-eps, delta)-DP PROVED at the safe end and REFUTED at the "
        "other (certified PLD enclosures of delta(target-eps)); eps is monotone in each "
        "parameter (proved), so the optimum lies inside. Example: dpverify calibrate dpsgd "
        "--target-eps 3 --delta 1e-5 --sampling-rate 256/60000 --steps 14063",
    )
    d.add_argument("--target-eps", metavar="E", required=True, help="target epsilon > 0")
    d.add_argument("--delta", metavar="D", required=True, help="delta in (0, 1)")
    add_schedule_options(d, sampling=SAMPLING_CALIBRATE, neighboring=NEIGHBORING_CALIBRATE)
    add_concept(d, DIGITS_CALIBRATE, old=("--rel-width",), old_dest="rel_width",
                help="relative width 10^-N of the bracket, (hi - lo) / lo "
                f"({DIGITS_CALIBRATE.range}, default {DIGITS_CALIBRATE.default})")
    add_concept(d, TIME_BUDGET)
    d.add_argument("--statement", choices=("md", "tex", "txt"),
                   help="print a ready-to-paste privacy statement for the safe end")
    d.add_argument("--plot", metavar="FILE", help="draw the calibration curve (eps vs the parameter), .png or .svg")
    add_output_options(d)
    d.set_defaults(func=_dpsgd)


def _rel_width(args: argparse.Namespace) -> str:
    """The bracket's relative width: 10^-digits, or the deprecated --rel-width W as given."""
    if getattr(args, "rel_width", None) is not None:
        if "digits" in given_options(args):
            raise InvalidParameter("digits", "give --digits N (or the deprecated --rel-width W), not both")
        return str(args.rel_width)
    return f"1e-{V.integer('digits', args.digits, lo=DIGITS_CALIBRATE.lo or 1, hi=DIGITS_CALIBRATE.hi or 6)}"


def certificate(cal: Calibration) -> dict[str, Any]:
    """The calibration certificate: inputs define the template and target;
    result.bracket is the claim re-proved end by end by ``verify``."""
    t = cal.template
    fixed = {k: v for k, v in t.fixed.items()}
    inputs: dict[str, Any] = {"template": t.name, "parameter": t.parameter, "target_eps": exact_str(cal.target_eps),
                              "delta": exact_str(cal.delta), **fixed}
    ends = {"safe": cal.safe.to_json(t.integer)}
    extra: dict[str, Any] = {}
    if cal.tight:
        if cal.unsafe is not None:
            ends["unsafe"] = cal.unsafe.to_json(t.integer, cal.delta)
    else:
        # fixed batches: the dominating pair is not known to be tight, so its
        # end is the accountant's limit; the mechanism's failure is proved by
        # the realised pair at result.ends.unsafe
        if cal.unsafe is not None:
            ends["pair_limit"] = cal.unsafe.to_json(t.integer, cal.delta)
        if cal.mechanism_unsafe is not None:
            ends["unsafe"] = cal.mechanism_unsafe.to_json(t.integer, cal.delta)
            w = abs(cal.safe.value - cal.mechanism_unsafe.value) / min(cal.safe.value, cal.mechanism_unsafe.value)
            extra["mechanism_relative_width"] = f"{float(w):.3g}"
        from ..calibration.template import WOR_PAIRS

        extra["pairs"] = WOR_PAIRS
        # the second route re-proves each end's verdict but not, within its budget, the
        # enclosure of delta(target) that decided it: a number verify cannot re-prove is
        # not written as certified
        for end in ends.values():
            end.pop("delta_at_target", None)
    result = {
        "verdict": "holds",
        "ends": ends,
        "monotonicity": t.monotonicity,
        "relative_width": None if cal.rel_width is None else f"{cal.rel_width:.3g}",
        "proposal": None if cal.proposal is None else f"{cal.proposal:.10g}",
        **extra,
    }
    return make_certificate(
        claim={"quantity": "calibrate.bracket"},
        inputs=inputs, result=result, precision_bits=0,
        algorithm="float proposal (coarse PLD, Richardson), certified PLD enclosures of "
        "delta(target_eps) at the two exact ends" + _CLOSED_NOTE * any(
            e is not None and e.grid_exponent is None for e in (cal.safe, cal.unsafe, cal.mechanism_unsafe)),
    )


#: the algorithm's words where an end was answered in closed form (no grid recorded)
_CLOSED_NOTE = ("; an end without a grid in closed form (every step a Gaussian at sampling rate 1: one "
                "Gaussian pair of shift mu, mu^2 = sum T_i mu_i^2, delta_mu(eps) by GDPT eq. 2)")


def sampled_certificate(cal: Any) -> dict[str, Any]:
    """The certificate of a shuffled or balls-in-bins calibration
    (:class:`~dpverify.calibration.sampled.SampledCalibration`): each end carries the hints its
    second route needs (the shuffled lower end's cells, the balls-in-bins grids); verify
    re-proves every end with :mod:`dpverify.recheck.shuffle` / :mod:`dpverify.recheck.bins`."""
    inputs: dict[str, Any] = {"template": cal.template, "parameter": cal.parameter,
                              "target_eps": exact_str(cal.target_eps), "delta": exact_str(cal.delta), **cal.fixed}
    ends = {"safe": cal.safe.to_json(cal.integer)}
    if cal.unsafe is not None:
        ends["unsafe"] = cal.unsafe.to_json(cal.integer)
    if cal.pair_limit is not None:
        ends["pair_limit"] = cal.pair_limit.to_json(cal.integer)
    result = {"verdict": "holds", "ends": ends, "monotonicity": cal.monotonicity,
              "relative_width": None if cal.rel_width is None else f"{cal.rel_width:.3g}", "pairs": cal.pairs}
    return make_certificate(
        claim={"quantity": "calibrate.bracket"},
        inputs=inputs, result=result, precision_bits=256,
        algorithm="float proposals (Gaussian root, secant, bisection); certified bounds of delta(target_eps) "
        "at each exact end (shuffle: arb Gaussian and exact class products; balls-in-bins: full enclosures)")


def _sampled_line(cal: Any) -> str:
    show = (lambda x: str(int(x))) if cal.integer else exact_str
    E, D = brief_str(cal.target_eps), brief_str(cal.delta)  # a message: short exact text
    which = {"noise_multiplier": "sigma", "epochs": "epochs"}[cal.parameter]
    line = f"{cal.parameter} ({cal.sampling}, {cal.fixed['neighboring']}): {show(cal.safe.value)} is proved to give "
    line += f"eps <= {E} at delta {D} ("
    line += ("no-amplification upper bound" if cal.template == "dpsgd-shuffle" else
             "Chua et al.'s balls-in-bins pair, upper enclosure") + ")"
    if cal.unsafe is not None:
        line += (f"; {show(cal.unsafe.value)} is proved to FAIL ("
                 + ("concrete dataset pair, max of batch sums" if cal.template == "dpsgd-shuffle" else
                    "the same pair, realised by a concrete dataset pair: lower enclosure") + ")"
                 + f"; the {'smallest' if which == 'sigma' else 'largest'} {which} meeting the target lies in "
                 f"[{show(cal.lo)}, {show(cal.hi)}] "
                 f"(relative width {cal.rel_width:.3g})")
    else:
        line += "; no failing value was proved within the domain searched"
    if cal.pair_limit is not None:
        line += (f"; the no-amplification bound exceeds the target at {show(cal.pair_limit.value)}, so no "
                 f"{which} {'at or below' if which == 'sigma' else 'at or above'} it can be certified with that bound")
    return line + f" ({cal.evaluations} certified evaluations, {cal.seconds:.1f} s)"


def _dpsgd(args: argparse.Namespace) -> int:
    if args.plot:
        from ..plots import check_output

        check_output(args.plot)
    from ..calibration.sampled import SAMPLED

    if args.sampling in SAMPLED:
        if args.plot:
            raise InvalidParameter("plot", f"--plot draws Poisson calibration curves only (not --sampling {args.sampling})")
        budget = V.seconds("time_budget", args.time_budget)
        with Progress("calibrate"):
            cal = calibrate(args.target_eps, args.delta, noise_multiplier=args.noise_multiplier,
                            sampling_rate=args.sampling_rate, steps=args.steps, epochs=args.epochs,
                            batch_size=args.batch_size, dataset_size=args.dataset_size,
                            neighboring=args.neighboring, sampling=args.sampling, rel_width=_rel_width(args),
                            time_budget=budget)
        cert = sampled_certificate(cal)
        emit(args, cert, _sampled_line(cal))
        if args.statement:
            from ..statement import statement

            print(statement(cert, args.statement))
        return 0

    budget = V.seconds("time_budget", args.time_budget)
    with Progress("calibrate") as bar:
        # a certificate asked for: ends verify could not re-prove on a finer grid are refused before the search
        cal = calibrate(args.target_eps, args.delta, noise_multiplier=args.noise_multiplier,
                        sampling_rate=args.sampling_rate, steps=args.steps, epochs=args.epochs,
                        batch_size=args.batch_size, dataset_size=args.dataset_size,
                        neighboring=args.neighboring, sampling=args.sampling, rel_width=_rel_width(args),
                        time_budget=budget, progress=bar, for_certificate=bool(args.certificate or args.json))
    cert = certificate(cal)
    t = cal.template
    show = (lambda x: str(int(x))) if t.integer else exact_str
    # the user's target and delta as short exact text (1e-300 was printed with its 300 zeros: fix49)
    E_, D_ = brief_str(cal.target_eps), brief_str(cal.delta)
    if cal.unsafe is None:
        line = (f"{t.parameter}: every value up to {show(cal.safe.value)} meets "
                f"({E_}, {D_})-DP (proved at the limit)")
    else:
        side = "largest" if t.eps_increasing else "smallest"
        line = (f"{t.parameter} in [{show(cal.lo)}, {show(cal.hi)}] (relative width {cal.rel_width:.3g}): "
                f"{show(cal.safe.value)} is proved to give eps <= {E_} "
                f"(delta({E_}) <= {cal.safe.to_json(t.integer)['delta_at_target']['hi']}), "
                + (f"{show(cal.unsafe.value)} is proved to give eps > {E_}; "
                   f"the {side} admissible value lies in between ({cal.seconds:.1f} s)" if cal.tight else
                   f"at {show(cal.unsafe.value)} the pair's eps is proved > {E_} "
                   f"({cal.seconds:.1f} s)"))
        if not cal.tight:
            mu = cal.mechanism_unsafe
            line += ("; fixed batches: the AFA Cor 32 pair certifies nothing beyond "
                     f"{show(cal.unsafe.value)}, and the mechanism is proved to FAIL at "
                     + (f"{show(mu.value)} (realised pair: Poisson add-remove at noise sigma/2, rate B/N)"
                        if mu is not None else "no value found"))
        if t.parameter == "steps" and "batch_size" in t.fixed:
            epochs = safe_epochs(int(cal.safe.value), int(t.fixed["batch_size"]), int(t.fixed["dataset_size"]))
            line += f"; in epochs: {epochs} safe ({cal.safe.value} steps, steps = ceil(epochs N / B))"
    if args.statement:
        from ..statement import statement

        emit(args, cert, line)
        print(statement(cert, args.statement))
    else:
        emit(args, cert, line)
    if args.plot:
        from ..plots import calibration_curve

        calibration_curve(cal, args.plot)
        print(f"wrote {args.plot}")
    return 0

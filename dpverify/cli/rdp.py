"""`dpverify rdp ...`: Renyi divergences and RDP -> (eps, delta) conversions."""

from __future__ import annotations

import argparse

from .. import _validate as V
from ..ball import exact_str
from ..certificate import quantity_certificate
from ..errors import InvalidParameter
from ..limits import MAX_CONVERSION_ALPHA_EPS, MAX_RDP_COMPOSITIONS, MAX_RDP_ORDER, MAX_SUBSAMPLED_FRACTIONAL_ORDER, MAX_SUBSAMPLED_ORDER
from ..rdp import (
    CONVERSIONS,
    compose,
    conversion_delta,
    conversion_eps,
    curve_from_spec,
    rdp_epsilon,
    renyi_divergence,
)
from ..rdp.specs import RDP_MECHANISMS
from ..vocabulary import DIGITS_RDP_EPSILON, STEPS_RDP, TIME_BUDGET
from ._common import add_concept, add_digits_option, add_output_options, emit
from ._mechanism import add_mechanism_options, mechanism_spec

ORDER = 40


def _order_text(alpha: object) -> str:
    """An order for the summary line: six significant digits, or 1 + (alpha - 1) where those
    would print 1 (adv44 L4: alpha = 1 + 4.8e-6 was shown as "alpha = 1", an order RDP excludes)."""
    a = float(alpha)  # type: ignore[arg-type]
    text = f"{a:.6g}"
    return f"1 + {a - 1:.3g}" if text == "1" and a != 1 else text

def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("rdp", help="Renyi DP: divergences and RDP -> DP conversions",
                       description="Renyi differential privacy, certified.")
    rsub = p.add_subparsers(dest="rdp_command", metavar="COMMAND", required=True)
    names = sorted(RDP_MECHANISMS)

    d = rsub.add_parser(
        "divergence",
        help="enclosure of the Renyi divergence D_alpha of a mechanism",
        description="Certified enclosure of D_alpha(P || Q) = log E_Q[(dP/dQ)^alpha] / (alpha - 1) "
        "of a mechanism's pair, times --steps. Example: dpverify rdp divergence --mechanism "
        "subsampled-gaussian --noise-multiplier 2.5 --sampling-rate 0.01 --alpha 1.5 --steps 50",
    )
    add_mechanism_options(d, names=names)
    d.add_argument("--alpha", required=True,
                   help=f"order alpha in (0, 1) or (1, {MAX_RDP_ORDER}]; subsampled-gaussian with a sampling "
                   f"rate below 1: alpha > 1, an integer <= {MAX_SUBSAMPLED_ORDER} (an exact sum of alpha terms) or a "
                   f"fractional order <= {MAX_SUBSAMPLED_FRACTIONAL_ORDER} (quadrature cost grows like alpha^2); "
                   "larger orders are refused (exit 2)")
    add_concept(d, STEPS_RDP, dest="compositions", old=("--compositions",))
    add_digits_option(d)
    add_output_options(d)
    d.set_defaults(func=_divergence)

    e = rsub.add_parser(
        "epsilon",
        help="certified inf over ALL real orders alpha > 1 of an RDP -> DP conversion",
        description="Enclosure of inf_{alpha > 1} eps_conv(alpha, K D_alpha) over every real "
        "order (not a grid): the upper end is attained at a recorded order, the lower end is "
        "proved on a cover of (1, inf) by cells (convexity of (alpha-1) D_alpha). Example: dpverify rdp "
        "epsilon --mechanism gaussian --noise-multiplier 20 --steps 1000 --delta 1e-5 --conversion optimal",
    )
    add_mechanism_options(e, names=names)
    add_concept(e, STEPS_RDP, dest="compositions", old=("--compositions",))
    e.add_argument("--delta", required=True, help="delta in (0, 1)")
    e.add_argument("--conversion", default="classic", help=f"one of {', '.join(CONVERSIONS)} (default classic)")
    add_concept(e, DIGITS_RDP_EPSILON)
    add_concept(e, TIME_BUDGET)
    add_output_options(e)
    e.set_defaults(func=_epsilon)

    t = rsub.add_parser(
        "to-dp",
        help="convert one (alpha, gamma)-RDP guarantee to (eps, delta)-DP",
        description="Enclosure of the eps (given --delta) or delta (given --eps) that a "
        "conversion gives for one (alpha, gamma)-RDP guarantee. "
        "Example: dpverify rdp to-dp --alpha 2 --rdp 0.05 --delta 1e-5 --conversion optimal",
    )
    t.add_argument("--alpha", required=True, help="order alpha > 1")
    t.add_argument("--rdp", required=True, help="RDP value gamma >= 0")
    g = t.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", help="delta in (0, 1): report eps")
    g.add_argument("--eps", help=f"eps >= 0 with alpha * eps at most {MAX_CONVERSION_ALPHA_EPS}: report delta "
                   "(beyond it delta falls below e^-(10^8))")
    t.add_argument("--conversion", default="classic", help=f"one of {', '.join(CONVERSIONS)} (default classic)")
    add_digits_option(t)
    add_output_options(t)
    t.set_defaults(func=_to_dp)


def _curve(args: argparse.Namespace):
    spec = mechanism_spec(args)
    k = V.integer("steps", args.compositions, lo=1, hi=MAX_RDP_COMPOSITIONS)
    curve = curve_from_spec(spec)
    return spec, k, compose([curve], [k])


def _divergence(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    spec, k, curve = _curve(args)
    enc = renyi_divergence(curve, args.alpha, digits)  # refuses an order beyond its curve's caps first
    params = dict(curve_from_spec(spec).params())
    cert = quantity_certificate(
        quantity="rdp.divergence",
        inputs={"mechanism": spec.name, **params, "alpha": args.alpha, "compositions": str(k),
                "digits": digits},
        enclosure=enc,
        algorithm="closed form / exact binomial sum / certified quadrature in arb, precision escalation",
    )
    emit(args, cert, f"D_alpha(alpha={args.alpha}) of {spec.name} x{k} in {enc.short(digits + 2)}")
    return 0


def _conversion(text: str) -> str:
    if text not in CONVERSIONS:
        raise InvalidParameter("conversion", f"conversion={text!r} must be one of {', '.join(CONVERSIONS)}")
    return text


def _epsilon(args: argparse.Namespace) -> int:
    digits = V.integer("digits", args.digits, lo=1, hi=DIGITS_RDP_EPSILON.hi)
    conversion = _conversion(args.conversion)
    V.open_unit("delta", args.delta)
    spec, k, curve = _curve(args)
    res = rdp_epsilon(curve, args.delta, conversion, digits, time_budget=args.time_budget)
    params = dict(curve_from_spec(spec).params())
    cert = quantity_certificate(
        quantity="rdp.epsilon",
        inputs={"mechanism": spec.name, **params, "compositions": str(k), "delta": args.delta,
                "conversion": conversion, "digits": digits},
        enclosure=res.enclosure,
        algorithm="upper end: certified conversion at the recorded order; lower end: proof on "
        f"{res.cells} order cells covering (1, inf) (convex minorants of (alpha-1) D_alpha)",
        extra_result={"alpha": exact_str(res.alpha)},
    )
    emit(args, cert, f"eps ({conversion}, inf over alpha > 1) in {res.enclosure.short(digits + 2)}"
                     f" (upper end at alpha = {_order_text(res.alpha)})")
    return 0


def _to_dp(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    conversion = _conversion(args.conversion)
    if args.delta is not None:
        enc = conversion_eps(args.alpha, args.rdp, args.delta, conversion, digits)
        quantity, target, what = "rdp.to_dp_eps", {"delta": args.delta}, "eps"
    else:
        enc = conversion_delta(args.alpha, args.rdp, args.eps, conversion, digits)
        quantity, target, what = "rdp.to_dp_delta", {"eps": args.eps}, "delta"
    cert = quantity_certificate(
        quantity=quantity,
        inputs={"alpha": args.alpha, "rdp": args.rdp, **target, "conversion": conversion, "digits": digits},
        enclosure=enc,
        algorithm="closed form in arb" if conversion != "optimal"
        else "ABC Thm 3: certified p-minimisation (derivative-sign bisection, centred form) and root bracketing",
    )
    emit(args, cert, f"{what} ({conversion}) in {enc.short(digits + 2)}")
    return 0

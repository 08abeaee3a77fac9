"""`dpverify dp ...`: the (eps, delta) world."""

from __future__ import annotations

import argparse

from .. import _validate as V
from ..ball import exact_str, parse_exact
from ..certificate import quantity_certificate
from ..mechanisms import build_profile, profile_delta, profile_names
from ._common import add_digits_option, add_output_options, emit
from ._mechanism import add_mechanism_options, mechanism_spec

ORDER = 20


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("dp", help="(eps, delta)-DP: privacy profiles", description="(eps, delta)-DP.")
    dsub = p.add_subparsers(dest="dp_command", metavar="COMMAND", required=True)
    pr = dsub.add_parser(
        "profile",
        help="enclosure of a mechanism's privacy profile delta(eps)",
        description="Certified enclosure of delta(eps) = sup_S P(S) - e^eps Q(S) of a mechanism.",
    )
    add_mechanism_options(pr, names=profile_names())
    pr.add_argument("--eps", required=True, help="epsilon, any real number")
    add_digits_option(pr)
    add_output_options(pr)
    pr.set_defaults(func=_profile)


def _profile(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    spec = mechanism_spec(args)
    profile = build_profile(spec)
    eps = parse_exact(args.eps, "eps")
    enc = profile_delta(profile, eps, digits)
    cert = quantity_certificate(
        quantity="dp.profile",
        statement=f"delta(eps) of mechanism {spec.name} lies in [lo, hi]",
        source="GDPT Sec 2 (privacy profile); mechanism formula in its module docstring",
        inputs={"mechanism": spec.name, **dict(profile.params()), "eps": args.eps, "digits": digits},
        enclosure=enc,
        algorithm=f"{type(profile).__module__}: closed form in arb, precision escalation",
    )
    emit(args, cert, f"delta(eps={exact_str(eps)}) of {spec.name} in {enc.short(digits + 2)}")
    return 0

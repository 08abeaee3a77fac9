"""`dpverify gdp ...`: Gaussian DP quantities."""

from __future__ import annotations

import argparse

from .. import _validate as V
from ..certificate import quantity_certificate
from ..gdp import delta_mu, mu_gdp
from ._common import add_digits_option, add_output_options, emit

ORDER = 10


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("gdp", help="Gaussian differential privacy", description="Gaussian DP.")
    gsub = p.add_subparsers(dest="gdp_command", metavar="COMMAND", required=True)

    d = gsub.add_parser(
        "delta",
        help="enclosure of delta_mu(eps) (GDPT eq. 2)",
        description="Certified enclosure of delta_mu(eps) = Phi(-eps/mu + mu/2) - "
        "e^eps Phi(-eps/mu - mu/2) (GDPT eq. 2), for mu > 0 and any real eps.",
    )
    d.add_argument("--mu", required=True, help="GDP parameter, > 0 (exact: 0.5, 1/3, 1e-4)")
    d.add_argument("--eps", required=True, help="epsilon, any real number")
    add_digits_option(d)
    add_output_options(d)
    d.set_defaults(func=_delta)

    m = gsub.add_parser(
        "mu",
        help="enclosure of mu_GDP(eps, delta) (GDPT Def 4.1)",
        description="Certified enclosure of the unique mu > 0 with delta_mu(eps) = delta "
        "(GDPT Def 4.1, App D Alg 1; uniqueness from d delta_mu/d mu > 0, App A.5).",
    )
    m.add_argument("--eps", required=True, help="epsilon, any real number")
    m.add_argument("--delta", required=True, help="delta in (0, 1) (above 1 - e^eps for eps < 0)")
    add_digits_option(m)
    add_output_options(m)
    m.set_defaults(func=_mu)


def _delta(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    enc = delta_mu(args.mu, args.eps, digits)
    cert = quantity_certificate(
        quantity="gdp.delta",
        statement="delta_mu(eps) lies in [lo, hi]",
        source="GDPT eq. (2), Thm 3.2",
        inputs={"mu": args.mu, "eps": args.eps, "digits": digits},
        enclosure=enc,
        algorithm="erfc in arb ball arithmetic, precision escalation",
    )
    emit(args, cert, f"delta_mu(eps) in {enc.short(digits + 2)}")
    return 0


def _mu(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    enc = mu_gdp(args.eps, args.delta, digits)
    cert = quantity_certificate(
        quantity="gdp.mu",
        statement="the unique mu > 0 with delta_mu(eps) = delta lies in [lo, hi]",
        source="GDPT Def 4.1, App D Alg 1, App A.5",
        inputs={"eps": args.eps, "delta": args.delta, "digits": digits},
        enclosure=enc,
        algorithm="certified root isolation (Illinois + bisection) on log delta_mu - log delta",
    )
    emit(args, cert, f"mu_GDP(eps, delta) in {enc.short(digits + 2)}")
    return 0

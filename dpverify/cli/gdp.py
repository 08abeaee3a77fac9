"""`dpverify gdp ...`: Gaussian DP quantities."""

from __future__ import annotations

import argparse
from typing import Any

from .. import _validate as V
from ..errors import InvalidParameter
from ..certificate import quantity_certificate
from ..gdp import delta_mu, mu_gdp
from ..limits import MAX_GDP_EPS_OVER_MU
from ..vocabulary import MARGIN
from ._common import add_concept, add_digits_option, add_output_options, emit, image_file
from ._mechanism import add_mechanism_options, mechanism_spec

ORDER = 10


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("gdp", help="Gaussian differential privacy", description="Gaussian DP.")
    gsub = p.add_subparsers(dest="gdp_command", metavar="COMMAND", required=True)

    d = gsub.add_parser(
        "delta",
        help="enclosure of delta_mu(eps) (GDPT eq. 2)",
        description="Certified enclosure of delta_mu(eps) = Phi(-eps/mu + mu/2) - "
        "e^eps Phi(-eps/mu - mu/2) (GDPT eq. 2), for mu > 0 and any real eps. "
        "Example: dpverify gdp delta --mu 0.5 --eps 50 --digits 20 --json > c.json",
    )
    d.add_argument("--mu", required=True, help="GDP parameter, > 0 (exact: 0.5, 1/3, 1e-4)")
    d.add_argument("--eps", required=True, help=f"epsilon, any real number with eps / mu at most "
                   f"{MAX_GDP_EPS_OVER_MU} (beyond about 6.8e8 delta_mu(eps) leaves the printable range)")
    add_digits_option(d)
    add_output_options(d)
    d.set_defaults(func=_delta)

    m = gsub.add_parser(
        "mu",
        help="enclosure of mu_GDP(eps, delta) (GDPT Def 4.1)",
        description="Certified enclosure of the unique mu > 0 with delta_mu(eps) = delta "
        "(GDPT Def 4.1, App D Alg 1; uniqueness from d delta_mu/d mu > 0, App A.5). "
        "Example: dpverify gdp mu --eps 1 --delta 1e-5",
    )
    m.add_argument("--eps", required=True, help="epsilon, any real number")
    m.add_argument("--delta", required=True, help="delta in (0, 1) (above 1 - e^eps for eps < 0)")
    add_digits_option(m)
    add_output_options(m)
    m.set_defaults(func=_mu)

    c = gsub.add_parser(
        "certify",
        help="certified mu-GDP of a mechanism: sup of its GDP transformation (GDPT Thm 4.6)",
        description="Certified enclosure of sup_{eps >= 0} G_f(eps), G_f(eps) = mu_GDP(eps, f(eps)) "
        "(GDPT Def 4.1, Cor 4.1): the head [0, eps_h] by staircase bounds (Thm 4.6, App D), "
        "the tail by closed-form Mills-ratio bounds (App A Lemma 3) or Thm 4.4's limit. "
        "Exit 0 when certified (GDP or not GDP), 3 when only the head is certified. "
        "Example: dpverify gdp certify --mechanism laplace --scale 0.5 --eps-h 100 --margin 1e-6",
    )
    _certify_options(c)
    add_output_options(c)
    c.set_defaults(func=_certify)

    pl = gsub.add_parser(
        "plot",
        help="plot the GDP transformation with its staircase bounds (needs matplotlib)",
        description="Plot G_f on [0, eps_h] with the upper staircase mu_GDP(x_{i+1}, f(x_i)), "
        "the certified point values and the certified band [mu_lo, mu_hi] (GDPT Fig. 2). "
        "Needs the optional extra 'plot' (matplotlib). "
        "Example: dpverify gdp plot --mechanism laplace --scale 0.5 --eps-h 10 --out gdpt.png",
    )
    _certify_options(pl)
    pl.add_argument("--out", required=True, metavar="FILE.png", type=image_file,
                    help="output image file; the suffix names the format (png, pdf, svg, ...)")
    pl.add_argument("--points", default="64", metavar="N", help="number of plotted cells (2..2000, default 64)")
    pl.set_defaults(func=_plot)


def _certify_options(p: argparse.ArgumentParser) -> None:
    from ..mechanisms import profile_names

    add_mechanism_options(p, names=profile_names())
    p.add_argument("--eps-h", required=True, dest="eps_h", help="end of the head interval [0, eps_h], in [0, 10000]")
    add_concept(p, MARGIN)
    p.add_argument(
        "--algorithm",
        default="adaptive",
        choices=["adaptive", "naive", "shuffled"],
        help="staircase search: adaptive branch-and-bound (default), naive (GDPT Alg 2) or shuffled (Alg 3)",
    )


def _delta(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    V.gdp_delta_inputs(args.mu, args.eps)
    enc = delta_mu(args.mu, args.eps, digits)
    cert = quantity_certificate(
        quantity="gdp.delta",
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
        inputs={"eps": args.eps, "delta": args.delta, "digits": digits},
        enclosure=enc,
        algorithm="certified root isolation (Illinois + bisection) on log delta_mu - log delta",
    )
    emit(args, cert, f"mu_GDP(eps, delta) in {enc.short(digits + 2)}")
    return 0


def _within_verify_cap(name: str, params: dict, head: Any, margin: str) -> None:
    """Refuse (exit 2, naming --margin) a head proof that ``verify`` could not repeat within its
    cell cap: profiles not known to be convex in e^eps are re-proved cell by cell with the
    first-order test, as here, so the cells this proof needed, at the verifier's static cost per
    cell (:func:`~dpverify.certificate.format.gdp_cell_weight`), must fit
    :data:`~dpverify.certificate.format.GDP_CELL_WORK_CAP` (what the producer writes, verify accepts)."""
    from ..certificate.format import GDP_CELL_WORK_CAP, GDP_FIRST_ORDER_PROFILES, gdp_cell_weight

    if name not in GDP_FIRST_ORDER_PROFILES or head.unbounded:
        return
    weight = gdp_cell_weight(name, str(params.get("refined", "")).lower() == "true", params.get("profile"))
    if head.cells * weight > GDP_CELL_WORK_CAP:
        raise InvalidParameter("margin",
            f"margin={margin}: the head proof of this {name} profile needed {head.cells} cells, more than "
            f"verify can re-prove within its cap of {GDP_CELL_WORK_CAP} cell units ({weight:g} units per cell of "
            "this profile, which is not known to be convex in e^eps, so it is re-proved cell by cell); use a "
            "larger --margin (ten times larger needs about a third of the cells) or a smaller --eps-h")


def _certify(args: argparse.Namespace) -> int:
    from ..certificate.build import encloses
    from ..gdp.certify import certify_gdp
    from ..mechanisms import build_profile

    spec = mechanism_spec(args)
    profile = build_profile(spec)
    cert_result = certify_gdp(profile, args.eps_h, args.margin, args.algorithm)
    _within_verify_cap(spec.name, dict(profile.params()), cert_result.head, args.margin)
    status = cert_result.status
    # result.verdict: is the mechanism mu-GDP for a finite mu? (holds / fails / undecided = head only)
    result = {
        "verdict": {"GDP": "holds", "not GDP": "fails", "head only": "undecided"}[status],
        "quantity": encloses("gdp.certify", {}, {"status": status}),
        "enclosure": cert_result.enclosure_json(),
        "status": status,
        "head": cert_result.head_json(),
        "tail": cert_result.tail.to_json(),
    }
    from ..certificate import make_certificate

    cert = make_certificate(
        claim={
            "quantity": "gdp.certify",
        },
        inputs={
            "mechanism": spec.name,
            **dict(profile.params()),
            "eps_h": args.eps_h,
            "margin": args.margin,
            "algorithm": args.algorithm,
        },
        result=result,
        precision_bits=cert_result.head.enclosure.precision_bits,
        algorithm=f"staircase head bound ({args.algorithm}), closed-form tail ({cert_result.tail.kind})",
    )
    emit(args, cert, cert_result.short())
    return 3 if status == "head only" else 0


def _plot(args: argparse.Namespace) -> int:
    import sys

    try:
        import matplotlib  # noqa: F401  (optional extra "plot")
    except ImportError:
        print("dpverify: error: gdp plot needs matplotlib, the optional extra 'plot' "
              "(pip install 'dpverify[plot]' or pip install matplotlib)", file=sys.stderr)
        return 2
    from ..gdp.plot import plot_gdpt
    from ..gdp.certify import certify_gdp
    from ..mechanisms import build_profile

    points = V.integer("points", args.points, lo=2, hi=2000)
    spec = mechanism_spec(args)
    profile = build_profile(spec)
    cert_result = certify_gdp(profile, args.eps_h, args.margin, args.algorithm)
    plot_gdpt(profile, cert_result, args.out, points=points)
    print(f"wrote {args.out}: {cert_result.short()}")
    return 0

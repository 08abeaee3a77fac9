"""`dpverify dp ...`: the (eps, delta) world."""

from __future__ import annotations

import argparse

from .. import _validate as V
from ..ball import exact_str, parse_exact
from ..certificate import quantity_certificate
from ..errors import InvalidParameter
from ..mechanisms import build_profile, profile_delta, profile_names
from ._common import add_digits_option, add_output_options, emit
from ._mechanism import add_mechanism_options, mechanism_spec

ORDER = 20


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("dp", help="(eps, delta)-DP: privacy profiles, implication order", description="(eps, delta)-DP.")
    dsub = p.add_subparsers(dest="dp_command", metavar="COMMAND", required=True)
    pr = dsub.add_parser(
        "profile",
        help="enclosure of a mechanism's privacy profile delta(eps)",
        description="Certified enclosure of delta(eps) = sup_S P(S) - e^eps Q(S) of a mechanism. "
        "Example: dpverify dp profile --mechanism rr --p 0.75 --eps 0.5",
    )
    add_mechanism_options(pr, names=profile_names())
    pr.add_argument("--eps", required=True, help="epsilon, any real number")
    add_digits_option(pr)
    add_output_options(pr)
    pr.set_defaults(func=_profile)

    im = dsub.add_parser(
        "implies",
        help="verdict: (E0, D0)-DP implies (E, D)-DP (GDPT Thm 3.1)",
        description="Exact verdict of the implication order (GDPT Thm 3.1): (E0, D0)-DP implies "
        "(E, D)-DP iff D >= D0 + (1-D0)[(e^E0 - e^E)_+ + (1 - e^(E+E0))_+]/(1+e^E0). "
        "Exit 0 when it holds, 1 when it fails. "
        "Example: dpverify dp implies --from 1,0.1 --to 0.5,0.5",
    )
    im.add_argument("--from", dest="frm", required=True, metavar="E0,D0",
                    help="the guarantee given: E0 >= 0, D0 in [0, 1]")
    im.add_argument("--to", required=True, metavar="E,D", help="the guarantee wanted: E real, D in [0, 1]")
    add_digits_option(im)
    add_output_options(im)
    im.set_defaults(func=_implies)


def _profile(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    spec = mechanism_spec(args)
    profile = build_profile(spec)
    eps = parse_exact(args.eps, "eps")
    enc = profile_delta(profile, eps, digits)
    cert = quantity_certificate(
        quantity="dp.profile",
        inputs={"mechanism": spec.name, **dict(profile.params()), "eps": args.eps, "digits": digits},
        enclosure=enc,
        algorithm=f"{type(profile).__module__}: closed form in arb, precision escalation",
    )
    emit(args, cert, f"delta(eps={exact_str(eps)}) of {spec.name} in {enc.short(digits + 2)}")
    return 0


def _pair(text: str, name: str) -> tuple[str, str]:
    from ..errors import InvalidParameter

    if text.count(",") != 1:
        raise InvalidParameter(name, f"{name}={text!r} must be E,D (e.g. 1,1e-5)")
    a, b = (x.strip() for x in text.split(","))
    parse_exact(a, name)
    parse_exact(b, name)
    return a, b


def _implies(args: argparse.Namespace) -> int:
    from ..dp import implies

    digits = V.digits(args.digits)
    e0, d0 = _pair(args.frm, "from")
    e, d = _pair(args.to, "to")
    try:
        verdict = implies((e0, d0), (e, d), digits)
    except InvalidParameter as exc:  # name the CLI option, not the library argument
        raise InvalidParameter("from" if exc.name in ("eps0", "delta0") else "to", exc.message) from None
    need = verdict.enclosures["required_delta"]
    cert = quantity_certificate(
        quantity="dp.implies",
        inputs={"eps0": e0, "delta0": d0, "eps": e, "delta": d, "digits": digits},
        enclosure=need,
        algorithm="exact sign of an exponential sum (Lindemann-Weierstrass) + arb enclosure",
        extra_result={"verdict": verdict.outcome.value},
    )
    emit(args, cert, f"{verdict.outcome.value}: {verdict.reason}")
    return verdict.exit_code()

"""The shared MECHANISM options (ARCHITECTURE.md, "CLI surface").

``--mechanism NAME`` plus that mechanism's options. Parsing yields a
:class:`~dpverify.mechanisms.MechanismSpec` of exact option strings; each
subsystem turns the spec into its own object (a privacy profile, an RDP
curve, a dominating pair) and names the option when a value is out of range.
"""

from __future__ import annotations

import argparse

from ..mechanisms import MechanismSpec
from ..mechanisms.expr import CAPS as EXPR_CAPS
from ..limits import MAX_EPS0
from ..vocabulary import NOISE_MULTIPLIER, SAMPLING_RATE
from ._common import add_concept

__all__ = ["add_mechanism_options", "mechanism_spec", "MECHANISM_OPTIONS"]

#: option -> help; every mechanism takes the subset it needs
MECHANISM_OPTIONS: dict[str, str] = {
    "mu": "GDP parameter of the Gaussian mechanism, > 0",
    "noise_multiplier": NOISE_MULTIPLIER.help_text(),
    "scale": f"Laplace scale b, > 0 and >= sensitivity / {MAX_EPS0} (its eps0 = D/b, capped as --eps0)",
    "sensitivity": "sensitivity D, > 0 (default 1)",
    "eps0": f"epsilon of the guarantee, in [0, {MAX_EPS0}] (pure, approx, subsampled)",
    "delta0": "delta of the guarantee, in [0, 1] (approx, subsampled)",
    "p": "randomized-response probability of answering truthfully, in [1/2, 1)",
    "rate": SAMPLING_RATE.help_text() + " (subsampled, subsampled-gaussian)",
    "profile": 'privacy profile as an expression in eps, e.g. "exp(-eps**2/2)" (expr; at most '
    f"{EXPR_CAPS}; values outside [0, 1] are refused)",
}


#: mechanism options that are vocabulary concepts (declared in dpverify.vocabulary)
_CONCEPTS = {"noise_multiplier": NOISE_MULTIPLIER, "rate": SAMPLING_RATE}


def add_mechanism_options(p: argparse.ArgumentParser, *, names: "list[str] | None" = None) -> None:
    """Add ``--mechanism NAME`` and every mechanism option to ``p``."""
    g = p.add_argument_group("mechanism")
    g.add_argument(
        "--mechanism",
        required=True,
        metavar="NAME",
        help="mechanism name" + (f" ({', '.join(names)})" if names else ""),
    )
    for key, help_text in MECHANISM_OPTIONS.items():
        if key in _CONCEPTS:
            # the mechanism's key stays "rate" (certificate inputs keep their format);
            # the option is the concept's (--sampling-rate, --rate deprecated)
            c = _CONCEPTS[key]
            add_concept(g, c, dest=f"mech_{key}", old=c.deprecated, help=help_text)
            continue
        g.add_argument("--" + key.replace("_", "-"), dest=f"mech_{key}", metavar="X", help=help_text)
    g.add_argument("--refined", action="store_true", help="sgd-example / icea-example: refined profile (GDPT App B)")


def mechanism_spec(args: argparse.Namespace) -> MechanismSpec:
    """The mechanism spec of parsed arguments: only the options that were given."""
    options = {
        key: getattr(args, f"mech_{key}")
        for key in MECHANISM_OPTIONS
        if getattr(args, f"mech_{key}", None) is not None
    }
    if getattr(args, "refined", False):
        options["refined"] = "true"
    return MechanismSpec(args.mechanism, options)

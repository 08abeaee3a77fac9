"""Shared CLI plumbing: output of certificates, error mapping to exit codes."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Mapping

from ..certificate import dumps, write

__all__ = ["add_output_options", "add_digits_option", "emit", "option_name"]


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the certificate (JSON) to stdout")
    p.add_argument("--certificate", metavar="FILE", help="write the certificate to FILE")


def add_digits_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--digits",
        default="15",
        metavar="N",
        help="requested relative width 10^-N of every enclosure (1..300, default 15)",
    )


def option_name(param: str) -> str:
    """The CLI option of a library parameter name: eps_h -> --eps-h."""
    return "--" + param.replace("_", "-")


def emit(args: argparse.Namespace, cert: Mapping[str, Any], line: str) -> None:
    """Write the certificate where asked; print JSON or the human line."""
    if getattr(args, "certificate", None):
        write(cert, args.certificate)
    if getattr(args, "json", False):
        sys.stdout.write(dumps(cert))
    else:
        print(line)

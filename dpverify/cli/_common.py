"""Shared CLI plumbing: the parser class, output of certificates, output-path
checks, and the refusal of options that do not apply (docs/reference/inputs.md)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Collection, Mapping, Optional, Sequence

from ..certificate import dumps, write
from ..errors import InvalidParameter, Undecided
from ..files import NotARegularFile, check_writable
from ..vocabulary import DIGITS, DPSGD_SCHEDULE, Concept, deprecation_message, flag_for

__all__ = [
    "Parser",
    "add_output_options",
    "add_digits_option",
    "add_concept",
    "emit",
    "option_name",
    "given_options",
    "refuse_inapplicable",
    "output_file",
    "output_dir",
    "image_file",
]

#: attribute of the parsed namespace: {dest: option string} of the options the user typed
_GIVEN = "_dpverify_given"

def _epilog() -> str:
    """The common --help epilog (ball's caps read on use: ``verify`` builds its parser
    without loading python-flint)."""
    from ..ball import NUMBER_CAPS

    return (
        f"Inputs: {NUMBER_CAPS}; an option given twice, an abbreviated option or an option "
        "that does not apply to the chosen mechanism or mode is refused. Exit codes: 0 success / "
        "holds, 1 fails, 2 bad input or usage, 3 undecided, 4 internal error (a bug of dpverify). See docs/reference/inputs.md."
    )

# argparse reads "-1e-5" and "-1/3" as options (its own pattern knows only "-1" and
# "-1.5"); dpverify's numbers include exponents and fractions. "-inf" and "-nan" are
# values too, so that the number check names them (argparse would say "expected one
# argument", which hides why).
# The pairs "E,D" of dp implies / compose --mech may start with a minus too ("-1,0").
_NUM = r"(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|\d+/\d+)"
_NEGATIVE_NUMBER = re.compile(
    rf"^-{_NUM}$|^-(?i:inf|infinity|nan)$|^-{_NUM}\s*,\s*[+-]?{_NUM}$", re.ASCII)


def _tracking(base: type) -> type:
    """An argparse action class that records the option string in the namespace
    (so that an option can be told from its default) and refuses a repeated
    option: argparse would silently keep the last value."""

    class Tracked(base):  # type: ignore[misc, valid-type]
        def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
            if option_string is not None:
                given = dict(getattr(namespace, _GIVEN, {}))
                if self.dest in given and not isinstance(self, argparse._AppendAction):
                    parser.error(f"argument {option_string}: given twice")
                given[self.dest] = option_string
                setattr(namespace, _GIVEN, given)
            super().__call__(parser, namespace, values, option_string)

    Tracked.__name__ = f"Tracked{base.__name__}"
    return Tracked


_TRACKED = {
    None: _tracking(argparse._StoreAction),
    "store": _tracking(argparse._StoreAction),
    "store_true": _tracking(argparse._StoreTrueAction),
    "store_false": _tracking(argparse._StoreFalseAction),
    "store_const": _tracking(argparse._StoreConstAction),
    "append": _tracking(argparse._AppendAction),
}


class Parser(argparse.ArgumentParser):
    """argparse with dpverify's input rules: options are never abbreviated
    (a later option must not change what an old command line means), negative
    numbers with exponents are values, every option given is recorded, and
    the help states the caps on numbers. Sub-command parsers inherit the class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        self._default_epilog = "epilog" not in kwargs
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER
        for name, cls in _TRACKED.items():
            self.register("action", name, cls)

    def format_help(self) -> str:
        if self._default_epilog and self.epilog is None:
            self.epilog = _epilog()
        return super().format_help()


def given_options(args: argparse.Namespace) -> Mapping[str, str]:
    """{dest: option string} of the options typed on the command line (empty
    for a namespace that did not come from :class:`Parser`)."""
    return getattr(args, _GIVEN, {})


def refuse_inapplicable(
    args: argparse.Namespace,
    applies: Mapping[str, Collection[str]],
    modes: Mapping[str, Mapping[str, str]],
    chosen: Mapping[str, str],
) -> None:
    """Refuse an option the user gave that does not apply to the chosen modes.

    A command's modes come in independent axes (``modes``: axis -> {mode:
    how it is chosen}, e.g. the schedule is given by --events or by
    --sampling-rate/--steps); ``chosen`` names the mode in force on each axis.
    ``applies`` maps an option (its dest) to the modes, all on one axis, it
    belongs to; an option not listed applies in every mode. The message
    names the option, the mode in force and where the option does apply:
    ``--batch-size does not apply with --events FILE; it applies with ...``.
    """
    for dest, option in given_options(args).items():
        if dest not in applies:
            continue
        axis = next(a for a, ms in modes.items() if set(applies[dest]) <= set(ms))
        if chosen[axis] in applies[dest]:
            continue
        where = " or ".join(modes[axis][m] for m in applies[dest])
        raise InvalidParameter(
            _dest_name(option),
            f"{option} does not apply with {modes[axis][chosen[axis]]}; it applies with {where}",
        )


def _dest_name(option: str) -> str:
    """The library name of an option string (inverse of :func:`option_name`)."""
    return option.lstrip("-").replace("-", "_")


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the certificate (JSON) to stdout")
    p.add_argument(
        "--certificate",
        metavar="FILE",
        type=output_file,
        help="write the certificate to FILE (its folder must exist)",
    )


def add_digits_option(p: argparse.ArgumentParser) -> None:
    add_concept(p, DIGITS)


def add_concept(
    p: Any,
    concept: Concept,
    *,
    dest: Optional[str] = None,
    old: Sequence[str] = (),
    old_dest: Optional[str] = None,
    required: bool = False,
    help: Optional[str] = None,
) -> None:
    """Add ``concept``'s option to the parser (or group) ``p`` with its declared metavar,
    default and help (dpverify.vocabulary), and each spelling in ``old`` (one of the
    concept's deprecated ones) as a hidden alias that warns on stderr; ``old_dest``
    gives the aliases their own destination (an old spelling whose value means
    something else, e.g. --rel-width W for --digits N)."""
    for o in old:
        if o not in concept.deprecated:
            raise ValueError(f"{o} is not a declared old spelling of {concept.flag}")
    p.add_argument(concept.flag, dest=dest or concept.key, metavar=concept.metavar,
                   default=None if required else concept.default, required=required,
                   choices=concept.choices or None, help=help or concept.help_text())
    for o in old:
        p.add_argument(o, dest=old_dest or dest or concept.key, default=argparse.SUPPRESS,
                       help=argparse.SUPPRESS, action=_deprecated(concept))


def add_schedule_options(p: Any, *, sampling: Concept, neighboring: Concept) -> None:
    """The DP-SGD schedule options (``vocabulary.DPSGD_SCHEDULE``), ``--sampling`` and
    ``--neighboring``, declared once for every command that reads a schedule
    (``audit dpsgd``, ``calibrate dpsgd``); ``sampling`` and ``neighboring`` are the
    command's variants (the samplings and relations it has a proof for)."""
    for concept in (*DPSGD_SCHEDULE, sampling, neighboring):
        add_concept(p, concept)


def _deprecated(concept: Concept) -> type:
    """A tracked store action that warns that its option string is an old spelling."""
    base = _TRACKED["store"]

    class Deprecated(base):  # type: ignore[misc, valid-type]
        def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
            print(deprecation_message(option_string, concept), file=sys.stderr)
            super().__call__(parser, namespace, values, option_string)

    return Deprecated


def option_name(param: str) -> str:
    """The CLI option of a library parameter name: the concept's flag where the
    name is a concept's (k -> --steps), else eps_h -> --eps-h. A name in upper
    case is a positional argument's metavar (``GRID FILE``) and is printed as
    it is: there is no option to name."""
    if param.isupper():
        return param
    return flag_for(param) or "--" + param.replace("_", "-")


# --------------------------------------------------------------------------- output paths
# argparse ``type=`` functions: they run while the command line is parsed, so a
# path that cannot be written is refused (exit 2, naming the option) before
# any work starts, instead of a traceback after it.


def output_file(text: str) -> str:
    """A file that can be written: its folder exists and is writable, and it
    is not a folder itself."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name")
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(
            f"cannot write {text!r}: folder {str(folder)!r} does not exist (create it first)"
        )
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    try:
        check_writable(text)  # a FIFO with no reader would block the write, after the work
    except NotARegularFile as exc:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: it {exc.strerror}") from None
    return text


def output_dir(text: str) -> str:
    """A folder to write files into: an existing writable folder, or a new one
    (created with its parents) under an existing writable folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty folder name")
    path = Path(text)
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write into {text!r}: {str(probe)!r} is a file")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write into {text!r}: permission denied")
    return text


def image_file(text: str) -> str:
    """An image file matplotlib can write: a writable path whose suffix names a
    format it knows (the format is never guessed)."""
    output_file(text)
    suffix = Path(text).suffix.lower().lstrip(".")
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:  # the command itself reports the missing extra
        return text
    known = sorted(FigureCanvasBase.get_supported_filetypes())
    if suffix not in known:
        what = f"unknown image format {suffix!r}" if suffix else "no image format (file suffix)"
        raise argparse.ArgumentTypeError(f"{text!r}: {what}; known: {', '.join(known)}")
    return text


def grid_check(args: argparse.Namespace, quantity: str, inputs: Mapping[str, Any], digits: Optional[int]) -> Any:
    """For a pld.* / events.* query or claim whose certificate is asked for (``--certificate`` or
    ``--json``): the ``check_grid`` of :func:`dpverify.pld.refine.refine_query` that prices each grid
    level before it is computed, :func:`dpverify.certificate.writer.level_check` (issue 22: work is
    bounded before it starts). An enclosure past verify's caps: exit 2 naming ``--digits``, as
    :func:`emit` refuses it after the run; a claim: exit 3 with the enclosure so far. None without a
    certificate asked for: the answer is printed at any cost."""
    if not (getattr(args, "certificate", None) or getattr(args, "json", False)):
        return None
    from ..certificate.writer import fewer_digits, level_check, printed_without_certificate

    def refuse(why: str, shown: str) -> Exception:
        if quantity.endswith(".claim"):
            return Undecided(f"the verdict needs {why}: not computed, no certificate written{shown}"
                             + printed_without_certificate("verdict"))
        return InvalidParameter("digits", fewer_digits(digits, why, "refused before that grid was computed")
                                + printed_without_certificate())

    return level_check(quantity, inputs, digits, refuse)


def emit(args: argparse.Namespace, cert: Mapping[str, Any], line: str, grids: Optional[Sequence[int]] = None) -> None:
    """Write the certificate where asked; print JSON or the human line. A certificate that
    ``dpverify verify`` could not re-prove within its cap is not written
    (:func:`dpverify.certificate.writer.unverifiable`; ``grids``: an oracle's grid per configuration,
    which its certificate does not record): exit 2 naming ``--digits`` where a digits input set its
    grid, else exit 3 with the answer in the message."""
    if getattr(args, "certificate", None) or getattr(args, "json", False):
        from ..certificate.writer import fewer_digits, printed_without_certificate, unverifiable

        why = unverifiable(cert, grids)  # not None only for a certificate whose re-check needs a grid
        # the digits that set the grid: recorded, or (calibrate: the bracket's width) as given; the
        # deprecated --rel-width leaves args.digits at its default, which set nothing
        given = None if getattr(args, "rel_width", None) is not None else getattr(args, "digits", None)
        digits = cert.get("inputs", {}).get("digits", given)
        if why is not None and digits is not None:
            # the accuracy asked for (or its default) set the grid: fewer digits is the remedy
            raise InvalidParameter("digits", fewer_digits(digits, why) + printed_without_certificate())
        if why is not None:
            raise Undecided(f"{line}; no certificate written: it needs {why}")
    if getattr(args, "certificate", None):
        write(cert, args.certificate)
    if getattr(args, "json", False):
        sys.stdout.write(dumps(cert))
    else:
        print(line)

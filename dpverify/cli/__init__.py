"""Command-line interface: ``dpverify <group> <command> [--options]``.

Exit codes: 0 success / claim holds; 1 claim fails or certificate rejected;
2 bad input or usage (message names the option and the allowed range);
3 undecided (including "the requested accuracy could not be certified");
4 internal error: a bug of dpverify (a certificate that would not validate
against its shipped schema, an exception no check anticipated).

Every error ends as one line on stderr and one of these codes, never a
traceback: the input rules (caps, refusals, error format) are in
docs/reference/inputs.md. An exception that escapes every command's own checks is a
bug; :func:`main` answers with exit 4 and "internal error" (set
DPVERIFY_TRACEBACK=1 to see the traceback), never exit 1 ("fails") and never a
file.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from typing import Optional, Sequence

from .._version import __version__
from ..errors import (
    DpverifyError,
    InternalError,
    InvalidParameter,
    PrecisionExhausted,
    Undecided,
    ValueOutOfRange,
)
from ._common import Parser, option_name

#: command groups whose parser is built alone when they are the command: ``verify``
#: must not import the arb side (python-flint) through the other groups' modules, and a
#: ``sweep`` re-run served from its cache must not pay for them either (issue 22: under a tenth
#: of the first run; every group's imports were 0.6 s of its 1.1 s)
_ALONE = ("verify", "sweep")
#: exit code of a bug of dpverify (distinct from 2, bad input)
EXIT_INTERNAL = 4


def _groups(only: Optional[str] = None) -> list:
    """Every command-group module of this package (one module per group; a
    module with ``add_parser`` is a group), ordered by its ``ORDER``; with
    ``only``, just that module."""
    import importlib
    import pkgutil

    from .. import cli

    mods = [
        importlib.import_module(f"{cli.__name__}.{info.name}")
        for info in pkgutil.iter_modules(cli.__path__)
        if not info.name.startswith("_") and (only is None or info.name == only)
    ]
    return sorted((m for m in mods if hasattr(m, "add_parser")), key=lambda m: getattr(m, "ORDER", 50))


def build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    parser = Parser(
        prog="dpverify",
        description="Certified differential-privacy accounting: every number is a proven "
        "enclosure, every verdict holds / fails / undecided.",
    )
    parser.add_argument("--version", action="version", version=f"dpverify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in _groups(only):
        group.add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in _ALONE else None)
    args = parser.parse_args(words)  # argparse exits 2 on usage errors
    try:
        return int(args.func(args))
    except InvalidParameter as exc:
        print(f"dpverify: error: {option_name(exc.name)}: {exc.message}", file=sys.stderr)
        return 2
    except (PrecisionExhausted, Undecided) as exc:
        print(f"dpverify: undecided: {exc}", file=sys.stderr)
        return 3
    except ValueOutOfRange as exc:
        # raised where a result is printed, far from the option that caused it: name the
        # options the user gave, so the message says which input to change
        print(f"dpverify: error: {exc}, for {_given_options(words)}", file=sys.stderr)
        return 2
    except InternalError as exc:
        print(f"dpverify: internal error: {exc} (a bug; please report it with the command line)",
              file=sys.stderr)
        return EXIT_INTERNAL
    except DpverifyError as exc:
        print(f"dpverify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpverify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `dpverify ... | head`: the reader left; nothing to say
        try:  # and nothing more to flush at exit (that would be a second error)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as exc:
        if exc.filename is None and exc.errno is None:  # not from the system: a bug
            return _internal(exc)
        if exc.filename is None:
            # the system refused a read or write with no path attached: a full disk under
            # --certificate /dev/full or `--json > /dev/full`, a /proc file that takes no
            # writes (adv34 C1); the environment's answer, not a bug
            print(f"dpverify: error: the system refused a read or write: {exc.strerror or type(exc).__name__} "
                  f"({errno.errorcode.get(exc.errno, exc.errno)}), for {_given_options(words)}", file=sys.stderr)
            return 2
        # the file system refused a path the user gave (a folder under /proc, a full disk,
        # no permission) after the options were checked: the path and the reason, no traceback
        print(f"dpverify: error: cannot use {str(exc.filename)[:200]!r}: {exc.strerror or type(exc).__name__}",
              file=sys.stderr)
        return 2
    except RecursionError:
        print("dpverify: error: the input is nested too deeply", file=sys.stderr)
        return 2
    except MemoryError:
        print("dpverify: error: out of memory; the input asks for too large a computation",
              file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: never a traceback with exit 1 ("fails")
        return _internal(exc)


def _given_options(words: Sequence[str]) -> str:
    """The options given with a value, each value cut to 40 characters."""
    shown = []
    for i, word in enumerate(words):
        if word.startswith("--") and i + 1 < len(words) and not words[i + 1].startswith("--"):
            value = words[i + 1]
            shown.append(f"{word} {value[:40]}{'...' if len(value) > 40 else ''}")
    return " ".join(shown) if shown else "the inputs given"


def _internal(exc: Exception) -> int:
    if os.environ.get("DPVERIFY_TRACEBACK"):
        import traceback  # the traceback, and still exit 4: a raise would exit 1, which reads as "fails"

        traceback.print_exception(exc)
    print(f"dpverify: internal error: {type(exc).__name__}: {str(exc)[:300]} "
          "(a bug; please report it with the command line)", file=sys.stderr)
    return EXIT_INTERNAL

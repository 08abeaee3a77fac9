"""dpverify's user-facing vocabulary, declared once.

Each :class:`Concept` is one thing a user gives (an accuracy, a time budget, a
number of steps, ...), with every name it goes by: the library keyword (also
its key in input files and in certificate ``inputs``), the command-line
option, the option's metavar, the allowed range, the default and the help.
The commands build their options from here (``dpverify.cli._common.add_concept``)
and ``docs/reference/inputs.md`` is generated from here (:func:`inputs_tables`), so that
a concept has one spelling everywhere. Old spellings stay accepted for one
release as deprecated aliases: hidden from ``--help``, and a warning on stderr
names the new spelling.

A concept used with a narrower range or another default in one command (the
PLD accountant's accuracy, 1..8 digits) is declared here too, as a
:meth:`Concept.where` variant: same names, its own range and default.

Regenerate the tables of docs/reference/inputs.md::

    python -m dpverify.vocabulary docs/reference/inputs.md

Stdlib only (``verify`` builds its parser without loading python-flint).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from . import limits as L

__all__ = [
    "BATCH_SIZE",
    "CONCEPTS",
    "DATASET_SIZE",
    "DPSGD_SCHEDULE",
    "EPOCHS",
    "EVENTS",
    "NEIGHBORING",
    "NEIGHBORING_CALIBRATE",
    "SAMPLING",
    "SAMPLING_CALIBRATE",
    "describe",
    "Concept",
    "DIGITS",
    "DIGITS_PLD",
    "DIGITS_RDP_EPSILON",
    "MARGIN",
    "NOISE_MULTIPLIER",
    "RELATIVE_WIDTH",
    "SAMPLING_RATE",
    "STEPS",
    "TIME_BUDGET",
    "deprecation_message",
    "flag_for",
    "inputs_tables",
    "regenerate",
]


@dataclass(frozen=True)
class Concept:
    """One user-facing input and every name it goes by.

    ``key`` is the library keyword and the key in input files and certificates;
    ``flag`` the command-line option; ``deprecated`` the old option spellings
    still accepted (with a warning) for one release; ``lo``/``hi`` an integer range the
    callers validate with (None: the range is stated in ``range`` only)."""

    key: str
    flag: str
    metavar: str
    range: str
    default: Optional[str]
    help: str
    deprecated: tuple[str, ...] = ()
    lo: Optional[int] = None
    hi: Optional[int] = None
    variant: str = ""
    #: the values a word-valued option takes (``--sampling``), in the order shown
    choices: tuple[str, ...] = ()
    #: other library parameter names that mean this concept in older functions
    #: (``compose_eps(k=...)``, ``compose(curves, compositions)``, a mechanism's
    #: ``rate``): the CLI names the flag when their errors reach the user
    library_aliases: tuple[str, ...] = ()

    def where(self, variant: str, **changes: object) -> "Concept":
        """The same concept with another range or default (``variant`` says where)."""
        return dataclasses.replace(self, variant=variant, **changes)  # type: ignore[arg-type]

    def help_text(self) -> str:
        """The ``--help`` line: meaning, range, default."""
        default = f", default {self.default}" if self.default is not None else ""
        return f"{self.help} ({self.range}{default})"


# --------------------------------------------------------------------------- accuracy

DIGITS = Concept(
    key="digits", flag="--digits", metavar="N",
    range=f"an integer in 1..{L.MAX_ACCURACY_DIGITS}", default="15", lo=1, hi=L.MAX_ACCURACY_DIGITS,
    help="requested relative width 10^-N of every enclosure",
    deprecated=("--rel-width",),
)
#: the PLD accountant refines a grid, not a precision: a few digits, each one costly
DIGITS_PLD = DIGITS.where("audit dpsgd, oracle", range=f"an integer in 1..{L.MAX_PLD_DIGITS}", default="4",
                          hi=L.MAX_PLD_DIGITS)
#: the infimum over all orders is proved on a cover of cells: their number grows with N
DIGITS_RDP_EPSILON = DIGITS.where("rdp epsilon", range=f"an integer in 1..{L.MAX_RDP_EPSILON_DIGITS}", default="10",
                                  hi=L.MAX_RDP_EPSILON_DIGITS)
#: a calibration bracket: (hi - lo) / lo <= 10^-N, N in 1..6 (a bracket narrower than
#: 1e-6 asks the PLD accountant for more than it certifies in a budget)
DIGITS_CALIBRATE = DIGITS.where("calibrate dpsgd", range="an integer in 1..6", default="3", hi=6)

#: the library's alternative to digits (a width that is not a power of ten); on the
#: command line --rel-width W is a deprecated spelling of --digits
RELATIVE_WIDTH = Concept(
    key="rel_width", flag="", metavar="W",
    range="a number in [1e-8, 1) (calibrate: [1e-6, 0.5])", default=None,
    help="alternative to digits in the library (rel_width=W): relative width (hi - lo) / lo "
    "of the enclosure, for a width that is not a power of ten",
)
MARGIN = Concept(
    key="margin", flag="--margin", metavar="M",
    range="a number in [1e-12, 1]", default="1e-6",
    help="absolute width of the certified mu enclosure (the alternative to --digits where a "
    "relative width makes no sense: mu is searched on a staircase of absolute cells)",
)

# --------------------------------------------------------------------------- time

TIME_BUDGET = Concept(
    key="time_budget", flag="--time-budget", metavar="SEC",
    range=f"seconds in {L.TIME_BUDGET_RANGE}", default=f"{L.DEFAULT_TIME_BUDGET_SECONDS:g}",
    help="give up after about SEC seconds (exit 3, stating how far it got)",
    deprecated=("--task-timeout", "--budget"),
)

# --------------------------------------------------------------------------- DP-SGD schedule

STEPS = Concept(
    key="steps", flag="--steps", metavar="T",
    range=f"an integer in 1..{L.MAX_STEPS}", default=None, lo=1, hi=L.MAX_STEPS,
    help="number of steps (compositions)",
    deprecated=("--compositions", "--k"),
    library_aliases=("k", "compositions"),
)
#: RDP composes by adding Renyi curves: many more compositions are cheap
STEPS_RDP = STEPS.where("rdp divergence, rdp epsilon", range=f"an integer in 1..{L.MAX_RDP_COMPOSITIONS}",
                        default="1", hi=L.MAX_RDP_COMPOSITIONS,
                        help="number of compositions of the mechanism")
#: compose repeats the whole sequence of --mech guarantees
STEPS_COMPOSE = STEPS.where(
    "compose", range=f"an integer in 1..{L.MAX_COMPOSED_MECHANISMS}, at most {L.MAX_LATTICE_SUPPORT} "
    "distinct composed shifts", default="1", hi=L.MAX_COMPOSED_MECHANISMS,
    help="repeat the sequence of --mech guarantees T times")

SAMPLING_RATE = Concept(
    key="sampling_rate", flag="--sampling-rate", metavar="Q",
    range='a number in (0, 1]; fractions like "256/60000"', default=None,
    help="Poisson sampling rate q",
    deprecated=("--rate",),
    library_aliases=("rate",),
)
NOISE_MULTIPLIER = Concept(
    key="noise_multiplier", flag="--noise-multiplier", metavar="S",
    range=f"a number in (0, 1e{len(str(L.MAX_NOISE_MULTIPLIER)) - 1}]", default=None,
    help="Gaussian noise multiplier sigma (noise std / sensitivity)",
)

#: TF-Privacy style schedule: q = B / N, T = ceil(E N / B) (``compute_dp_sgd_privacy``)
DATASET_SIZE = Concept(
    key="dataset_size", flag="--dataset-size", metavar="N",
    range=f"an integer in 1..{L.MAX_DATASET_SIZE} (fixed batches: 2..)", default=None,
    lo=1, hi=L.MAX_DATASET_SIZE,
    help="dataset size N (q = B / N)",
)
BATCH_SIZE = Concept(
    key="batch_size", flag="--batch-size", metavar="B",
    range="an integer in 1..N", default=None,
    help="expected batch size B (q = B / N; with --sampling without-replacement the exact one)",
)
EPOCHS = Concept(
    key="epochs", flag="--epochs", metavar="E",
    range=f"a number > 0, fractions allowed (shuffle: a whole number); steps = ceil(E N / B) at most {L.MAX_STEPS}",
    default=None,
    help="epochs instead of --steps (with --batch-size and --dataset-size)",
)
SAMPLING = Concept(
    key="sampling", flag="--sampling", metavar="HOW",
    range="poisson, shuffle, shuffle-persistent, balls-in-bins, without-replacement", default="poisson",
    choices=("poisson", "shuffle", "shuffle-persistent", "balls-in-bins", "without-replacement"),
    help="how batches were drawn: poisson (Poisson subsampling, the accountant's enclosure); shuffle / "
    "shuffle-persistent (shuffle-and-iterate with a new / one reused permutation per epoch, "
    "--dataset-size/--batch-size/--epochs: a certified bracket, lower end from a concrete dataset pair, "
    "upper end without amplification); without-replacement (fixed batches: not a schedule option; give "
    "them as sampled_without_replacement events in an --events file, without --sampling); "
    "balls-in-bins (each record in one uniformly random batch of the epoch's T = N/B, B dividing N, "
    "re-allocated independently every epoch: a certified enclosure from the one-epoch pair of Chua et al. "
    "2025, E epochs composed by AFA Thm 10; e.g. --sampling balls-in-bins --noise-multiplier 1.1 "
    "--dataset-size 100 --batch-size 10 --epochs 2 --delta 1e-5)",
)
#: calibration has a template with proved monotone bounds for these samplings
SAMPLING_CALIBRATE = SAMPLING.where(
    "calibrate dpsgd", range="poisson, without-replacement, shuffle, shuffle-persistent, balls-in-bins",
    choices=("poisson", "without-replacement", "shuffle", "shuffle-persistent", "balls-in-bins"),
    help="poisson (each example independently with rate q) or without-replacement (every step an "
    "independent uniformly random batch of exactly --batch-size of --dataset-size examples; neighbouring "
    "replace-one; the eps-matching value lies between a safe end (AFA Cor 32 pair) and an unsafe end "
    "(a realised dataset pair)); shuffle / shuffle-persistent (shuffle-and-iterate, a new / one reused "
    "permutation per epoch) and balls-in-bins (each example in one uniformly random batch per epoch): give "
    "--dataset-size, --batch-size and leave out --noise-multiplier or --epochs; the safe end comes from the "
    "certified upper bound (shuffle: no amplification; balls-in-bins: Chua et al. 2025's pair), the failing "
    "end from a concrete dataset pair",
)
NEIGHBORING = Concept(
    key="neighboring", flag="--neighboring", metavar="REL",
    range="add-remove (the default), add, remove, replace-one, replace-special", default=None,
    help="the neighbouring relation: replace-one with Poisson sampling rate 1 is the tight pair; rate < 1 "
    "(also in --events trees of Gaussian / Laplace steps): a bracket of epsilon(delta) or delta(eps), group "
    "privacy above, a zero-contribution replacement below; fixed batches "
    "via --events; replace-special with --events only. Sensitivity convention: noise multiplier = "
    "sigma / C, C the per-record clipping bound = the sensitivity under add/remove; under replace-one "
    "the sensitivity is 2C (factor 2 applied by dpverify: pair N(0,1) vs N(2/z,1))",
)
#: calibration's monotonicity proofs cover these relations only
NEIGHBORING_CALIBRATE = NEIGHBORING.where(
    "calibrate dpsgd", range="poisson: add-remove (the default), add, remove; without-replacement: "
    "replace-one (the default and only choice; sensitivity 2C); shuffle, shuffle-persistent: add-remove "
    "(the default), add, remove, replace-one, replace-special; balls-in-bins: add-remove (the default), add, "
    "remove, replace-special",
    help="the neighbouring relation",
)

# --------------------------------------------------------------------------- event trees

#: the library takes one event tree (``epsilon(event, ...)``); the command line reads it
#: from a file, whose name is plural because the tree composes many events
EVENTS = Concept(
    key="event", flag="--events", metavar="FILE",
    range="a JSON file",
    default=None,
    help="JSON event file: a DpEvent-style tree (docs/guide/events.md; schema "
    "dpverify/events/events.schema.json), e.g. {\"neighboring\": \"replace-one\", \"event\": "
    "{\"type\": \"self_composed\", \"count\": 1000, \"event\": {\"type\": "
    "\"sampled_without_replacement\", \"source_dataset_size\": 60000, \"sample_size\": 256, "
    "\"event\": {\"type\": \"gaussian\", \"noise_multiplier\": \"1.1\"}}}}; unknown or "
    "missing keys are refused (exit 2), nothing defaults",
    library_aliases=("events",),
)

#: every concept once (variants share their concept's names)
CONCEPTS: tuple[Concept, ...] = (DIGITS, RELATIVE_WIDTH, MARGIN, TIME_BUDGET, STEPS, SAMPLING_RATE,
                                 NOISE_MULTIPLIER, DATASET_SIZE, BATCH_SIZE, EPOCHS, SAMPLING, NEIGHBORING,
                                 EVENTS)
#: every declared variant, for the generated tables
VARIANTS: tuple[Concept, ...] = (DIGITS_PLD, DIGITS_RDP_EPSILON, DIGITS_CALIBRATE, STEPS_RDP, STEPS_COMPOSE,
                                 SAMPLING_CALIBRATE, NEIGHBORING_CALIBRATE)
#: how a DP-SGD schedule is given to ``audit dpsgd`` and ``calibrate dpsgd``: sigma, and
#: either the rate and the steps or TF-Privacy's dataset size, batch size and epochs
DPSGD_SCHEDULE: tuple[Concept, ...] = (NOISE_MULTIPLIER, SAMPLING_RATE, STEPS, DATASET_SIZE, BATCH_SIZE, EPOCHS)


def flag_for(name: str) -> Optional[str]:
    """The command-line option of a library parameter name, if it is a concept's."""
    for c in CONCEPTS:
        if c.flag and (name == c.key or name in c.library_aliases):
            return c.flag
    return None


def describe(key: str, command: str, *, required: bool = False) -> Optional[str]:
    """The description of input ``key`` where ``command`` reads it (a sweep task's
    parameter, a table row): the help text of the variant declared for that command,
    else of the concept (``required``: without the default, which then does not
    apply); None when ``key`` is no declared concept."""
    found = [c for c in VARIANTS if c.key == key and command in [w.strip() for w in c.variant.split(",")]]
    found += [c for c in CONCEPTS if c.key == key]
    if not found:
        return None
    c = found[0]
    return f"{c.help} ({c.range}; required)" if required else c.help_text()


def deprecation_message(old: str, concept: Concept) -> str:
    """The one warning an old spelling prints on stderr."""
    return (f"dpverify: warning: {old} is deprecated and will be removed in the next release; "
            f"use {concept.flag} {concept.metavar}")


# --------------------------------------------------------------------------- docs/reference/inputs.md

_BEGIN = "<!-- BEGIN GENERATED: python -m dpverify.vocabulary docs/reference/inputs.md -->"
_END = "<!-- END GENERATED -->"


def _cell(text: Optional[str]) -> str:
    return "-" if text is None else text.replace("|", "\\|")


def inputs_tables() -> str:
    """The generated part of docs/reference/inputs.md: the vocabulary and the limits."""
    out = [_BEGIN, "", "## Vocabulary (one name per concept)", "",
           "| option | library keyword / JSON key | range | default | meaning | old spellings (deprecated) |",
           "|---|---|---|---|---|---|"]
    for c in CONCEPTS:
        old = ", ".join(f"`{o}`" for o in c.deprecated) or "-"
        flag = f"`{c.flag} {c.metavar}`" if c.flag else "(library only)"
        out.append(f"| {flag} | `{c.key}` | {_cell(c.range)} | {_cell(c.default)} | "
                   f"{_cell(c.help)} | {old} |")
    out += ["", "Where a command uses a narrower range or another default:", "",
            "| option | where | range | default |", "|---|---|---|---|"]
    for v in VARIANTS:
        out.append(f"| `{v.flag}` | {v.variant} | {_cell(v.range)} | {_cell(v.default)} |")
    out += ["", "An old spelling still works for one release and prints", "",
            f"    {deprecation_message('--k', STEPS)}", "",
            "## Limits (dpverify/limits.py)", "", "| name | value | what it bounds |", "|---|---|---|"]
    for name, value, doc in _limits():
        out.append(f"| `{name}` | {value} | {_cell(doc)} |")
    out += _ranges()
    out += ["", _END]
    return "\n".join(out)


def _ranges() -> list[str]:
    """The producer's input ranges per certificate kind (certificate/ranges.py), which ``verify``
    applies to every certificate (exit 2 outside them)."""
    from .certificate.ranges import (EVENT_RATIO_RANGES, FIELD_RANGES, INPUT_NAMES, INPUT_RANGES, INPUT_PAIR_RANGES,
                                     MECHANISM_OPTION_OVERRIDES, MECHANISM_OPTION_RANGES, MECHANISM_RATIO_RANGES)

    out = ["", "## Input ranges of certificates (dpverify/certificate/ranges.py)", "",
           "The producer refuses an input outside these ranges (exit 2), and `dpverify verify` refuses a "
           "certificate that records one (exit 2), before any re-derivation; no input is infinite. A claim "
           "record (`reproduce --claims DIR`) is held to its quantity's rows when the file is read (exit 2, "
           "naming the file, the record and the path), before any claim runs.", "",
           "| kind | input | allowed | the producer's option |", "|---|---|---|---|"]
    for kind in sorted(set(INPUT_RANGES) | set(INPUT_NAMES)):
        rows = {**{k: (rng.text(), says) for k, (rng, says) in INPUT_RANGES.get(kind, {}).items()},
                **{k: ("one of " + ", ".join(names), says) for k, (names, says) in INPUT_NAMES.get(kind, {}).items()}}
        for key, (allowed, says) in sorted(rows.items()):
            out.append(f"| `{kind}` | `{key}` | {_cell(allowed)} | {_cell(says)} |")
        for rule, says in INPUT_PAIR_RANGES.get(kind, ()):
            out.append(f"| `{kind}` | `{rule.a}` {rule.op} `{rule.b}` | {_cell(rule.text())} | {_cell(says)} |")
    out += ["", "Event-tree fields (`inputs.event`, `inputs.events`) by their kind in `certificate/format.py`'s "
            "`EVENT_FIELDS` and `LEGACY_EVENT_FIELDS`:", "", "| field kind | allowed |", "|---|---|"]
    out += [f"| `{k}` | {_cell(r.text())} |" for k, r in FIELD_RANGES.items()]
    out += ["", "Mechanism options (`inputs.mechanism` and its options), and rules on two options or fields together:",
            "", "| mechanism or event type | option | allowed |", "|---|---|---|"]
    out += [f"| any | `{k}` | {_cell(r.text())} |" for k, r in MECHANISM_OPTION_RANGES.items()]
    out += [f"| `{m}` | `{k}` | {_cell(r.text())} |" for m, rows in MECHANISM_OPTION_OVERRIDES.items()
            for k, r in rows.items()]
    out += [f"| `{m}` | `{r.a}` / `{r.b}` (`{r.a}` default {r.a_default}) | {_cell(r.text())} |"
            for m, r in MECHANISM_RATIO_RANGES.items()]
    out += [f"| `{t}` | max `{r.a}` / `{r.b}` | {_cell(r.text())} |" for t, r in EVENT_RATIO_RANGES.items()]
    return out


def _limits() -> list[tuple[str, str, str]]:
    """(name, value, comment) of every limit, read from limits.py's ``#:`` comments."""
    import inspect

    rows = []
    comment: list[str] = []
    for line in inspect.getsource(L).splitlines():
        if line.startswith("#: "):
            comment.append(line[3:].strip())
        elif comment and "=" in line and line.split("=")[0].strip().isupper():
            name = line.split("=")[0].strip()
            value = getattr(L, name)
            rows.append((name, f"{value:,}" if isinstance(value, int) else str(value), " ".join(comment)))
            comment = []
        elif not line.startswith("#"):
            comment = []
    return rows


def regenerate(path: str) -> bool:
    """Rewrite the generated block of the Markdown file ``path``; True if it changed."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if _BEGIN in text and _END in text:
        head, rest = text.split(_BEGIN, 1)
        tail = rest.split(_END, 1)[1]
    else:
        head, tail = text.rstrip("\n") + "\n\n", "\n"
    new = head + inputs_tables() + tail
    if new != text:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)
    return new != text


if __name__ == "__main__":  # pragma: no cover - the documented regeneration command
    import argparse

    ap = argparse.ArgumentParser(prog="python -m dpverify.vocabulary",
                                 description="Regenerate the input tables of a Markdown file from the vocabulary.",
                                 epilog="example: python -m dpverify.vocabulary docs/reference/inputs.md")
    ap.add_argument("files", nargs="*", default=["docs/reference/inputs.md"], metavar="FILE",
                    help="Markdown files to rewrite (default docs/reference/inputs.md)")
    for target in ap.parse_args().files:
        try:
            changed = regenerate(target)
        except OSError as exc:
            ap.exit(2, f"{target}: cannot read or write ({exc.strerror})\n")
        print(f"{target}: {'rewritten' if changed else 'up to date'}")

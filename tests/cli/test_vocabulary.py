"""One concept, one spelling: every command's --help against dpverify.vocabulary.

The reference is the vocabulary module's declaration (flag, metavar, old
spellings), read independently of how each command builds its options: the
help text is parsed as a user sees it."""

from __future__ import annotations

import argparse
import re
import shutil

import pytest

from dpverify import vocabulary as VOC
from dpverify.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, parser) of every leaf command."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _commands(sub, path + (name,))


COMMANDS = list(_commands(build_parser()))


def _flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", text))


def test_every_command_is_scanned():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"audit dpsgd", "calibrate dpsgd", "compose", "rdp epsilon", "oracle", "sweep", "verify"} <= names
    assert len(names) >= 15


@pytest.mark.parametrize("words,parser", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_uses_one_spelling_per_concept(words, parser):
    """No old spelling in --help, and each concept's flag with its declared metavar."""
    text = parser.format_help()
    flags = _flags(text)
    for c in VOC.CONCEPTS:
        for old in c.deprecated:
            assert old not in flags, f"dpverify {' '.join(words)} --help shows the old spelling {old}"
        if c.flag and c.flag in flags:
            shown = set(re.findall(rf"(?<![\w-]){re.escape(c.flag)} ([A-Z][A-Z0-9_,.|]*)", text))
            assert shown <= {c.metavar}, f"{c.flag} shown with metavar {shown}, declared {c.metavar}"


@pytest.mark.parametrize("words,parser", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_no_visible_option_is_a_second_name_of_a_concept(words, parser):
    """An option whose destination is a concept's keyword (or a library alias of it)
    is spelled with the concept's flag."""
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or not action.option_strings:
            continue
        for c in VOC.CONCEPTS:
            if c.flag and action.dest.removeprefix("mech_") in (c.key, *c.library_aliases):
                assert action.option_strings == [c.flag], (words, action.option_strings, c.flag)


#: one command line per old spelling: (argv, dest, concept)
OLD = [
    (["compose", "--mech", "0.1,0", "--k", "3", "--eps", "1"], "k", VOC.STEPS, "--k"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--compositions", "3", "--delta", "1e-5"],
     "compositions", VOC.STEPS, "--compositions"),
    (["rdp", "divergence", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--rate", "0.1",
      "--alpha", "2"], "mech_rate", VOC.SAMPLING_RATE, "--rate"),
    (["calibrate", "dpsgd", "--target-eps", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "--steps", "10",
      "--rel-width", "1e-3"], "rel_width", VOC.DIGITS, "--rel-width"),
    (["sweep", "grid.toml", "--task-timeout", "3"], "task_timeout", VOC.TIME_BUDGET, "--task-timeout"),
    (["verify", "x.json", "--budget", "3"], "budget", VOC.TIME_BUDGET, "--budget"),
]


def test_every_declared_old_spelling_is_exercised():
    covered = {old for *_, old in OLD}
    declared = {old for c in VOC.CONCEPTS for old in c.deprecated}
    assert covered == declared


@pytest.mark.parametrize("argv,dest,concept,old", OLD, ids=[o for *_, o in OLD])
def test_old_spelling_still_works_and_warns(argv, dest, concept, old, capsys):
    args = build_parser().parse_args(argv)
    value = argv[argv.index(old) + 1]
    assert getattr(args, dest) == value
    err = capsys.readouterr().err
    assert VOC.deprecation_message(old, concept) in err
    assert concept.flag in err


@pytest.mark.parametrize("argv,dest,concept,old", OLD[:3], ids=[o for *_, o in OLD[:3]])
def test_old_and_new_spelling_together_are_refused(argv, dest, concept, old):
    i = argv.index(old)
    both = argv[:i] + [concept.flag, argv[i + 1]] + argv[i:]
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(both)
    assert exc.value.code == 2


def test_library_error_names_the_flag(capsys):
    """compose validates its repetitions under the concept's name: the message names --steps,
    whichever spelling was typed."""
    for flag in ("--steps", "--k"):
        code = main(["compose", "--mech", "0.1,0", flag, "0", "--eps", "1"])
        err = capsys.readouterr().err
        assert code == 2 and "dpverify: error: --steps: " in err, err


def test_the_library_event_tree_is_the_events_concept(tmp_path, capsys):
    """The library's ``event`` keyword and the CLI's --events file are one declared concept:
    a refusal the event front end raises under the library's name names --events."""
    from dpverify.cli._common import option_name
    from dpverify.vocabulary import EVENTS

    assert option_name("event") == option_name("events") == EVENTS.flag == "--events"
    f = tmp_path / "ev.json"
    f.write_text('{"neighboring": "add-remove", "event": {"type": "bogus"}}')
    code = main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and "dpverify: error: --events: " in err, err


def test_docs_inputs_is_generated_from_the_vocabulary(tmp_path):
    target = tmp_path / "inputs.md"
    shutil.copy("docs/reference/inputs.md", target)
    assert not VOC.regenerate(str(target)), (
        "docs/reference/inputs.md is out of date: run python -m dpverify.vocabulary docs/reference/inputs.md")


@pytest.mark.parametrize("words,parser", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_has_an_example_of_its_own_command(words, parser):
    """A new user copies a working line from --help: each command shows one."""
    text = " ".join(parser.format_help().split())
    assert re.search(rf"(Example|e\.g\.)[:,]? +dpverify {' '.join(words)}\b", text), " ".join(words)


def test_sweep_task_parameters_that_are_concepts_read_the_vocabulary():
    """The sweep tasks describe noise multiplier, sampling rate, steps, digits and time budget
    in the vocabulary's words (declared once), with the range of the command each task runs."""
    from dpverify.sweep.grid import task_table

    table = task_table()
    for name, command in (("audit", "audit dpsgd"), ("oracle", "oracle")):
        params = table[name]["parameters"]
        assert params["noise_multiplier"] == VOC.NOISE_MULTIPLIER.help_text()
        assert params["steps"] == VOC.STEPS.help_text()
        assert params["time_budget"] == VOC.TIME_BUDGET.help_text()
        # the sweep requires digits: the PLD range, and no default claimed
        assert VOC.DIGITS_PLD.range in params["digits"] and "default" not in params["digits"]


def _actions(words: tuple[str, ...]) -> dict:
    parser = dict(COMMANDS)[words]
    return {a.dest: a for a in parser._actions if a.option_strings}


def test_schedule_options_are_one_declaration():
    """`audit dpsgd` and `calibrate dpsgd` read a DP-SGD schedule with the same options:
    flag, metavar, default and help of each are the vocabulary's, so the two commands
    cannot drift apart (they had, in the help of --epochs and --dataset-size). Route: the
    declaration in dpverify.vocabulary against each parser's actions."""
    audit, calibrate = _actions(("audit", "dpsgd")), _actions(("calibrate", "dpsgd"))
    for c in VOC.DPSGD_SCHEDULE:
        for actions in (audit, calibrate):
            a = actions[c.key]
            assert (a.option_strings, a.metavar, a.default, a.help) == ([c.flag], c.metavar, c.default,
                                                                        c.help_text())
    for actions, sampling, rel in ((audit, VOC.SAMPLING, VOC.NEIGHBORING),
                                   (calibrate, VOC.SAMPLING_CALIBRATE, VOC.NEIGHBORING_CALIBRATE)):
        assert tuple(actions["sampling"].choices) == sampling.choices
        assert actions["sampling"].default == "poisson"
        assert actions["neighboring"].default is None and actions["neighboring"].help == rel.help_text()


def test_calibrate_accepts_exactly_the_samplings_its_parser_offers():
    """The library's calibrate and the command agree on the samplings: one tuple."""
    from dpverify.calibration import SAMPLINGS

    assert tuple(_actions(("calibrate", "dpsgd"))["sampling"].choices) == SAMPLINGS
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["calibrate", "dpsgd", "--target-eps", "1", "--delta", "1e-5",
                                   "--sampling", "random-reshuffling"])
    assert exc.value.code == 2
    assert {"shuffle", "shuffle-persistent", "balls-in-bins"} <= set(SAMPLINGS)  # calibration.sampled

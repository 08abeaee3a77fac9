"""The README's examples run, and its claims table lists every claim."""

import re
import shlex
from pathlib import Path

import pytest

from dpverify.cli import main
from dpverify.theorems import claims

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()

ROOT = Path(__file__).resolve().parents[1]


def _code(line: str) -> int:
    comment = line.split("#", 1)[1] if "#" in line else ""
    return next((n for n in (1, 2, 3) if f"exit {n}" in comment), 0)


# (command, expected exit code): "exit N" in a line's comment states a non-zero code;
# lines that need a file of the reader's (rows.csv) or write one (">") are not run
COMMANDS = [
    (line[2:].split("#")[0].strip(), _code(line))
    for line in README.splitlines()
    if line.startswith("$ dpverify ")
    and ">" not in line
    and "rows.csv" not in line
    and not line.startswith("$ dpverify verify")
]


def test_readme_has_examples():
    assert len(COMMANDS) >= 3


@pytest.mark.parametrize("command, code", COMMANDS)
def test_readme_example_runs(command, code, capsys, tmp_path, monkeypatch):
    # run where a fresh clone would, but write into tmp_path: the repository's data folders
    # are linked in
    for name in ("docs", "examples", "corpus"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)[1:]
    assert main(argv) == code


def test_claims_table_lists_every_claim_with_its_verdict():
    for c in claims():
        assert re.search(rf"\| `{re.escape(c.id)}` \|", README), f"{c.id} missing from README"


def test_quick_start_is_two_commands():
    quick = README.split("## Quick start", 1)[1].split("##", 1)[0]
    assert "make demo" in quick and "make test" in quick

#!/usr/bin/env python3
"""Regenerate the outputs shown in the README by running its examples.

    python scripts/regen_readme.py            # rewrite every shown output in README.md
    python scripts/regen_readme.py --check    # exit 1 when a shown output or exit code is out of date

An example is a line ``$ dpverify ...`` inside a fenced code block; the lines
after it up to the next ``$`` line or the end of the block are its shown output.
"# exit N" in the line's comment states a non-zero exit code. Every example with
a shown output is run (in-process, in a scratch folder where the repository's
docs/, examples/ and corpus/ are linked in, so that relative paths work as in a
fresh clone) and its output replaced by what it prints on stdout. The examples
of one block run in order in the same folder, so a file written by one
(``--certificate c.json``) is read by the next. Blocks with no shown output are
not run here (tests/test_readme.py runs the cheap ones for their exit codes).

Durations ("1.4 s") depend on the machine: they are not compared, and a shown
output that differs from a fresh run only in its durations is left as it is.
Certified numbers are deterministic (same inputs, same bytes), so any other
difference means the README is out of date.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

README = ROOT / "README.md"
COMMAND = "python scripts/regen_readme.py"
#: the repository folders an example may read, linked into the scratch folder
LINKED = ("docs", "examples", "corpus")
_DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")


@dataclass
class Example:
    """One ``$ dpverify`` line of the README and the output shown under it."""

    line: int  # index of the ``$`` line in README.splitlines()
    text: str  # the line without "$ "
    output: list[str] = field(default_factory=list)  # shown output lines (may be empty)

    @property
    def argv(self) -> list[str]:
        """The arguments after ``dpverify`` (shell quoting; the comment dropped)."""
        return shlex.split(self.text, comments=True)[1:]

    @property
    def code(self) -> int:
        """The exit code the README states ("# exit N" in the comment), else 0."""
        comment = self.text.split("#", 1)[1] if "#" in self.text else ""
        m = re.search(r"\bexit (\d)\b", comment)
        return int(m.group(1)) if m else 0

    @property
    def redirects(self) -> bool:
        """True for a line that writes through the shell (``> FILE``): not run here."""
        return ">" in shlex.split(self.text, comments=True)


def blocks(text: str) -> list[list[Example]]:
    """The README's fenced code blocks that hold ``$ dpverify`` lines, each as its examples."""
    out: list[list[Example]] = []
    current: Optional[list[Example]] = None
    for i, line in enumerate(text.splitlines()):
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                if current:
                    out.append(current)
                current = None
            continue
        if current is None:
            continue
        if line.startswith("$ "):
            current.append(Example(i, line[2:]) if line.startswith("$ dpverify ") else Example(i, ""))
        elif current and current[-1].text and line.strip():
            current[-1].output.append(line)
    return [[e for e in b if e.text] for b in out if any(e.text for e in b)]


def same(shown: list[str], printed: list[str]) -> bool:
    """Equal up to durations (which depend on the machine)."""
    return [_DURATION.sub("N s", s) for s in shown] == [_DURATION.sub("N s", s) for s in printed]


def run(argv: list[str]) -> tuple[int, list[str]]:
    """Run ``dpverify ARGV`` in-process in the current folder: (exit code, stdout lines)."""
    from dpverify.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse usage errors
            code = e.code if isinstance(e.code, int) else 2
    return code, stdout.getvalue().rstrip("\n").splitlines()


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A fresh folder with the repository's data folders linked in, as the cwd."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="dpverify-readme-") as tmp:
        for name in LINKED:
            (Path(tmp) / name).symlink_to(ROOT / name)
        os.chdir(tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(old)


def run_block(block: list[Example]) -> list[tuple[Example, int, list[str]]]:
    """Run a block's examples in order in one scratch folder (lines that redirect
    through the shell are not run)."""
    results = []
    with scratch():
        for ex in block:
            if ex.redirects:
                continue
            code, printed = run(ex.argv)
            results.append((ex, code, printed))
    return results


def regenerate(text: str) -> tuple[str, list[str]]:
    """The README with every shown output replaced by a fresh run, and the problems
    found (a shown output or an exit code that differs)."""
    lines = text.splitlines()
    problems: list[str] = []
    replace: dict[int, list[str]] = {}
    for block in blocks(text):
        if not any(ex.output for ex in block):
            continue
        for ex, code, printed in run_block(block):
            if code != ex.code:
                problems.append(f"line {ex.line + 1}: `dpverify {ex.argv and ' '.join(ex.argv)}` exited {code}, "
                                f"the README states {ex.code}")
            if ex.output and not same(ex.output, printed):
                problems.append(f"line {ex.line + 1}: shown output differs:\n  shown:   "
                                + "\n           ".join(ex.output) + "\n  printed: " + "\n           ".join(printed))
                replace[ex.line] = printed
    out: list[str] = []
    skip = 0
    for i, line in enumerate(lines):
        if skip:
            skip -= 1
            continue
        out.append(line)
        if i in replace:
            ex = next(e for b in blocks(text) for e in b if e.line == i)
            out.extend(replace[i])
            skip = len(ex.output)
    return "\n".join(out) + ("\n" if text.endswith("\n") else ""), problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the README is out of date; write nothing")
    args = ap.parse_args()
    text = README.read_text()
    new, problems = regenerate(text)
    for p in problems:
        print(p, file=sys.stderr)
    if args.check:
        if problems:
            print(f"README.md is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        README.write_text(new)
        print("README.md: shown outputs rewritten", file=sys.stderr)
    # a wrong exit code is the README's text to fix by hand, not an output to rewrite
    return 1 if any("exited" in p for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Every accept rests on a proof: the kind table (recheck/kinds.py) and the text
``verify --explain`` prints must say so for every kind, and where they name a tool
that only estimates (mpmath's nearest-rounded evaluations, floats, Newton, findroot,
erfinv) they must call it a proposal, which the route then proves or refuses.

The independent route here is the printed text itself: the test runs the CLI, parses
what a user reads and checks it against the table, so a step reclassified in one place
and not the other, or an explain paragraph that presents an estimate as the route,
fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.recheck import kinds

ROOT = Path(__file__).resolve().parents[2]

#: methods that give no error bound: never the route of an accept, not even as a proposal
NEVER = re.compile(r"quadrature|heuristic|rising precisions|stabilis|agreement test", re.I)
#: tools that only estimate: may appear on the accept path only as a proposal
ESTIMATORS = re.compile(r"\bmpmath\b|\bfloats?\b|\bnewton\b|\bfindroot\b|\berfinv\b", re.I)
PROPOSAL = re.compile(r"propos|untrusted|not trusted|hint", re.I)


def _check_text(where: str, text: str) -> list[str]:
    bad = []
    if NEVER.search(text):
        bad.append(f"{where}: names an estimate as its route: {text[:160]!r}")
    if ESTIMATORS.search(text) and not PROPOSAL.search(text):
        bad.append(f"{where}: names an estimating tool without calling it a proposal: {text[:160]!r}")
    return bad


@pytest.fixture(scope="module")
def explain() -> dict[str, dict]:
    """``verify --explain`` as the CLI prints it, parsed: kind -> {paragraph, rests_on, steps}."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "dpverify", "verify", "--explain"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    blocks: dict[str, dict] = {}
    cur: "dict | None" = None
    for line in out.stdout.splitlines():
        if line and not line.startswith(" "):
            assert line.endswith(":"), line
            cur = blocks.setdefault(line[:-1], {"paragraph": [], "rests_on": None, "steps": []})
        elif cur is not None and line.startswith("  accept rests on: "):
            cur["rests_on"] = line.removeprefix("  accept rests on: ")
        elif cur is not None and line.startswith("  - ["):
            tag, _, what = line.removeprefix("  - [").partition("] ")
            cur["steps"].append((tag, what))
        elif cur is not None and line.startswith("  "):
            cur["paragraph"].append(line.strip())
    return blocks


def test_every_route_in_the_kind_table_proves() -> None:
    """An end or verdict the table lists is re-proved (proved / exact), never only
    checked for consistency, and its description names no estimate as the route."""
    bad = []
    for name, kind in kinds.KINDS.items():
        for end, route in kind.routes().items():
            if route.status not in kinds.PROVING:
                bad.append(f"{name}.{end}: status {route.status!r}")
            bad += _check_text(f"{name}.{end}", route.how)
    assert not bad, "\n".join(bad)


def test_explain_lists_every_kind_and_each_accept_rests_on_a_proof(explain: dict) -> None:
    assert set(explain) == set(kinds.KINDS)
    bad = []
    for name, block in sorted(explain.items()):
        if block["rests_on"] != kinds.PROOF:
            bad.append(f"{name}: accept rests on {block['rests_on']!r}")
        tags = [tag for tag, _ in block["steps"]]
        if not tags:
            bad.append(f"{name}: no steps classified")
        for tag, what in block["steps"]:
            if tag == kinds.PROOF:
                bad += _check_text(f"{name} step", what)
            elif tag != f"{kinds.ESTIMATE}, only chooses or refutes":
                bad.append(f"{name}: step tagged {tag!r} on the accept path: {what[:120]!r}")
        bad += _check_text(f"{name} paragraph", " ".join(block["paragraph"]))
    assert not bad, "\n".join(bad)


def test_explain_agrees_with_the_steps_table(explain: dict) -> None:
    """What the user reads is the table: the same steps, in order, with the same tags."""
    for name, block in explain.items():
        want = [(s if on else f"{s}, only chooses or refutes", what) for what, s, on in kinds.STEPS[name]]
        assert block["steps"] == want, name


def test_the_check_itself_catches_an_estimate() -> None:
    """The text rules can fail: a step described the way the old mpmath routes were is caught."""
    assert _check_text("x", "mpmath evaluation at two rising precisions, their difference charged as the error")
    assert _check_text("x", "the integral by mpmath quadrature")
    assert _check_text("x", "compared on floats")
    assert not _check_text("x", "mu proposed by mpmath bisection (untrusted), proved by delta_mu in MPFR")

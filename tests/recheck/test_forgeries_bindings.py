"""Forgery classes that used to answer exit 0 or exit 3 where the statement is provably
false: a kind relabelled under a format that never defined it, oracle rows that say what
the input file does not, and brackets moved off verify's own proved enclosure.

Every forgery starts from a genuine certificate (a committed fixture or one the CLI
writes here), changes what its class changes and recomputes the digest, so only the
second route can catch it. The ground truth is stated beside each case.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ..certs import outcome, reseal

ROOT = Path(__file__).resolve().parents[2]
F1 = ROOT / "tests" / "certificate" / "format1"


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


# --------------------------------------------------------------------------- kinds per format


@pytest.mark.parametrize("name", ["main-shuffle-epsilon", "main-shuffle-delta", "main-replace-claim"])
def test_a_format_two_kind_relabelled_format_one_is_refused(name):
    """shuffle.*, bins.* and replace.* came after the last format-1 writer (dpverify 0.1.0,
    b158129 / d387c9f^: its re-checker registry has none of them, and no frozen format-1
    certificate is one), so a format-1 certificate of such a kind is relabelled: exit 2.
    The genuine format-2 certificate it came from verifies."""
    genuine = _load(F1 / f"{name}.json")
    assert genuine["format"] == "dpverify-certificate/2"
    assert outcome(copy.deepcopy(genuine), budget=240) == 0
    forged = copy.deepcopy(genuine)
    forged["format"] = "dpverify-certificate/1"
    assert outcome(reseal(forged)) == 2


def test_every_frozen_format_one_kind_is_a_format_one_kind():
    """The structural rule refuses no committed format-1 certificate: every kind found in a
    frozen format-1 file is one the table dates to format 1."""
    from dpverify.recheck.kinds import KINDS

    seen = set()
    for p in [*F1.glob("*.json"), *(ROOT / "certificates").glob("*.json"),
              ROOT / "docs" / "reports" / "oracle-battery.json"]:
        c = _load(p)
        if c.get("format") == "dpverify-certificate/1":
            seen.add(c["claim"]["quantity"])
    assert seen and all(KINDS[k].since == 1 for k in seen)
    assert {k for k, v in KINDS.items() if v.since == 2} == {
        f"{p}.{s}" for p in ("shuffle", "bins") for s in ("epsilon", "delta", "claim")} | {
        "replace.epsilon", "replace.delta", "replace.claim"}

"""The data files dpverify reads at run time ship with the package: the paper
claims (theorems/claims/*.jsonl) and the schemas live inside dpverify/, and
every one of them is matched by a pyproject package-data glob, so `reproduce`
and `audit corpus` work from an installed (non-editable) package."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

import dpverify
from dpverify.corpus.claims import SCHEMA as CORPUS_SCHEMA
from dpverify.theorems.registry import CLAIMS_DIR, SCHEMA as CLAIM_SCHEMA

PKG = Path(dpverify.__file__).resolve().parent
ROOT = PKG.parent


def _globs() -> list[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return cfg["tool"]["setuptools"]["package-data"]["dpverify"]


def test_runtime_data_lives_inside_the_package():
    for p in (CLAIMS_DIR, CLAIM_SCHEMA, CORPUS_SCHEMA):
        assert p.resolve().is_relative_to(PKG), p
    assert sorted(f.name for f in CLAIMS_DIR.glob("*.jsonl")) == [
        "abc.jsonl", "afa.jsonl", "gdpt.jsonl", "libraries.jsonl", "lt.jsonl"]


# The integrator adds "theorems/claims/*.jsonl" to pyproject's package-data (this branch may
# not edit pyproject.toml); until then the check is an expected failure, afterwards it runs.
@pytest.mark.xfail("theorems/claims/*.jsonl" not in (ROOT / "pyproject.toml").read_text(),
                   reason="package-data glob theorems/claims/*.jsonl not yet in pyproject.toml", strict=True)
def test_every_data_file_is_declared_as_package_data():
    globs = _globs()
    files = [f for d in ("theorems", "corpus") for f in (PKG / d).rglob("*")
             if f.is_file() and f.suffix in (".json", ".jsonl")]
    assert files
    for f in files:
        rel = f.relative_to(PKG).as_posix()
        assert any(fnmatch.fnmatch(rel, g) and rel.count("/") == g.count("/") for g in globs), rel

"""Slow PLD cases are opt-in: run them with ``-m slow``."""

import pytest


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: opt-in with -m slow")
    for item in items:
        if "slow" in item.keywords and str(item.fspath).startswith(str(config.rootpath / "tests" / "pld")):
            item.add_marker(skip)

"""Names of a package imported on first use (PEP 562): ``import dpverify`` and
``dpverify verify`` must not load python-flint through the public API."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def lazy_getattr(package: str, table: Mapping[str, str], namespace: dict) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``table[name]`` (relative to
    ``package``) on first use and caches the value in ``namespace``."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__

"""The task interface of a sweep, and loading a task by name.

A task turns one configuration (a dict of parameters from a grid) into a
certificate. It has three parts, so that every executor and the cache treat
all tasks alike:

* ``plan(params) -> Plan``: validate the parameters (InvalidParameter naming
  them) and return the certificate's ``claim.quantity`` and ``inputs``
  *without computing*. The cache key is taken of these (plus the dpverify
  version), so a cached certificate can be matched to its configuration.
* ``compute(params, plan) -> certificate``: the certified computation (runs on
  a worker; pure: same parameters, byte-identical certificate; no time,
  host or path inside).
* ``summarize(params, cert, extra) -> dict``: the results-table fields
  (``quantity``, ``lo``, ``hi``, ``verdict``) read from the certificate itself,
  so a cached certificate and a fresh one give the same row.

Optionally ``post(params, cert) -> dict`` runs on the worker after the
certificate is known (fresh or from the cache) for work that must not be
cached (the oracle task runs the accountant under test there), and
``settings`` names parameters that steer the computation but are not part of
the certificate (a time budget).

Tasks are found by name in ``tasks.json`` (entry ``module:attribute``): a new
task (calibrate, corpus) is a module plus one entry there.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Protocol

from ..errors import InvalidParameter
from .grid import task_table

__all__ = ["Plan", "Task", "cache_key", "load_task"]


def cache_key(quantity: str, inputs: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of (quantity, inputs): the content address of
    a certificate in the cache. The version is not part of the address, so the
    next release finds the entries of this one (and decides whether to use them:
    :meth:`dpverify.sweep.cache.Cache.check`)."""
    body = {"quantity": quantity, "inputs": dict(inputs)}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Plan:
    """What a configuration's certificate will claim, known before computing."""

    quantity: str
    inputs: Mapping[str, Any]

    def __post_init__(self) -> None:
        # typed as the writer records them (counts as integers, other numbers as
        # decimal strings): the cache compares a stored certificate's inputs with
        # these, so "512" here and 512 in the certificate would never match
        from ..certificate.writer import typed_inputs

        object.__setattr__(self, "inputs", typed_inputs(self.inputs))

    @property
    def key(self) -> str:
        return cache_key(self.quantity, self.inputs)


class Task(Protocol):
    name: str
    settings: tuple[str, ...]
    post: Optional[Callable[[Mapping[str, Any], Mapping[str, Any]], dict]]

    def plan(self, params: Mapping[str, Any]) -> Plan: ...

    def compute(self, params: Mapping[str, Any], plan: Plan) -> dict: ...

    def summarize(self, params: Mapping[str, Any], cert: Mapping[str, Any],
                  extra: Optional[Mapping[str, Any]]) -> dict: ...


_LOADED: dict[str, Task] = {}


def load_task(name: str) -> Task:
    """The task registered under ``name`` in tasks.json."""
    if name not in _LOADED:
        table = task_table()
        if name not in table:
            raise InvalidParameter("task", f"task={name!r} is unknown; known: {', '.join(table)}")
        module, _, attr = table[name]["entry"].partition(":")
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]

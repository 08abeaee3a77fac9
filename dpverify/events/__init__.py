"""Certified accounting of dp_accounting-style event trees (any DpEvent tree, not only Poisson-subsampled Gaussians).

* :mod:`.model`: the events (frozen value objects mirroring DpEvent);
* :mod:`.json_format`: the strict JSON event format (``events.schema.json``);
* :mod:`.convert`: real dp_accounting DpEvent objects -> model;
* :mod:`.dispatch`: event + neighbouring relation -> dominating pairs per
  direction, each with its theorem; refusals with reasons;
* :mod:`.pairs`: the new dominating pairs (atoms, mixtures of Gaussians,
  pointwise maximum for sampling without replacement under replace-one);
* :mod:`.api`: :func:`epsilon`, :func:`delta`, :func:`check_claim`, :func:`supports`.
"""

from . import model
from .api import EventAnswer, as_event, check_claim, delta, epsilon, plan, supports
from ..relation import Relation
from .dispatch import Unsupported
from .json_format import event_to_json, load_schema, parse_document
from .model import SENSITIVITY_CONVENTION

__all__ = [
    "EventAnswer",
    "Relation",
    "SENSITIVITY_CONVENTION",
    "Unsupported",
    "as_event",
    "check_claim",
    "delta",
    "epsilon",
    "event_to_json",
    "load_schema",
    "model",
    "parse_document",
    "plan",
    "supports",
]

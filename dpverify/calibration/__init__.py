"""Certified calibration of a free parameter of an event template: a bracket
whose one end provably meets a target (eps, delta) and whose other end provably
does not (:mod:`.solve`), with the monotonicity that makes it a bracket proved
in :mod:`.template`. The public entry point is :func:`dpverify.calibrate`."""

from __future__ import annotations

from .solve import Calibration, End, calibrate_template
from .template import MONOTONICITY, PARAMETERS, SAMPLINGS, Template, dpsgd_template, wor_template

__all__ = ["Calibration", "End", "MONOTONICITY", "PARAMETERS", "SAMPLINGS", "Template",
           "calibrate_template", "dpsgd_template", "wor_template"]

"""Certified calibration of a free parameter of an event template
(issue 13): a bracket whose one end provably meets a target (eps, delta) and
whose other end provably does not (:mod:`.solve`), with the monotonicity
that makes it a bracket proved in :mod:`.template`."""

from __future__ import annotations

import sys as _sys
import types as _types
from typing import Any, Optional, Union

from .solve import Calibration, End, calibrate_template
from .template import MONOTONICITY, PARAMETERS, SAMPLINGS, Template, dpsgd_template, wor_template

__all__ = ["Calibration", "End", "MONOTONICITY", "PARAMETERS", "SAMPLINGS", "Template", "calibrate",
           "calibrate_template", "dpsgd_template", "wor_template"]


def calibrate(
    target_eps: Any,
    delta: Any,
    *,
    template: Optional[Template] = None,
    noise_multiplier: Any = None,
    sampling_rate: Any = None,
    steps: Any = None,
    epochs: Any = None,
    batch_size: Any = None,
    dataset_size: Any = None,
    neighboring: Optional[str] = None,
    sampling: str = "poisson",
    rel_width: Union[float, str] = 1e-3,
    time_budget: float = 600.0,
    progress: Any = None,
) -> Calibration:
    """Certified bracket for the one DP-SGD parameter left out (or for the
    free parameter of ``template``) meeting (target_eps, delta)-DP.

    >>> c = calibrate(3, "1e-5", sampling_rate="256/60000", steps=14063)  # doctest: +SKIP
    >>> c.safe.value   # a noise multiplier proved to give eps <= 3  # doctest: +SKIP

    ``sampling``: "poisson" (default; neighbouring add-remove unless given)
    or "without-replacement" (fixed batches of ``batch_size`` out of
    ``dataset_size``, neighbouring replace-one; :func:`.template.wor_template`).
    """
    from ..errors import InvalidParameter

    if sampling not in SAMPLINGS:
        raise InvalidParameter("sampling", f"sampling={sampling!r}; allowed: {', '.join(SAMPLINGS)}")
    if template is None and sampling == "without-replacement":
        if sampling_rate is not None:
            raise InvalidParameter("sampling_rate", "--sampling-rate is Poisson's rate; with --sampling "
                                   "without-replacement give --batch-size and --dataset-size")
        template = wor_template(noise_multiplier=noise_multiplier, steps=steps, epochs=epochs,
                                batch_size=batch_size, dataset_size=dataset_size,
                                neighboring=neighboring or "replace-one")
    elif template is None:
        template = dpsgd_template(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate,
                                  steps=steps, epochs=epochs, batch_size=batch_size,
                                  dataset_size=dataset_size, neighboring=neighboring or "add-remove")
    return calibrate_template(template, target_eps, delta, rel_width=rel_width,
                              time_budget=time_budget, progress=progress)


class _CallableModule(_types.ModuleType):
    """``dpverify.calibrate`` is both this subpackage and the function above: the public
    API resolves it lazily, and once the subpackage is imported the import system binds
    the module to that name, so the module forwards calls to the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> "Calibration":
        return calibrate(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule

"""Run the installed floating-point accountants on a DP-SGD configuration.

Each runner returns the accountant's reported epsilon (a Python float, taken
later at its exact binary value) for T steps of the Poisson-subsampled
Gaussian at target delta. All libraries are optional: a runner whose library
is missing is *skipped* with a note; a runner that raises is a *crash* row
(the exception text is kept). Nothing here is on the certified path.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import warnings
from dataclasses import dataclass
from typing import Callable

from .rows import Config

__all__ = ["Runner", "RUNNERS", "available", "run"]


@dataclass(frozen=True)
class Runner:
    name: str
    module: str  # import name of the library it needs
    fn: Callable[[float, float, int, float], float]


def _dp_accounting_event(sigma: float, q: float, T: int):
    import dp_accounting

    inner = dp_accounting.GaussianDpEvent(sigma)
    if q < 1:
        inner = dp_accounting.PoissonSampledDpEvent(q, inner)
    return dp_accounting.SelfComposedDpEvent(inner, T)


def _dpacc_pld(sigma: float, q: float, T: int, delta: float) -> float:
    from dp_accounting import pld

    acc = pld.PLDAccountant()
    acc.compose(_dp_accounting_event(sigma, q, T))
    return float(acc.get_epsilon(delta))


def _dpacc_rdp(sigma: float, q: float, T: int, delta: float) -> float:
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(_dp_accounting_event(sigma, q, T))
    return float(acc.get_epsilon(delta))


def _prv(sigma: float, q: float, T: int, delta: float) -> float:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    acc = PRVAccountant(
        prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)],
        max_self_compositions=[T],
        eps_error=1e-2,
        delta_error=delta / 1000,
    )
    _, estimate, _ = acc.compute_epsilon(delta=delta, num_self_compositions=[T])
    return float(estimate)


def _opacus(kind: str) -> Callable[[float, float, int, float], float]:
    def run(sigma: float, q: float, T: int, delta: float) -> float:
        from opacus import accountants

        cls = {"rdp": accountants.RDPAccountant, "prv": accountants.PRVAccountant,
               "gdp": accountants.GaussianAccountant}[kind]
        acc = cls()
        acc.history = [(sigma, q, T)]
        return float(acc.get_epsilon(delta))

    return run


def _autodp(sigma: float, q: float, T: int, delta: float) -> float:
    from autodp import rdp_acct, rdp_bank

    acct = rdp_acct.anaRDPacct()
    if q < 1:
        acct.compose_poisson_subsampled_mechanisms(
            lambda a: rdp_bank.RDP_gaussian({"sigma": sigma}, a), q, coeff=T
        )
    else:
        acct.compose_mechanism(lambda a: rdp_bank.RDP_gaussian({"sigma": sigma}, a), coeff=T)
    return float(acct.get_eps(delta))


RUNNERS: dict[str, Runner] = {
    r.name: r
    for r in (
        Runner("dp_accounting-pld", "dp_accounting", _dpacc_pld),
        Runner("dp_accounting-rdp", "dp_accounting", _dpacc_rdp),
        Runner("prv_accountant", "prv_accountant", _prv),
        Runner("opacus-rdp", "opacus", _opacus("rdp")),
        Runner("opacus-prv", "opacus", _opacus("prv")),
        Runner("opacus-gdp", "opacus", _opacus("gdp")),
        Runner("autodp", "autodp", _autodp),
    )
}


#: the call settings each runner uses (recorded in oracle certificates, format 2)
SETTINGS: dict[str, dict[str, str]] = {
    "dp_accounting-pld": {"call": "PLDAccountant().compose(SelfComposed(PoissonSampled(q, Gaussian(sigma)), T)).get_epsilon(delta)"},
    "dp_accounting-rdp": {"call": "RdpAccountant().compose(SelfComposed(PoissonSampled(q, Gaussian(sigma)), T)).get_epsilon(delta)"},
    "prv_accountant": {"call": "PRVAccountant(PoissonSubsampledGaussianMechanism(sigma, q), T).compute_epsilon(delta)",
                       "eps_error": "1e-2", "delta_error": "delta/1000", "reported": "estimate"},
    "opacus-rdp": {"call": "opacus.accountants.RDPAccountant with history [(sigma, q, T)]; get_epsilon(delta)"},
    "opacus-prv": {"call": "opacus.accountants.PRVAccountant with history [(sigma, q, T)]; get_epsilon(delta)"},
    "opacus-gdp": {"call": "opacus.accountants.GaussianAccountant with history [(sigma, q, T)]; get_epsilon(delta)"},
    "autodp": {"call": "rdp_acct.anaRDPacct compose_poisson_subsampled_mechanisms(RDP_gaussian(sigma), q, T).get_eps(delta)"},
}


def software(name: str) -> dict:
    """Name, installed version and call settings of a runner's library."""
    from importlib import metadata

    module = RUNNERS[name].module if name in RUNNERS else name
    dist = {"dp_accounting": "dp-accounting", "prv_accountant": "prv-accountant"}.get(module, module)
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        version = "not installed"
    return {"name": module, "version": version, "settings": dict(SETTINGS.get(name, {}))}


def available(name: str) -> bool:
    return importlib.util.find_spec(RUNNERS[name].module) is not None


def run(name: str, config: Config) -> tuple["float | None", str]:
    """(reported epsilon, "") or (None, exception text). The float inputs are
    the nearest doubles of the exact configuration, as these libraries need."""
    r = RUNNERS[name]
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            eps = r.fn(
                float(config.noise_multiplier), float(config.sampling_rate), config.steps, float(config.delta)
            )
    except Exception as exc:  # a crash is a result here: it becomes a 'crashed' row
        return None, f"{type(exc).__name__}: {exc}"
    if eps != eps or eps == float("-inf"):
        return None, f"returned {eps}"
    return eps, ""

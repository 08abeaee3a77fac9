"""Run floating-point accountants on a DP-SGD configuration: the installed
libraries (built-in runners) and a maintainer's own function (plug-in).

Each built-in runner returns one or more named reports (PRV gives its
estimate and its upper bound, classified as separate rows) for T steps of the
Poisson-subsampled Gaussian at target delta, and records the library's
version and the settings it was called with. All libraries are optional: a
runner whose library is missing is *skipped* with a note. A runner that
raises, or returns NaN, is a *crash*; +inf is kept as "returned inf" (a
vacuous guarantee, a verdict of its own). Nothing here is on the certified
path: the reports are classified against certified enclosures elsewhere.

Plug-in (``--accountant module:function``): ``function(event, delta) -> eps``
where ``event`` is a dp_accounting ``DpEvent`` (the field's common event
language: ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)``)
and ``delta`` a float; it returns a number (float, int, Fraction or an exact
decimal string). Optional attribute ``function.dpverify_settings`` (a dict)
is recorded with each row, as is the version of the function's top-level
package.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import numbers
import os
import sys
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, cast

from ..errors import InvalidParameter, shown
from .rows import Config

__all__ = ["Runner", "Report", "RUNNERS", "available", "run", "load_plugin", "dp_event"]


@dataclass(frozen=True)
class Runner:
    name: str
    module: str  # import name of the library it needs
    distribution: str  # its distribution name, for the version
    fn: Callable[[float, float, int, float], Any]  # a float or {variant: float}
    settings: Mapping[str, Any] = field(default_factory=dict)
    variants: tuple[str, ...] = ()  # named reports of one call (each its own row)


@dataclass(frozen=True)
class Report:
    """One row's worth: the accountant (variant) name, its version and
    settings, and what it returned (``value`` None with ``error`` on a crash)."""

    accountant: str
    version: str
    settings: Mapping[str, Any]
    value: "float | Fraction | None"
    text: str
    error: str = ""

    @property
    def returned_inf(self) -> bool:
        return self.text == "inf"


def dp_event(sigma: float, q: float, T: int) -> Any:
    """The dp_accounting DpEvent of T steps of the (Poisson-subsampled) Gaussian."""
    import dp_accounting

    inner = dp_accounting.GaussianDpEvent(sigma)
    if q < 1:
        inner = dp_accounting.PoissonSampledDpEvent(q, inner)
    return dp_accounting.SelfComposedDpEvent(inner, T)


def _dpacc_pld(sigma: float, q: float, T: int, delta: float) -> float:
    from dp_accounting import pld

    acc = pld.PLDAccountant()
    acc.compose(dp_event(sigma, q, T))
    return float(acc.get_epsilon(delta))


def _dpacc_rdp(sigma: float, q: float, T: int, delta: float) -> float:
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(dp_event(sigma, q, T))
    return float(acc.get_epsilon(delta))


_PRV_EPS_ERROR = 1e-2


def _prv(sigma: float, q: float, T: int, delta: float) -> dict[str, float]:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    acc = PRVAccountant(
        prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q)],
        max_self_compositions=[T],
        eps_error=_PRV_EPS_ERROR,
        delta_error=delta / 1000,
    )
    _, estimate, upper = acc.compute_epsilon(delta=delta, num_self_compositions=[T])
    return {"estimate": float(estimate), "upper": float(upper)}


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
        Runner("dp_accounting-pld", "dp_accounting", "dp-accounting", _dpacc_pld,
               {"class": "pld.PLDAccountant", "arguments": "defaults", "call": "get_epsilon(delta)"}),
        Runner("dp_accounting-rdp", "dp_accounting", "dp-accounting", _dpacc_rdp,
               {"class": "rdp.RdpAccountant", "arguments": "defaults", "call": "get_epsilon(delta)"}),
        Runner("prv_accountant", "prv_accountant", "prv-accountant", _prv,
               {"class": "PRVAccountant", "eps_error": repr(_PRV_EPS_ERROR), "delta_error": "delta/1000",
                "call": "compute_epsilon(delta) -> (lower, estimate, upper)"}, ("estimate", "upper")),
        Runner("opacus-rdp", "opacus", "opacus", _opacus("rdp"),
               {"class": "RDPAccountant", "history": "[(sigma, q, T)]", "call": "get_epsilon(delta)"}),
        Runner("opacus-prv", "opacus", "opacus", _opacus("prv"),
               {"class": "PRVAccountant", "history": "[(sigma, q, T)]",
                "call": "get_epsilon(delta) (its upper bound; eps_error=0.01)"}),
        Runner("opacus-gdp", "opacus", "opacus", _opacus("gdp"),
               {"class": "GaussianAccountant", "history": "[(sigma, q, T)]", "call": "get_epsilon(delta)"}),
        Runner("autodp", "autodp", "autodp", _autodp,
               {"class": "rdp_acct.anaRDPacct", "call": "get_eps(delta)"}),
    )
}


def available(name: str) -> bool:
    return importlib.util.find_spec(RUNNERS[name].module) is not None


def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def _report(name: str, version: str, settings: Mapping[str, Any], value: Any, error: str = "") -> Report:
    """Normalise what an accountant returned: NaN and -inf are crashes, +inf is kept.

    Reading rule (one, exact): a value of a built-in type or a subclass of one is read as
    the value its built-in base stores, never through a method the subclass may override:
    a float as its stored binary64 (``float.__float__``; a float subclass whose repr says
    5.0 and whose __float__ says 1e-9 is read as the 5.0 it stores, shown by float's repr),
    an int as ``int.__int__``, a str as ``str.__str__``, a Fraction as its stored numerator
    and denominator (``Fraction.as_integer_ratio``). Another ``numbers.Real`` (a NumPy scalar) is read by its own float() or
    int(). Whatever fails while reading or showing the value (its float() raising, its repr
    raising) makes the plug-in's 'crashed' row, as a raise inside the plug-in does."""
    if error:
        return Report(name, version, dict(settings), None, "", error)
    out, err = _quiet(lambda: _read(name, version, settings, value))
    if err:
        return Report(name, version, dict(settings), None, "", f"returned a value that could not be read ({err})")
    return cast(Report, out)


def _read(name: str, version: str, settings: Mapping[str, Any], value: Any) -> Report:
    """:func:`_report`'s reading of a returned value (may raise: _report guards it)."""
    # the built-in bases' stored values first (bool is an int: refused below)
    if isinstance(value, float):
        value = float.__float__(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        value = int.__int__(value)
    elif isinstance(value, str):
        value = str.__str__(value)
    elif isinstance(value, Fraction):
        n, d = Fraction.as_integer_ratio(value)
        value = Fraction(int.__int__(n), int.__int__(d))
    # NumPy scalars (dp_accounting's RdpAccountant.get_epsilon returns numpy.float64, a float
    # subclass, read above) as the exact Python number: repr(np.float64(x)) is "np.float64(x)"
    # under NumPy 2, which no reader parses
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)  # exact: NumPy floats of at most 64 bits are binary64 values
    if isinstance(value, bool) or not isinstance(value, (float, int, Fraction, str)):
        return Report(name, version, dict(settings), None, "", f"returned {type(value).__name__} {shown(value)}, not a number")
    if isinstance(value, (int, Fraction)):
        from ..ball import parse_exact

        try:  # str() of an int of more than 4300 digits raises: bounded first, as every input is
            parse_exact(value, "eps")
        except InvalidParameter as exc:
            return Report(name, version, dict(settings), None, "", f"returned {exc.message}")
    if isinstance(value, str):
        from ..ball import parse_exact

        if value.strip().lower() in ("inf", "+inf", "infinity"):
            return Report(name, version, dict(settings), None, "inf")
        try:
            return Report(name, version, dict(settings), parse_exact(value, "eps"), value.strip())
        except InvalidParameter as exc:
            return Report(name, version, dict(settings), None, "", f"returned {exc.message}")
    if isinstance(value, float):
        if value != value or value == float("-inf"):
            return Report(name, version, dict(settings), None, "", f"returned {value}")
        if value == float("inf"):
            return Report(name, version, dict(settings), None, "inf")
        return Report(name, version, dict(settings), value, repr(value))
    return Report(name, version, dict(settings), value, str(value))


def _quiet(fn: Callable[[], Any]) -> tuple[Any, str]:
    """(fn(), "") or, when fn raises, (None, "Type: message"): a crash is a result here (it
    becomes a 'crashed' row). Every BaseException but KeyboardInterrupt (the user stopping
    the run): SystemExit (a plug-in's sys.exit(0) had ended the oracle with exit 0 and no
    output) and a plug-in's own BaseException subclasses too."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            return fn(), ""
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return None, _failure(exc)


def _failure(exc: BaseException) -> str:
    """"Type: message" of what was raised; a part that cannot be built (a message holding
    10**5000, a __str__ that raises) is replaced by a fixed text."""
    try:
        kind = str.__str__(type(exc).__name__)
    except KeyboardInterrupt:
        raise
    except BaseException:
        kind = "an exception"
    try:
        why = str.__str__(str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException:
        why = "(its message could not be shown)"
    return f"{kind}: {why}"


def run(name: str, config: Config) -> list[Report]:
    """The reports of built-in runner ``name`` (one per variant). The float
    inputs are the nearest doubles of the exact configuration, as these
    libraries need."""
    r = RUNNERS[name]
    version = _version(r.distribution)
    sigma, q, delta = float(config.noise_multiplier), float(config.sampling_rate), float(config.delta)
    out, err = _quiet(lambda: r.fn(sigma, q, config.steps, delta))
    if r.variants:
        return [_report(f"{name}-{v}", version, r.settings, None if err else out[v], err) for v in r.variants]
    return [_report(name, version, r.settings, out, err)]


@dataclass(frozen=True)
class Plugin:
    """A maintainer's accountant ``module:function`` (module docstring)."""

    spec: str
    fn: Callable[[Any, float], Any]
    version: str
    settings: Mapping[str, Any]

    def run(self, config: Config) -> Report:
        try:
            event = dp_event(float(config.noise_multiplier), float(config.sampling_rate), config.steps)
        except ImportError:
            return Report(self.spec, self.version, self.settings, None, "",
                          "dp_accounting is needed to build the DpEvent (pip install 'dpverify[dp-accounting]')")
        out, err = _quiet(lambda: self.fn(event, float(config.delta)))
        return _report(self.spec, self.version, self.settings, out, err)


def load_plugin(spec: str) -> Plugin:
    """Import ``module:function`` (the current folder is importable, as with
    ``python -m``); InvalidParameter naming --accountant when it cannot be."""
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr or not all(p.isidentifier() for p in module.split(".") + attr.split(".")):
        raise InvalidParameter("accountant", f"accountant={spec!r} must be module:function, e.g. mypkg.acct:epsilon")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        mod = importlib.import_module(module)
    except Exception as exc:
        raise InvalidParameter("accountant", f"accountant={spec!r}: cannot import {module} "
                               f"({type(exc).__name__}: {exc})") from None
    fn: Any = mod
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise InvalidParameter("accountant", f"accountant={spec!r}: {module} has no function {attr}")
    settings = getattr(fn, "dpverify_settings", {})
    try:
        import json

        json.dumps(settings)
        ok = isinstance(settings, Mapping)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InvalidParameter("accountant", f"accountant={spec!r}: dpverify_settings must be a JSON-serialisable dict")
    top = module.split(".")[0]
    version = getattr(sys.modules.get(top), "__version__", None)
    if not isinstance(version, str):
        from importlib import metadata

        dists = metadata.packages_distributions().get(top, [])
        version = _version(dists[0]) if dists else "unknown"
    return Plugin(spec, fn, version, dict(settings))

"""Accountant plug-ins for the oracle tests (``dpverify oracle --accountant tests.fixtures:NAME``).

Each takes a dp_accounting DpEvent and a float delta and returns epsilon,
the plug-in contract of :mod:`dpverify.oracle.accountants`.
"""

from __future__ import annotations


def _rdp_epsilon(event, delta: float) -> float:
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def underreporting_accountant(event, delta: float) -> float:
    """Half of dp_accounting's RDP epsilon. The RDP bound exceeds the true
    epsilon(delta) by well under a factor 2 on every battery row (e.g. 0.98 vs
    the certified [0.7178, 0.7185] on "smoke"), so half of it is below the
    certified lower bound: an unsafe accountant by construction."""
    return _rdp_epsilon(event, delta) / 2


underreporting_accountant.dpverify_settings = {"rule": "dp_accounting RdpAccountant epsilon / 2"}


def rdp_accountant(event, delta: float) -> float:
    """dp_accounting's RDP epsilon: an upper bound, so never unsafe."""
    return _rdp_epsilon(event, delta)


def infinite_accountant(event, delta: float) -> float:
    """Gives up: +inf (a true but vacuous guarantee: verdict returned-inf)."""
    return float("inf")


def crashing_accountant(event, delta: float) -> float:
    raise RuntimeError("this accountant always fails")


def nan_accountant(event, delta: float) -> float:
    return float("nan")


def numpy_rdp_accountant(event, delta: float):
    """dp_accounting's RDP epsilon as RdpAccountant.get_epsilon returns it: a numpy.float64."""
    from dp_accounting import rdp

    acc = rdp.RdpAccountant()
    acc.compose(event)
    return acc.get_epsilon(delta)


def numpy_float32_accountant(event, delta: float):
    import numpy as np

    return np.float32(0.9)


def exiting_accountant(event, delta: float) -> float:
    """A wrapped command line that exits (argparse's error path does): sys.exit(0)."""
    import sys

    sys.exit(0)


def huge_accountant(event, delta: float) -> int:
    return 10**5000


# adv39 O2: plug-ins whose return value or exception misbehaves when read or shown


class _LyingFloat(float):
    """Stores 5.0; its repr says 5.0 and its float() says 1e-9."""

    def __float__(self):
        return 1e-9

    def __repr__(self):
        return "5.0"


class _RaisingFloat(float):
    def __float__(self):
        raise RuntimeError("no float for you")


class _RaisingStr(str):
    def strip(self, *args):
        raise RuntimeError("no strip")


class _Unshowable:
    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        raise RuntimeError("no repr")


class _OwnBaseException(BaseException):
    pass


class _UnshowableError(Exception):
    def __str__(self):
        raise _OwnBaseException("boom in str")


def lying_float_accountant(event, delta: float):
    return _LyingFloat(5.0)


def raising_float_accountant(event, delta: float):
    return _RaisingFloat(5.0)


def raising_str_accountant(event, delta: float):
    return _RaisingStr("5.0")


def unshowable_accountant(event, delta: float):
    return _Unshowable()


def base_exception_accountant(event, delta: float):
    raise _OwnBaseException("a plug-in's own BaseException")


def unshowable_error_accountant(event, delta: float):
    raise _UnshowableError()


def interrupted_accountant(event, delta: float):
    raise KeyboardInterrupt

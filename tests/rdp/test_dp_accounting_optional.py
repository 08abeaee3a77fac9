"""Optional cross-check against dp_accounting (skipped when it is not installed).

dp_accounting minimises Balle et al.'s conversion over a float grid of orders,
so its eps must never fall below the certified infimum over all real orders
(a value below the lower end would be an unsafe report)."""

from fractions import Fraction

import pytest

dp_accounting = pytest.importorskip("dp_accounting")

from dp_accounting import dp_event  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as R  # noqa: E402

from dpverify.rdp import SubsampledGaussianCurve, compose, rdp_epsilon, renyi_divergence  # noqa: E402


@pytest.mark.parametrize("s,q,T,d", [("20", "1", 1000, "1e-5"), ("1.1", "0.004", 10000, "1e-5")])
def test_grid_eps_is_above_the_certified_infimum(s, q, T, d):
    acc = R.RdpAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(float(q), dp_event.GaussianDpEvent(float(s))), T)
    eps_grid = acc.get_epsilon(float(d))
    curve = compose([SubsampledGaussianCurve(Fraction(s), Fraction(q))], [T])
    enc = rdp_epsilon(curve, d, "balle", 8).enclosure
    lo = float(enc.lo.mid())
    assert eps_grid >= lo * (1 - 1e-12)  # consistent: never below the certified infimum
    assert eps_grid <= lo * (1 + 1e-3)  # and its grid loses little here (measured <= 1.3e-4)


@pytest.mark.parametrize("order", [2, 3, 10, 32, 64])
def test_integer_order_rdp_agrees(order):
    acc = R.RdpAccountant(orders=[float(order)])
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.5)), 1)
    enc = renyi_divergence(SubsampledGaussianCurve(Fraction(3, 2), Fraction(1, 100)), order, 12)
    assert abs(acc._rdp[0] - float(enc.lo.mid())) <= 1e-9 * float(enc.lo.mid())

"""The Gaussian-DP privacy profile delta_mu(eps), certified.

delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)       (GDPT eq. 2, Thm 3.2)

is the privacy profile of the pair (N(0,1), N(mu,1)), i.e. mu-GDP expressed as
(eps, delta)-DP for every eps (Dong, Roth, Su 2019, Cor 2.13). In floating
point both terms underflow (mu = 0.1, eps = 5 gives 0.0 for a true 2.6e-547)
or cancel; here they are balls with unbounded exponent range, and the
subtraction is repeated at rising precision until the difference is known to
the requested relative width.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import ball, refine
from ..mechanisms.gaussian import ddelta_deps_ball, ddelta_dmu_ball, delta_mu_ball
from ..verdict import Enclosure

__all__ = ["delta_mu", "delta_mu_ball", "ddelta_dmu_ball", "ddelta_deps_ball"]


def delta_mu(mu: ExactInput, eps: ExactInput, digits: int = 15) -> Enclosure:
    """Enclosure of delta_mu(eps) (GDPT eq. 2) with relative width <= 10^-digits.

    Valid for every mu > 0 and every real eps (negative eps included, where
    delta_mu(eps) -> 1 - e^eps as mu -> 0), including values far outside the
    double range (delta_{0.5}(50) ~ 4.7e-2166).

    Args:
        mu: GDP parameter, exact (str/int/Fraction; a float at its binary value).
        eps: any real number.
        digits: requested relative accuracy, 1..300.

    Raises:
        InvalidParameter: mu <= 0, non-finite or non-numeric input.
        PrecisionExhausted: the cancellation needs more than the precision cap.
    """
    m = V.positive("mu", mu)
    e = V.real("eps", eps)
    d = V.digits(digits)
    x, bits = delta_mu_with_bits(m, e, d)
    return Enclosure.from_ball(x, d, bits)


def delta_mu_with_bits(mu: Fraction, eps: Fraction, digits: int) -> tuple[arb, int]:
    """Refined ball of delta_mu(eps) for exact inputs, and the precision used."""
    # one more digit inside than promised outside: decimal rounding of the
    # endpoints then stays within the requested width.
    return refine(
        lambda: delta_mu_ball(ball(mu), ball(eps)),
        digits=digits + 1,
        what=f"delta_mu(eps) for mu={mu}, eps={eps}",
    )

"""Plot of the GDP transformation with its staircase bounds (GDPT Fig. 2).

matplotlib is an optional extra (``plot``); it is imported inside
:func:`plot_gdpt`, so importing this module never needs it. The plotted
points are floats (plots are not on the certified path); the certified band
[mu_lo, mu_hi] comes from the certificate.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..ball import ball, lower_decimal, upper_decimal, working_precision
from ..mechanisms.base import Profile
from .transform import gdpt_bounds

__all__ = ["plot_gdpt"]


def plot_gdpt(profile: Profile, cert: Any, out: str, *, points: int = 64) -> None:
    """Draw G_f (point enclosures), the upper staircase mu_GDP(x_{i+1}, f(x_i))
    and the lower staircase G_f(x_i) on a uniform grid of ``points`` cells of
    [0, eps_h], and the certified band; write the image to ``out``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("matplotlib is not installed") from exc

    eh = cert.head.eps_h if cert.head.eps_h > 0 else Fraction(1)
    xs = [eh * i / points for i in range(points + 1)]
    lows, ups = [], []
    with working_precision(128):
        for i, x in enumerate(xs):
            fx = profile.delta(ball(x))
            lo, hi = gdpt_bounds(x, fx, 8)
            lows.append(float(lo.mid()) if lo.is_finite() else float("nan"))
            if i + 1 < len(xs):
                _, u = gdpt_bounds(xs[i + 1], fx, 8)
                ups.append(float(u.mid()) if u.is_finite() else float("nan"))
    fx = [float(x) for x in xs]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(fx, lows, "o-", ms=2, label="G_f(x_i) (certified lower end)")
    ax.step(fx[:-1], ups, where="post", label="upper staircase mu_GDP(x_{i+1}, f(x_i))")
    if not cert.head.unbounded:
        lo, hi = float(cert.head.enclosure.lo.mid()), float(cert.head.enclosure.hi.mid())
        ax.axhspan(lo, hi if hi > lo else lo * (1 + 1e-9), color="tab:green", alpha=0.3,
                   label=f"certified sup in [{lower_decimal(cert.head.enclosure.lo, 6)}, "
                   f"{upper_decimal(cert.head.enclosure.hi, 6)}]")  # outward, not %g
    ax.set_xlabel("eps")
    ax.set_ylabel("mu")
    ax.set_title(f"GDPT of {profile.name} (tail: {cert.tail.status})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)

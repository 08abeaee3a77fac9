"""The figures. Numbers drawn as bands come from certified enclosures (PLD
upper and lower curves); floats are used only to draw them. Every figure
states its parameters in the title and explains each claim in a caption."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence

from ..ball import arb_to_fraction, endpoints, working_precision
from ..files import save_figure
from ..pld.accountant import compose_direction
from ..relation import directions, relation

__all__ = ["calibration_curve", "eps_over_steps", "privacy_profile", "tradeoff_bounds", "tradeoff_curve"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str, caption: str) -> None:
    fig.text(0.01, 0.01, caption, fontsize=7.5, va="bottom", ha="left", wrap=True)
    save_figure(fig, path, dpi=90)
    _plt().close(fig)


def _composed(events: Sequence, rel: str, m: int = 10) -> list:
    """Composed certified bounds per direction (the PLD accountant's own
    compose step, consumed as is)."""
    steps = [e.step() for e in events]
    total = sum(s.count for s in steps)
    return [compose_direction(steps, d, m, 190, 2.0 ** -110 / total, 1 << 40)
            for d in directions(relation(rel))]


def _delta_bounds(cbs: list, eps: float) -> tuple[float, float]:
    e = Fraction(eps)
    lo = hi = 0.0
    with working_precision(300):
        for cb in cbs:
            lo = max(lo, float(arb_to_fraction(endpoints(cb.delta_lower_ball(e))[0])))
            hi = max(hi, float(arb_to_fraction(endpoints(cb.delta_upper_ball(e))[1])))
    return lo, hi


def _title(events: Sequence, rel: str) -> str:
    ev = events[0]
    return f"DP-SGD: sigma={float(ev.noise_multiplier):g}, q={float(ev.sampling_rate):.4g}, T={ev.count}, {rel}, Poisson"


def calibration_curve(cal: Any, path: str) -> None:
    """eps against the free parameter (certified enclosures at a few points),
    with the proved bracket marked."""
    from ..pld import dpsgd as S

    plt = _plt()
    t = cal.template
    lo, hi = float(cal.lo), float(cal.hi)
    span = max(hi - lo, 0.08 * lo)
    xs = [lo - 2 * span + i * span / 2 for i in range(9)]
    xs = [x for x in xs if x > 0 and (t.upper is None or x <= float(t.upper))]
    if t.integer:
        xs = sorted({max(1, round(x)) for x in xs})
    pts = []
    # a fixed-batch template's steps are one pair already maximised over both
    # orientations (AFA Cor 32): account it as a single direction
    rel = t.neighboring if t.mechanism_lower is None else "remove"
    for x in xs:
        val = Fraction(x).limit_denominator(10**6) if not t.integer else Fraction(int(x))
        ans = S.epsilon(t.build(val), cal.delta, neighboring=rel, digits=2, time_budget=120)
        pts.append((x, float(arb_to_fraction(ans.enclosure.lo)), float(arb_to_fraction(ans.enclosure.hi))))
    fig, ax = plt.subplots(figsize=(7, 4.6))
    fig.subplots_adjust(bottom=0.27)
    tight = getattr(cal, "tight", True)
    ax.fill_between([p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], color="C0", alpha=0.35,
                    label="certified enclosure of eps (PLD, lower and upper ends)" if tight else
                    "certified eps of the AFA Cor 32 pair (an upper bound on the mechanism)")
    ax.plot([p[0] for p in pts], [p[2] for p in pts], "C0.-", lw=1)
    eps = float(cal.target_eps)
    ax.axhline(eps, color="k", ls="--", lw=1, label=f"target eps = {eps:g}")
    ax.axvspan(lo, hi, color="C3", alpha=0.25, label=f"proved bracket [{lo:.6g}, {hi:.6g}]" if tight else
               f"accountant's bracket [{lo:.6g}, {hi:.6g}]")
    mech = getattr(cal, "mechanism_unsafe", None)
    if not tight and mech is not None:
        ax.axvline(float(mech.value), color="C1", lw=1.5, ls=":",
                   label=f"mechanism proved to fail: {float(mech.value):.6g} (realised pair)")
    ax.axvline(float(cal.safe.value), color="C2", lw=1.5, label=f"safe end {float(cal.safe.value):.6g}")
    ax.set_xlabel(t.parameter.replace("_", " "))
    ax.set_ylabel(f"eps at delta = {float(cal.delta):g}")
    fixed = ", ".join(f"{k}={v}" for k, v in t.fixed.items())
    import textwrap

    ax.set_title(textwrap.fill(f"Calibration of the {t.parameter.replace('_', ' ')} ({fixed})", 95), fontsize=9)
    ax.legend(fontsize=7.5, loc="upper right")
    # the bracket is far narrower than the curve's range: a zoom shows it
    ins = ax.inset_axes([0.08, 0.08, 0.34, 0.34])
    pad = 1.5 * (hi - lo) or 1e-6 * hi
    ins.axvspan(lo, hi, color="C3", alpha=0.25)
    ins.axvline(float(cal.safe.value), color="C2", lw=1.5)
    ins.axvline(float(cal.unsafe.value) if cal.unsafe is not None else lo, color="C3", lw=1.5)
    ins.set_xlim(lo - pad, hi + pad)
    ins.set_yticks([])
    ins.set_xticks([lo, hi], [f"{lo:.6g}", f"{hi:.6g}"])
    ins.tick_params(labelsize=6)
    ins.set_title(f"zoom: width {(hi - lo) / lo:.2g} (relative)", fontsize=6.5)
    if tight:
        caption = ("The safe end is PROVED to give eps <= target (certified upper end of delta(target) <= delta); "
                   "the other end is PROVED to give eps > target. eps is monotone in this parameter (proved), so "
                   "the optimal value lies in the red bracket. Points: certified eps enclosures (2 digits).")
    else:
        caption = ("Fixed batches (replace-one): the safe end is PROVED to give eps <= target with the AFA Cor 32 "
                   "pair; at the bracket's other end that pair's eps exceeds the target, which proves nothing "
                   "about the mechanism (the composed pair is not known to be tight). The dotted line is where "
                   "the mechanism is PROVED to fail (a realised dataset pair); the optimum lies between it and "
                   "the safe end. Points: certified eps of the Cor 32 pair (2 digits).")
    _save(fig, path, caption)


def eps_over_steps(events: Sequence, delta: Any, rel: str, path: str, epochs_per_step: Optional[float] = None) -> None:
    """eps(delta) over training steps: certified band at checkpoints, plus
    dp_accounting's RDP and PLD estimates when installed."""
    from ..pld import dpsgd as S

    plt = _plt()
    ev = events[0]
    T = ev.count
    cps = sorted({max(1, round(T * f)) for f in (0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 1.0)})
    band = []
    for c in cps:
        a = S.epsilon([S.GaussianSteps(ev.noise_multiplier, ev.sampling_rate, c)], delta, neighboring=rel,
                      digits=2, time_budget=120)
        band.append((float(arb_to_fraction(a.enclosure.lo)), float(arb_to_fraction(a.enclosure.hi))))
    fig, ax = plt.subplots(figsize=(7, 4.6))
    fig.subplots_adjust(bottom=0.24)
    scale = epochs_per_step or 1.0
    xs = [c * scale for c in cps]
    ax.fill_between(xs, [b[0] for b in band], [b[1] for b in band], color="C0", alpha=0.4,
                    label="dpverify: certified enclosure [lo, hi]")
    ax.plot(xs, [b[1] for b in band], "C0.-", lw=1, label="dpverify: certified upper end")
    try:
        import warnings

        import dp_accounting as dpa
        from dp_accounting import pld, rdp

        warnings.filterwarnings("ignore")
        s, q = float(ev.noise_multiplier), float(ev.sampling_rate)
        for name, make, style in (("dp_accounting RDP (estimate)", rdp.RdpAccountant, "C1x--"),
                                  ("dp_accounting PLD (estimate)", pld.PLDAccountant, "C2+:")):
            ys = []
            for c in cps:
                acc = make()
                acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), c))
                ys.append(acc.get_epsilon(float(Fraction(delta))))
            ax.plot(xs, ys, style, lw=1, label=name)
    except ImportError:
        pass
    ax.set_xlabel("epochs" if epochs_per_step else "training steps")
    ax.set_ylabel(f"eps at delta = {float(Fraction(delta)):g}")
    ax.set_title(_title(events, rel), fontsize=9)
    ax.legend(fontsize=7.5)
    _save(fig, path, "Band: certified enclosure of eps(delta) after that many steps (PLD accountant with proved "
          "error bounds; the true eps lies inside). Other lines are floating-point estimates without proof; "
          "RDP is an upper bound by construction but looser.")


def privacy_profile(events: Sequence, rel: str, path: str) -> None:
    """delta(eps) on a log scale with its certified band."""
    plt = _plt()
    cbs = _composed(events, rel)
    es = [i * 0.1 for i in range(0, 121)]
    b = [_delta_bounds(cbs, e) for e in es]
    keep = [(e, lo, hi) for e, (lo, hi) in zip(es, b) if hi > 1e-14]
    fig, ax = plt.subplots(figsize=(7, 4.6))
    fig.subplots_adjust(bottom=0.22)
    ax.fill_between([k[0] for k in keep], [max(k[1], 1e-16) for k in keep], [k[2] for k in keep],
                    color="C0", alpha=0.4, label="certified band [lower curve, upper curve]")
    ax.plot([k[0] for k in keep], [k[2] for k in keep], "C0-", lw=1, label="upper curve (the guarantee)")
    ax.set_yscale("log")
    ax.set_xlabel("eps")
    ax.set_ylabel("delta(eps)")
    ax.set_title("Privacy profile. " + _title(events, rel), fontsize=9)
    ax.legend(fontsize=7.5)
    _save(fig, path, "delta(eps) = max over the add and remove directions of the hockey-stick divergence of the "
          "composed pair (AFA Thm 10, 11). Upper curve: pessimistic connect-the-dots discretisation; lower "
          "curve: optimistic quantisation (loss grid 1/1024). The true profile lies in the band.")


def tradeoff_curve(events: Sequence, rel: str, path: str) -> None:
    """The f-DP trade-off curve of the composed mechanism with a band.

    Lower side (the guarantee): f(a) >= max_e (1 - delta_hi(e) - e^e a) over
    a grid of e (every term is below the true supremum). Upper side: with the
    lower curve delta_lo (a profile of a pair, nonincreasing), for e in
    [e_i, e_{i+1}] the term is <= 1 - delta_lo(e_{i+1}) - e^{e_i} a, and beyond
    the grid <= e^{e_0} (1 - a) resp. 1 - e^{e_last} a (AFA conversions,
    Lemmas 19-25: the profile over all real eps determines f). Add-remove
    takes the pointwise minimum over the two directions.
    """
    plt = _plt()
    alphas, lower, upper = tradeoff_bounds(events, rel)
    fig, ax = plt.subplots(figsize=(5.6, 5.6))
    fig.subplots_adjust(bottom=0.22)
    ax.fill_between(alphas, lower, upper, color="C0", alpha=0.4, label="certified band")
    ax.plot(alphas, lower, "C0-", lw=1, label="lower side: guaranteed trade-off (from upper delta)")
    ax.plot(alphas, upper, "C1--", lw=1, label="upper side (from lower delta)")
    ax.plot([0, 1], [1, 0], "k:", lw=0.8, label="perfect privacy (1 - alpha)")
    ax.set_xlabel("type I error alpha")
    ax.set_ylabel("type II error beta")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title("f-DP trade-off. " + _title(events, rel), fontsize=8)
    ax.legend(fontsize=7)
    _save(fig, path, "Any test of 'was this example in the data' has type II error >= the lower side at type I "
          "error alpha. Sides from the certified profile band on eps in [-6, 6] (AFA conversions; grid "
          "terms bounded on each interval).")


def tradeoff_bounds(events: Sequence, rel: str, step: float = 0.05) -> tuple[list, list, list]:
    """(alphas, lower side, upper side) of the trade-off curve (see
    :func:`tradeoff_curve`) from the profile band at eps = -6, -6 + step, ..., 6;
    floats, for drawing."""
    cbs = _composed(events, rel)
    n = round(12 / step)
    es = [-6 + 12 * i / n for i in range(n + 1)]
    curves = []
    for cb in cbs:
        b = [_delta_bounds([cb], e) for e in es]
        curves.append(b)
    alphas = [i / 400 for i in range(401)]
    lower, upper = [], []
    for a in alphas:
        los, ups = [], []
        for b in curves:
            lo_f = max([0.0] + [1 - hi - math.exp(e) * a for e, (lo, hi) in zip(es, b)])
            up_f = min(1 - a, max([math.exp(es[0]) * (1 - a), 1 - math.exp(es[-1]) * a] +
                                  [1 - b[i + 1][0] - math.exp(es[i]) * a for i in range(len(es) - 1)]))
            los.append(lo_f)
            ups.append(max(up_f, lo_f))
        lower.append(min(los))
        upper.append(min(ups))
    return alphas, lower, upper

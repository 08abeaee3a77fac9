"""Reports of a corpus audit: Markdown or HTML (summary + one row per claim)
and the dot plot (claimed eps against the certified enclosure)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Sequence

from ..errors import DpverifyError
from .audit import AuditRow

__all__ = ["counts", "markdown", "html_report", "plot", "MissingPlotting"]

VERDICTS = ("holds", "fails", "undecided")


class MissingPlotting(DpverifyError):
    """matplotlib is not installed (CLI exit 2 with the install hint)."""


def counts(rows: Sequence[AuditRow]) -> dict[str, int]:
    return {v: sum(1 for r in rows if r.verdict == v) for v in VERDICTS}


def _cells(r: AuditRow) -> list[str]:
    j = r.to_json()
    return [r.claim.id, j["accountant"], j["claimed_eps"], r.enclosure.short(4), j["tightness"] or "-",
            r.verdict, r.reason + ("".join(f"; {s}" for s in r.sensitivity))]


HEADER = ["id", "accountant", "claimed", "certified eps", "claimed / certified", "verdict", "reason"]


def markdown(rows: Sequence[AuditRow], stats: dict[str, Any], title: str, plot_name: "str | None" = None) -> str:
    c = counts(rows)
    out = [f"# {title}", "",
           f"{stats['claims']} claims: **{c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided**. "
           f"{stats['distinct_claim_configurations']} distinct claimed configurations; "
           f"{stats['configurations_computed']} certified computations including the sensitivity check.", "",
           "Verdicts: holds = certified eps upper end <= claimed (a valid guarantee); fails = certified lower "
           "end > claimed (the stated parameters do not give it); claimed / certified = tightness "
           "(1 = tight, > 1 = valid but loose). Relation add-remove unless the claim states another.", ""]
    if plot_name:
        out += [f"![claimed against certified epsilon]({plot_name})", ""]
    out += ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        cells = [x.replace("|", "\\|") for x in _cells(r)]
        cells[0] = f"`{cells[0]}`"
        if r.verdict != "holds":
            cells[5] = f"**{cells[5]}**"
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "## Sources", ""]
    for r in rows:
        j = r.to_json()
        out.append(f"- `{r.claim.id}`: {j['source']}, <{j['location']}>: \"{r.claim.record['quote']}\"")
    return "\n".join(out) + "\n"


def html_report(rows: Sequence[AuditRow], stats: dict[str, Any], title: str, plot_name: "str | None" = None) -> str:
    c = counts(rows)
    e = html.escape
    body = [f"<h1>{e(title)}</h1>",
            f"<p>{stats['claims']} claims: <b>{c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided</b>.</p>"]
    if plot_name:
        body.append(f'<img src="{e(plot_name)}" alt="claimed against certified epsilon">')
    body.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADER) + "</tr>")
    for r in rows:
        body.append("<tr>" + "".join(f"<td>{e(x)}</td>" for x in _cells(r)) + "</tr>")
    body.append("</table>")
    return "<!doctype html><meta charset=utf-8><title>" + e(title) + "</title>\n" + "\n".join(body) + "\n"


def plot(rows: Sequence[AuditRow], path: "str | Path") -> None:
    """One row per claim: the certified interval (bar) and the claimed eps (dot),
    coloured by verdict; log-scaled eps axis. Floats are fine here (a picture)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingPlotting("--plot needs matplotlib: pip install 'dpverify[plot]' (or pip install matplotlib)") from None
    colours = {"holds": "tab:green", "fails": "tab:red", "undecided": "tab:orange"}
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(rows) + 1.2))
    for y, r in enumerate(reversed(list(rows))):
        lo, hi = float(r.enclosure.lo.mid()), float(r.enclosure.hi.mid())
        ax.plot([lo, hi], [y, y], color="black", linewidth=4, solid_capstyle="butt")
        ax.plot([float(r.claim.claimed)], [y], "o", color=colours[r.verdict], markersize=6)
        if r.claim.claimed_lo is not None:
            ax.plot([float(r.claim.claimed_lo), float(r.claim.claimed)], [y, y], color=colours[r.verdict], alpha=0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r.claim.id for r in reversed(list(rows))], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (black bar: certified enclosure; dot: claimed; green holds, red fails)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(str(path), dpi=110)
    plt.close(fig)

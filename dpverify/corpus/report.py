"""Reports of a corpus audit, built from the JSON document that
``audit corpus --json`` prints (so a committed report can be re-derived from
committed results without recomputing): Markdown or HTML (summary + one row
per claim + sources) and the dot plot (claimed eps against the certified
enclosure)."""

from __future__ import annotations

import html
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import DpverifyError
from ..files import save_figure

__all__ = ["counts", "document", "markdown", "html_report", "plot", "MissingPlotting"]

VERDICTS = ("holds", "fails", "undecided")
FORMAT = "dpverify-corpus-audit/1"


class MissingPlotting(DpverifyError):
    """matplotlib is not installed (CLI exit 2 with the install hint)."""


def counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    return {v: sum(1 for r in rows if r["verdict"] == v) for v in VERDICTS}


def document(file: str, rows: Sequence[Mapping[str, Any]], stats: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document of an audit (what --json prints)."""
    return {"format": FORMAT, "file": file, "counts": counts(rows), "stats": dict(stats), "rows": list(rows)}


HEADER = ["id", "accountant", "quantity", "claimed", "certified", "claimed / certified", "verdict", "reason"]


def _cells(r: Mapping[str, Any]) -> list[str]:
    return [r["id"], r["accountant"], r["quantity"], r["claimed"], r["certified_short"], r["tightness"] or "-",
            r["verdict"], r["reason"] + "".join(f"; sensitivity: {s}" for s in r["sensitivity"])]


def table_rows(doc: Mapping[str, Any]) -> list[str]:
    """The Markdown table lines of the per-claim table."""
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in doc["rows"]:
        cells = [x.replace("|", "\\|").replace("\n", " ") for x in _cells(r)]
        cells[0] = f"`{cells[0]}`"
        if r["verdict"] != "holds":
            cells[6] = f"**{cells[6]}**"
        out.append("| " + " | ".join(cells) + " |")
    return out


def markdown(doc: Mapping[str, Any], title: str, plot_name: "str | None" = None) -> str:
    c, st = doc["counts"], doc["stats"]
    out = [f"# {title}", "",
           f"{st['claims']} claims: **{c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided**. "
           f"{st['distinct_claim_configurations']} distinct claimed configurations; "
           f"{st['configurations_computed']} certified computations including the sensitivity check.", "",
           "Verdicts: holds = certified upper end <= claimed (a valid guarantee); fails = certified lower "
           "end > claimed (the stated parameters do not give it); claimed / certified = tightness "
           "(1 = tight, > 1 = valid but loose). The quantity is epsilon at the stated delta, or delta at the "
           "stated eps for a claimed delta. A printed interval is read as the guarantee value <= its upper "
           "end. Relation add-remove unless the claim states another (marked \"(default)\"). A claim whose "
           "number is also printed elsewhere with other parameters (another version of the source) is "
           "certified under both; the reason says which parameters the number fits.", ""]
    if plot_name:
        out += [f"![claimed against certified epsilon]({plot_name})", ""]
    out += table_rows(doc)
    out += ["", "## Sources", ""]
    for r in doc["rows"]:
        quote = r["quote"].replace("\n", " / ")
        out.append(f"- `{r['id']}`: {r['source']}, <{r['location']}>: \"{quote}\"")
        if "other_version" in r:
            ov = r["other_version"]
            out.append(f"  - other version ({ov['changes']}): <{ov['location']}>")
    return "\n".join(out) + "\n"


def html_report(doc: Mapping[str, Any], title: str, plot_name: "str | None" = None) -> str:
    c = doc["counts"]
    e = html.escape
    body = [f"<h1>{e(title)}</h1>",
            f"<p>{doc['stats']['claims']} claims: <b>{c['holds']} hold, {c['fails']} fail, "
            f"{c['undecided']} undecided</b>.</p>"]
    if plot_name:
        body.append(f'<img src="{e(plot_name)}" alt="claimed against certified epsilon">')
    body.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADER) + "</tr>")
    for r in doc["rows"]:
        body.append("<tr>" + "".join(f"<td>{e(x)}</td>" for x in _cells(r)) + "</tr>")
    body.append("</table>")
    return "<!doctype html><meta charset=utf-8><title>" + e(title) + "</title>\n" + "\n".join(body) + "\n"


def _claimed_floats(text: str) -> tuple["float | None", float]:
    t = text.strip()
    if t[0] in "([":
        a, b = t[1:-1].split(",")
        return float(Fraction(a.strip())), float(Fraction(b.strip()))
    return None, float(Fraction(t))


def plot(doc: Mapping[str, Any], path: "str | Path") -> None:
    """One row per claim: the certified interval (black bar) and the claimed
    value (dot), coloured by verdict; log-scaled axis; epsilon claims and delta
    claims in separate panels. Floats are fine here (a picture)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingPlotting("--plot needs matplotlib: pip install 'dpverify[plot]' (or pip install matplotlib)") from None
    colours = {"holds": "tab:green", "fails": "tab:red", "undecided": "tab:orange"}
    panels = [(t, list(reversed([r for r in doc["rows"] if r["target"] == t]))) for t in ("eps", "delta")]
    panels = [(t, rows) for t, rows in panels if rows]
    heights = [len(rows) + 1.5 for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 0.3 * sum(heights) + 0.6), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for (target, rows), ax in zip(panels, axes[:, 0]):
        for y, r in enumerate(rows):
            lo, hi = float(r["certified"]["lo"]), float(r["certified"]["hi"])
            a, b = _claimed_floats(r["claimed"])
            lo_shown = max(lo, 1e-300)  # a log axis cannot show 0
            # a thin line from the certified value to the claim shows the gap; the enclosure itself
            # is usually far narrower than a pixel, so it is drawn as a bar marker too
            ax.plot([min(lo_shown, b), max(hi, b)], [y, y], color="0.75", linewidth=1, zorder=1)
            ax.plot([lo_shown, hi], [y, y], color="black", linewidth=5, solid_capstyle="butt", zorder=2)
            ax.plot([(lo_shown + hi) / 2], [y], marker="|", markersize=13, markeredgewidth=2.5, color="black",
                    zorder=2)
            if a is not None:
                ax.plot([max(a, b * 1e-3), b], [y, y], color=colours[r["verdict"]], alpha=0.5, linewidth=2)
            ax.plot([b], [y], "o", color=colours[r["verdict"]], markersize=6, zorder=3)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r["id"] for r in rows], fontsize=7)
        ax.set_xscale("log")
        what = "epsilon (at the stated delta)" if target == "eps" else "delta (at the stated eps)"
        ax.set_xlabel(what, fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_title("black bar: certified enclosure; dot: claimed (green holds, red fails, orange undecided)",
                         fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=100)
    plt.close(fig)

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


HEADER = ["id", "accountant", "claimed", "certified eps", "claimed / certified", "verdict", "reason"]


def _cells(r: Mapping[str, Any]) -> list[str]:
    return [r["id"], r["accountant"], r["claimed_eps"], r["certified_short"], r["tightness"] or "-", r["verdict"],
            r["reason"] + "".join(f"; sensitivity: {s}" for s in r["sensitivity"])]


def table_rows(doc: Mapping[str, Any]) -> list[str]:
    """The Markdown table lines of the per-claim table."""
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in doc["rows"]:
        cells = [x.replace("|", "\\|").replace("\n", " ") for x in _cells(r)]
        cells[0] = f"`{cells[0]}`"
        if r["verdict"] != "holds":
            cells[5] = f"**{cells[5]}**"
        out.append("| " + " | ".join(cells) + " |")
    return out


def markdown(doc: Mapping[str, Any], title: str, plot_name: "str | None" = None) -> str:
    c, st = doc["counts"], doc["stats"]
    out = [f"# {title}", "",
           f"{st['claims']} claims: **{c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided**. "
           f"{st['distinct_claim_configurations']} distinct claimed configurations; "
           f"{st['configurations_computed']} certified computations including the sensitivity check.", "",
           "Verdicts: holds = certified eps upper end <= claimed (a valid guarantee); fails = certified lower "
           "end > claimed (the stated parameters do not give it); claimed / certified = tightness "
           "(1 = tight, > 1 = valid but loose). A printed interval is read as the guarantee eps <= its upper "
           "end. Relation add-remove unless the claim states another (marked \"(default)\").", ""]
    if plot_name:
        out += [f"![claimed against certified epsilon]({plot_name})", ""]
    out += table_rows(doc)
    out += ["", "## Sources", ""]
    for r in doc["rows"]:
        quote = r["quote"].replace("\n", " / ")
        out.append(f"- `{r['id']}`: {r['source']}, <{r['location']}>: \"{quote}\"")
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
    """One row per claim: the certified interval (black bar) and the claimed eps
    (dot), coloured by verdict; log-scaled eps axis. Floats are fine here (a picture)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingPlotting("--plot needs matplotlib: pip install 'dpverify[plot]' (or pip install matplotlib)") from None
    colours = {"holds": "tab:green", "fails": "tab:red", "undecided": "tab:orange"}
    rows = list(reversed(doc["rows"]))
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.3))
    for y, r in enumerate(rows):
        lo, hi = float(r["certified"]["lo"]), float(r["certified"]["hi"])
        a, b = _claimed_floats(r["claimed_eps"])
        # a thin line from the certified value to the claim shows the gap; the enclosure itself
        # is usually far narrower than a pixel, so it is drawn as a bar marker too
        ax.plot([min(lo, b), max(hi, b)], [y, y], color="0.75", linewidth=1, zorder=1)
        ax.plot([lo, hi], [y, y], color="black", linewidth=5, solid_capstyle="butt", zorder=2)
        ax.plot([(lo + hi) / 2], [y], marker="|", markersize=13, markeredgewidth=2.5, color="black", zorder=2)
        if a is not None:
            ax.plot([max(a, 1e-3), b], [y, y], color=colours[r["verdict"]], alpha=0.5, linewidth=2)
        ax.plot([b], [y], "o", color=colours[r["verdict"]], markersize=6, zorder=3)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["id"] for r in rows], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon  (black bar: certified enclosure; dot: claimed; green holds, red fails, orange undecided)",
                  fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(str(path), dpi=100)
    plt.close(fig)

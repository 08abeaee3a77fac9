"""Outputs of a sweep: results table (CSV and JSON), summary, heatmap.

Times, cache hits and attempts live here, never in certificates (those must be
byte-identical whichever executor produced them).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from ..errors import InvalidParameter
from ..files import open_output, save_figure
from .engine import SweepResult

__all__ = ["write_results", "summary_lines", "write_heatmap", "require_matplotlib", "RESULTS_FORMAT"]

RESULTS_FORMAT = "dpverify-sweep-results/1"
_COLUMNS = ("status", "quantity", "lo", "hi", "verdict", "seconds", "cached", "attempts", "certificate", "error")


def summary(res: SweepResult) -> dict[str, Any]:
    return {
        "configurations": len(res.rows),
        "status": res.counts(),
        "verdicts": res.verdicts(),
        "computed": res.computed,
        "cache_hits": res.cache_hits,
        "cache_refused": res.cache_refused,
        "cache_rechecked": res.cache_rechecked,
        "cache_unstored": res.cache_unstored,
        "retried": res.retried,
        "seconds": round(res.seconds, 3),
    }


def write_results(res: SweepResult, out: "Path | str") -> tuple[Path, Path]:
    """results.csv and results.json in ``out``."""
    out = Path(out)
    rows = [r.to_json() for r in res.rows]
    params = list(res.rows[0].params) if res.rows else []
    extra = sorted({k for r in res.rows for k in r.extra})
    csv_path = out / "results.csv"
    with open_output(csv_path, newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["index", *params, *_COLUMNS, *extra])
        for r, d in zip(res.rows, rows):
            w.writerow([r.index, *(r.params.get(p, "") for p in params), *(d[c] for c in _COLUMNS),
                        *(_cell(r.extra.get(k, "")) for k in extra)])
    json_path = out / "results.json"
    body = {"format": RESULTS_FORMAT, "grid": res.grid.source, "task": res.grid.task,
            "description": res.grid.description, "executor": res.executor,
            "summary": summary(res), "rows": rows}
    with open_output(json_path, encoding="utf-8") as f:
        f.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return csv_path, json_path


def _cell(v: Any) -> str:
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else str(v)


def summary_lines(res: SweepResult) -> list[str]:
    s = summary(res)
    status = ", ".join(f"{n} {k}" for k, n in s["status"].items())
    verdicts = ", ".join(f"{n} {k}" for k, n in s["verdicts"].items())
    lines = [f"{s['configurations']} configurations ({res.grid.task}) on {res.executor} in {res.seconds:.1f} s: "
             f"{status}; verdicts: {verdicts or '-'}",
             f"computed {res.computed}, cache hits {res.cache_hits}, retried attempts {res.retried}"]
    for note in res.cache_refused[:5]:
        lines.append(f"cache entry refused and recomputed: {note}")
    for note in res.cache_rechecked[:5]:
        lines.append(f"cache entry confirmed by the independent verifier, then served: {note}")
    if len(res.cache_rechecked) > 5:
        lines.append(f"  ... and {len(res.cache_rechecked) - 5} more confirmed entries (results.json)")
    for note in res.cache_unstored[:5]:
        lines.append(f"result not stored in the cache (the next run recomputes it): {note}")
    bad = [r for r in res.rows if r.status != "ok"]
    for r in bad[:10]:
        p = ", ".join(f"{k}={v}" for k, v in r.params.items())
        lines.append(f"  [{r.index}] {p}: {r.status}: {r.error[:160]}")
    if len(bad) > 10:
        lines.append(f"  ... and {len(bad) - 10} more (see results.csv)")
    return lines


def require_matplotlib() -> None:
    """Refuse a heatmap before the sweep when matplotlib is not installed. Found, not imported:
    a re-run whose picture is already drawn (:func:`write_heatmap`) never imports it (0.3 s)."""
    from importlib.util import find_spec

    if find_spec("matplotlib") is None:
        raise InvalidParameter("heatmap", "the grid asks for a heatmap, which needs matplotlib: "
                               "pip install 'dpverify[plot]' (or remove the [heatmap] table)") from None


def _up(text: str) -> str:
    """A short label not below the certified upper end (plots only)."""
    if text in ("", "inf"):
        return text or "-"
    x = float(text)
    if x <= 0:
        return f"{x:.3g}"
    e = math.floor(math.log10(x)) - 2
    return f"{math.ceil(x / 10 ** e * (1 + 1e-12)) * 10 ** e:.3g}"


#: the PNG text key under which a heatmap records what it was drawn from (:func:`heatmap_key`)
_KEY_CHUNK = "dpverify-heatmap"


def heatmap_key(res: SweepResult) -> str:
    """A digest of everything the picture is drawn from: the heatmap table, the grid's name, each
    row's cell, status, upper end and quantity, and the dpverify and matplotlib versions (the
    drawing code). Equal keys draw equal pictures."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    hm = res.grid.heatmap or {}
    names = [hm.get("x"), hm.get("y"), hm.get("facet")]
    try:
        mpl = version("matplotlib")
    except PackageNotFoundError:
        mpl = ""
    data = [__version__, mpl, hm, res.grid.source,
            [[r.params.get(n) for n in names if n] + [r.status, r.hi, r.quantity] for r in res.rows]]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _recorded_key(path: Path) -> "str | None":
    """The :data:`_KEY_CHUNK` text of the PNG at ``path`` (a regular file only), or None. Only
    the chunks before the image data are read (matplotlib writes its text there)."""
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as fh:
            if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                return None
            for _ in range(64):
                head = fh.read(8)
                if len(head) < 8:
                    return None
                size, kind = int.from_bytes(head[:4], "big"), head[4:]
                if kind == b"IDAT" or size > 1 << 16:
                    return None
                body = fh.read(size + 4)[:size]
                if kind == b"tEXt" and body.startswith(_KEY_CHUNK.encode("latin-1") + b"\0"):
                    return body[len(_KEY_CHUNK) + 1:].decode("latin-1")
    except OSError:
        return None
    return None


def write_heatmap(res: SweepResult, out: "Path | str") -> Path:
    """PNG of the upper end of each enclosure over heatmap.x by heatmap.y,
    one panel per value of heatmap.facet. Floats here are for the picture only.

    The PNG records :func:`heatmap_key` in a text chunk; where the file already there records the
    same key (a re-run served from the cache), it is left as it is, without importing matplotlib
    (issue 22: drawing it again was 1.0 s of a 1.1 s re-run)."""
    hm = res.grid.heatmap or {}
    path = Path(out) / hm.get("file", "heatmap.png")
    key = heatmap_key(res)
    if _recorded_key(path) == key:
        return path
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x, y, facet = hm["x"], hm["y"], hm.get("facet")

    def levels(name: str) -> list[str]:
        seen: list[str] = []
        for r in res.rows:
            if r.params[name] not in seen:
                seen.append(r.params[name])
        return seen

    xs, ys = levels(x), levels(y)
    fs = levels(facet) if facet else [None]
    quantity = next((r.quantity for r in res.rows if r.quantity), "value")
    vals = [float(r.hi) for r in res.rows if r.status == "ok" and r.hi not in ("", "inf")]
    vmin, vmax = (min(vals), max(vals)) if vals else (0.0, 1.0)
    fig, axes = plt.subplots(1, len(fs), figsize=(1.2 + 1.25 * len(xs) * len(fs) + 0.8 * len(fs), 1.4 + 0.6 * len(ys)),
                             squeeze=False, constrained_layout=True)
    im = None
    for k, fv in enumerate(fs):
        ax = axes[0][k]
        grid = np.full((len(ys), len(xs)), np.nan)
        labels = [["-"] * len(xs) for _ in ys]
        for r in res.rows:
            if facet and r.params[facet] != fv:
                continue
            i, j = ys.index(r.params[y]), xs.index(r.params[x])
            if r.status == "ok" and r.hi not in ("", "inf"):
                grid[i, j] = float(r.hi)
                labels[i][j] = _up(r.hi)
            else:
                labels[i][j] = "inf" if r.hi == "inf" else r.status
        im = ax.imshow(grid, origin="lower", cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        for i in range(len(ys)):
            for j in range(len(xs)):
                v = grid[i, j]
                dark = not np.isnan(v) and (v - vmin) < 0.6 * (vmax - vmin or 1)
                ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")
        ax.set_xticks(range(len(xs)), xs)
        ax.set_yticks(range(len(ys)), ys)
        ax.set_xlabel(x)
        if k == 0:
            ax.set_ylabel(y)
        if facet:
            ax.set_title(f"{facet} = {fv}", fontsize=9)
    if im is not None:
        fig.colorbar(im, ax=axes[0].tolist(), label=f"certified upper bound of {quantity}")
    fig.suptitle(hm.get("title") or f"{res.grid.source}: certified {quantity} (upper end, rounded up)", fontsize=10)
    save_figure(fig, path, dpi=110, metadata={_KEY_CHUNK: key})
    plt.close(fig)
    return path

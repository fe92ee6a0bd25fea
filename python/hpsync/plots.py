# SPDX-License-Identifier: MIT
"""Figures for the report: each function takes finished rows (or series of
measurements) and returns PNG bytes (matplotlib, Agg backend, no display
needed)."""

from __future__ import annotations

import io
from typing import Any, NamedTuple, Protocol, Sequence

from .errors import CliError

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
except ImportError:  # pragma: no cover - depends on the machine
    plt = None  # type: ignore[assignment]

MAPPING_ORDER = ("compact", "scatter", "os")


def require() -> None:
    if plt is None:
        raise CliError("the report needs matplotlib: run scripts/install-deps "
                       "(or python3 -m pip install matplotlib)")


def _png(fig: "Figure") -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def _row_lines(rows: Sequence[dict[str, Any]], title: str, series: str, x: str,
               order: Sequence[str] = ()) -> bytes:
    """Value against row[x], one line per row[series], min..max of reps as error bars."""
    require()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    names = sorted({str(r.get(series, "")) for r in rows},
                   key=lambda m: (order.index(m) if m in order else 9, m))
    for m in names:
        pts = sorted((r for r in rows if str(r.get(series, "")) == m), key=lambda r: r[x])
        xs = [r[x] for r in pts]
        ys = [r["value"] for r in pts]
        lo = [max(0.0, r["value"] - min(r.get("reps") or [r["value"]])) for r in pts]
        hi = [max(0.0, max(r.get("reps") or [r["value"]]) - r["value"]) for r in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=m or "?")
    ax.set_xlabel(x)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))   # threads and pages are whole
    ax.set_ylabel(str(rows[0].get("unit", "")) if rows else "")
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(title=series)
    return _png(fig)


def curves(rows: Sequence[dict[str, Any]], title: str) -> bytes:
    """Value against threads, one line per mapping, min..max of reps as error bars."""
    return _row_lines(rows, title, "mapping", "threads", MAPPING_ORDER)


def sweeps(rows: Sequence[dict[str, Any]], title: str) -> bytes:
    """A sweep's value against its x (row["x"] names it), one line per variant."""
    return _row_lines(rows, title, "variant", str(rows[0].get("x", "x")) if rows else "x")


def _cdf_points(dist: dict[str, Any]) -> tuple[list[float], list[float]]:
    samples = sorted(dist.get("samples") or [])
    if samples:
        n = len(samples)
        return samples, [(i + 1) / n for i in range(n)]
    hist = dist.get("hist") or {}
    edges, counts = hist.get("edges") or [], hist.get("counts") or []
    total = sum(counts) or 1
    xs, ys, acc = [], [], 0.0
    for e, c in zip(edges[1:], counts):
        acc += c
        xs.append(e)
        ys.append(acc / total)
    return xs, ys


def latencies(items: Sequence[tuple[str, dict[str, Any]]], title: str) -> bytes:
    """CDF (left) and log-binned histogram (right) of each (label, dist)."""
    require()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    unit = str(items[0][1].get("unit", "")) if items else ""
    for label, d in items:
        xs, ys = _cdf_points(d)
        if d.get("bimodal"):
            label += " (bimodal)"
        if xs:
            left.step(xs, ys, where="post", label=label)
        hist = d.get("hist") or {}
        edges, counts = hist.get("edges") or [], hist.get("counts") or []
        if len(edges) == len(counts) + 1 and counts:
            right.stairs(counts, edges, fill=False, label=label)
    lows = [d.get("min") for _, d in items if isinstance(d.get("min"), (int, float)) and d["min"] > 0]
    highs = [d.get("max") for _, d in items if isinstance(d.get("max"), (int, float))]
    # Log axes only where the values span decades; otherwise their labels crowd.
    wide = bool(lows and highs) and max(highs) / min(lows) > 8
    for ax in (left, right):
        if wide:
            ax.set_xscale("log")
        ax.set_xlabel(unit)
        ax.grid(alpha=0.3)
    left.set_ylabel("fraction ≤ x")
    left.set_title(f"{title}: CDF")
    right.set_ylabel("count")
    right.set_title(f"{title}: histogram")
    left.legend(fontsize="small")
    return _png(fig)


def pairs(row: dict[str, Any], title: str) -> bytes:
    """Scatter of a two-interval measurement with each interval's histogram beside it."""
    require()
    pts = [p for p in row.get("pairs", []) if isinstance(p, list) and len(p) == 2]
    xs = [float(p[0]) for p in pts]
    ys = [float(p[1]) for p in pts]
    fig = plt.figure(figsize=(6, 5))
    grid = fig.add_gridspec(2, 2, width_ratios=(4, 1), height_ratios=(1, 4), wspace=0.05, hspace=0.05)
    ax = fig.add_subplot(grid[1, 0])
    top = fig.add_subplot(grid[0, 0], sharex=ax)
    side = fig.add_subplot(grid[1, 1], sharey=ax)
    ax.scatter(xs, ys, s=6, alpha=0.6)
    unit = str(row.get("unit", "ns"))
    if xs:
        # Latencies span decades (a few outliers 10-100x the bulk): on linear
        # axes the bulk collapses into one corner, so go logarithmic then.
        wide = all(v > 0 for v in xs + ys) and (max(xs) / min(xs) > 10 or max(ys) / min(ys) > 10)
        if wide:
            import numpy as np
            ax.set_xscale("log")
            ax.set_yscale("log")
            top.hist(xs, bins=np.geomspace(min(xs), max(xs), 41))
            side.hist(ys, bins=np.geomspace(min(ys), max(ys), 41), orientation="horizontal")
        else:
            top.hist(xs, bins=40)
            side.hist(ys, bins=40, orientation="horizontal")
    ax.set_xlabel(f"{row.get('x', 'x')} ({unit})")
    ax.set_ylabel(f"{row.get('y', 'y')} ({unit})")
    top.tick_params(labelbottom=False)
    side.tick_params(labelleft=False)
    top.set_title(title)
    ax.grid(alpha=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def matrix(row: dict[str, Any], title: str) -> bytes:
    """Heatmaps of the core-to-core medians and p99s (diagonal left blank)."""
    require()
    import numpy as np
    cpus = list(row.get("cpus", []))
    panels = [(k, row[k]) for k in ("median", "p99") if isinstance(row.get(k), list) and row[k]]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4), squeeze=False)
    for ax, (name, m) in zip(axes[0], panels):
        data = np.array(m, dtype=float)
        np.fill_diagonal(data, np.nan)
        im = ax.imshow(data, cmap="viridis")
        ax.set_xticks(range(len(cpus)), [str(c) for c in cpus])
        ax.set_yticks(range(len(cpus)), [str(c) for c in cpus])
        ax.set_xlabel("cpu")
        ax.set_ylabel("cpu")
        ax.set_title(f"{title}: {name} ({row.get('unit', 'ns')})")
        if len(cpus) <= 16:
            for i in range(len(cpus)):
                for j in range(len(cpus)):
                    if i != j:
                        ax.text(j, i, f"{data[i, j]:.0f}", ha="center", va="center",
                                color="white", fontsize=7)
        fig.colorbar(im, ax=ax, shrink=0.8)
    return _png(fig)


def pools(rows: Sequence[dict[str, Any]], title: str) -> bytes:
    """Pool timings: median time against threads per pool (p1..p99 error bars)
    at the deepest recursion level measured; when several levels were run, time
    against levels at the largest thread count; and failed CAS per run."""
    require()
    levels = sorted({int(r["levels"]) for r in rows if r.get("levels") is not None})
    deep = [r for r in rows if not levels or r.get("levels") == levels[-1]]
    panels = 3 if len(levels) > 1 else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.5 * panels, 3.4))
    left, right = axes[0], axes[-1]
    names = sorted({str(r.get("pool")) for r in rows})
    unit = ""
    width = 0.8 / max(len(names), 1)
    threads = sorted({int(r["threads"]) for r in deep})
    for k, name in enumerate(names):
        pts = sorted((r for r in deep if str(r.get("pool")) == name), key=lambda r: r["threads"])
        if not pts:
            continue
        xs = [r["threads"] for r in pts]
        med = [r["dist"]["median"] for r in pts]
        lo = [max(0.0, r["dist"]["median"] - r["dist"].get("p1", r["dist"]["median"])) for r in pts]
        hi = [max(0.0, r["dist"].get("p99", r["dist"]["median"]) - r["dist"]["median"]) for r in pts]
        unit = str(pts[0]["dist"].get("unit", unit))
        label = name + ("" if all(r.get("check_ok", True) for r in rows
                                  if str(r.get("pool")) == name) else " (CHECK FAILED)")
        left.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=3, label=label)
        by_t = {int(r["threads"]): r.get("failed_cas", 0) or 0 for r in pts}
        right.bar([i + k * width for i in range(len(threads))], [by_t.get(t, 0) for t in threads],
                  width=width, label=name)
        if panels == 3:
            top = max(int(r["threads"]) for r in rows)
            lv = sorted((r for r in rows if str(r.get("pool")) == name and r["threads"] == top),
                        key=lambda r: r["levels"])
            axes[1].plot([r["levels"] for r in lv], [r["dist"]["median"] for r in lv],
                         marker="o", label=name)
    at = f" at {levels[-1]} levels" if levels else ""
    left.set_xlabel("threads")
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylabel(f"time per run ({unit})")
    left.set_ylim(bottom=0)
    left.set_title(f"{title}: time{at} (median, p1..p99)", fontsize="medium")
    left.grid(alpha=0.3)
    left.legend(title="pool", fontsize="small")
    if panels == 3:
        axes[1].set_xlabel("recursion levels")
        axes[1].set_ylabel(f"median time per run ({unit})")
        axes[1].set_ylim(bottom=0)
        axes[1].set_title(f"{title}: time vs levels at {max(int(r['threads']) for r in rows)} threads",
                          fontsize="medium")
        axes[1].grid(alpha=0.3)
        axes[1].legend(fontsize="small")
    right.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(threads))],
                     [str(t) for t in threads])
    right.set_xlabel("threads")
    right.set_ylabel("failed CAS")
    right.set_title(f"{title}: failed CAS{at}", fontsize="medium")
    right.legend(fontsize="small")
    return _png(fig)


class SeriesLike(Protocol):
    label: str
    xs: list[float]
    ys: list[float]
    lo: list[float]
    hi: list[float]


def _wide(values: Sequence[float]) -> bool:
    """Values spanning decades read better on a log axis."""
    pos = [v for v in values if v > 0]
    return len(pos) == len(values) and len(pos) > 1 and max(pos) / min(pos) > 16


def measurement_lines(series: Sequence[SeriesLike], title: str, xlabel: str, ylabel: str) -> bytes:
    """One line per series against a numeric dim, min..max of the
    repetitions as error bars."""
    require()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, s in enumerate(series):
        # Past the colour cycle's ten colours, the line style tells series apart.
        ax.errorbar(s.xs, s.ys, yerr=[s.lo, s.hi], marker="o" if i < 10 else "s", capsize=3,
                    linestyle="-" if i < 10 else "--", label=s.label)
    xs = [x for s in series for x in s.xs]
    ys = [y for s in series for y in s.ys]
    if _wide(xs):
        ax.set_xscale("log", base=2)
    if _wide(ys):
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    if all(float(x).is_integer() for x in xs) and not _wide(xs):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(series) > 1 or series[0].label != "-":
        ax.legend(fontsize="small", ncol=2 if len(series) > 6 else 1)
    return _png(fig)


def measurement_bars(labels: Sequence[str], points: Sequence[tuple[float, float, float]], title: str,
                     xlabel: str) -> bytes:
    """Horizontal bars, one per measurement (value, below, above), with
    min..max of the repetitions as error bars."""
    require()
    fig, ax = plt.subplots(figsize=(6.4, 1.2 + 0.28 * len(labels)))
    ys = list(range(len(labels)))
    vals = [p[0] for p in points]
    ax.barh(ys, vals, xerr=[[p[1] for p in points], [p[2] for p in points]], capsize=3,
            color="#1f77b4", alpha=0.85)
    ax.set_yticks(ys, list(labels), fontsize="small")
    ax.invert_yaxis()
    if _wide(vals):
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="x")
    return _png(fig)


class Mark(NamedTuple):
    """A marked point of marked_lines: a star at (x, y), or, with x None, a
    dashed level at y (a figure with no x of its own).  `series` names the
    line whose colour it takes (red without one); a hollow star is a point
    that is not quite on the x axis's scale (a controller that ended on
    serialized chunks of its largest k)."""
    label: str
    x: float | None
    y: float
    series: str | None = None
    hollow: bool = False


MARK_RED = "#c0392b"


def marked_lines(series: Sequence[SeriesLike], marks: Sequence[Mark],
                 title: str, xlabel: str, ylabel: str) -> bytes:
    """measurement_lines plus marked points."""
    require()
    # Wider, the legend beside the axes: the marks sit at the top right,
    # where a legend inside would cover them.
    fig, ax = plt.subplots(figsize=(8.4, 3.8))
    colour: dict[str, str] = {}
    for s in series:
        bars = ax.errorbar(s.xs, s.ys, yerr=[s.lo, s.hi], marker="o", capsize=3, label=s.label)
        colour[s.label] = bars.lines[0].get_color()
    for m in marks:
        col = colour.get(m.series or "", MARK_RED)
        if m.x is None:
            ax.axhline(m.y, linestyle="--", color=col, label=m.label)
        else:
            # A black edge: a star in its line's colour still stands out on the line;
            # a hollow one is white inside its colour.
            ax.plot([m.x], [m.y], marker="*", markersize=16, linestyle="none", label=m.label,
                    markerfacecolor="white" if m.hollow else col,
                    markeredgecolor=col if m.hollow else "black", markeredgewidth=2 if m.hollow else 1)
    xs = [x for s in series for x in s.xs]
    if _wide(xs):
        ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _png(fig)


def stacked_bars(labels: Sequence[str], stacks: dict[str, list[float]], title: str,
                 ylabel: str) -> bytes:
    """One bar per label, stacked by the keys of stacks (each a list as long
    as labels): the parts of a total, such as aborts by cause."""
    require()
    fig, ax = plt.subplots(figsize=(max(6.4, 0.6 * len(labels) + 2), 4.0))
    xs = list(range(len(labels)))
    bottom = [0.0] * len(labels)
    for name, vals in stacks.items():
        ax.bar(xs, vals, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(xs, list(labels), rotation=30, ha="right", fontsize="small")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    if stacks:
        ax.legend(fontsize="small")
    return _png(fig)

# SPDX-License-Identifier: MIT
"""The characterization report: one self-contained HTML page (figures inline
as base64 PNG), and the short text summary `hpsync characterize` prints.

figure_plan() decides which figures a run gets (pure); html() draws them with
plots.py and lays out the tables.
"""

from __future__ import annotations

import base64
import html as h
from dataclasses import dataclass
from typing import Any, Callable

from . import characterize, plots
from . import render as text


@dataclass(frozen=True)
class Figure:
    probe: str
    kind: str                    # curve, latency, pairs, matrix, pool
    title: str
    draw: Callable[[], bytes]


def _group(rows: list[dict[str, Any]], kind: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("kind") == kind:
            out.setdefault(str(r.get("metric", "?")), []).append(r)
    return out


def figure_plan(run: dict[str, Any]) -> list[Figure]:
    """One figure per curve metric (lines per mapping), per latency metric (CDF +
    histogram of its variants), per pairs row, per matrix, per pool metric."""
    figs: list[Figure] = []
    for name, doc in characterize.documents(run):
        rows = [r for r in doc.get("results", []) if isinstance(r, dict)]
        for metric, rs in _group(rows, "curve").items():
            figs.append(Figure(name, "curve", f"{name}: {metric}",
                               lambda rs=rs, t=f"{name}: {metric}": plots.curves(rs, t)))
        for metric, rs in _group(rows, "latency").items():
            items = [(str(r.get("variant", "")) or metric, r.get("dist", {})) for r in rs]
            figs.append(Figure(name, "latency", f"{name}: {metric}",
                               lambda it=items, t=f"{name}: {metric}": plots.latencies(it, t)))
        for r in rows:
            if r.get("kind") == "pairs":
                t = f"{name}: {characterize.row_label(r)}"
                figs.append(Figure(name, "pairs", t, lambda r=r, t=t: plots.pairs(r, t)))
            elif r.get("kind") == "matrix":
                t = f"{name}: {r.get('metric', '?')}"
                figs.append(Figure(name, "matrix", t, lambda r=r, t=t: plots.matrix(r, t)))
        for metric, rs in _group(rows, "pool").items():
            figs.append(Figure(name, "pool", f"{name}: {metric}",
                               lambda rs=rs, t=f"{name}: {metric}": plots.pools(rs, t)))
    return figs


# ---- HTML ---------------------------------------------------------------------------

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}
tr.flagged td{background:#fff3cd}
.flag{background:#fde2e1;border-left:4px solid #c0392b;padding:.4em .8em;margin:.3em 0}
.status-ok{color:#1e7e34}.status-missing,.status-failed{color:#c0392b;font-weight:bold}
figure{margin:1em 0}figcaption{font-size:.85em;color:#555}
img{max-width:100%}
"""


def _e(x: Any) -> str:
    return h.escape(str(x))


def _num(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return "-" if x is None else str(x)
    if isinstance(x, (int, float)):
        return f"{x:.4g}" if isinstance(x, float) else str(x)
    return _e(x)


def _table(header: list[str], rows: list[list[str]], left: int = 1,
           flagged: list[bool] | None = None) -> str:
    """rows hold already-escaped cells; the first `left` columns are left-aligned."""
    out = ["<table><tr>" + "".join(f"<th class='l'>{c}</th>" if i < left else f"<th>{c}</th>"
                                   for i, c in enumerate(header)) + "</tr>"]
    for k, r in enumerate(rows):
        cls = " class='flagged'" if flagged and flagged[k] else ""
        out.append(f"<tr{cls}>" + "".join(f"<td class='l'>{c}</td>" if i < left else f"<td>{c}</td>"
                                          for i, c in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _flatten(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += _flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v))
    return out


def latency_rows(run: dict[str, Any]) -> list[tuple[list[str], bool]]:
    """Table cells for every distribution (latency and pool rows), and whether flagged."""
    out = []
    for name, doc in characterize.documents(run):
        steal = isinstance(doc.get("steal_ms"), (int, float)) and doc["steal_ms"] > 0
        for row, d in characterize.dists_of(doc):
            flags = (["bimodal"] if d.get("bimodal") else []) + (["steal"] if steal else [])
            if row.get("kind") == "pool" and not row.get("check_ok", True):
                flags.append("check failed")
            cells = [_e(name), _e(characterize.row_label(row)), _e(d.get("unit", "")),
                     _num(d.get("n"))] + [_num(d.get(k)) for k in
                                          ("min", "p1", "median", "p90", "p99", "p999", "max")]
            cells.append(_e(", ".join(flags)) or "")
            out.append((cells, bool(flags)))
    return out


def html(run: dict[str, Any], label: str) -> str:
    """The whole report page."""
    ctx = run.get("context", {}) or {}
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>"
             f"<title>hpsync characterization: {_e(ctx.get('host', '?'))}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>hpsync characterization of {_e(ctx.get('host', '?'))} "
             f"({_e(ctx.get('cpu_model', '?'))})</h1>",
             f"<p>{_e(label)}, created {_e(run.get('created', '?'))}"
             f"{', quick' if run.get('params', {}).get('quick') else ''}.</p>"]

    flags = run.get("flags", [])
    parts.append("<h2 id='flags'>Flags</h2>")
    if flags:
        parts += [f"<div class='flag'><b>{_e(f.get('flag'))}</b> ({_e(f.get('probe'))}): "
                  f"{_e(f.get('detail'))}</div>" for f in flags]
    else:
        parts.append("<p>None: no steal time, no bimodal distribution.</p>")
    for w in run.get("warnings", []):
        parts.append(f"<div class='flag'>{_e(w)}</div>")

    parts.append("<h2 id='probes'>Probes</h2>")
    parts.append(_table(["probe", "status", "seconds", "steal ms", "note"], [
        [_e(p.get("name")), f"<span class='status-{_e(p.get('status'))}'>{_e(p.get('status'))}</span>",
         _num(p.get("seconds")),
         _num((p.get("document") or {}).get("steal_ms")) if p.get("document") else "-",
         _e(p.get("error", ""))]
        for p in run.get("probes", [])], left=2))

    parts.append("<h2 id='context'>Context</h2>")
    parts.append(_table(["key", "value"], [[_e(k), _e(v)] for k, v in _flatten(ctx)], left=2))
    timer = run.get("timer", {}) or {}
    parts.append("<h2 id='timer'>Timer</h2>")
    trows = [[_e(f"context: {k}"), _num(v), ""] for k, v in _flatten(timer.get("context", {}))]
    trows += [[_e(k), _num(v.get("value")), _e(v.get("unit", ""))]
              for k, v in (timer.get("measured") or {}).items()]
    parts.append(_table(["fact", "value", "unit"], trows) if trows
                 else "<p>No timer facts (the timer probe did not run).</p>")

    lat = latency_rows(run)
    if lat:
        parts.append("<h2 id='latencies'>Latencies</h2>")
        parts.append(_table(["probe", "measurement", "unit", "n", "min", "p1", "median", "p90",
                             "p99", "p99.9", "max", "flags"],
                            [c for c, _ in lat], left=2, flagged=[f for _, f in lat]))

    scalars, curves = [], []
    for name, doc in characterize.documents(run):
        for r in doc.get("results", []):
            if r.get("kind") == "scalar":
                scalars.append([_e(name), _e(r.get("metric")), _num(r.get("value")), _e(r.get("unit", ""))])
            elif r.get("kind") == "curve":
                reps = r.get("reps") or []
                curves.append([_e(name), _e(r.get("metric")), _e(r.get("mapping", "")),
                               _num(r.get("threads")), _num(r.get("value")), _e(r.get("unit", "")),
                               _num(len(reps)), _num(min(reps)) if reps else "-",
                               _num(max(reps)) if reps else "-"])
    if scalars:
        parts.append("<h2 id='scalars'>Scalars</h2>")
        parts.append(_table(["probe", "metric", "value", "unit"], scalars, left=2))
    if curves:
        parts.append("<h2 id='curves'>Curves</h2>")
        parts.append(_table(["probe", "metric", "mapping", "threads", "value", "unit", "reps",
                             "min", "max"], curves, left=3))

    figs = figure_plan(run)
    if figs:
        parts.append("<h2 id='figures'>Figures</h2>")
    for f in figs:
        png = base64.b64encode(f.draw()).decode("ascii")
        parts.append(f"<figure><img alt='{_e(f.title)}' src='data:image/png;base64,{png}'>"
                     f"<figcaption>{_e(f.title)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


# ---- text summary ---------------------------------------------------------------------

def summary(run: dict[str, Any]) -> str:
    """What `hpsync characterize` prints: probe statuses, timer facts, flags."""
    ctx = run.get("context", {}) or {}
    out = [f"hpsync characterize: {text.context_line(ctx)}", ""]
    rows = []
    for p in run.get("probes", []):
        doc = p.get("document") or {}
        rows.append([p.get("name", "?"), p.get("status", "?"), f"{p.get('seconds', 0):.1f}",
                     str(len(doc.get("results", []))) if doc else "-", p.get("error", "")])
    out.append(text.table(["probe", "status", "s", "results", "note"], rows,
                          [False, False, True, True, False]))
    measured = (run.get("timer") or {}).get("measured") or {}
    if measured:
        out += ["", "Timer"]
        out += [f"  {k}: {v.get('value')} {v.get('unit', '')}".rstrip() for k, v in measured.items()]
    flags = run.get("flags", [])
    out += ["", "Flags" if flags else "Flags: none"]
    out += [f"  {f['flag']}: {f['probe']}: {f['detail']}" for f in flags]
    if "run_id" in run:
        out += ["", f"stored as run {run['run_id']}; `hpsync report {run['run_id']}` draws it"]
    return "\n".join(out)

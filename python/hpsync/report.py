# SPDX-License-Identifier: MIT
"""`hpsync report`: one self-contained HTML page (figures inline as base64
PNG) for a run of any kind, and the short text summary `hpsync
characterize` prints.

Every page has the run's contexts, parameters, warnings, targets and the
table of its measurements.  A characterization adds its probes, timer
facts, distributions and the probes' figures (figure_plan); a benchmark
run adds its own text report and a figure per group of measurements
(measurement_plan: lines against threads, size or PEs where a group has
them, else bars).  The plans are pure; html() draws them with plots.py.
"""

from __future__ import annotations

import base64
import html as h
from dataclasses import dataclass
from typing import Any, Callable

from typing import Mapping, Sequence

from . import characterize, compare, plots, schema
from . import render as text
from .bench import by_kind


@dataclass(frozen=True)
class Figure:
    probe: str
    kind: str                    # curve, latency, pairs, matrix, pool, sweep
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
    histogram of its variants), per pairs row, per matrix, per pool metric, per
    sweep metric (lines per variant against the sweep's x)."""
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
        for metric, rs in _group(rows, "sweep").items():
            figs.append(Figure(name, "sweep", f"{name}: {metric}",
                               lambda rs=rs, t=f"{name}: {metric}": plots.sweeps(rs, t)))
    return figs


# ---- figures of any run's measurements --------------------------------------------

MAX_FIGURES = 40
# Numeric dims that make an x axis, in order of preference.
X_DIMS = ("threads", "size", "npes", "levels", "pages")


@dataclass(frozen=True)
class Series:
    label: str
    xs: list[float]
    ys: list[float]
    lo: list[float]              # value - min of the reps
    hi: list[float]              # max of the reps - value


def _label(dims: Mapping[str, Any], names: Sequence[str]) -> str:
    return " ".join(str(dims[k]) if isinstance(dims.get(k), str) else f"{k}={dims.get(k)}"
                    for k in names) or "-"


def _point(m: Mapping[str, Any]) -> tuple[float, float, float]:
    v = float(m["value"])
    reps = m.get("reps") or [v]
    return v, max(0.0, v - min(reps)), max(0.0, max(reps) - v)


def measurement_plan(run: Mapping[str, Any]) -> list[Figure]:
    """One figure per group of measurements sharing their first dim's value,
    metric and unit (at least two with values): lines against the first
    numeric dim along which some series has two or more points, one line
    per combination of the other dims that vary; bars otherwise.  Error
    bars span each measurement's repetitions (min to max)."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for m in run.get("measurements", []):
        if m.get("value") is None:
            continue
        first = next(iter(schema.ordered_dims(m["dims"])), ("", ""))[1]
        groups.setdefault((str(first), m["metric"], m["unit"]), []).append(m)
    figs: list[Figure] = []
    for (first, metric, unit), ms in groups.items():
        if len(ms) < 2:
            continue
        names = list(dict.fromkeys(k for m in ms for k, _ in schema.ordered_dims(m["dims"])[1:]))
        names += ["threads"] if any("threads" in m["dims"] for m in ms) else []
        vary = [k for k in names if len({repr(m["dims"].get(k)) for m in ms}) > 1]
        title = f"{first}: {metric}"
        x = next((k for k in X_DIMS if k in vary
                  and all(isinstance(m["dims"].get(k), (int, float)) for m in ms)
                  and len({_label(m["dims"], [v for v in vary if v != k]) for m in ms}) < len(ms)), None)
        if x is not None:
            rest = [k for k in vary if k != x]
            series: dict[str, list[Mapping[str, Any]]] = {}
            for m in sorted(ms, key=lambda m: float(m["dims"][x])):
                series.setdefault(_label(m["dims"], rest), []).append(m)
            lines = [Series(lb, [float(m["dims"][x]) for m in pts], *map(list, zip(*map(_point, pts))))
                     for lb, pts in series.items()]
            figs.append(Figure("measurements", "lines", title,
                               lambda ln=lines, t=title, xl=x, yl=unit or metric:
                               plots.measurement_lines(ln, t, xl, yl)))
        else:
            labels = [_label(m["dims"], vary) for m in ms]
            points = [_point(m) for m in ms]
            figs.append(Figure("measurements", "bars", title,
                               lambda lb=labels, pt=points, t=title, yl=unit or metric:
                               plots.measurement_bars(lb, pt, t, yl)))
        if len(figs) >= MAX_FIGURES:
            break
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


CONTEXT_KEYS = ("host", "cpu_model", "cores", "pus", "compiler", "compile_flags", "git_commit",
                "kernel", "glibc")


def _common_sections(run: Mapping[str, Any]) -> list[str]:
    """Contexts, parameters and targets: every kind has them."""
    parts = ["<h2 id='contexts'>Contexts</h2>"]
    ctxs = run.get("contexts", [])
    if ctxs:
        parts.append(_table(["id", "programs", "processes", *CONTEXT_KEYS],
                            [[_num(c.get("id")), _e(", ".join(c.get("programs", []))),
                              _num(c.get("processes"))] + [_e(c.get(k, "-")) for k in CONTEXT_KEYS]
                             for c in ctxs], left=2))
        parts.append("<details><summary>every field of every context</summary>")
        for c in ctxs:
            parts.append(_table(["key", "value"], [[_e(k), _e(v)] for k, v in _flatten(dict(c))], left=2))
        parts.append("</details>")
    else:
        parts.append("<p>No program of this run printed a context block.</p>")
    parts.append("<h2 id='params'>Parameters</h2>")
    parts.append(_table(["parameter", "value"], [[_e(k), _e(v)] for k, v in
                                                 _flatten(dict(run.get("params", {})))], left=2))
    verdicts = run.get("targets", [])
    if verdicts:
        parts.append("<h2 id='targets'>Targets</h2>")
        parts.append(_table(["verdict", "target", "detail"],
                            [[_e(t["verdict"]), _e(t["description"]), _e(t["detail"])] for t in verdicts],
                            left=3, flagged=[t["verdict"] == "FAIL" for t in verdicts]))
    return parts


def _measurements_section(run: Mapping[str, Any]) -> list[str]:
    """Every measurement: the run's comparable figures, last (the longest table)."""
    ms = compare.measurements(run)
    return ["<h2 id='measurements'>Measurements</h2>",
            _table(["measurement", "unit", "value", "n", "min", "max", "spread", "flags"],
                   [[_e(m.key), _e(m.unit), _num(m.value), _num(len(m.reps)),
                     _num(min(m.reps)) if m.reps else "-", _num(max(m.reps)) if m.reps else "-",
                     _e(compare.pct(m.spread)), _e(" ".join(m.flags))] for m in ms],
                   flagged=[bool(m.flags) for m in ms])]


def _characterize_sections(run: Mapping[str, Any]) -> list[str]:
    extra = run.get("extra", {})
    parts = ["<h2 id='probes'>Probes</h2>"]
    parts.append(_table(["probe", "status", "seconds", "steal ms", "note"], [
        [_e(p.get("name")), f"<span class='status-{_e(p.get('status'))}'>{_e(p.get('status'))}</span>",
         _num(p.get("seconds")),
         _num((p.get("document") or {}).get("steal_ms")) if p.get("document") else "-",
         _e(p.get("error", ""))]
        for p in extra.get("probes", [])], left=2))
    timer = extra.get("timer", {}) or {}
    parts.append("<h2 id='timer'>Timer</h2>")
    trows = [[_e(f"context: {k}"), _num(v), ""] for k, v in _flatten(timer.get("context", {}))]
    trows += [[_e(k), _num(v.get("value")), _e(v.get("unit", ""))]
              for k, v in (timer.get("measured") or {}).items()]
    parts.append(_table(["fact", "value", "unit"], trows) if trows
                 else "<p>No timer facts (the timer probe did not run).</p>")
    lat = latency_rows(dict(run))
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
    return parts


def plan(run: Mapping[str, Any]) -> list[Figure]:
    """The figures of a run: the probes' own for a characterization, a
    benchmark's own where it draws them, else one per group of measurements."""
    if run.get("kind") == characterize.KIND:
        return figure_plan(dict(run))
    bench = by_kind(str(run.get("kind", "")))
    if bench is not None and bench.figures is not None:
        return [Figure(bench.name, kind, title, draw) for kind, title, draw in bench.figures(run)]
    return measurement_plan(run)


def html(run: dict[str, Any], label: str) -> str:
    """The whole report page."""
    ctx = schema.first_context(run)
    kind = str(run.get("kind", "?"))
    what = "characterization" if kind == characterize.KIND else kind
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>"
             f"<title>hpsync {_e(what)}: {_e(ctx.get('host', '?'))}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>hpsync {_e(what)} of {_e(ctx.get('host', '?'))} "
             f"({_e(ctx.get('cpu_model', '?'))})</h1>",
             f"<p>{_e(label)}, created {_e(run.get('created', '?'))}"
             f"{', quick' if run.get('params', {}).get('quick') else ''}.</p>"]
    flags = run.get("extra", {}).get("flags", [])
    parts.append("<h2 id='flags'>Flags</h2>")
    if flags:
        parts += [f"<div class='flag'><b>{_e(f.get('flag'))}</b> ({_e(f.get('probe'))}): "
                  f"{_e(f.get('detail'))}</div>" for f in flags]
    else:
        parts.append("<p>None: no steal time, no bimodal distribution.</p>" if kind == characterize.KIND
                     else "<p>None.</p>")
    for w in run.get("warnings", []):
        parts.append(f"<div class='flag'>{_e(w)}</div>")
    if kind == characterize.KIND:
        parts += _characterize_sections(run)
    else:
        bench = by_kind(kind)
        if bench is not None:
            parts.append("<h2 id='report'>Report</h2>")
            parts.append(f"<pre>{_e(bench.render(run))}</pre>")
    parts += _common_sections(run)
    figs = plan(run)
    if figs:
        parts.append("<h2 id='figures'>Figures</h2>")
    for f in figs:
        png = base64.b64encode(f.draw()).decode("ascii")
        parts.append(f"<figure><img alt='{_e(f.title)}' src='data:image/png;base64,{png}'>"
                     f"<figcaption>{_e(f.title)}</figcaption></figure>")
    parts += _measurements_section(run)
    parts.append("</body></html>")
    return "\n".join(parts)


# ---- text summary ---------------------------------------------------------------------

def _tlb_lines(run: Mapping[str, Any]) -> list[str]:
    """The tlb probe's reach per variant (and its spread over reps) and the load
    cost at both ends of its sweep: the figures a reader of the ring needs."""
    doc = dict(characterize.documents(run)).get("tlb")
    if not doc:
        return []
    out = ["", "Data TLB (one line in each of N pages)"]
    rows = [r for r in doc.get("results", []) if isinstance(r, dict)]
    for r in rows:
        if (r.get("kind") != "scalar" or not str(r.get("metric", "")).startswith("reach_pages_")
                or not isinstance(r.get("value"), (int, float))):
            continue
        variant = str(r["metric"])[len("reach_pages_"):]
        sweep = sorted((x for x in rows if x.get("kind") == "sweep" and x.get("variant") == variant),
                       key=lambda x: x.get("pages", 0))
        per = [v for v in r.get("per_rep") or [] if isinstance(v, (int, float))]
        text_ = f"  {variant}: within 10 % of the first point up to {r.get('value'):g} pages"
        if r.get("beyond_sweep"):
            text_ += " (the whole sweep)"
        if per and min(per) != max(per):
            text_ += f" ({min(per):g} to {max(per):g} over reps)"
        if sweep:
            a, b = sweep[0], sweep[-1]
            text_ += (f"; {a.get('value', 0):.3g} ns a load at {a.get('pages')} pages, "
                      f"{b.get('value', 0):.3g} at {b.get('pages')}")
        out.append(text_)
    return out if len(out) > 2 else []


def summary(run: dict[str, Any]) -> str:
    """What `hpsync characterize` prints: probe statuses, timer facts, flags."""
    extra = run.get("extra", {})
    out = [f"hpsync characterize: {text.context_line(schema.first_context(run))}", ""]
    rows = []
    for p in extra.get("probes", []):
        doc = p.get("document") or {}
        rows.append([p.get("name", "?"), p.get("status", "?"), f"{p.get('seconds', 0):.1f}",
                     str(len(doc.get("results", []))) if doc else "-", p.get("error", "")])
    out.append(text.table(["probe", "status", "s", "results", "note"], rows,
                          [False, False, True, True, False]))
    measured = (extra.get("timer") or {}).get("measured") or {}
    if measured:
        out += ["", "Timer"]
        out += [f"  {k}: {v.get('value')} {v.get('unit', '')}".rstrip() for k, v in measured.items()]
    out += _tlb_lines(run)
    flags = extra.get("flags", [])
    out += ["", "Flags" if flags else "Flags: none"]
    out += [f"  {f['flag']}: {f['probe']}: {f['detail']}" for f in flags]
    if "run_id" in run:
        out += ["", f"stored as run {run['run_id']}; `hpsync report {run['run_id']}` draws it"]
    return "\n".join(out)

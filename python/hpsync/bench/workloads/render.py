# SPDX-License-Identifier: MIT
"""`bench workloads`: the text report of a run and the shapes the papers
drew, for `hpsync report` (pure plans; plots.py draws them).

Every workload gets its speed-up against threads (one line per variant)
and, where its variants count them, abort causes per backend (stacked
bars, like the TM study's abort table).  A workload's description adds
its own shapes (describe.py "figures"):
  curve        metric against a numeric dim, one line per series (the
               ring: ns per node against node size, one line per allocator)
  restarts     metric against the variants' elision restarts (the ART)
  granularity  metric against the static variants' coarsening factor k,
               the controller's point on the curve (scatter, histogram)
Shapes whose data the run lacks are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ... import plots, schema, stats
from ... import render as text
from ...progress import clock
from . import analyse as A
from . import describe as D

# Figures of one shape per workload at most (the rest are in the tables).
MAX_PER_SHAPE = 6
PREFERRED_ALLOCATOR = "glibc"

FigureSpec = tuple[str, str, Callable[[], bytes]]   # (kind, title, draw)


@dataclass(frozen=True)
class Line:
    label: str
    xs: list[float]
    ys: list[float]
    lo: list[float]
    hi: list[float]


def _line(label: str, pts: Mapping[float, Sequence[float]]) -> Line:
    xs = sorted(pts)
    ys = [stats.strict_median(pts[x]) for x in xs]
    return Line(label, xs, ys, [y - min(pts[x]) for x, y in zip(xs, ys)],
                [max(pts[x]) - y for x, y in zip(xs, ys)])


def _dims_text(dims: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(dims.items()))


def _where(allocator: str | None, dims: Mapping[str, Any]) -> str:
    parts = ([f"under {allocator}"] if allocator else []) + ([_dims_text(dims)] if dims else [])
    return f" ({'; '.join(parts)})" if parts else ""


def _points(samples: Sequence[Mapping[str, Any]]) -> list[A.Key]:
    """The run's points of one workload, the preferred allocator's only
    where several ran, capped."""
    pts = list(dict.fromkeys(A.point(s) for s in samples))
    allocs = {p[1] for p in pts}
    if len(allocs) > 1:
        keep = PREFERRED_ALLOCATOR if PREFERRED_ALLOCATOR in allocs else sorted(a or "" for a in allocs)[0]
        pts = [p for p in pts if (p[1] or "") == keep]
    return pts[:MAX_PER_SHAPE]


def _metrics(desc: Mapping[str, Any], spec: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    ms = [m for m in desc.get("metrics", []) if m.get("speedup", True)]
    if spec and spec.get("metric"):
        ms = [m for m in desc.get("metrics", []) if m["name"] == spec["metric"]]
    return ms


def speedup_figures(w: str, desc: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> list[FigureSpec]:
    idx = A._index(samples)
    out: list[FigureSpec] = []
    for pt in _points(samples):
        for m in _metrics(desc):
            lines = []
            for v in A.variant_order(desc):
                pts: dict[float, list[float]] = {}
                for (p, var, t), rounds in idx.items():
                    one = idx.get((pt, v, 1))
                    if p != pt or var != v or not one:
                        continue
                    q = A.speedup(A._per_round(rounds, m["name"]), A._per_round(one, m["name"]), m["better"])
                    if q:
                        pts[float(t)] = list(q.values())
                if len(pts) > 1:
                    lines.append(_line(v, pts))
            if lines:
                title = f"{w}: {m['name']} speed-up vs 1 thread{_where(pt[1], dict(pt[2]))}"
                out.append(("speedup", title, lambda ln=lines, t=title:
                            plots.measurement_lines(ln, t, "threads", "x own 1-thread figure")))
    return out[:MAX_PER_SHAPE]


def abort_figures(w: str, desc: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> list[FigureSpec]:
    out: list[FigureSpec] = []
    for layer in A.LAYERS:
        labels, per = [], []
        for v in A.variant_order(desc):
            for t in sorted({int(s["threads"]) for s in samples}):
                rates = A.abort_rates([s for s in samples if s["variant"] == v and int(s["threads"]) == t],
                                      layer)
                if rates:
                    labels.append(f"{v} {t}T")
                    per.append(rates)
        if not any(r["all"] > 0 for r in per):
            continue                 # nothing aborted (elision without RTM takes the lock)
        causes = sorted({c for r in per for c in r if c != "all"})
        stacks = {c: [r.get(c, 0.0) for r in per] for c in causes} or {"all": [r["all"] for r in per]}
        title = f"{w}: {'TM' if layer == 'tm' else 'elision'} aborts per commit by cause"
        out.append(("aborts", title, lambda lb=labels, st=stacks, t=title:
                    plots.stacked_bars(lb, st, t, "aborts / commit")))
    return out


def curve_figures(w: str, desc: Mapping[str, Any], samples: Sequence[Mapping[str, Any]],
                  spec: Mapping[str, Any]) -> list[FigureSpec]:
    """metric against dim x, one line per series (allocator or variant),
    one figure per value of everything else."""
    x, series = spec.get("x"), spec.get("series", "variant")
    out: list[FigureSpec] = []
    for m in _metrics(desc, spec) if spec.get("metric") else desc.get("metrics", [])[:1]:
        groups: dict[Any, dict[str, dict[float, list[float]]]] = {}
        for s in samples:
            xv = (s.get("dims") or {}).get(x)
            if not isinstance(xv, (int, float)) or s["metrics"].get(m["name"]) is None:
                continue
            if spec.get("variants") and s["variant"] not in spec["variants"]:
                continue
            if spec.get("threads") and int(s["threads"]) not in spec["threads"]:
                continue
            rest = {"variant": s["variant"], "allocator": s.get("allocator"),
                    **{k: v for k, v in (s.get("dims") or {}).items() if k != x}}
            label = str(rest.pop(series, None))
            key = (tuple(sorted((k, v) for k, v in rest.items() if v is not None)), int(s["threads"]))
            groups.setdefault(key, {}).setdefault(label, {}).setdefault(float(xv), []).append(
                float(s["metrics"][m["name"]]))
        for (rest, t), lines in list(groups.items())[:MAX_PER_SHAPE]:
            title = f"{w}: {m['name']} vs {x} by {series} ({_dims_text(dict(rest))}, {t}T)"
            ln = [_line(lb, pts) for lb, pts in lines.items()]
            out.append(("curve", title, lambda ln=ln, t=title, xl=x, yl=m["unit"] or m["name"]:
                        plots.measurement_lines(ln, t, xl, yl)))
    return out[:MAX_PER_SHAPE]


def _line_label(group: str, threads: int) -> str:
    return f"{group} {threads}T".strip()


def _ended_serial(s: Mapping[str, Any]) -> bool:
    tm = s.get("tm") if isinstance(s.get("tm"), dict) else {}
    n = tm.get("serial_end")
    return isinstance(n, int) and not isinstance(n, bool) and 2 * n > int(s["threads"])


def _by_variant_attr(w: str, desc: Mapping[str, Any], samples: Sequence[Mapping[str, Any]],
                     spec: Mapping[str, Any], attr: str, shape: str) -> list[FigureSpec]:
    """metric against a numeric attribute of the variants (restarts,
    granularity), one line per thread count; for granularity the
    controller's point (its chosen k when it reports one)."""
    xs = {v["name"]: v[attr] for v in desc.get("variants", []) if isinstance(v.get(attr), (int, float))}
    group = {v["name"]: v.get("group") or "" for v in desc.get("variants", [])}
    ctl = [v["name"] for v in desc.get("variants", []) if v.get("controller")] if shape == "granularity" else []
    # Serialized static chunks (one k, no place on the axis): a level in their line's colour.
    ser = [v["name"] for v in desc.get("variants", []) if v.get("serial")] if shape == "granularity" else []
    out: list[FigureSpec] = []
    for pt in _points(samples):
        for m in _metrics(desc, spec):
            lines: dict[tuple[str, int], dict[float, list[float]]] = {}
            marks = []
            for s in samples:
                if A.point(s) != pt or s["metrics"].get(m["name"]) is None:
                    continue
                if s["variant"] in xs:
                    lines.setdefault((group[s["variant"]], int(s["threads"])), {}).setdefault(float(xs[s["variant"]]), []).append(
                        float(s["metrics"][m["name"]]))
            for c in ser + ctl:
                for g, t in sorted(lines):
                    if g != group.get(c, ""):
                        continue
                    mine = [s for s in samples if A.point(s) == pt and s["variant"] == c
                            and int(s["threads"]) == t]
                    if not mine:
                        continue
                    y = stats.strict_median(float(s["metrics"][m["name"]]) for s in mine)
                    if c in ser:
                        marks.append(plots.Mark(f"{c} {t}T", None, y, _line_label(g, t)))
                        continue
                    ks = [float(s["granularity"]) for s in mine if "granularity" in s]
                    # Ended on serialized chunks in most of its threads (the harness's
                    # serial_end), in most rounds: its k is kmax, serialized.
                    hollow = 2 * sum(map(_ended_serial, mine)) > len(mine)
                    marks.append(plots.Mark(f"{c} {t}T" + (" (serialized)" if hollow else ""),
                                            stats.median(ks), y, _line_label(g, t), hollow))
            if not any(len(p) > 1 for p in lines.values()):
                continue
            title = f"{w}: {m['name']} vs {attr}{_where(pt[1], dict(pt[2]))}"
            ln = [_line(_line_label(g, t), p) for (g, t), p in sorted(lines.items())]
            out.append((shape, title, lambda ln=ln, mk=marks, t=title, xl=attr, yl=m["unit"] or m["name"]:
                        plots.marked_lines(ln, mk, t, xl, yl)))
    return out[:MAX_PER_SHAPE]


def figures(run: Mapping[str, Any]) -> list[FigureSpec]:
    extra = run.get("extra", {})
    samples = extra.get("samples", [])
    out: list[FigureSpec] = []
    workloads = extra.get("workloads", {})
    for w in D.ordered(list(workloads)):
        desc = workloads[w]
        mine = [s for s in samples if s["workload"] == w]
        if not mine:
            continue
        out += speedup_figures(w, desc, mine)
        for spec in desc.get("figures", []):
            if spec.get("shape") == "curve":
                out += curve_figures(w, desc, mine, spec)
            elif spec.get("shape") == "restarts":
                out += _by_variant_attr(w, desc, mine, spec, "restarts", "restarts")
            elif spec.get("shape") == "granularity":
                out += _by_variant_attr(w, desc, mine, spec, "granularity", "granularity")
        out += abort_figures(w, desc, mine)
    return out


# ---- text ----------------------------------------------------------------------------

def _cell(r: Mapping[str, Any], base: str | None) -> str:
    out = text.si(r["value"])
    extras = []
    if r.get("vs_1thread") is not None and r["threads"] != 1:
        extras.append(f"{r['vs_1thread']:.2f}x 1T")
    if r.get("vs_baseline") is not None and r["variant"] != base:
        extras.append(f"{r['vs_baseline']:.2f}x {base}")
    return out + (f" ({', '.join(extras)})" if extras else "")


def _layout_table(w: str, samples: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the workload's allocators put its nodes' first lines, per point
    (min..max over processes): the ring's explanation of its figures."""
    rounds = A.layout_rounds([s for s in samples if s.get("workload") == w])
    if not rounds:
        return []
    body = []
    for pt in sorted(rounds, key=lambda p: (str(p[1] or ""), A.dims_key(dict(p[2])))):
        lays = [lay for ls in rounds[pt].values() for lay in ls]

        def span(key: str) -> str:
            vs = [int(lay.get(key, 0)) for lay in lays]
            return f"{min(vs)}" if min(vs) == max(vs) else f"{min(vs)}-{max(vs)}"
        body.append([_dims_text(dict(pt[2])) or "-", str(pt[1] or "-"), span("pages"),
                     span("max_lines_per_set")])
    first = next(lay for ls in next(iter(rounds.values())).values() for lay in ls)
    return [f"  layout of the first lines: the pages ({first.get('page_bytes', '?')} B) they span and the "
            f"most on one of {first.get('l1_sets', '?')} L1 sets (a span past the data TLB's reach, "
            f"`hpsync characterize --only tlb`, keeps any layout above the 64 B ring)",
            text.table(["point", "allocator", "pages", "lines/set"], body, [False, False, True, True])]


def render(run: Mapping[str, Any]) -> str:
    extra = run.get("extra", {})
    rows = extra.get("rows", [])
    params = run.get("params", {})
    fit = extra.get("budget")
    scale = extra.get("scale", params.get("scale", 1.0))
    out = [f"hpsync bench workloads: {text.context_line(schema.first_context(run))}",
           f"  median of {params.get('rounds', '?')} round(s){', quick sizes' if params.get('quick') else ''}"
           + (f", {params['slices']} slices a run (--slices)" if params.get("slices", 1) > 1 else "")
           + (f", work x{scale:.3g} (" + ("--budget" if fit else "--scale") + ")" if scale != 1.0 else "")]
    if fit:
        out.append(f"  budget {fit['minutes']:g} min: the first {fit['probe_s']:.0f} s projected "
                   f"{fit['projected_s'] / 60.0:.0f} min, so every scalable run's work was cut to "
                   f"x{fit['scale']:.2f} (--budget 0: full size)")
    out += [f"  {line}" for line in A.not_measured(extra)]
    spent = extra.get("seconds") or {}
    if spent:
        out.append("  time: " + ", ".join(f"{w} {clock(v)}" for w, v in
                                          sorted(spent.items(), key=lambda kv: -kv[1])))
    workloads = extra.get("workloads", {})
    for w in D.ordered(list(workloads)):
        desc = workloads[w]
        base = A.baseline(desc)
        mine = [r for r in rows if r["workload"] == w]
        if not mine:
            continue
        out += ["", f"{w}: {desc.get('title', '')}"]
        threads = sorted({r["threads"] for r in mine})
        for metric in dict.fromkeys(r["metric"] for r in mine):
            rs = [r for r in mine if r["metric"] == metric]
            unit = rs[0]["unit"]
            body = []
            for key in dict.fromkeys((r["allocator"], repr(r["dims"]), r["variant"]) for r in rs):
                row = [r for r in rs if (r["allocator"], repr(r["dims"]), r["variant"]) == key]
                first = row[0]
                body.append([_dims_text({**first["dims"], **({"alloc": first["allocator"]}
                                                              if first["allocator"] else {})}) or "-",
                             first["variant"]] + [
                    next((_cell(r, base) for r in row if r["threads"] == t), "-") for t in threads])
            out.append(f"  {metric} ({unit})")
            out.append(text.table(["point", "variant"] + [f"{t}T" for t in threads], body,
                                  [False, False] + [True] * len(threads)))
        out += _layout_table(w, extra.get("samples", []))
        aborts = [r for r in mine if r["metric"] == mine[0]["metric"]
                  and any(v["all"] > 0 for v in (r.get("aborts") or {}).values())]
        if aborts:
            out.append("  aborts per commit where any (all causes; the causes are in the measurements)")
            out.append(text.table(
                ["point", "variant", "threads", "layer", "aborts/commit"],
                [[_dims_text(r["dims"]) or "-", r["variant"], str(r["threads"]), layer,
                  f"{rates['all']:.3f}"] for r in aborts for layer, rates in r["aborts"].items()
                 if rates["all"] > 0],
                [False, False, True, False, True]))
    out.append("")
    out.extend(text.targets_section(run))
    return "\n".join(out)

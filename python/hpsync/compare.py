# SPDX-License-Identifier: MIT
"""`hpsync compare` and `hpsync repeatability`: pure functions of runs of
any kind, through their measurements (hpsync/schema.py).

compare pairs the two runs' measurements by key and gives B/A, each side's
spread over its repetitions, and whether the difference is significant:
where both sides have at least MIN_REPS repetitions a two-sided
Mann-Whitney U test on them decides ('*' p < ALPHA, '=' not), otherwise the
mark is '?' and a warning says the repetitions are too few (as
google/benchmark's compare tool does).  A significant difference is also
called better or worse where the measurement says which way is better.

repeatability gives, for every measurement all runs have, the coefficient
of variation of its value across the runs and, beside it, the median CV of
its repetitions within each run.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from . import schema, stats

MIN_REPS = 5
ALPHA = 0.05
MARK_SIGNIFICANT = "*"
MARK_SAME = "="
MARK_UNKNOWN = "?"


@dataclass(frozen=True)
class Measurement:
    """A run's measurement as compare and repeatability read it."""
    key: str
    metric: str
    unit: str
    better: str | None
    value: float | None
    reps: tuple[float, ...]
    flags: tuple[str, ...] = ()

    @property
    def spread(self) -> float | None:
        return stats.spread(self.reps) if len(self.reps) > 1 else None


def measurements(run: Mapping[str, Any]) -> list[Measurement]:
    """Every measurement of a run (current schema), in document order."""
    return [Measurement(schema.key(m), m["metric"], m["unit"], m.get("better"),
                        None if m.get("value") is None else float(m["value"]),
                        tuple(float(r) for r in m.get("reps", [])), tuple(m.get("flags", [])))
            for m in run.get("measurements", [])]


# ---- comparison -------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    key: str
    unit: str
    a: float | None
    b: float | None
    ratio: float | None          # b / a
    spread_a: float | None
    spread_b: float | None
    n_a: int
    n_b: int
    p: float | None
    mark: str
    verdict: str                 # "better", "worse" or "" (not significant, or no direction)
    flags: tuple[str, ...]


@dataclass
class Comparison:
    rows: list[Row] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _direction(ratio: float | None, better: str | None, mark: str) -> str:
    if mark != MARK_SIGNIFICANT or ratio is None or better is None or ratio == 1.0:
        return ""
    return "better" if (ratio < 1.0) == (better == "lower") else "worse"


def compare_measurements(ma: Sequence[Measurement], mb: Sequence[Measurement]) -> Comparison:
    out = Comparison()
    by_b = {m.key: m for m in mb}
    keys_a = {m.key for m in ma}
    few: list[str] = []
    for a in ma:
        b = by_b.get(a.key)
        if b is None:
            out.only_a.append(a.key)
            continue
        ratio = stats.ratio(b.value, a.value)
        p: float | None = None
        if len(a.reps) >= MIN_REPS and len(b.reps) >= MIN_REPS:
            p = stats.mann_whitney_p(a.reps, b.reps)
            mark = MARK_SIGNIFICANT if p < ALPHA else MARK_SAME
        else:
            mark = MARK_UNKNOWN
            few.append(a.key)
        flags = tuple(sorted(set(f"A:{f}" for f in a.flags) | set(f"B:{f}" for f in b.flags)))
        unit = a.unit if a.unit == b.unit else f"{a.unit} vs {b.unit}"
        if a.unit != b.unit:
            out.warnings.append(f"{a.key}: units differ ({a.unit!r} in A, {b.unit!r} in B); "
                                f"its ratio means nothing")
            ratio = None
        out.rows.append(Row(a.key, unit, a.value, b.value, ratio, a.spread, b.spread, len(a.reps),
                            len(b.reps), p, mark, _direction(ratio, a.better, mark), flags))
    out.only_b = [m.key for m in mb if m.key not in keys_a]
    if few:
        out.warnings.insert(0, f"{len(few)} measurement(s) have fewer than {MIN_REPS} repetitions "
                               f"in A or B, too few for a significance test; marked "
                               f"'{MARK_UNKNOWN}' (e.g. {few[0]})")
    if any("bimodal" in f for r in out.rows for f in r.flags):
        out.warnings.append("some distributions are bimodal: their medians (and ratios) hide "
                            "two levels; see the report's histograms")
    if any("steal" in f for r in out.rows for f in r.flags):
        out.warnings.append("some measurements (flag steal) ran while the hypervisor stole "
                            "CPU time: their figures may be inflated")
    if any("load" in f for r in out.rows for f in r.flags):
        out.warnings.append("some measurements (flag load) ran beside other processes' load: "
                            "they describe a shared machine")
    return out


def _work(run: Mapping[str, Any]) -> str:
    """How much work a run did, where its kind sizes it: the mode (--quick)
    and the work factor (--scale, or the one --budget chose).  '' if not."""
    scale = (run.get("extra") or {}).get("scale")
    if not isinstance(scale, (int, float)):
        return ""
    mode = "--quick" if (run.get("params") or {}).get("quick") else "default"
    return mode if scale == 1 else f"{mode}, work x{scale:.2f}"


def compare_runs(run_a: Mapping[str, Any], run_b: Mapping[str, Any]) -> Comparison:
    comp = compare_measurements(measurements(run_a), measurements(run_b))
    if run_a.get("kind") != run_b.get("kind"):
        comp.warnings.insert(0, f"the runs are of different kinds ({run_a.get('kind')} and "
                                f"{run_b.get('kind')}): only measurements of the same name pair up")
    work_a, work_b = _work(run_a), _work(run_b)
    if work_a and work_b and work_a != work_b:
        # Two machines' default suites differ here whenever --budget cut
        # one of them: rates per operation still pair up, but what a run
        # pays once weighs more in the shorter one.
        comp.warnings.append(f"the runs did different amounts of work (A: {work_a}, B: {work_b}; "
                             f"--quick, --scale or --budget): rates pair up, but what a run pays "
                             f"once (thread start, the granularity controller's search) weighs "
                             f"more in the shorter one")
    return comp


CSV_HEADER = ["key", "unit", "a", "b", "ratio_b_over_a", "spread_a", "spread_b", "n_a", "n_b",
              "p_value", "mark", "verdict", "flags"]


def _cell(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def to_csv(comp: Comparison) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for r in comp.rows:
        w.writerow([_cell(v) for v in (r.key, r.unit, r.a, r.b, r.ratio, r.spread_a, r.spread_b,
                                       r.n_a, r.n_b, r.p, r.mark, r.verdict, " ".join(r.flags))])
    return buf.getvalue()


MEASUREMENT_CSV_HEADER = ["key", "metric", "value", "unit", "better", "n", "min", "max", "spread",
                          "flags"]


def measurements_csv(ms: Sequence[Measurement]) -> str:
    """One run's measurements as CSV (for `report --csv`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(MEASUREMENT_CSV_HEADER)
    for m in ms:
        w.writerow([_cell(v) for v in (m.key, m.metric, m.value, m.unit, m.better, len(m.reps),
                                       min(m.reps) if m.reps else None,
                                       max(m.reps) if m.reps else None, m.spread, " ".join(m.flags))])
    return buf.getvalue()


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}%"


def render(comp: Comparison, label_a: str, label_b: str, ctx_a: Mapping[str, Any],
           ctx_b: Mapping[str, Any]) -> str:
    """The comparison as a text table (data; warnings are returned separately)."""
    from . import render as text
    out = [f"A: {label_a}: {ctx_a.get('host', '?')}, {ctx_a.get('cpu_model', '?')}",
           f"B: {label_b}: {ctx_b.get('host', '?')}, {ctx_b.get('cpu_model', '?')}", "",
           f"B/A ratios; spread = (max - min) / median of a side's repetitions; "
           f"'{MARK_SIGNIFICANT}' significant (Mann-Whitney U, p < {ALPHA}), '{MARK_SAME}' not "
           f"significant, '{MARK_UNKNOWN}' too few repetitions (< {MIN_REPS})", ""]
    rows = [[r.key, r.unit, fmt(r.a), fmt(r.b), "-" if r.ratio is None else f"{r.ratio:.3f}",
             pct(r.spread_a), pct(r.spread_b), r.mark, "-" if r.p is None else f"{r.p:.3g}",
             r.verdict, " ".join(r.flags)] for r in comp.rows]
    out.append(text.table(["measurement", "unit", "A", "B", "B/A", "spread A", "spread B", "sig", "p",
                           "B is", "flags"], rows,
                          [False, False, True, True, True, True, True, False, True, False, False]))
    if comp.only_a:
        out += ["", f"only in A ({len(comp.only_a)}): " + ", ".join(comp.only_a)]
    if comp.only_b:
        out += ["", f"only in B ({len(comp.only_b)}): " + ", ".join(comp.only_b)]
    return "\n".join(out)


# ---- repeatability -----------------------------------------------------------

@dataclass(frozen=True)
class Spread:
    """How one measurement varies across repeated runs."""
    key: str
    unit: str
    values: tuple[float, ...]
    cv: float                    # sample standard deviation / mean, across runs
    within: float                # median over runs of the CV of each run's repetitions
    flags: tuple[str, ...]
    levels: tuple[tuple[float, ...], ...] = ()   # set when the runs fall into two levels
    level_cv: float = float("nan")               # worst CV within a level (NaN if < 2 each)


#: Two consecutive sorted values this far apart split the runs into two levels.
LEVEL_GAP = 1.5


def run_levels(values: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Split values at the largest ratio gap between neighbours (sorted) when it
    is at least LEVEL_GAP: a machine whose runs land on two levels (the host
    moving vCPUs between shared and separate cores, say).  () when one level."""
    v = sorted(values)
    if len(v) < 2 or v[0] <= 0:
        return ()
    ratio, i = max((v[k + 1] / v[k], k) for k in range(len(v) - 1))
    if ratio < LEVEL_GAP:
        return ()
    return (tuple(v[: i + 1]), tuple(v[i + 1:]))


def repeatability(runs: Sequence[Mapping[str, Any]]) -> list[Spread]:
    """For every measurement with a value in all runs: the CV of its values
    across runs and the median CV of its repetitions within a run.  Pure:
    callers render."""
    per_run = [{m.key: m for m in measurements(r) if m.value is not None} for r in runs]
    if not per_run:
        return []
    out: list[Spread] = []
    for key, first in per_run[0].items():
        if not all(key in pr for pr in per_run):
            continue
        values = tuple(float(pr[key].value) for pr in per_run)  # type: ignore[arg-type]
        within = [stats.coefficient_of_variation(pr[key].reps) for pr in per_run
                  if len(pr[key].reps) >= 2]
        flags = set(f for pr in per_run for f in pr[key].flags)
        levels = run_levels(values)
        level_cv = float("nan")
        if levels:
            flags.add("two-level")
            inside = [stats.coefficient_of_variation(lv) for lv in levels if len(lv) >= 2]
            level_cv = max(inside) if inside else float("nan")
        out.append(Spread(key, first.unit, values, stats.coefficient_of_variation(values),
                          stats.median(within) if within else float("nan"), tuple(sorted(flags)),
                          levels, level_cv))
    return out


def render_repeatability(spreads: Sequence[Spread], limit: float = 0.10) -> str:
    """A table, worst first, and a summary line against the CV budget."""
    if not spreads:
        return "no measurement has a value in every run"
    rows = sorted(spreads, key=lambda s: -s.cv if s.cv == s.cv else 0.0)
    width = max(len(s.key) for s in rows)
    unit = max(4, max(len(s.unit) for s in rows))
    lines = [f"{'measurement':<{width}}  {'unit':<{unit}}  {'CV':>7}  {'in-level':>8}  "
             f"{'in-run':>7}  values"]
    for s in rows:
        vals = " ".join(f"{m:.4g}" for m in s.values)
        flag = f"  [{', '.join(s.flags)}]" if s.flags else ""
        lvl = f"{100 * s.level_cv:7.1f}%" if s.level_cv == s.level_cv else f"{'-':>8}"
        lines.append(f"{s.key:<{width}}  {s.unit:<{unit}}  {pct(s.cv):>7}  {lvl}  {pct(s.within):>7}  "
                     f"{vals}{flag}")
    ok = sum(1 for s in rows if s.cv <= limit)
    cvs = sorted(s.cv for s in rows if s.cv == s.cv)
    lines.append(f"{ok}/{len(rows)} measurements within {100 * limit:.0f}% CV over "
                 f"{len(rows[0].values)} runs" + (f"; median CV {100 * cvs[len(cvs) // 2]:.1f}%, "
                                                  f"worst {100 * cvs[-1]:.1f}%" if cvs else ""))
    two = [s for s in rows if s.levels]
    if two:
        ok_in = sum(1 for s in two if s.level_cv == s.level_cv and s.level_cv <= limit)
        lines.append(f"{len(two)} of them fall into two levels across runs (neighbouring values "
                     f">= {LEVEL_GAP}x apart): the machine changed between runs; within a level, "
                     f"{ok_in}/{len(two)} stay within {100 * limit:.0f}% CV")
    return "\n".join(lines)

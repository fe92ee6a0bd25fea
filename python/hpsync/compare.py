# SPDX-License-Identifier: MIT
"""`hpsync compare`: ratios B/A between two characterizations, as pure functions.

Every measurement of a run gets a key (probe, kind, metric, variant/mapping/
pool, threads), a value (a latency's or a pool's median, a curve's or a
scalar's value, the median of a pairs column, the median off-diagonal cell of
a core-to-core matrix) and its raw repetitions (a curve's reps, a
distribution's samples).  Ratios are B/A.  Where both sides have at least
MIN_REPS repetitions, a two-sided Mann-Whitney U test on them says whether
the difference is significant; otherwise the mark is '?' and a warning says
the repetitions are too few (as google/benchmark's compare tool does).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from . import characterize, stats

MIN_REPS = 5
ALPHA = 0.05
MARK_SIGNIFICANT = "*"
MARK_SAME = "="
MARK_UNKNOWN = "?"


@dataclass(frozen=True)
class Measurement:
    probe: str
    kind: str
    metric: str
    detail: str                  # variant / mapping / pool / column, may be ""
    threads: int | None
    value: float | None
    unit: str
    reps: tuple[float, ...]
    flags: tuple[str, ...] = ()  # "bimodal", "steal"

    @property
    def key(self) -> str:
        parts = [self.probe, self.metric] + ([self.detail] if self.detail else [])
        key = "/".join(parts)
        return key + (f" T={self.threads}" if self.threads is not None else "")


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _floats(xs: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in xs if _num(x) is not None) if isinstance(xs, list) else ()


def measurements(run: dict[str, Any]) -> list[Measurement]:
    """Every comparable figure of a characterize run document, in document order."""
    out: list[Measurement] = []
    for name, doc in characterize.documents(run):
        steal = _num(doc.get("steal_ms"))
        base_flags = ("steal",) if steal is not None and steal > 0 else ()
        for row in doc.get("results", []):
            kind, metric = row.get("kind"), str(row.get("metric", "?"))
            threads = row.get("threads") if isinstance(row.get("threads"), int) else None
            if kind == "curve":
                out.append(Measurement(name, kind, metric, str(row.get("mapping", "")), threads,
                                       _num(row.get("value")), str(row.get("unit", "")),
                                       _floats(row.get("reps")), base_flags))
            elif kind == "scalar":
                out.append(Measurement(name, kind, metric, "", None, _num(row.get("value")),
                                       str(row.get("unit", "")), (), base_flags))
            elif kind in ("latency", "pool"):
                d = row.get("dist", {}) or {}
                flags = base_flags + (("bimodal",) if d.get("bimodal") else ())
                detail = str(row.get("variant", "")) if kind == "latency" else str(row.get("pool", ""))
                out.append(Measurement(name, kind, metric, detail, threads,
                                       _num(d.get("median")), str(d.get("unit", "")),
                                       _floats(d.get("samples")), flags))
            elif kind == "pairs":
                pairs = [p for p in row.get("pairs", []) if isinstance(p, list) and len(p) == 2]
                for i, col in enumerate((str(row.get("x", "x")), str(row.get("y", "y")))):
                    vals = _floats([p[i] for p in pairs])
                    variant = str(row.get("variant", ""))
                    out.append(Measurement(name, kind, metric, f"{variant}/{col}" if variant else col,
                                           None, stats.median(vals), "", vals, base_flags))
            elif kind == "matrix":
                m = row.get("median", [])
                cells = tuple(float(v) for i, r in enumerate(m) for j, v in enumerate(r)
                              if i != j and _num(v) is not None)
                out.append(Measurement(name, kind, metric, "off-diagonal median", None,
                                       stats.median(cells), str(row.get("unit", "ns")), cells,
                                       base_flags))
    return out


# ---- statistics -----------------------------------------------------------------

def _ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _exact_p(u: float, n1: int, n2: int) -> float:
    """Two-sided exact p of U (no ties): counts of rank arrangements by U."""
    # ways[n][m][u]: arrangements of n and m items with statistic u.
    maxu = n1 * n2
    prev = [[[0] * (maxu + 1) for _ in range(n2 + 1)] for _ in range(n1 + 1)]
    for i in range(n1 + 1):
        for j in range(n2 + 1):
            if i == 0 or j == 0:
                prev[i][j][0] = 1
                continue
            # Largest element from sample 1 adds j to U; from sample 2 adds nothing.
            cur = prev[i][j]
            for uu in range(maxu + 1):
                a = prev[i - 1][j][uu - j] if uu - j >= 0 else 0
                b = prev[i][j - 1][uu]
                cur[uu] = a + b
    counts = prev[n1][n2]
    total = sum(counts)
    lo = min(u, maxu - u)
    tail = sum(c for k, c in enumerate(counts) if k <= lo + 1e-9)
    return min(1.0, 2 * tail / total)


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p value of the Mann-Whitney U test: exact for small samples
    without ties, else the normal approximation with tie and continuity correction."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("both samples need values")
    ranks = _ranks(list(a) + list(b))
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    ties = len(set(list(a) + list(b))) < n1 + n2
    if not ties and n1 * n2 <= 400:
        return _exact_p(u1, n1, n2)
    n = n1 + n2
    counts: dict[float, int] = {}
    for x in list(a) + list(b):
        counts[x] = counts.get(x, 0) + 1
    tie_term = sum(t ** 3 - t for t in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return 1.0
    mu = n1 * n2 / 2
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    return min(1.0, max(0.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


# ---- comparison -------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    key: str
    probe: str
    kind: str
    metric: str
    detail: str
    threads: int | None
    unit: str
    a: float | None
    b: float | None
    ratio: float | None          # b / a
    n_a: int
    n_b: int
    p: float | None
    mark: str
    flags: tuple[str, ...]


@dataclass
class Comparison:
    rows: list[Row] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


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
            p = mann_whitney_p(a.reps, b.reps)
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
        out.rows.append(Row(a.key, a.probe, a.kind, a.metric, a.detail, a.threads, unit,
                            a.value, b.value, ratio, len(a.reps), len(b.reps), p, mark, flags))
    out.only_b = [m.key for m in mb if m.key not in keys_a]
    if few:
        out.warnings.insert(0, f"{len(few)} measurement(s) have fewer than {MIN_REPS} repetitions "
                               f"in A or B, too few for a significance test; marked "
                               f"'{MARK_UNKNOWN}' (e.g. {few[0]})")
    if any("bimodal" in f for r in out.rows for f in r.flags):
        out.warnings.append("some distributions are bimodal: their medians (and ratios) hide "
                            "two levels; see the report's histograms")
    if any("steal" in f for r in out.rows for f in r.flags):
        out.warnings.append("some probes ran while the hypervisor stole CPU time: their "
                            "figures may be inflated")
    return out


def compare_runs(run_a: dict[str, Any], run_b: dict[str, Any]) -> Comparison:
    return compare_measurements(measurements(run_a), measurements(run_b))


CSV_HEADER = ["key", "probe", "kind", "metric", "detail", "threads", "unit", "a", "b",
              "ratio_b_over_a", "n_a", "n_b", "p_value", "mark", "flags"]


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
        w.writerow([_cell(v) for v in (r.key, r.probe, r.kind, r.metric, r.detail, r.threads,
                                       r.unit, r.a, r.b, r.ratio, r.n_a, r.n_b, r.p, r.mark,
                                       " ".join(r.flags))])
    return buf.getvalue()


MEASUREMENT_CSV_HEADER = ["key", "probe", "kind", "metric", "detail", "threads", "value", "unit",
                          "n", "flags"]


def measurements_csv(ms: Sequence[Measurement]) -> str:
    """One run's measurements as CSV (for `report --csv`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(MEASUREMENT_CSV_HEADER)
    for m in ms:
        w.writerow([_cell(v) for v in (m.key, m.probe, m.kind, m.metric, m.detail, m.threads,
                                       m.value, m.unit, len(m.reps), " ".join(m.flags))])
    return buf.getvalue()


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}"


def render(comp: Comparison, label_a: str, label_b: str, ctx_a: dict[str, Any],
           ctx_b: dict[str, Any]) -> str:
    """The comparison as a text table (data; warnings are returned separately)."""
    from . import render as text
    out = [f"A: {label_a}: {ctx_a.get('host', '?')}, {ctx_a.get('cpu_model', '?')}",
           f"B: {label_b}: {ctx_b.get('host', '?')}, {ctx_b.get('cpu_model', '?')}", "",
           f"B/A ratios; '{MARK_SIGNIFICANT}' significant (Mann-Whitney U, p < {ALPHA}), "
           f"'{MARK_SAME}' not significant, '{MARK_UNKNOWN}' too few repetitions", ""]
    rows = [[r.key, r.unit, _fmt(r.a), _fmt(r.b), "-" if r.ratio is None else f"{r.ratio:.3f}",
             r.mark, "-" if r.p is None else f"{r.p:.3g}", " ".join(r.flags)] for r in comp.rows]
    out.append(text.table(["measurement", "unit", "A", "B", "B/A", "sig", "p", "flags"], rows,
                          [False, False, True, True, True, False, True, False]))
    if comp.only_a:
        out += ["", f"only in A ({len(comp.only_a)}): " + ", ".join(comp.only_a)]
    if comp.only_b:
        out += ["", f"only in B ({len(comp.only_b)}): " + ", ".join(comp.only_b)]
    return "\n".join(out)


# ---- repeatability -----------------------------------------------------------

@dataclass(frozen=True)
class Spread:
    """How one latency median varies across repeated runs."""
    key: str
    unit: str
    medians: tuple[float, ...]
    cv: float                    # sample standard deviation / mean
    flags: tuple[str, ...]
    levels: tuple[tuple[float, ...], ...] = ()   # set when the runs fall into two levels
    level_cv: float = float("nan")               # worst CV within a level (NaN if < 2 each)


#: Two consecutive sorted medians this far apart split the runs into two levels.
LEVEL_GAP = 1.5


def run_levels(medians: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Split medians at the largest ratio gap between neighbours (sorted) when it
    is at least LEVEL_GAP: a machine whose runs land on two levels (the host
    moving vCPUs between shared and separate cores, say).  () when one level."""
    v = sorted(medians)
    if len(v) < 2 or v[0] <= 0:
        return ()
    gaps = [(v[i + 1] / v[i], i) for i in range(len(v) - 1)]
    ratio, i = max(gaps)
    if ratio < LEVEL_GAP:
        return ()
    return (tuple(v[: i + 1]), tuple(v[i + 1:]))


def coefficient_of_variation(xs: Sequence[float]) -> float:
    """Sample standard deviation over the mean (0 for constant input, NaN if n < 2)."""
    n = len(xs)
    if n < 2:
        return float("nan")
    mean = sum(xs) / n
    if mean == 0:
        return 0.0
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return (var ** 0.5) / abs(mean)


def repeatability(runs: Sequence[dict[str, Any]]) -> list[Spread]:
    """CV of every latency median that all runs measured (the quick profile's
    budget: <= 10 % here).  Pure: callers render."""
    per_run = [{m.key: m for m in measurements(r) if m.kind == "latency" and m.value is not None}
                for r in runs]
    if not per_run:
        return []
    out: list[Spread] = []
    for key, first in per_run[0].items():
        if not all(key in pr for pr in per_run):
            continue
        meds = tuple(float(pr[key].value) for pr in per_run)  # type: ignore[arg-type]
        flags = set(f for pr in per_run for f in pr[key].flags)
        levels = run_levels(meds)
        level_cv = float("nan")
        if levels:
            flags.add("two-level")
            within = [coefficient_of_variation(lv) for lv in levels if len(lv) >= 2]
            level_cv = max(within) if within else float("nan")
        out.append(Spread(key, first.unit, meds, coefficient_of_variation(meds),
                          tuple(sorted(flags)), levels, level_cv))
    return out


def render_repeatability(spreads: Sequence[Spread], limit: float = 0.10) -> str:
    """A table, worst first, and a summary line against the CV budget."""
    if not spreads:
        return "no latency measured by every run"
    rows = sorted(spreads, key=lambda s: -s.cv if s.cv == s.cv else 0.0)
    width = max(len(s.key) for s in rows)
    lines = [f"{'measurement':<{width}}  {'unit':<4}  {'CV':>7}  {'in-level':>8}  medians"]
    for s in rows:
        meds = " ".join(f"{m:.4g}" for m in s.medians)
        flag = f"  [{', '.join(s.flags)}]" if s.flags else ""
        lvl = f"{100 * s.level_cv:7.1f}%" if s.level_cv == s.level_cv else f"{'-':>8}"
        lines.append(f"{s.key:<{width}}  {s.unit:<4}  {100 * s.cv:6.1f}%  {lvl}  {meds}{flag}")
    ok = sum(1 for s in rows if s.cv <= limit)
    cvs = sorted(s.cv for s in rows)
    lines.append(f"{ok}/{len(rows)} latency medians within {100 * limit:.0f}% CV over "
                 f"{len(rows[0].medians)} runs; median CV {100 * cvs[len(cvs) // 2]:.1f}%, "
                 f"worst {100 * cvs[-1]:.1f}%")
    two = [s for s in rows if s.levels]
    if two:
        ok_in = sum(1 for s in two if s.level_cv == s.level_cv and s.level_cv <= limit)
        lines.append(f"{len(two)} of them fall into two levels across runs (neighbouring medians "
                     f">= {LEVEL_GAP}x apart): the machine changed between runs; within a level, "
                     f"{ok_in}/{len(two)} stay within {100 * limit:.0f}% CV")
    return "\n".join(lines)

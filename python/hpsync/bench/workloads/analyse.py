# SPDX-License-Identifier: MIT
"""Analysis half of `bench workloads` (pure): samples -> table rows and
the schema's measurements.

Measurements, each per round (a round's processes ran interleaved, so its
figures pair up):
  workload/METRIC/...variant, dims, allocator T=n   the figure itself
  ...METRIC_vs_1thread    speed-up over the variant's own 1-thread figure
                          (same dims, allocator, round)
  ...METRIC_vs_BASELINE   over the baseline variant (mutex) at the same
                          thread count
  best-tm/METRIC_vs_BASELINE/workload...   the transactional variant with
                          the best median, over the baseline
  dyn-vs-static/METRIC_vs_best_static/workload.../GROUP   the
                          granularity controller's figure over the static
                          coarsening factor k with the best median, in the
                          same backend (the variants' group);
                          .../METRIC_vs_tuned_static, over the static k
                          with the best median over the other rounds (the
                          k a tuning sweep would pick, chosen without the
                          round it is compared in); and .../METRIC_vs_k1,
                          over k = 1
  dyn-vs-static-level/METRIC_vs_{best,tuned}_static_geomean/workload/conflict
                          the first two's geometric means over a conflict
                          level's rows (--describe's "conflict"), backends
                          and thread counts, per round
  workload/validated/variant T=n   1 for every round whose process printed
                          the row (it validated its result)
  workload/aborts_per_commit/variant/layer/cause T=n   TM (layer tm) or
                          elision (layer elision) aborts by cause per
                          commit, cause "all" for the total
  workload/solo_share/variant T=n   the share of a TM variant's sections
                          that ran alone on the bias (at 2 threads and more,
                          how much of the run went one thread at a time)
A measurement any of whose rounds came from a process that lost
base.STEAL_FLAG or more of the machine's CPU time to the hypervisor (the
sample's steal_share, measure.py) is flagged "steal", a ratio if either
side's round was; one that ran beside other processes taking
base.LOAD_NOTE of it (others_share) is flagged "load", likewise.
Speed-ups take a lower-is-better figure (ns per node, seconds) the other
way up, so more is always faster.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

from ... import schema, stats
from ..base import Analysis, Row, load_burst, steal_burst, warn_few_and_noisy
from . import describe as D

MIN_ROUNDS = 3
NOISY = 0.5
BEST_TM = "best-tm"
DYN = "dyn-vs-static"
DYN_LEVEL = "dyn-vs-static-level"
LAYERS = ("tm", "elision")

Samples = Sequence[Mapping[str, Any]]
Key = tuple[Any, ...]


def _kinds(extra: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(extra.get("workloads", {}))


def variant_order(desc: Mapping[str, Any]) -> list[str]:
    return [v["name"] for v in desc.get("variants", [])]


def baseline(desc: Mapping[str, Any]) -> str | None:
    return next((v["name"] for v in desc.get("variants", []) if v.get("baseline")), None)


def point(s: Mapping[str, Any]) -> Key:
    """What a sample is a figure of, but for its variant, threads and round."""
    return (s["workload"], s.get("allocator"), tuple(sorted((s.get("dims") or {}).items())))


def dims_of(s: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    d = {"workload": s["workload"], "variant": s["variant"], **(s.get("dims") or {}),
         "threads": int(s["threads"])}
    if s.get("allocator"):
        d["allocator"] = s["allocator"]
    d.update(extra)
    return d


def _index(samples: Samples) -> dict[tuple[Key, str, int], dict[int, Mapping[str, Any]]]:
    """(point, variant, threads) -> {round: sample}."""
    out: dict[tuple[Key, str, int], dict[int, Mapping[str, Any]]] = {}
    for s in samples:
        out.setdefault((point(s), s["variant"], int(s["threads"])), {})[int(s.get("round", 0))] = s
    return out


def _per_round(rounds: Mapping[int, Mapping[str, Any]], metric: str) -> dict[int, float]:
    return {r: float(s["metrics"][metric]) for r, s in rounds.items()
            if s["metrics"].get(metric) is not None}


def speedup(mine: Mapping[int, float], ref: Mapping[int, float], better: str) -> dict[int, float]:
    """Per round, how many times faster mine is than ref."""
    out = {}
    for r, a in mine.items():
        q = stats.ratio(a, ref.get(r)) if better == "higher" else stats.ratio(ref.get(r), a)
        if q is not None and q > 0:
            out[r] = q
    return out


def _m(dims: Mapping[str, Any], metric: str, unit: str, figs: Mapping[int, float], better: str | None,
       ctx: int | None, flags: Sequence[str] = ()) -> schema.Measurement:
    rounds = sorted(figs)
    return schema.measurement(dims, metric, unit, [figs[r] for r in rounds], better, ctx, rounds,
                              flags)


def _flags(*sides: Mapping[int, Mapping[str, Any]] | None) -> list[str]:
    """"steal" if a process behind any round of these samples lost
    base.STEAL_FLAG of the machine to the hypervisor; "load" if one ran
    beside other processes that took base.LOAD_NOTE of it."""
    ss = [s for side in sides if side for s in side.values()]
    return ((["steal"] if any(steal_burst(s.get("steal_share"), s.get("steal_ms")) for s in ss) else [])
            + (["load"] if any(load_burst(s.get("others_share"), s.get("others_ms")) for s in ss) else []))


def _ctx(rounds: Mapping[int, Mapping[str, Any]]) -> int | None:
    return next((s.get("context") for _, s in sorted(rounds.items()) if s.get("context") is not None), None)


def abort_rates(samples: Iterable[Mapping[str, Any]], layer: str) -> dict[str, float] | None:
    """Aborts per commit by cause (and "all") over the samples' statistics
    of one layer (summed before dividing); None when none has any."""
    commits, aborts, causes = 0, 0, {}
    found = False
    for s in samples:
        st = s.get(layer)
        if not isinstance(st, dict):
            continue
        found = True
        commits += int(st.get("commits", 0) or 0)
        by = st.get("aborts_by_cause") or {}
        total = st.get("aborts")
        aborts += int(total if isinstance(total, (int, float)) else sum(by.values()))
        for c, n in by.items():
            causes[c] = causes.get(c, 0) + int(n)
    if not found:
        return None
    den = max(1, commits)
    return {"all": aborts / den, **{c: n / den for c, n in sorted(causes.items())}}


def solo_share(sample: Mapping[str, Any]) -> float | None:
    """Sections run alone on the bias over all committed ones, or None
    when the sample has no TM statistics with a solo count."""
    st = sample.get("tm")
    if not isinstance(st, dict) or not isinstance(st.get("solo"), (int, float)):
        return None
    commits = int(st.get("commits", 0) or 0)
    return float(st["solo"]) / commits if commits > 0 else None


def measurements(samples: Samples, workloads: Mapping[str, Mapping[str, Any]],
                 idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]] | None = None
                 ) -> list[schema.Measurement]:
    out: list[schema.Measurement] = []
    idx = _index(samples) if idx is None else idx
    for (pt, variant, threads), rounds in idx.items():
        desc = workloads.get(pt[0], {})
        base = baseline(desc)
        any_s = next(iter(rounds.values()))
        ctx = _ctx(rounds)
        own = _flags(rounds)
        out.append(_m(dims_of(any_s), "validated", "", {r: 1.0 for r in rounds}, "higher", ctx))
        for m in desc.get("metrics", []):
            mine = _per_round(rounds, m["name"])
            if not mine:
                continue
            out.append(_m(dims_of(any_s), m["name"], m["unit"], mine, m["better"], ctx, own))
            if not m.get("speedup", True):
                continue
            one = idx.get((pt, variant, 1))
            if one:
                q = speedup(mine, _per_round(one, m["name"]), m["better"])
                if q:
                    out.append(_m(dims_of(any_s), f"{m['name']}_vs_1thread", "x", q, "higher", ctx,
                                  _flags(rounds, one)))
            ref = idx.get((pt, base, threads)) if base and variant != base else None
            if ref:
                q = speedup(mine, _per_round(ref, m["name"]), m["better"])
                if q:
                    out.append(_m(dims_of(any_s), f"{m['name']}_vs_{base}", "x", q, "higher", ctx,
                                  _flags(rounds, ref)))
        solo = {r: q for r, s in rounds.items() if (q := solo_share(s)) is not None}
        if solo:
            out.append(_m(dims_of(any_s), "solo_share", "", solo, None, ctx, own))
        for layer in LAYERS:
            rates = {r: abort_rates([s], layer) for r, s in rounds.items()}
            causes = sorted({c for v in rates.values() if v for c in v})
            for c in causes:
                figs = {r: v[c] for r, v in rates.items() if v and c in v}
                out.append(_m(dims_of(any_s, layer=layer, cause=c), "aborts_per_commit",
                              "aborts/commit", figs, "lower", ctx, own))
    out += best_tm(samples, workloads, idx)
    out += dyn_vs_static(workloads, idx)
    out += dyn_by_level(workloads, idx)
    out += layouts(samples)
    return out


LAYOUT_FIGURES = (("pages", "first_line_pages", "pages"), ("max_lines_per_set", "max_lines_per_set", "lines"))


def layout_rounds(samples: Samples) -> dict[Key, dict[int, list[Mapping[str, Any]]]]:
    """point -> round -> the layouts its processes reported (the ring's:
    where the allocator put the first lines; every process builds its own)."""
    out: dict[Key, dict[int, list[Mapping[str, Any]]]] = {}
    for s in samples:
        if isinstance(s.get("layout"), dict):
            out.setdefault(point(s), {}).setdefault(int(s.get("round", 0)), []).append(s["layout"])
    return out


def layouts(samples: Samples) -> list[schema.Measurement]:
    """Per point, the pages its first lines span and the most of them on one
    L1 set, each round's worst process: what places a ring above the floor
    (the data TLB's reach, the cache's sets) apart from the code."""
    ctx = next((s.get("context") for s in samples if s.get("context") is not None), None)
    out = []
    for pt, rounds in layout_rounds(samples).items():
        dims = {"part": "layout", "workload": pt[0], **dict(pt[2])}
        if pt[1]:
            dims["allocator"] = pt[1]
        for key, metric, unit in LAYOUT_FIGURES:
            figs = {r: float(max(lay.get(key, 0) for lay in ls)) for r, ls in rounds.items()}
            out.append(_m(dims, metric, unit, figs, "lower", ctx))
    return out


def best_tm(samples: Samples, workloads: Mapping[str, Mapping[str, Any]],
            idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]]) -> list[schema.Measurement]:
    """Per point and thread count, the transactional variant with the best
    median figure over the baseline, round by round."""
    out = []
    done = set()
    for (pt, _, threads) in idx:
        if (pt, threads) in done:
            continue
        done.add((pt, threads))
        desc = workloads.get(pt[0], {})
        base = baseline(desc)
        tms = [v["name"] for v in desc.get("variants", []) if v.get("kind") == "tm"]
        ref = idx.get((pt, base, threads)) if base else None
        if not ref or not tms:
            continue
        for m in desc.get("metrics", []):
            if not m.get("speedup", True):
                continue
            cands = [(v, _per_round(idx[(pt, v, threads)], m["name"])) for v in tms
                     if (pt, v, threads) in idx]
            cands = [(v, f) for v, f in cands if f]
            if not cands:
                continue
            sign = 1 if m["better"] == "higher" else -1
            name, figs = max(cands, key=lambda c: sign * (stats.median(c[1].values()) or 0.0))
            q = speedup(figs, _per_round(ref, m["name"]), m["better"])
            if q:
                any_s = next(iter(ref.values()))
                dims = {k: v for k, v in dims_of(any_s).items() if k != "variant"}
                out.append(_m({"part": BEST_TM, **dims}, f"{m['name']}_vs_{base}", "x", q, "higher",
                              _ctx(ref), _flags(idx[(pt, name, threads)], ref)))
    return out


def _coarsening(desc: Mapping[str, Any],
                measured: Callable[[str], bool]) -> dict[str, tuple[str | None, list[tuple[float, str]]]]:
    """Per backend (the TM variants' group): the controller's variant and
    the static ones as (k, name), of the variants measured; static
    serialized chunks count among them, as k = 0 (the controller's serial
    arm is one of its choices, so the best static choice may be it)."""
    out: dict[str, tuple[str | None, list[tuple[float, str]]]] = {}
    for v in desc.get("variants", []):
        if v.get("kind") != "tm" or not measured(v["name"]):
            continue
        dyn, static = out.get(v.get("group") or "", (None, []))
        if v.get("controller"):
            dyn = v["name"]
        elif v.get("granularity") is not None:
            static = static + [(float(v["granularity"]), v["name"])]
        elif v.get("serial"):
            static = static + [(0.0, v["name"])]
        out[v.get("group") or ""] = (dyn, static)
    return out


def dyn_vs_static(workloads: Mapping[str, Mapping[str, Any]],
                  idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]]) -> list[schema.Measurement]:
    """Issue 16's comparison, round by round (a round's variants ran
    interleaved, so a pair shares the machine's state; on a 2-vCPU guest
    whose rounds are bimodal, medians of unpaired figures were not):
    per point, thread count and backend, the controller over the static k
    with the best median, over the tuned one (_tuned), and over k = 1."""
    out = []
    for p in _coarsening_pairs(workloads, idx):
        rounds = idx[(p.pt, p.dyn, p.threads)]
        any_s = next(iter(rounds.values()))
        dims = {"part": DYN, **{k: v for k, v in dims_of(any_s).items() if k != "variant"},
                "backend": p.group or "default"}
        k1 = next((n for k, n, _ in p.figs if k == 1.0), None)
        refs = [(f"{name}_static", figs, _side(idx, p, names)) for name, figs, names in p.references()]
        refs.append(("k1", p.figure(k1), idx.get((p.pt, k1, p.threads))))
        for name, ref, side in refs:
            q = speedup(p.mine, ref, p.m["better"]) if ref else None
            if q:
                out.append(_m(dims, f"{p.m['name']}_vs_{name}", "x", q, "higher", _ctx(rounds),
                              _flags(rounds, side)))
    return out


def dyn_by_level(workloads: Mapping[str, Mapping[str, Any]],
                 idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]]) -> list[schema.Measurement]:
    """Issue 16's target as it is worded, "within 10 % of the best static
    k at each conflict level": per workload, conflict level and round, the
    geometric mean of the controller's ratio to the best static choice over
    the level's rows, backends and thread counts (rounds in which every one
    of them has a pair), against the in-sample best (_best_static) and the
    tuned one (_tuned_static, see _tuned).  One point's round is within the
    noise of a shared machine (an equal pair of variants straddles 0.909 at
    40 % of the points, docs/workloads.md); the level's mean is what the
    issue claims.  Rows without a level are left out."""
    per: dict[tuple[str, str, str, str], dict[Any, dict[int, float]]] = {}
    sides: dict[tuple[str, str, str, str], list[Mapping[int, Mapping[str, Any]]]] = {}
    ctx: dict[tuple[str, str, str, str], int | None] = {}
    for p in _coarsening_pairs(workloads, idx):
        level = (workloads.get(p.pt[0], {}).get("conflict") or {}).get(dict(p.pt[2]).get("row"))
        if not level:
            continue
        for ref, figs, names in p.references():
            q = speedup(p.mine, figs, p.m["better"])
            if not q:
                continue
            key = (p.pt[0], level, p.m["name"], ref)
            per.setdefault(key, {})[(p.pt, p.threads, p.group)] = q
            sides.setdefault(key, []).extend((idx[(p.pt, p.dyn, p.threads)], _side(idx, p, names)))
            ctx.setdefault(key, _ctx(idx[(p.pt, p.dyn, p.threads)]))
    out = []
    for key, points in sorted(per.items()):
        figs = stats.geomean_per_round(points)
        if figs:
            out.append(_m({"part": DYN_LEVEL, "workload": key[0], "conflict": key[1]},
                          f"{key[2]}_vs_{key[3]}_static_geomean", "x", figs, "higher", ctx[key],
                          _flags(*sides[key])))
    return out


Static = tuple[float, str, dict[int, float]]


class Pair(NamedTuple):
    """One comparison of the controller with the static choices: a point,
    thread count, backend (group) and speed-up metric."""
    pt: Key
    threads: int
    group: str
    dyn: str
    m: Mapping[str, Any]
    mine: dict[int, float]
    figs: list[Static]          # every static choice measured: (k, name, figures per round)
    best: Static                # the one with the best median over all rounds
    tuned: dict[int, float]     # per round, the figure of the choice tuned without it
    tuned_names: dict[int, str]

    def references(self) -> tuple[tuple[str, dict[int, float], dict[int, str]], ...]:
        """The two readings of "the best static k": ("best" in-sample,
        "tuned"), each with its figures and variant per round."""
        return (("best", self.best[2], {r: self.best[1] for r in self.best[2]}),
                ("tuned", self.tuned, self.tuned_names))

    def figure(self, name: str | None) -> dict[int, float] | None:
        return next((f for _, n, f in self.figs if n == name), None) if name else None


def _side(idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]], p: Pair,
          names: Mapping[int, str]) -> dict[int, Mapping[str, Any]]:
    """The samples a reference's figures came from, round by round (the
    tuned choice can differ between rounds)."""
    return {r: idx[(p.pt, n, p.threads)][r] for r, n in names.items()}


def _tuned(figs: Sequence[Static], sign: int) -> tuple[dict[int, float], dict[int, str]]:
    """Per round r, the static choice a tuning sweep would pick without r:
    the best median over the other rounds, and its figure in r.  The best
    median over all rounds is picked on the very figures it is then
    compared with, so among near-equal choices it is whichever drew the
    luckiest rounds, and the controller's ratio to it reads low (by ~5 %
    for a controller as fast as the best at the noise of histogram's
    changing row, docs/tm-coarsen.md); leaving r out removes that, at the
    price of now and then picking a near-best choice instead.  Nothing
    for a round no other round can tune (one round)."""
    figures: dict[int, float] = {}
    names: dict[int, str] = {}
    for r in sorted({r for _, _, f in figs for r in f}):
        cands = [(m, n, f[r]) for _, n, f in figs
                 if r in f and (m := stats.median(v for q, v in f.items() if q != r)) is not None]
        if cands:
            _, names[r], figures[r] = max(cands, key=lambda c: sign * c[0])
    return figures, names


def _coarsening_pairs(workloads: Mapping[str, Mapping[str, Any]],
                      idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]]) -> Iterable[Pair]:
    """Every comparison of a controller with its backend's static choices."""
    for pt, threads in dict.fromkeys((pt, t) for pt, _, t in idx):
        desc = workloads.get(pt[0], {})
        for group, (dyn, static) in _coarsening(desc, lambda v: (pt, v, threads) in idx).items():
            if not dyn or not static:
                continue
            for m in desc.get("metrics", []):
                if not m.get("speedup", True):
                    continue
                mine = _per_round(idx[(pt, dyn, threads)], m["name"])
                figs = [(k, n, _per_round(idx[(pt, n, threads)], m["name"])) for k, n in static]
                figs = [c for c in figs if c[2]]
                if not mine or not figs:
                    continue
                sign = 1 if m["better"] == "higher" else -1
                best = max(figs, key=lambda c: sign * (stats.median(c[2].values()) or 0.0))
                yield Pair(pt, threads, group, dyn, m, mine, figs, best, *_tuned(figs, sign))


REGIME_GAP = 0.1


def regime_note(workloads: Mapping[str, Mapping[str, Any]],
                idx: Mapping[tuple[Key, str, int], Mapping[int, Mapping[str, Any]]]) -> list[str]:
    """At 2 threads and more, a run that ran its threads mostly one at a time
    on the bias can be several times as fast as one that ran them together
    (docs/workloads.md), whatever k.  So the controller's round pairs are
    sorted by how its run's share of sections on the bias lay against the
    best static k's: lower by more than REGIME_GAP, within it, higher; one
    line with the count and median ratio of each, when any lay apart, so a
    verdict can be read against it."""
    groups: dict[str, list[float]] = {"less": [], "within": [], "more": []}
    for p in _coarsening_pairs(workloads, idx):
        if p.threads < 2:
            continue
        d_rounds, b_rounds = idx[(p.pt, p.dyn, p.threads)], idx[(p.pt, p.best[1], p.threads)]
        for r, q in speedup(p.mine, p.best[2], p.m["better"]).items():
            a, b = solo_share(d_rounds.get(r, {})), solo_share(b_rounds.get(r, {}))
            if a is not None and b is not None:
                groups["less" if a < b - REGIME_GAP else "more" if a > b + REGIME_GAP else "within"].append(q)
    if not groups["less"] and not groups["more"]:
        return []
    said = {"less": "less on the bias", "within": f"within {REGIME_GAP:g}", "more": "more on the bias"}
    parts = [f"{said[g]} {len(v)}, {stats.median(v):.2f}" for g, v in groups.items() if v]
    return ["coarsening at 2 threads and more, the controller over the best static k by its run's share "
            "of sections on the bias against the static one's (round pairs, median ratio): "
            + "; ".join(parts) + " (docs/workloads.md)"]


def summarise(samples: Samples, workloads: Mapping[str, Mapping[str, Any]]) -> list[Row]:
    """Table rows: per (workload, allocator, dims, variant, threads) and
    metric, the median over rounds, its spread, the speed-ups' medians, and
    the aborts per commit (all causes) where the variant counts them."""
    idx = _index(samples)
    rows: list[Row] = []
    for (pt, variant, threads), rounds in idx.items():
        desc = workloads.get(pt[0], {})
        base = baseline(desc)
        for m in desc.get("metrics", []):
            figs = _per_round(rounds, m["name"])
            if not figs:
                continue
            one = idx.get((pt, variant, 1))
            ref = idx.get((pt, base, threads)) if base else None
            rates = {layer: abort_rates(rounds.values(), layer) for layer in LAYERS}
            rows.append({
                "workload": pt[0], "allocator": pt[1], "dims": dict(pt[2]), "variant": variant,
                "threads": threads, "metric": m["name"], "unit": m["unit"],
                "value": stats.median(figs.values()), "rounds": len(figs),
                "spread": stats.spread(list(figs.values())),
                "vs_1thread": stats.median(speedup(figs, _per_round(one, m["name"]), m["better"]).values())
                if one and m.get("speedup", True) else None,
                "vs_baseline": stats.median(speedup(figs, _per_round(ref, m["name"]), m["better"]).values())
                if ref and m.get("speedup", True) else None,
                "aborts": {k: v for k, v in rates.items() if v}})
    order = {w: i for i, w in enumerate(D.ordered(list(workloads)))}
    vorder = {w: {v: i for i, v in enumerate(variant_order(d))} for w, d in workloads.items()}
    rows.sort(key=lambda r: (order.get(r["workload"], 99), str(r["allocator"] or ""),
                             dims_key(r["dims"]), r["metric"],
                             vorder.get(r["workload"], {}).get(r["variant"], 99), r["threads"]))
    return rows


def dims_key(dims: Mapping[str, Any]) -> list[tuple[str, int, float, str]]:
    """Dims in a stable order, numbers by value (64 before 1024)."""
    return [(k, 0, float(v), "") if isinstance(v, (int, float)) else (k, 1, 0.0, str(v))
            for k, v in sorted(dims.items())]


def not_measured(extra: Mapping[str, Any]) -> list[str]:
    """One line per workload with variants not measured, one for the
    allocators not installed."""
    out = []
    for w, st in extra.get("variants", {}).items():
        na = [v for v, s in st.items() if s.get("status") != "measured"]
        if na:
            out.append(f"{w}: not measured: {', '.join(na)} ({st[na[0]].get('note', '')})")
    missing = (extra.get("allocators") or {}).get("missing") or {}
    if missing:
        out.append("allocators not installed: " + ", ".join(missing))
    return out


def analyse(extra: Mapping[str, Any], params: Mapping[str, Any]) -> Analysis:
    samples = extra["samples"]
    workloads = _kinds(extra)
    rows = summarise(samples, workloads)
    warnings = warn_few_and_noisy(rows, "rounds", MIN_ROUNDS, NOISY,
                                  lambda r: f"{r['workload']} {r['variant']}@{r['threads']}T")
    warnings += not_measured(extra)
    idx = _index(samples)
    warnings += regime_note(workloads, idx)
    return Analysis(rows, measurements(samples, workloads, idx), warnings)

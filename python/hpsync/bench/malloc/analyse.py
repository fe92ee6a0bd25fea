# SPDX-License-Identifier: MIT
"""Pure computations of `bench malloc`: addresses -> L1 sets, cachegrind's
out-file -> misses, samples -> rows, measurements and caveats.

Samples (what measure collects, each with the "context" it ran in):
  spread:     {"allocator", "round", "state", "size", "sets_used", "max_per_set"}
  ring:       {"allocator", "round", "size", "ns_per_node", "batches", "sets_used", "max_per_set",
               "pages" (the distinct pages the first lines lie in; runs before it lack it)}
  cachegrind: {"allocator", "d1", "labels", "size", "laps": [a, b], "misses": [a, b],
               "same_layout": bool, "same_layout_as_timed": bool | None}
  mix:        {"allocator", "round", "pattern", "threads", "ops_per_sec",
               "rss_peak_kib", "rss_start_kib"}
  patterns:   the same as mix, for the patterns of existing benchmarks
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from ... import schema, stats
from ..base import Analysis, Row, context_of, per_round, round_ratios, warn_few_and_noisy

# Allocators in the order tables show them.  "hpsync" is the cache-index-
# aware allocator the targets are about; "rand" is glibc with randomly
# padded requests, the study's control.
SUBJECT = "hpsync"
ALLOCATORS: tuple[str, ...] = ("hpsync", "rand", "glibc", "jemalloc", "tcmalloc", "mimalloc")
GLIBC = "glibc"
# What "the best installed allocator" is chosen from (not our own variants).
BASELINES: tuple[str, ...] = ("glibc", "jemalloc", "tcmalloc", "mimalloc")
# The size-class allocators the paper finds index-unaware.
INDEX_UNAWARE: tuple[str, ...] = ("jemalloc", "tcmalloc", "mimalloc")
RSS_ALLOCATOR = "mimalloc"
SPREAD_MIN_SETS = 32              # what the spread table stars (the targets table judges)
SPREAD_MAX_PER_SET = 8
RING_BASE_SIZE = 64
RING_MAX_SIZE = 2048              # the ring's derived figure covers sizes up to this
CG_SIZE = 1024                    # the simulated-misses figure's size
PATTERNS: tuple[str, ...] = ("large", "stress", "server", "pipeline")
MIN_ROUNDS = 3
NOISY = 0.25
NODES = 128                       # blocks per spread test and per ring
# A 32 KiB, 8-way L1 with 64-byte lines: the reference geometry simulated
# next to this machine's own.
REFERENCE_D1: tuple[int, int, int] = (32768, 8, 64)


def ordered(names: Iterable[str]) -> list[str]:
    """Allocator names in table order (unknown names last, sorted)."""
    present = set(names)
    return [a for a in ALLOCATORS if a in present] + sorted(present - set(ALLOCATORS))


# ---- set indices ----------------------------------------------------------------

def set_indices(addresses: Iterable[int], line: int, sets: int) -> list[int]:
    """The L1 set of each address's line: (address / line) mod sets."""
    if line <= 0 or sets <= 0:
        raise ValueError(f"bad cache geometry: line {line}, sets {sets}")
    return [(int(a) // line) % sets for a in addresses]


def set_spread(addresses: Iterable[int], line: int, sets: int) -> tuple[int, int]:
    """(distinct sets used, most addresses on one set) of the addresses' lines."""
    counts = Counter(set_indices(addresses, line, sets))
    return len(counts), max(counts.values(), default=0)


def page_span(addresses: Iterable[int], page: int) -> int:
    """The distinct pages of page bytes the addresses lie in: what a walk over
    them asks of the data TLB (hps-probe-tlb measures how many it holds)."""
    return len({int(a) // page for a in addresses})


def spread_ok(sets_used: int, max_per_set: int) -> bool:
    return sets_used >= SPREAD_MIN_SETS and max_per_set <= SPREAD_MAX_PER_SET


# ---- cachegrind ------------------------------------------------------------------

def parse_cachegrind(text: str) -> tuple[list[str], dict[str, list[int]]]:
    """Event names and per-function totals of a cachegrind.out file.

    The format: an "events:" line names the columns; "fn=NAME" starts a
    function's records; each record is "LINE count count ..." (trailing
    zero counts may be left out).  A function's records may be split over
    several "fl=" (file) blocks, when code was inlined from another file;
    they are summed.
    """
    events: list[str] = []
    totals: dict[str, list[int]] = {}
    fn: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("events:"):
            events = line.split(":", 1)[1].split()
        elif line.startswith("fn="):
            fn = line[3:]
        elif fn is not None and line[:1].isdigit():
            acc = totals.setdefault(fn, [0] * len(events))
            for i, c in enumerate([int(x) for x in line.split()[1:]][:len(acc)]):
                acc[i] += c
    if not events:
        raise ValueError("not a cachegrind output file (no events: line)")
    return events, totals


def d1_misses(events: Sequence[str], totals: Mapping[str, list[int]], fn: str) -> int:
    """D1 read plus write misses of one function (0 if it never ran)."""
    if "D1mr" not in events or "D1mw" not in events:
        raise ValueError("cachegrind ran without the cache simulation (no D1mr/D1mw events)")
    counts = totals.get(fn)
    if counts is None:
        return 0
    return counts[events.index("D1mr")] + counts[events.index("D1mw")]


def misses_per_lap(laps: Sequence[int], misses: Sequence[int], same_layout: bool) -> tuple[float, str]:
    """Steady-state misses per lap from two simulated runs of laps[0] < laps[1] laps.

    With the same block layout in both runs (every deterministic allocator)
    the difference over the extra laps cancels whatever the runs share
    exactly.  A randomising allocator (rand) lays the ring out differently in
    each process, so a difference would mix two layouts; each run's misses
    per lap are then averaged instead (each run's first lap is already
    excluded by the program's untimed warm-up laps).
    """
    (la, lb), (ma, mb) = laps, misses
    if same_layout and lb > la:
        return max(0.0, (mb - ma) / (lb - la)), "difference"
    return (ma / la + mb / lb) / 2.0, "mean-per-run"


# ---- rows -------------------------------------------------------------------------

def _spread_rows(samples: Sequence[Mapping[str, Any]]) -> list[Row]:
    """Worst round per (allocator, state, size): fewest sets, most on one set."""
    rows: list[Row] = []
    rank = {a: i for i, a in enumerate(ordered(s["allocator"] for s in samples))}
    keys = sorted({(s["state"], int(s["size"]), s["allocator"]) for s in samples},
                  key=lambda k: (k[0] != "fresh", k[1], rank[k[2]]))
    for state, size, alloc in keys:
        mine = [s for s in samples if (s["state"], int(s["size"]), s["allocator"]) == (state, size, alloc)]
        used, most = min(s["sets_used"] for s in mine), max(s["max_per_set"] for s in mine)
        rows.append({"part": "spread", "allocator": alloc, "state": state, "size": size,
                     "sets_used": used, "max_per_set": most, "meets_target": spread_ok(used, most),
                     "rounds": len(mine),
                     "varies": len({(s["sets_used"], s["max_per_set"]) for s in mine}) > 1})
    return rows


def _ring_rows(samples: Sequence[Mapping[str, Any]]) -> list[Row]:
    """Median ns/node over rounds; the ratio to the 64 B ring is the median of
    each round's own ratio (both sizes timed in the same process, interleaved)."""
    rows: list[Row] = []
    for alloc in ordered(s["allocator"] for s in samples):
        mine = [s for s in samples if s["allocator"] == alloc]
        base = [s for s in mine if int(s["size"]) == RING_BASE_SIZE]
        for size in sorted({int(s["size"]) for s in mine}):
            at = [s for s in mine if int(s["size"]) == size]
            ns = [float(s["ns_per_node"]) for s in at]
            med = stats.strict_median(ns)
            rows.append({"part": "ring", "allocator": alloc, "size": size, "ns_per_node": med,
                         "laps_per_sec": 1e9 / (med * NODES) if med > 0 else None,
                         "ratio_vs_64": stats.median(round_ratios(at, base, "ns_per_node")[0]),
                         "sets_used": at[0]["sets_used"], "max_per_set": at[0]["max_per_set"],
                         "pages": max((int(x["pages"]) for x in at if "pages" in x), default=None),
                         "rounds": len(ns), "spread": stats.spread(ns)})
    return rows


def _cachegrind_rows(samples: Sequence[Mapping[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    for s in samples:
        per_lap, method = misses_per_lap(s["laps"], s["misses"], bool(s["same_layout"]))
        rows.append({"part": "cachegrind", "allocator": s["allocator"], "d1": s["d1"],
                     "labels": s["labels"], "size": int(s["size"]),
                     "d1_misses_per_lap": per_lap, "d1_misses_per_node": per_lap / NODES,
                     "method": method, "same_layout_as_timed": s.get("same_layout_as_timed")})
    return rows


def scenario(r: Mapping[str, Any]) -> str:
    """A mix row's scenario as tables and verdicts name it: "local 4T"."""
    return f"{r['pattern']} {r['threads']}T"


def _scenarios(samples: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """Single thread first, then private windows, then the rest; the
    patterns in PATTERNS order."""
    return sorted({(s["pattern"], int(s["threads"])) for s in samples},
                  key=lambda k: (k[1] > 1, k[0] != "local",
                                 PATTERNS.index(k[0]) if k[0] in PATTERNS else 0, k[1], k[0]))


def _mix_rows(samples: Sequence[Mapping[str, Any]], part: str = "mix") -> list[Row]:
    """Medians over rounds, then ratios within each scenario: ops/s against
    glibc and the fastest baseline (medians of per-round ratios), peak RSS
    against mimalloc and the lowest baseline (ratios of medians: peak RSS
    does not drift with the machine's load)."""
    rows: list[Row] = []
    for pattern, threads in _scenarios(samples):
        at = [s for s in samples if s["pattern"] == pattern and int(s["threads"]) == threads]
        of = {a: [s for s in at if s["allocator"] == a] for a in ordered(s["allocator"] for s in at)}
        mine: list[Row] = []
        for alloc, ss in of.items():
            ops = [float(s["ops_per_sec"]) for s in ss]
            mine.append({"part": part, "allocator": alloc, "pattern": pattern, "threads": threads,
                         "ops_per_sec": stats.strict_median(ops),
                         "rss_peak_kib": stats.strict_median(s["rss_peak_kib"] for s in ss),
                         "rss_start_kib": stats.strict_median(s["rss_start_kib"] for s in ss),
                         "rounds": len(ops), "spread": stats.spread(ops)})
        by = {r["allocator"]: r for r in mine}
        best = max((r for r in mine if r["allocator"] in BASELINES), key=lambda r: r["ops_per_sec"],
                   default=None)
        low = min((r for r in mine if r["allocator"] in BASELINES), key=lambda r: r["rss_peak_kib"],
                  default=None)
        mim = by.get(RSS_ALLOCATOR)
        for r in mine:
            own = of[r["allocator"]]
            r["best_baseline"] = best and best["allocator"]
            r["ops_ratio_vs_best"] = stats.median(round_ratios(own, of[best["allocator"]], "ops_per_sec")[0]) if best else None
            r["ops_ratio_vs_glibc"] = stats.median(round_ratios(own, of.get(GLIBC, []), "ops_per_sec")[0])
            r["rss_ratio_vs_mimalloc"] = stats.ratio(r["rss_peak_kib"], mim and mim["rss_peak_kib"])
            r["best_rss_baseline"] = low and low["allocator"]
            r["rss_ratio_vs_best"] = stats.ratio(r["rss_peak_kib"], low and low["rss_peak_kib"])
        rows += mine
    return rows


def summarise(samples: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Row]:
    """Every part's rows: spread, ring, cachegrind, mix, pattern."""
    return (_spread_rows(samples.get("spread", [])) + _ring_rows(samples.get("ring", []))
            + _cachegrind_rows(samples.get("cachegrind", [])) + _mix_rows(samples.get("mix", []))
            + _mix_rows(samples.get("patterns", []), "pattern"))


def rows_of(rows: Sequence[Row], part: str, **match: Any) -> list[Row]:
    return [r for r in rows if r["part"] == part and all(r.get(k) == v for k, v in match.items())]


# ---- measurements ------------------------------------------------------------------

def _by_round(samples: Sequence[Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]]:
    out: dict[int, list[Mapping[str, Any]]] = {}
    for s in samples:
        out.setdefault(int(s.get("round", 0)), []).append(s)
    return dict(sorted(out.items()))


def _spread_measurements(samples: Sequence[Mapping[str, Any]]) -> list[schema.Measurement]:
    """Per allocator and round, the fewest L1 sets and the most blocks on one
    set over every size and state: the index-spread targets' figures."""
    out = []
    for alloc in ordered(s["allocator"] for s in samples):
        rounds = _by_round([s for s in samples if s["allocator"] == alloc])
        cid = context_of([s for s in samples if s["allocator"] == alloc], None)
        for metric, pick, better in (("fewest_sets", lambda ss: min(s["sets_used"] for s in ss), "higher"),
                                     ("most_per_set", lambda ss: max(s["max_per_set"] for s in ss), "lower")):
            out.append(schema.measurement({"part": "spread", "allocator": alloc}, metric, "",
                                          [pick(ss) for ss in rounds.values()], better, cid,
                                          list(rounds)))
    return out


def _ring_measurements(samples: Sequence[Mapping[str, Any]]) -> list[schema.Measurement]:
    """ns per node per size and round; per allocator and round, the worst
    ratio of any size up to RING_MAX_SIZE to the 64 B ring of the same process."""
    out = []
    for alloc in ordered(s["allocator"] for s in samples):
        mine = [s for s in samples if s["allocator"] == alloc]
        cid = context_of(mine, None)
        for size in sorted({int(s["size"]) for s in mine}):
            at = [s for s in mine if int(s["size"]) == size]
            reps, rounds = per_round(at, "ns_per_node")
            out.append(schema.measurement({"part": "ring", "allocator": alloc, "size": size},
                                          "ns_per_node", "ns", reps, "lower", cid, rounds))
            with_pages = [s for s in at if "pages" in s]
            if with_pages:
                reps, rounds = per_round(with_pages, "pages")
                out.append(schema.measurement({"part": "ring", "allocator": alloc, "size": size},
                                              "first_line_pages", "pages", reps, "lower", cid, rounds))
        worst, rounds = [], []
        for rnd, ss in _by_round(mine).items():
            base = next((float(s["ns_per_node"]) for s in ss if int(s["size"]) == RING_BASE_SIZE), None)
            ratios = [stats.ratio(float(s["ns_per_node"]), base) for s in ss
                      if RING_BASE_SIZE < int(s["size"]) <= RING_MAX_SIZE]
            if ratios and None not in ratios:
                worst.append(max(r for r in ratios if r is not None))
                rounds.append(rnd)
        if worst:
            out.append(schema.measurement({"part": "ring", "allocator": alloc}, "worst_ratio_vs_64",
                                          "x", worst, "lower", cid, rounds))
    return out


def _cachegrind_measurements(rows: Sequence[Row]) -> list[schema.Measurement]:
    """Simulated misses per lap (one simulation: one figure), and for the
    subject at CG_SIZE its misses over the fewest of the index-unaware
    allocators' (the cachegrind target's figure; 0 when it has none)."""
    out = [schema.measurement({"part": "cachegrind", "allocator": r["allocator"], "d1": r["d1"],
                               "size": r["size"]}, "d1_misses_per_lap", "", [r["d1_misses_per_lap"]],
                              "lower") for r in rows]
    for r in rows:
        if r["allocator"] != SUBJECT or r["size"] != CG_SIZE:
            continue
        others = [o["d1_misses_per_lap"] for o in rows if o["d1"] == r["d1"] and o["size"] == CG_SIZE
                  and o["allocator"] in INDEX_UNAWARE]
        fewest = min(others, default=None)
        value = stats.ratio(r["d1_misses_per_lap"], fewest)
        if value is None and fewest == 0 and r["d1_misses_per_lap"] == 0:
            value = 1.0
        if value is not None:
            out.append(schema.measurement({"part": "cachegrind", "allocator": r["allocator"],
                                           "d1": r["d1"], "size": r["size"]},
                                          "misses_vs_fewest_unaware", "x", [value], "lower"))
    return out


def _mix_measurements(samples: Sequence[Mapping[str, Any]], part: str) -> list[schema.Measurement]:
    """ops/s and peak RSS per round; and per round, ops/s over the fastest
    baseline's (from the medians) in the same round and, for the patterns,
    the slowdown against it and peak RSS over the lowest baseline's."""
    out = []
    for pattern, threads in _scenarios(samples):
        at = [s for s in samples if s["pattern"] == pattern and int(s["threads"]) == threads]
        of = {a: [s for s in at if s["allocator"] == a] for a in ordered(s["allocator"] for s in at)}
        med = {a: (stats.strict_median(s["ops_per_sec"] for s in ss),
                   stats.strict_median(s["rss_peak_kib"] for s in ss)) for a, ss in of.items()}
        base = [a for a in of if a in BASELINES]
        best = max(base, key=lambda a: med[a][0], default=None)
        low = min(base, key=lambda a: med[a][1], default=None)
        for alloc, ss in of.items():
            dims = {"part": part, "allocator": alloc, "pattern": pattern, "threads": threads}
            cid = context_of(ss, None)
            for metric, unit, better in (("ops_per_sec", "ops/s", "higher"),
                                         ("rss_peak_kib", "KiB", "lower")):
                reps, rounds = per_round(ss, metric)
                out.append(schema.measurement(dims, metric, unit, reps, better, cid, rounds))
            if best:
                ratios, rounds = round_ratios(ss, of[best], "ops_per_sec")
                out.append(schema.measurement(dims, "ops_ratio_vs_best", "x", ratios, "higher", cid, rounds))
                if part == "pattern":
                    out.append(schema.measurement(dims, "slowdown_vs_best", "x",
                                                  [1.0 / r for r in ratios if r > 0], "lower", cid,
                                                  [n for r, n in zip(ratios, rounds) if r > 0]))
            if low and part == "pattern":
                ratios, rounds = round_ratios(ss, of[low], "rss_peak_kib")
                out.append(schema.measurement(dims, "rss_ratio_vs_lowest", "x", ratios, "lower", cid, rounds))
    return out


def measurements(samples: Mapping[str, Sequence[Mapping[str, Any]]],
                 rows: Sequence[Row]) -> list[schema.Measurement]:
    return (_spread_measurements(samples.get("spread", []))
            + _ring_measurements(samples.get("ring", []))
            + _cachegrind_measurements(rows_of(rows, "cachegrind"))
            + _mix_measurements(samples.get("mix", []), "mix")
            + _mix_measurements(samples.get("patterns", []), "pattern"))


# ---- caveats --------------------------------------------------------------------------

def warnings_for(rows: Sequence[Row]) -> list[str]:
    """Caveats a reader should see next to the figures."""
    timed = [r for r in rows if r["part"] in ("ring", "mix", "pattern")]
    out = warn_few_and_noisy(timed, "rounds", MIN_ROUNDS, NOISY,
                             lambda r: f"{r['allocator']} " + (f"{r['size']} B" if r["part"] == "ring"
                                                               else scenario(r)),
                             "round(s) per timed figure")
    varies = sorted({r["allocator"] for r in rows if r["part"] == "spread" and r.get("varies")})
    if varies:
        out.append(f"index spread differs between rounds for {', '.join(varies)} "
                   f"(the table shows each size's worst round)")
    cg = [r for r in rows if r["part"] == "cachegrind"]
    randomised = sorted({r["allocator"] for r in cg if r["method"] != "difference"})
    if randomised:
        out.append(f"{', '.join(randomised)} laid the ring out differently in each simulated "
                   f"process: simulated misses are the mean of two layouts' per-lap figures")
    moved = sorted({r["allocator"] for r in cg if r["method"] == "difference"
                    and r.get("same_layout_as_timed") is False})
    if moved:
        out.append(f"under cachegrind the ring's L1 sets differ from the timed run's for "
                   f"{', '.join(moved)}: simulated and timed figures describe different layouts")
    return out


def analyse(extra: Mapping[str, Any], params: Mapping[str, Any]) -> Analysis:
    rows = summarise(extra["samples"])
    notes = [f"{name}: {info['status']}, {info['note']}"
             for name, info in extra.get("allocators", {}).items() if info["status"] != "measured"]
    notes += extra.get("cachegrind", {}).get("notes", [])
    return Analysis(rows, measurements(extra["samples"], rows), notes + warnings_for(rows))

# SPDX-License-Identifier: MIT
"""Pure computations for `hpsync bench malloc`: addresses and samples -> rows -> targets.

Nothing here runs a program or prints.  Every function takes plain data (as
stored in the JSON document) and returns plain data, so the tests feed them
canned inputs.

Samples are what the measurement loop collects (hpsync.bench_malloc):
  spread:     {"allocator", "round", "state", "size", "sets_used", "max_per_set"}
  ring:       {"allocator", "round", "size", "ns_per_node", "sets_used", "max_per_set"}
  cachegrind: {"allocator", "d1", "labels", "size", "laps": [a, b], "misses": [a, b],
               "same_layout": bool, "same_layout_as_timed": bool | None}
  mix:        {"allocator", "round", "pattern", "threads", "ops_per_sec",
               "rss_peak_kib", "rss_start_kib"}
  patterns:   the same as mix, for the patterns of existing benchmarks
              (large, stress, server, pipeline)
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from . import stats

# Allocators in the order tables show them.  "hpsync" is the cache-index-
# aware allocator the targets are about; "rand" is glibc with randomly
# padded requests, the study's control.
SUBJECT = "hpsync"
ALLOCATORS: tuple[str, ...] = ("hpsync", "rand", "glibc", "jemalloc", "tcmalloc", "mimalloc")
GLIBC = "glibc"
# Our allocators' names for `hpsync run --malloc`; --allocators takes them too.
RUN_NAMES: dict[str, str] = {"hpsync": "cia", "rand": "rand"}
ALIASES: dict[str, str] = {"cia": "hpsync"}
# What "the best installed allocator" is chosen from (not our own variants).
BASELINES: tuple[str, ...] = ("glibc", "jemalloc", "tcmalloc", "mimalloc")
# The size-class allocators the paper finds index-unaware.
INDEX_UNAWARE: tuple[str, ...] = ("jemalloc", "tcmalloc", "mimalloc")

# The targets.
SPREAD_MIN_SETS = 32
SPREAD_MAX_PER_SET = 8
RING_MAX_RATIO = 1.10             # ns/node vs the 64 B ring ...
RING_MAX_SIZE = 2048              # ... for every size up to 2 KiB
RING_BASE_SIZE = 64
CG_SIZE = 1024                    # simulated L1 misses at 1 KiB ...
CG_MIN_FACTOR = 100.0             # ... >= 100x fewer than the index-unaware allocators
ST_MIN_RATIO_VS_BEST = 0.9        # single thread within 10 % of the best
MT_MIN_RATIO_VS_GLIBC = 1.0       # multithread >= glibc
RSS_MAX_RATIO_VS_MIMALLOC = 1.25
RSS_ALLOCATOR = "mimalloc"
MIN_ROUNDS_FOR_CONFIDENCE = 3
# The patterns existing allocator benchmarks found hpsync behind on, and
# their targets: throughput within 1.2x of the best baseline (ops/s >= best
# / 1.2) and peak RSS within 1.2x of the lowest, in every pattern.
PATTERNS: tuple[str, ...] = ("large", "stress", "server", "pipeline")
PATTERN_MAX_SLOWDOWN = 1.2
PATTERN_MAX_RSS = 1.2
# Rounds whose figures spread wider than this (max - min over the median)
# are too noisy to fail a target on.
NOISY_SPREAD = 0.25

# A 32 KiB, 8-way L1 with 64-byte lines: the reference geometry simulated
# next to this machine's own.
REFERENCE_D1: tuple[int, int, int] = (32768, 8, 64)
NODES = 128                       # blocks per spread test and per ring

Row = dict[str, Any]


# ---- set indices -------------------------------------------------------------

def set_indices(addresses: Iterable[int], line: int, sets: int) -> list[int]:
    """The L1 set of each address's line: (address / line) mod sets."""
    if line <= 0 or sets <= 0:
        raise ValueError(f"bad cache geometry: line {line}, sets {sets}")
    return [(int(a) // line) % sets for a in addresses]


def set_spread(addresses: Iterable[int], line: int, sets: int) -> tuple[int, int]:
    """(distinct sets used, most addresses on one set) of the addresses' lines."""
    counts = Counter(set_indices(addresses, line, sets))
    return len(counts), max(counts.values(), default=0)


def spread_ok(sets_used: int, max_per_set: int) -> bool:
    return sets_used >= SPREAD_MIN_SETS and max_per_set <= SPREAD_MAX_PER_SET


# ---- cachegrind ------------------------------------------------------------

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
            counts = [int(x) for x in line.split()[1:]]
            acc = totals.setdefault(fn, [0] * len(events))
            for i, c in enumerate(counts[:len(acc)]):
                acc[i] += c
    if not events:
        raise ValueError("not a cachegrind output file (no events: line)")
    return events, totals


def d1_misses(events: Sequence[str], totals: dict[str, list[int]], fn: str) -> int:
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


# ---- rows --------------------------------------------------------------------

def ordered(names: Iterable[str]) -> list[str]:
    """Allocator names in table order (unknown names last, sorted)."""
    present = set(names)
    return [a for a in ALLOCATORS if a in present] + sorted(present - set(ALLOCATORS))


def _spread_rows(samples: Sequence[dict[str, Any]]) -> list[Row]:
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


def _ring_rows(samples: Sequence[dict[str, Any]]) -> list[Row]:
    """Median ns/node over rounds; the ratio to the 64 B ring is the median of
    each round's own ratio (both sizes timed in the same process, interleaved)."""
    rows: list[Row] = []
    for alloc in ordered(s["allocator"] for s in samples):
        mine = [s for s in samples if s["allocator"] == alloc]
        base = {s["round"]: float(s["ns_per_node"]) for s in mine if int(s["size"]) == RING_BASE_SIZE}
        for size in sorted({int(s["size"]) for s in mine}):
            at = [s for s in mine if int(s["size"]) == size]
            ns = [float(s["ns_per_node"]) for s in at]
            per_round = [r for r in (stats.ratio(float(s["ns_per_node"]), base.get(s["round"])) for s in at)
                         if r is not None]
            med = stats.strict_median(ns)
            rows.append({"part": "ring", "allocator": alloc, "size": size,
                         "ns_per_node": med, "laps_per_sec": 1e9 / (med * NODES) if med > 0 else None,
                         "ratio_vs_64": stats.median(per_round),
                         "sets_used": at[0]["sets_used"], "max_per_set": at[0]["max_per_set"],
                         "rounds": len(ns), "ns_per_node_rounds": ns,
                         "spread": stats.spread(ns)})
    return rows


def _cachegrind_rows(samples: Sequence[dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    for s in samples:
        per_lap, method = misses_per_lap(s["laps"], s["misses"], bool(s["same_layout"]))
        rows.append({"part": "cachegrind", "allocator": s["allocator"], "d1": s["d1"],
                     "labels": s["labels"], "size": int(s["size"]),
                     "d1_misses_per_lap": per_lap, "d1_misses_per_node": per_lap / NODES,
                     "method": method, "same_layout_as_timed": s.get("same_layout_as_timed")})
    return rows


def _round_ratios(mine: Sequence[dict[str, Any]], ref: Sequence[dict[str, Any]],
                  key: str = "ops_per_sec") -> list[float]:
    """Each round's figure over the reference's in the same round.  The
    allocators run interleaved within a round, so a round that the shared
    machine slowed down as a whole cancels out of its own ratio; the rows
    report the median of these."""
    by_round = {s["round"]: float(s[key]) for s in ref}
    return [r for r in (stats.ratio(float(s[key]), by_round.get(s["round"])) for s in mine)
            if r is not None]


def _pattern_rows(samples: Sequence[dict[str, Any]]) -> list[Row]:
    """The mix rows of the patterns, plus what their targets compare: ops/s
    against the fastest baseline and peak RSS against the smallest, per
    round and as medians."""
    rows = _mix_rows(samples, "pattern")
    for scen in dict.fromkeys((r["pattern"], r["threads"]) for r in rows):
        at = [r for r in rows if (r["pattern"], r["threads"]) == scen]
        of = {a: [s for s in samples if (s["pattern"], int(s["threads"])) == scen
                  and s["allocator"] == a] for a in (r["allocator"] for r in at)}
        low = min((r for r in at if r["allocator"] in BASELINES),
                  key=lambda r: r["rss_peak_kib"], default=None)
        for r in at:
            r["best_rss_baseline"] = low["allocator"] if low else None
            r["rss_ratio_vs_best"] = stats.ratio(r["rss_peak_kib"], low["rss_peak_kib"] if low else None)
            r["rss_ratio_vs_best_rounds"] = (_round_ratios(of[r["allocator"]], of[low["allocator"]],
                                                           "rss_peak_kib") if low else [])
    return rows


def _mix_rows(samples: Sequence[dict[str, Any]], part: str = "mix") -> list[Row]:
    """Medians over rounds, then ratios within each scenario."""
    rows: list[Row] = []
    for pattern, threads in sorted({(s["pattern"], int(s["threads"])) for s in samples},
                                   key=lambda k: (k[1] > 1, k[0] != "local", k[1])):
        at = [s for s in samples if s["pattern"] == pattern and int(s["threads"]) == threads]
        of = {a: [s for s in at if s["allocator"] == a] for a in ordered(s["allocator"] for s in at)}
        mine: list[Row] = []
        for alloc, ss in of.items():
            ops = [float(s["ops_per_sec"]) for s in ss]
            med = stats.strict_median(ops)
            mine.append({"part": part, "allocator": alloc, "pattern": pattern, "threads": threads,
                         "ops_per_sec": med,
                         "rss_peak_kib": stats.strict_median(s["rss_peak_kib"] for s in ss),
                         "rss_start_kib": stats.strict_median(s["rss_start_kib"] for s in ss),
                         "rounds": len(ops), "ops_per_sec_rounds": ops,
                         "spread": stats.spread(ops)})
        by = {r["allocator"]: r for r in mine}
        best = max((r for r in mine if r["allocator"] in BASELINES),
                   key=lambda r: r["ops_per_sec"], default=None)
        mim = by.get(RSS_ALLOCATOR)
        for r in mine:
            own = of[r["allocator"]]
            r["best_baseline"] = best["allocator"] if best else None
            r["ops_ratio_vs_best_rounds"] = _round_ratios(own, of[best["allocator"]]) if best else []
            r["ops_ratio_vs_best"] = stats.median(r["ops_ratio_vs_best_rounds"])
            r["ops_ratio_vs_glibc_rounds"] = _round_ratios(own, of.get(GLIBC, []))
            r["ops_ratio_vs_glibc"] = stats.median(r["ops_ratio_vs_glibc_rounds"])
            # Peak RSS does not drift with the machine's load: a ratio of medians.
            r["rss_ratio_vs_mimalloc"] = stats.ratio(r["rss_peak_kib"], mim["rss_peak_kib"] if mim else None)
        rows += mine
    return rows


def summarise(samples: dict[str, list[dict[str, Any]]]) -> list[Row]:
    """Every part's rows: spread, ring, cachegrind, mix, pattern."""
    return (_spread_rows(samples.get("spread", [])) + _ring_rows(samples.get("ring", []))
            + _cachegrind_rows(samples.get("cachegrind", [])) + _mix_rows(samples.get("mix", []))
            + _pattern_rows(samples.get("patterns", [])))


def rows_of(rows: Sequence[Row], part: str, **match: Any) -> list[Row]:
    return [r for r in rows if r["part"] == part and all(r.get(k) == v for k, v in match.items())]


# ---- targets -----------------------------------------------------------------

def _target(tid: str, description: str, passed: bool | None, detail: str,
            inconclusive: bool = False) -> dict[str, Any]:
    """A verdict: passed True/False, or None with inconclusive False (not
    measured) or True (measured, but too few or too noisy rounds to say)."""
    return {"id": tid, "description": description, "passed": passed, "detail": detail,
            "inconclusive": inconclusive}


def evaluate_targets(rows: Sequence[Row], subject: str = SUBJECT) -> list[dict[str, Any]]:
    """The issue's six targets for `subject`, judged on what was measured.

    Each result: {id, description, passed: True | False | None (not
    measured), detail}.  A comparison target is judged against whichever of
    its reference allocators were measured, and says which.
    """
    return ([_spread_target(rows, subject), _ring_target(rows, subject),
             _cachegrind_target(rows, subject), _st_target(rows, subject),
             _mt_target(rows, subject), _rss_target(rows, subject)]
            + [_pattern_target(rows, subject, p) for p in PATTERNS])


def _spread_target(rows: Sequence[Row], subject: str) -> dict[str, Any]:
    desc = (f"index spread: at every size >= {SPREAD_MIN_SETS} distinct L1 sets and "
            f"<= {SPREAD_MAX_PER_SET} blocks on any set")
    mine = rows_of(rows, "spread", allocator=subject)
    if not mine:
        return _target("index-spread", desc, None, f"{subject} not measured")
    bad = [r for r in mine if not r["meets_target"]]
    worst = min(mine, key=lambda r: (r["sets_used"], -r["max_per_set"]))
    detail = (f"{len(mine) - len(bad)}/{len(mine)} (state, size) pairs meet it; fewest sets "
              f"{worst['sets_used']} at {worst['size']} B ({worst['state']}), most on one set "
              f"{max(r['max_per_set'] for r in mine)}")
    if bad:
        detail += "; failing: " + ", ".join(f"{r['size']} B {r['state']} {r['sets_used']}/{r['max_per_set']}"
                                            for r in bad[:6]) + (" ..." if len(bad) > 6 else "")
    return _target("index-spread", desc, not bad, detail)


def _ring_target(rows: Sequence[Row], subject: str) -> dict[str, Any]:
    desc = (f"ring traversal: ns/node within {(RING_MAX_RATIO - 1) * 100:.0f}% of the "
            f"{RING_BASE_SIZE} B figure for every size up to {RING_MAX_SIZE} B")
    mine = [r for r in rows_of(rows, "ring", allocator=subject)
            if r["size"] <= RING_MAX_SIZE and r.get("ratio_vs_64") is not None]
    if not mine:
        return _target("ring", desc, None, f"{subject} not measured")
    worst = max(mine, key=lambda r: r["ratio_vs_64"])
    return _target("ring", desc, all(r["ratio_vs_64"] <= RING_MAX_RATIO for r in mine),
                   f"worst {worst['size']} B: {worst['ratio_vs_64']:.2f}x "
                   f"({worst['ns_per_node']:.2f} ns/node)")


def _cachegrind_target(rows: Sequence[Row], subject: str) -> dict[str, Any]:
    desc = (f"simulated L1 misses at {CG_SIZE} B >= {CG_MIN_FACTOR:g}x fewer than "
            f"{'/'.join(INDEX_UNAWARE)}")
    mine = rows_of(rows, "cachegrind", allocator=subject, size=CG_SIZE)
    if not mine:
        return _target("cachegrind", desc, None, f"{subject} not simulated")
    parts, ok = [], True
    for r in mine:
        others = [o for o in rows_of(rows, "cachegrind", size=CG_SIZE, d1=r["d1"])
                  if o["allocator"] in INDEX_UNAWARE]
        if not others:
            continue
        ok = ok and all(r["d1_misses_per_lap"] * CG_MIN_FACTOR <= o["d1_misses_per_lap"]
                        for o in others)
        vs = ", ".join(f"{o['allocator']} {o['d1_misses_per_lap']:.1f} ({_factor(o, r)})"
                       for o in others)
        parts.append(f"D1 {r['d1']}: {subject} {r['d1_misses_per_lap']:.2f} misses/lap vs {vs}")
    if not parts:
        return _target("cachegrind", desc, None, f"none of {', '.join(INDEX_UNAWARE)} simulated")
    return _target("cachegrind", desc, ok, "; ".join(parts))


def _factor(other: Row, mine: Row) -> str:
    """How many times more misses other has than mine ('inf x' when mine has none)."""
    f = stats.ratio(other["d1_misses_per_lap"], mine["d1_misses_per_lap"])
    if f is None:
        return "inf x" if other["d1_misses_per_lap"] > 0 else "both none"
    return f"{f:.0f}x"


def scenario(r: Row) -> str:
    """A mix row's scenario as tables and verdicts name it: "local 4T"."""
    return f"{r['pattern']} {r['threads']}T"


def _st_target(rows: Sequence[Row], subject: str) -> dict[str, Any]:
    desc = (f"single-thread throughput >= {ST_MIN_RATIO_VS_BEST:g}x the best of "
            f"{', '.join(BASELINES)} measured")
    r = next(iter(rows_of(rows, "mix", allocator=subject, pattern="local", threads=1)), None)
    if r is None or r.get("ops_ratio_vs_best") is None:
        return _target("single-thread", desc, None, f"{subject} or every baseline not measured")
    passed = bound_verdict(r["ops_ratio_vs_best"], r["ops_ratio_vs_best_rounds"],
                           lambda x: x >= ST_MIN_RATIO_VS_BEST)
    return _verdict("single-thread", desc, passed, f"{r['ops_ratio_vs_best']:.2f}x {r['best_baseline']}",
                    r["rounds"])


def _mt_target(rows: Sequence[Row], subject: str) -> dict[str, Any]:
    desc = "multithread throughput >= glibc in every multithreaded scenario"
    mine = [r for r in rows_of(rows, "mix", allocator=subject)
            if r["threads"] > 1 and r.get("ops_ratio_vs_glibc") is not None]
    if not mine:
        return _target("multithread", desc, None, f"{subject} or glibc not measured")
    verdicts = [bound_verdict(r["ops_ratio_vs_glibc"], r["ops_ratio_vs_glibc_rounds"],
                              lambda x: x >= MT_MIN_RATIO_VS_GLIBC) for r in mine]
    return _verdict("multithread", desc, _all_of(verdicts),
                    ", ".join(f"{scenario(r)} {r['ops_ratio_vs_glibc']:.2f}x" for r in mine),
                    min(r["rounds"] for r in mine))


def _rss_target(rows: Sequence[Row], subject: str) -> dict[str, Any]:
    desc = f"peak RSS <= {RSS_MAX_RATIO_VS_MIMALLOC:g}x {RSS_ALLOCATOR}'s in every scenario"
    mine = [r for r in rows_of(rows, "mix", allocator=subject)
            if r.get("rss_ratio_vs_mimalloc") is not None]
    if not mine:
        return _target("peak-rss", desc, None, f"{subject} or {RSS_ALLOCATOR} not measured")
    return _target("peak-rss", desc,
                   all(r["rss_ratio_vs_mimalloc"] <= RSS_MAX_RATIO_VS_MIMALLOC for r in mine),
                   ", ".join(f"{scenario(r)} {r['rss_ratio_vs_mimalloc']:.2f}x" for r in mine))


def bound_verdict(median: float, rounds: Sequence[float], ok: Any) -> bool | None:
    """Judge a median ratio against a bound (ok(x) -> bool), knowing each
    round's ratio: True when the median meets it; None (inconclusive) with
    fewer than MIN_ROUNDS_FOR_CONFIDENCE rounds, or when it misses but the
    rounds spread wider than NOISY_SPREAD and one of them meets it; False
    otherwise."""
    if len(rounds) < MIN_ROUNDS_FOR_CONFIDENCE:
        return None
    if ok(median):
        return True
    noisy = (stats.spread(rounds) or 0) > NOISY_SPREAD
    return None if noisy and any(ok(r) for r in rounds) else False


def _pattern_target(rows: Sequence[Row], subject: str, pattern: str) -> dict[str, Any]:
    desc = (f"{pattern}: ops/s within {PATTERN_MAX_SLOWDOWN:g}x of the best of {', '.join(BASELINES)} "
            f"and peak RSS within {PATTERN_MAX_RSS:g}x of the lowest")
    r = next(iter(rows_of(rows, "pattern", allocator=subject, pattern=pattern)), None)
    if r is None or r.get("ops_ratio_vs_best") is None or r.get("rss_ratio_vs_best") is None:
        return _target(f"pattern-{pattern}", desc, None, f"{subject} or every baseline not measured")
    ops = bound_verdict(r["ops_ratio_vs_best"], r["ops_ratio_vs_best_rounds"],
                        lambda x: x * PATTERN_MAX_SLOWDOWN >= 1)
    rss = bound_verdict(r["rss_ratio_vs_best"], r["rss_ratio_vs_best_rounds"],
                        lambda x: x <= PATTERN_MAX_RSS)
    detail = (f"{scenario(r)}: {r['ops_ratio_vs_best']:.2f}x {r['best_baseline']}'s ops/s, "
              f"{r['rss_ratio_vs_best']:.2f}x {r['best_rss_baseline']}'s peak RSS, "
              f"{r['rounds']} round(s)")
    return _verdict(f"pattern-{pattern}", desc, _all_of([ops, rss]), detail, r["rounds"])


def _all_of(verdicts: Sequence[bool | None]) -> bool | None:
    """False if any verdict is False, else None (inconclusive) if any is, else True."""
    return False if False in verdicts else None if None in verdicts else True


def _verdict(tid: str, description: str, passed: bool | None, detail: str, rounds: int) -> dict[str, Any]:
    """A measured target's result; None is inconclusive, and says why."""
    if passed is None:
        detail += " (inconclusive: " + ("too few rounds" if rounds < MIN_ROUNDS_FOR_CONFIDENCE
                                        else "rounds too far apart") + ")"
    return _target(tid, description, passed, detail, inconclusive=passed is None)


# ---- caveats -----------------------------------------------------------------

def warnings_for(rows: Sequence[Row]) -> list[str]:
    """Caveats a reader should see next to the figures."""
    out: list[str] = []
    timed = [r for r in rows if r["part"] in ("ring", "mix", "pattern")]
    few = sorted({r["rounds"] for r in timed if r["rounds"] < MIN_ROUNDS_FOR_CONFIDENCE})
    if few:
        out.append(f"only {few[0]} round(s) per timed figure: medians of fewer than "
                   f"{MIN_ROUNDS_FOR_CONFIDENCE} runs on a shared machine are noisy")
    noisy = [r for r in timed if (r.get("spread") or 0) > 0.25]
    if noisy:
        names = ", ".join(f"{r['allocator']} " + (f"{r['size']} B" if r["part"] == "ring" else scenario(r))
                          for r in noisy[:6])
        out.append(f"rounds disagree by more than 25% for {names}" + (" ..." if len(noisy) > 6 else ""))
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

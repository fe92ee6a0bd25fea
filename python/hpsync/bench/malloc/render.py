# SPDX-License-Identifier: MIT
"""Text report of `bench malloc`: the allocators, one table per part, targets."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ... import render as text
from ... import schema
from . import analyse as A

Cell = Callable[[Mapping[str, Any]], str]


def _kib(value: float | None) -> str:
    return "-" if value is None else f"{value / 1024:.1f} MiB"


def _grid(rows: Sequence[Mapping[str, Any]], key: str, allocs: Sequence[str], cell: Cell,
          first: str) -> str:
    """One line per value of key and one column per allocator; cell(row)
    formats an allocator's row (absent rows show '-')."""
    body = []
    for k in sorted({r[key] for r in rows}):
        by = {r["allocator"]: r for r in rows if r[key] == k}
        body.append([str(k)] + [cell(by[a]) if a in by else "-" for a in allocs])
    return text.table([first] + list(allocs), body, [True] * (len(allocs) + 1))


def _mix_table(mix: Sequence[Mapping[str, Any]], allocs: Sequence[str], cell: Cell) -> str:
    """One line per allocator and one column per mix scenario."""
    order = list(dict.fromkeys(A.scenario(r) for r in mix))
    body = []
    for a in allocs:
        by = {A.scenario(r): r for r in mix if r["allocator"] == a}
        body.append([a] + [cell(by[s]) if s in by else "-" for s in order])
    return text.table(["allocator"] + order, body, [False] + [True] * len(order))


def render(run: Mapping[str, Any]) -> str:
    extra = run["extra"]
    rows = extra["rows"]
    params, l1 = run.get("params", {}), extra.get("l1d", {})
    allocs = A.ordered(r["allocator"] for r in rows)
    out = [f"hpsync bench malloc: {text.context_line(schema.first_context(run))}", ""]
    for name, info in extra.get("allocators", {}).items():
        where = info.get("library") or "no preload"
        out.append(f"  {name:<9} {info['status']:<9} {where if info['status'] == 'measured' else info['note']}")
    out.append("")

    spread = A.rows_of(rows, "spread")
    if spread:
        def both(r: Mapping[str, Any]) -> str:
            warm = next(iter(A.rows_of(spread, "spread", allocator=r["allocator"], size=r["size"],
                                       state="warm")), None)
            return " ".join(f"{x['sets_used']}/{x['max_per_set']}{'' if x['meets_target'] else '*'}"
                            for x in (r, warm) if x)
        out.append(f"1. Index spread: {A.NODES} back-to-back blocks per size: L1 sets used / most "
                   f"blocks on one set, in the fresh process and after {params.get('warmup', '?')} mixed\n"
                   f"   operations (L1 {text.cache_text(l1)}; worst of {params.get('rounds', '?')} round(s); "
                   f"* = not >= {A.SPREAD_MIN_SETS} sets and <= {A.SPREAD_MAX_PER_SET} per set)")
        out.append(_grid([r for r in spread if r["state"] == "fresh"], "size", allocs, both, "size B"))
        out.append("")

    ring = A.rows_of(rows, "ring")
    if ring:
        out.append(f"2. Ring traversal, {A.NODES} nodes in random cyclic order, a mutex per lap: "
                   f"ns per node (x the {A.RING_BASE_SIZE} B ring),\n   median of "
                   f"{params.get('rounds', '?')} interleaved round(s), each the best of "
                   f"{params.get('batches', '?')} batches of {params.get('laps', '?')} laps")
        out.append(_grid(ring, "size", allocs,
                         lambda r: f"{r['ns_per_node']:.2f} ({text.ratio(r.get('ratio_vs_64'))})"
                         + (f" {r['pages']}p" if r.get("pages") is not None else ""), "size B"))
        if any(r.get("pages") is not None for r in ring):
            out.append("   Np: the pages the first lines span; past the data TLB's reach (`hpsync "
                       "characterize --only tlb`) no placement keeps the 64 B ring's time")
        at = [r for r in ring if r["size"] == A.CG_SIZE]
        if at:
            out.append(f"   laps/s at {A.CG_SIZE} B: "
                       + ", ".join(f"{r['allocator']} {text.si(r['laps_per_sec'])}" for r in at))
        out.append("")

    cg = A.rows_of(rows, "cachegrind")
    cgdoc = extra.get("cachegrind", {})
    for d1 in sorted({r["d1"] for r in cg}):
        mine = [r for r in cg if r["d1"] == d1]
        out.append(f"3. Simulated L1 (cachegrind --D1={d1}, {' and '.join(mine[0]['labels'])}; "
                   f"--LL={cgdoc.get('ll', '?')}): D1 misses per lap of the ring, from "
                   f"{' and '.join(map(str, cgdoc.get('laps', [])))}-lap runs")
        out.append(_grid(mine, "size", allocs, lambda r: f"{r['d1_misses_per_lap']:.1f}", "size B"))
        out.append("")

    rounds = params.get("mix_rounds", "?")
    mix = A.rows_of(rows, "mix")
    if mix:
        out.append(f"4. malloc/free mix: operations per second (x glibc, median of per-round ratios), "
                   f"{params.get('duration_ms', '?')} ms, median of {rounds} round(s)")
        out.append(_mix_table(mix, allocs, lambda r: f"{text.si(r['ops_per_sec'])} "
                                                     f"({text.ratio(r.get('ops_ratio_vs_glibc'))})"))
        out.append("")
        out.append(f"5. Peak RSS of the process (VmHWM), median of {rounds} round(s) (x {A.RSS_ALLOCATOR})")
        out.append(_mix_table(mix, allocs, lambda r: f"{_kib(r['rss_peak_kib'])} "
                                                     f"({text.ratio(r.get('rss_ratio_vs_mimalloc'))})"))
        out.append("")

    pat = A.rows_of(rows, "pattern")
    if pat:
        out.append(f"6. Patterns of existing benchmarks: operations per second (x the fastest of "
                   f"{', '.join(A.BASELINES)}, median of per-round ratios),\n   "
                   f"{params.get('duration_ms', '?')} ms, median of {rounds} round(s)")
        out.append(_mix_table(pat, allocs, lambda r: f"{text.si(r['ops_per_sec'])} "
                                                     f"({text.ratio(r.get('ops_ratio_vs_best'))})"))
        out.append("")
        out.append("7. Peak RSS of the patterns (VmHWM), median of rounds (x the lowest of the same)")
        out.append(_mix_table(pat, allocs, lambda r: f"{_kib(r['rss_peak_kib'])} "
                                                     f"({text.ratio(r.get('rss_ratio_vs_best'))})"))
        out.append("")
    out.extend(text.targets_section(run))
    return "\n".join(out)

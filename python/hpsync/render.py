# SPDX-License-Identifier: MIT
"""Text rendering for humans.  Every function takes finished data and returns a string."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from . import locks
from .store import RunSummary


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """Columns padded to their widest cell; right-aligned where asked."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        out = [str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def si(value: float | None) -> str:
    """12345678 -> '12.35M'."""
    if value is None:
        return "-"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= div:
            return f"{value / div:.2f}{suffix}"
    return f"{value:.0f}"


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def verdict(passed: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "n/a "}[passed]


def context_line(ctx: dict[str, Any]) -> str:
    if not ctx:
        return "context: unknown"
    return (f"host {ctx.get('host', '?')}, {ctx.get('cpu_model', '?')}, "
            f"{ctx.get('cores', '?')} cores / {ctx.get('pus', '?')} PUs, "
            f"glibc {ctx.get('glibc', '?')}, {ctx.get('compiler', '?')} {ctx.get('compile_flags', '')}, "
            f"commit {ctx.get('git_commit', '?')}")


def targets_section(doc: dict[str, Any]) -> list[str]:
    """The closing "Targets" lines of a benchmark report: one verdict a target,
    then the document's warnings as notes."""
    out = ["Targets"]
    for t in doc.get("targets", []):
        # Measured but too few or too noisy rounds to decide: not a FAIL.
        word = "INCONCLUSIVE" if t.get("inconclusive") else verdict(t["passed"])
        out.append(f"  {word}  {t['description']}: {t['detail']}")
    for w in doc.get("warnings", []):
        out.append(f"  note: {w}")
    return out


def bench_locks(doc: dict[str, Any]) -> str:
    """The `bench locks` report: uncontended table, throughput table, targets."""
    rows: list[dict[str, Any]] = doc["rows"]
    params = doc.get("params", {})
    out = [f"hpsync bench locks: {context_line(doc.get('context', {}))}", ""]

    unc = [r for r in rows if r["mode"] == "uncontended"]
    if unc:
        out.append(f"Uncontended lock+unlock, 1 thread, in a process that has created a thread "
                   f"(median of {params.get('rounds', '?')} interleaved rounds)")
        out.append(table(
            ["lock", "ns/op", "vs glibc", "single-threaded process ns/op"],
            [[r["lock"], f"{r['ns_per_op']:.2f}", ratio(r.get("ns_ratio_vs_glibc")),
              f"{r['ns_per_op_single_threaded']:.2f}"] for r in unc],
            [False, True, True, True]))
        out.append("")

    tp = [r for r in rows if r["mode"] == "throughput"]
    if tp:
        threads = sorted({r["threads"] for r in tp})
        lock_order = [c for c in locks.CONFIGS if any(r["lock"] == c for r in tp)]
        out.append(f"Throughput, ops/s with one shared mutex (x glibc), {params.get('duration_ms', '?')} ms, "
                   f"median of {params.get('tp_rounds', '?')} round(s)")
        body = []
        for lock in lock_order:
            cells = [lock]
            for t in threads:
                r = locks.find_row(tp, "throughput", lock, t)
                if r is None:
                    cells.append("-")
                elif lock == locks.BASELINE:
                    cells.append(si(r["ops_per_sec"]))
                else:
                    cells.append(f"{si(r['ops_per_sec'])} ({ratio(r.get('ops_ratio_vs_glibc'))})")
            body.append(cells)
        out.append(table(["lock"] + [f"{t} thr" for t in threads], body,
                         [False] + [True] * len(threads)))
        out.append("")

    out.extend(targets_section(doc))
    return "\n".join(out)


def _signed(value: float | None, unit: str = " ns") -> str:
    return "-" if value is None else f"{value:+.2f}{unit}"


def _per(stats: dict[str, Any], key: str) -> str:
    value = stats.get(key)
    return "-" if value is None else f"{value:.2f}"


def bench_elide(doc: dict[str, Any]) -> str:
    """The `bench elide` report: RTM verdict first, then each figure, then targets."""
    rows: list[dict[str, Any]] = doc["rows"]
    params = doc.get("params", {})
    out = [f"hpsync bench elide: {context_line(doc.get('context', {}))}", "",
           doc.get("rtm_statement", "RTM: unknown"), ""]

    ov = [r for r in rows if r["mode"] == "layer-overhead"]
    if ov:
        out.append(f"1. Elision layer cost, uncontended lock+unlock, 1 thread, backend off: "
                   f"hps_elide_lock/unlock vs hps_lock_lock/unlock on the same lock, one process, "
                   f"median of {params.get('reps', '?')} interleaved batches of {params.get('iters', '?')}")
        body = []
        for r in ov:
            if r["variant"] != "elided":
                continue
            body.append([r["lock"], f"{r['plain_ns_per_op']:.2f}", f"{r['ns_per_op']:.2f}",
                         _signed(r.get("diff_ns_vs_plain")), ratio(r.get("ratio_vs_plain")),
                         _signed(r.get("paired_diff_ns_median"))])
        out.append(table(["lock", "plain ns/op", "elided ns/op", "difference", "ratio",
                          "paired median diff"], body, [False, True, True, True, True, True]))
        out.append("")

    ip = [r for r in rows if r["mode"] == "interposer-overhead"]
    if ip:
        out.append(f"2. Through the interposer: pthread_mutex_lock/unlock (adaptive), uncontended, "
                   f"median of {params.get('interposer_rounds', '?')} interleaved processes (best of "
                   f"{params.get('interposer_batches', '?')} batches each)")
        out.append(table(
            ["setting", "backend", "ns/op", "difference", "ratio"],
            [[r.get("setting", r["variant"]), r.get("backend", "?") if r["variant"] == "elided" else "-",
              f"{r['ns_per_op']:.2f}", _signed(r.get("diff_ns_vs_plain")),
              ratio(r.get("ratio_vs_plain"))] for r in ip],
            [False, False, True, True, True]))
        out.append("")

    pol = [r for r in rows if r["mode"] == "policy"]
    el = [r for r in rows if r["mode"] == "elided-uncontended" and r["variant"] == "elided"]
    if pol or el:
        out.append("3. Policy engine")
        for r in pol:
            shares = r.get("action_shares", {})
            mix = ", ".join(f"{k} {v * 100:.0f}%" for k, v in shares.items())
            out.append(f"   hps_elide_decide: {r['ns_per_op']:.2f} ns per call (min {r['ns_per_op_min']:.2f}) "
                       f"over a mix of abort statuses ({mix}); the same loop calling an empty "
                       f"function: {r['loop_ns_per_op']:.2f} ns, so the decision itself is "
                       f"~{max(r['net_ns_per_decision'], 0.0):.2f} ns")
        if el:
            out.append("   Full elided lock+unlock, 1 thread, adaptive (per acquisition: transactions "
                       "begun, commits, aborts, fallbacks to the lock):")
            body = []
            for r in el:
                st = r.get("per_acquisition", {})
                body.append([r.get("setting") or r["workload"], f"{r['ns_per_op']:.2f}",
                             f"{r['plain_ns_per_op']:.2f}", ratio(r.get("ratio_vs_plain")),
                             _per(st, "attempts"), _per(st, "commits"), _per(st, "aborts"),
                             _per(st, "fallbacks")])
            out.append(textwrap.indent(table(
                ["HPSYNC_ELIDE_BACKEND", "elided ns/op", "plain ns/op", "ratio",
                 "begun", "commits", "aborts", "fallbacks"], body, [False] + [True] * 7), "   "))
            if any(r.get("emulated") for r in el):
                out.append("   (inject: the injected test backend replays abort statuses; a "
                           "'committed' section really takes the lock, so this is the policy's "
                           "and bookkeeping's cost, not a hardware transaction's)")
        out.append("")

    tp = [r for r in rows if r["mode"] == "throughput"]
    if tp:
        out.append(f"4. Throughput, one lock over a table of counters, elided (RTM) vs plain, "
                   f"{params.get('duration_ms', '?')} ms, median of {params.get('tp_rounds', '?')} round(s)")
        body = []
        for r in tp:
            if r["variant"] != "elided":
                continue
            plain = next((p for p in tp if p["workload"] == r["workload"]
                          and p["threads"] == r["threads"] and p["variant"] == "plain"), None)
            body.append([r["workload"], str(r["threads"]), si(plain and plain["ops_per_sec"]),
                         si(r["ops_per_sec"]), ratio(r.get("ratio_vs_plain"))])
        out.append(table(["workload", "threads", "plain ops/s", "elided ops/s", "elided/plain"],
                         body, [False, True, True, True, True]))
    else:
        out.append("4. Throughput elided vs plain (low- and high-conflict workloads): not measured, "
                   "RTM is not usable on this machine")
    out.append("")

    out.extend(targets_section(doc))
    return "\n".join(out)


def runs(summaries: Sequence[RunSummary]) -> str:
    if not summaries:
        return "no runs stored yet"
    return table(["id", "kind", "created (UTC)", "host"],
                 [[str(s.id), s.kind, s.created, s.host] for s in summaries],
                 [True, False, False, False])


def _fmt_size(n: Any) -> str:
    if not n:
        return "?"
    n = int(n)
    for div, suffix in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div and n % div == 0:
            return f"{n // div} {suffix}"
    return f"{n} B"


def _cache(c: dict[str, Any] | None) -> str:
    if not c or not c.get("size"):
        return "unknown"
    ways = c.get("ways")
    ways_s = "fully associative" if ways == -1 else f"{ways}-way" if ways else "?-way"
    sets = f", {c['sets']} sets" if c.get("sets") else ""
    return f"{_fmt_size(c['size'])}, {ways_s}, {c.get('line') or '?'} B lines{sets}"


def _yes(v: Any) -> str:
    return "yes" if v else "no"


def _setting_value(s: dict[str, Any]) -> str:
    if s.get("value") is not None:
        return f"{s['value'] or '(empty)'} (set)"
    return f"{s.get('default') or '(empty)'} (default)"


def doctor(doc: dict[str, Any]) -> str:
    """The `doctor` report: one aligned "key: value" line per fact."""
    cpu, tsx, tsc = doc.get("cpu", {}), doc.get("tsx", {}), doc.get("tsc", {})
    clock, topo, osi = doc.get("clock", {}), doc.get("topology", {}), doc.get("os", {})
    hv = doc.get("hypervisor", {})
    peers = doc.get("peers", {})
    sections: list[tuple[str, list[tuple[str, str]]]] = [
        ("CPU", [
            ("model", f"{cpu.get('model_name', '?')} ({cpu.get('vendor', '?')} family "
                      f"{cpu.get('family', '?')} model {cpu.get('model', '?')} stepping {cpu.get('stepping', '?')})"),
            ("hypervisor", hv.get("vendor") or "?" if hv.get("present") else "none"),
            ("RTM / HLE", f"{_yes(tsx.get('rtm'))} / {_yes(tsx.get('hle'))}"),
            ("RTM_ALWAYS_ABORT", _yes(tsx.get("rtm_always_abort"))),
            ("RTM usable", _yes(tsx.get("rtm_usable"))
             + ("" if tsx.get("rtm_usable") else " (no hardware lock elision on this machine)")),
        ]),
        ("Time", [
            ("TSC", f"{'invariant' if tsc.get('invariant') else 'NOT invariant'}, "
                    f"{tsc.get('ghz', 0):.4f} GHz measured against CLOCK_MONOTONIC"),
            ("TSC step", f"{tsc.get('step_ticks', '?')} ticks = {tsc.get('step_ns', 0):.2f} ns "
                         f"(most frequent back-to-back difference; smallest recurring: "
                         f"{tsc.get('min_step_ticks', '?')})"),
            ("clock source", str(clock.get("clocksource", "?"))),
            ("clock_gettime", f"{clock.get('clock_gettime_ns', 0):.1f} ns per call, "
                              f"step {clock.get('step_ns', '?')} ns"),
        ]),
        ("Topology (hwloc)", [
            ("packages / cores / PUs", f"{topo.get('packages', '?')} / {topo.get('cores', '?')} / {topo.get('pus', '?')}"),
            ("NUMA nodes", str(topo.get("numa_nodes", "?"))),
            ("L1d", _cache(topo.get("l1d"))),
            ("L2", _cache(topo.get("l2"))),
            ("L3", _cache(topo.get("l3"))),
        ]),
        ("System", [
            ("kernel", str(osi.get("kernel", "?"))),
            ("glibc", str(osi.get("glibc", "?"))),
            ("build", f"{doc.get('context', {}).get('compiler', '?')} "
                      f"{doc.get('context', {}).get('compile_flags', '')}, commit "
                      f"{doc.get('context', {}).get('git_commit', '?')}"),
        ]),
        ("Peer libraries", [
            (name, ", ".join(p["paths"]) if p.get("found") else "not found")
            for name, p in peers.get("libraries", {}).items()
        ] + [("libfabric providers",
              ", ".join(peers.get("fabric_providers", [])) or
              peers.get("fabric", {}).get("error") or "none with RMA and atomics")]),
        ("Settings (environment)", [
            (s["name"], f"{_setting_value(s)}  - {s['doc']}")
            for s in doc.get("settings", [])
        ]),
    ]
    width = max(len(k) for _, items in sections for k, _ in items)
    out: list[str] = []
    for title, items in sections:
        out.append(title)
        out.extend(f"  {k.ljust(width)}  {v}" for k, v in items)
        out.append("")
    return "\n".join(out).rstrip()


# ---- bench malloc -----------------------------------------------------------

def _kib(value: float | None) -> str:
    return "-" if value is None else f"{value / 1024:.1f} MiB"


def _grid(rows: Sequence[dict[str, Any]], key: str, allocs: Sequence[str],
          cell: Any, first: str) -> str:
    """A table with one line per value of key and one column per allocator;
    cell(row) formats an allocator's row (absent rows show '-')."""
    keys = sorted({r[key] for r in rows})
    body = []
    for k in keys:
        by = {r["allocator"]: r for r in rows if r[key] == k}
        body.append([str(k)] + [cell(by[a]) if a in by else "-" for a in allocs])
    return table([first] + list(allocs), body, [True] * (len(allocs) + 1))


def _mix_table(mix: Sequence[dict[str, Any]], allocs: Sequence[str], cell: Any) -> str:
    """A table with one line per allocator and one column per mix scenario;
    cell(row) formats an allocator's row (absent rows show '-')."""
    from . import mallocs
    order = list(dict.fromkeys(mallocs.scenario(r) for r in mix))
    body = []
    for a in allocs:
        by = {mallocs.scenario(r): r for r in mix if r["allocator"] == a}
        body.append([a] + [cell(by[s]) if s in by else "-" for s in order])
    return table(["allocator"] + order, body, [False] + [True] * len(order))


def bench_malloc(doc: dict[str, Any]) -> str:
    """The `bench malloc` report: allocators, then one table per part, then targets."""
    from . import mallocs
    rows: list[dict[str, Any]] = doc["rows"]
    params, l1 = doc.get("params", {}), doc.get("l1d", {})
    allocs = mallocs.ordered(r["allocator"] for r in rows)
    out = [f"hpsync bench malloc: {context_line(doc.get('context', {}))}", ""]
    for name, info in doc.get("allocators", {}).items():
        where = info.get("library") or "no preload"
        out.append(f"  {name:<9} {info['status']:<9} {where if info['status'] == 'measured' else info['note']}")
    out.append("")

    spread = mallocs.rows_of(rows, "spread")
    if spread:
        def both(r: dict[str, Any]) -> str:
            warm = next(iter(mallocs.rows_of(spread, "spread", allocator=r["allocator"],
                                             size=r["size"], state="warm")), None)
            return " ".join(f"{x['sets_used']}/{x['max_per_set']}{'' if x['meets_target'] else '*'}"
                            for x in (r, warm) if x)
        out.append(f"1. Index spread: {mallocs.NODES} back-to-back blocks per size: L1 sets used / most "
                   f"blocks on one set, in the fresh process and after {params.get('warmup', '?')} mixed\n"
                   f"   operations (L1 {_cache(l1)}; worst of {params.get('rounds', '?')} round(s); "
                   f"* = not >= {mallocs.SPREAD_MIN_SETS} sets and <= {mallocs.SPREAD_MAX_PER_SET} per set)")
        out.append(_grid([r for r in spread if r["state"] == "fresh"], "size", allocs, both, "size B"))
        out.append("")

    ring = mallocs.rows_of(rows, "ring")
    if ring:
        out.append(f"2. Ring traversal, {mallocs.NODES} nodes in random cyclic order, a mutex per lap: "
                   f"ns per node (x the {mallocs.RING_BASE_SIZE} B ring),\n   median of "
                   f"{params.get('rounds', '?')} interleaved round(s), each the best of "
                   f"{params.get('batches', '?')} batches of {params.get('laps', '?')} laps")
        out.append(_grid(ring, "size", allocs,
                         lambda r: f"{r['ns_per_node']:.2f} ({ratio(r.get('ratio_vs_64'))})", "size B"))
        at = [r for r in ring if r["size"] == mallocs.CG_SIZE]
        if at:
            out.append(f"   laps/s at {mallocs.CG_SIZE} B: "
                       + ", ".join(f"{r['allocator']} {si(r['laps_per_sec'])}" for r in at))
        out.append("")

    cg = mallocs.rows_of(rows, "cachegrind")
    cgdoc = doc.get("cachegrind", {})
    for d1 in sorted({r["d1"] for r in cg}):
        mine = [r for r in cg if r["d1"] == d1]
        out.append(f"3. Simulated L1 (cachegrind --D1={d1}, {' and '.join(mine[0]['labels'])}; "
                   f"--LL={cgdoc.get('ll', '?')}): D1 misses per lap of the ring, from "
                   f"{' and '.join(map(str, cgdoc.get('laps', [])))}-lap runs")
        out.append(_grid(mine, "size", allocs, lambda r: f"{r['d1_misses_per_lap']:.1f}", "size B"))
        out.append("")

    mix = mallocs.rows_of(rows, "mix")
    if mix:
        out.append(f"4. malloc/free mix: operations per second (x glibc, median of per-round ratios), "
                   f"{params.get('duration_ms', '?')} ms, median of {params.get('mix_rounds', '?')} round(s)")
        out.append(_mix_table(mix, allocs,
                              lambda r: f"{si(r['ops_per_sec'])} ({ratio(r.get('ops_ratio_vs_glibc'))})"))
        out.append("")
        out.append(f"5. Peak RSS of the process (VmHWM), median of {params.get('mix_rounds', '?')} "
                   f"round(s) (x {mallocs.RSS_ALLOCATOR})")
        out.append(_mix_table(mix, allocs,
                              lambda r: f"{_kib(r['rss_peak_kib'])} ({ratio(r.get('rss_ratio_vs_mimalloc'))})"))
        out.append("")

    pat = mallocs.rows_of(rows, "pattern")
    if pat:
        out.append(f"6. Patterns of existing benchmarks: operations per second (x the fastest of "
                   f"{', '.join(mallocs.BASELINES)}, median of per-round ratios),\n   "
                   f"{params.get('duration_ms', '?')} ms, median of {params.get('mix_rounds', '?')} round(s)")
        out.append(_mix_table(pat, allocs,
                              lambda r: f"{si(r['ops_per_sec'])} ({ratio(r.get('ops_ratio_vs_best'))})"))
        out.append("")
        out.append("7. Peak RSS of the patterns (VmHWM), median of rounds (x the lowest of the same)")
        out.append(_mix_table(pat, allocs,
                              lambda r: f"{_kib(r['rss_peak_kib'])} ({ratio(r.get('rss_ratio_vs_best'))})"))
        out.append("")

    out.extend(targets_section(doc))
    return "\n".join(out)

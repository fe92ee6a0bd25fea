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
        out.append(f"  {verdict(t['passed'])}  {t['description']}: {t['detail']}")
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
              ("none listed" if peers.get("fi_info") else "fi_info not installed"))]),
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

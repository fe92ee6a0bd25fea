# SPDX-License-Identifier: MIT
"""Text rendering for humans.  Every function takes finished data and returns a string."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

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


def context_line(ctx: Mapping[str, Any]) -> str:
    if not ctx:
        return "context: unknown"
    return (f"host {ctx.get('host', '?')}, {ctx.get('cpu_model', '?')}, "
            f"{ctx.get('cores', '?')} cores / {ctx.get('pus', '?')} PUs, "
            f"glibc {ctx.get('glibc', '?')}, {ctx.get('compiler', '?')} {ctx.get('compile_flags', '')}, "
            f"commit {ctx.get('git_commit', '?')}")


def targets_section(run: Mapping[str, Any]) -> list[str]:
    """The closing "Targets" lines of a benchmark report: one verdict a target
    (PASS, FAIL, inconclusive: too few or too noisy rounds to decide, n/a:
    not measured), then the run's warnings as notes."""
    out = ["Targets"]
    for t in run.get("targets", []):
        out.append(f"  {t['verdict']:<12}  {t['description']}: {t['detail']}")
    for w in run.get("warnings", []):
        out.append(f"  note: {w}")
    return out


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


def cache_text(c: dict[str, Any] | None) -> str:
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
    peers, locks = doc.get("peers", {}), doc.get("locks", {})
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
            ("L1d", cache_text(topo.get("l1d"))),
            ("L2", cache_text(topo.get("l2"))),
            ("L3", cache_text(topo.get("l3"))),
        ]),
        ("System", [
            ("kernel", str(osi.get("kernel", "?"))),
            ("glibc", str(osi.get("glibc", "?"))),
            ("build", f"{doc.get('context', {}).get('compiler', '?')} "
                      f"{doc.get('context', {}).get('compile_flags', '')}, commit "
                      f"{doc.get('context', {}).get('git_commit', '?')}"),
        ]),
        ("Lock algorithms (HPSYNC_LOCK, --lock)", [
            (a["name"] + "".join(f" / {al}" for al in a.get("aliases", [])),
             a.get("description", "") + (" (default)" if a["name"] == locks.get("default") else ""))
            for a in locks.get("algorithms", [])
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

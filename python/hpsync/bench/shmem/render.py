# SPDX-License-Identifier: MIT
"""Text report of `bench shmem`: one table per group of tests with ratios
to hpsync-node, libfabric against bare libfabric, instruction counts,
launch times, targets."""

from __future__ import annotations

from typing import Any, Mapping

from ... import render as text
from ... import schema
from .analyse import COLL_TESTS, NPES, OFI_VARIANTS, SUBJECT, VARIANTS, bare_pairs, find

WIDTH = 19


def _fmt_us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 100 else f"{x:.1f}"


def render(run: Mapping[str, Any]) -> str:
    extra = run["extra"]
    rows = extra.get("rows", [])
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    params = run.get("params", {})
    load = params.get("load", 0)
    ctx = schema.first_context(run)
    out = [f"hpsync bench shmem: {ctx.get('host', '?')}, {ctx.get('pus', ctx.get('cpus', '?'))} CPUs, "
           f"{params.get('rounds', '?')} round(s) per variant"
           + (f", beside {load} busy loop(s)" if load else ""), ""]
    for name, info in extra.get("variants", {}).items():
        out.append(f"  {name:<19} {info['status']:<9} {info.get('note') or ''}")
    out.append("")
    head = f"  {'':<20}" + "".join(f"{v:>{WIDTH}}" for v in variants)

    def cell(r: Mapping[str, Any] | None, base: Mapping[str, Any] | None) -> str:
        if r is None:
            return f"{'-':>{WIDTH}}"
        if r["us"] is None:
            return f"{'did not finish':>{WIDTH}}"
        txt = _fmt_us(r["us"])
        if base and base is not r and base["us"]:
            txt += f" ({r['us'] / base['us']:.1f}x)"
        if r["dnf"]:
            txt += " !"
        return f"{txt:>{WIDTH}}"

    def table(title: str, keys: list[tuple[str, int, str]], npes: int = 2) -> None:
        if not any(find(rows, v, t, s, npes) for v in variants for t, s, _ in keys):
            return
        out.extend([title, head])
        for test, size, label in keys:
            base = find(rows, SUBJECT, test, size, npes)
            out.append(f"  {label:<20}" + "".join(cell(find(rows, v, test, size, npes), base)
                                                  for v in variants))
        out.append("")

    sizes = sorted({r["size"] for r in rows if r["test"] == "put_quiet"})
    table("put + quiet latency, us (x hpsync-node), median of rounds",
          [("put_quiet", s, f"{s} B") for s in sizes])
    table("get latency, us", [("get", s, f"{s} B") for s in sizes])
    bw = sorted({r["size"] for r in rows if r["test"] == "put_bw"})
    table("put_nbi bursts + quiet, us per message", [("put_bw", s, f"{s} B") for s in bw])
    table("8 B operations, us", [("pingpong", 8, "ping-pong (rt/2)"), ("put_rate", 8, "put in a burst"),
                                 ("add_rate", 8, "atomic add in a burst"), ("fetch_add", 8, "fetch-add"),
                                 ("cswap", 8, "compare-swap")])
    coll = [(t, s, t if t == "barrier" else f"{t} {s} B") for t, s in COLL_TESTS]
    for npes in NPES:
        table(f"collectives back to back at {npes} PEs, us per call", coll, npes)
    rates = [f"{r['variant']} {r['mops']:.1f} M/s" for r in rows if r["test"] == "put_rate" and r.get("mops")]
    if rates:
        out.append("8 B put rate: " + ", ".join(rates))
    bws = [f"{r['variant']} {r['mb_s']:.0f} MB/s" for r in rows
           if r["test"] == "put_bw" and r.get("mb_s") and r["size"] == max(bw or [0])]
    if bws:
        out.append(f"{max(bw)} B put bandwidth: " + ", ".join(bws))
    if rates or bws:
        out.append("")
    raw = extra.get("ofi_raw") or {}
    if raw:
        out.append("over libfabric against bare libfabric (hps-bench-ofi-raw), 2 PEs, "
                   "us per operation: library / bare (ratio)")
        paired: dict[tuple[str, int], dict[str, tuple[float, float]]] = {}
        for variant, prov in OFI_VARIANTS.items():
            for r, base, _what in bare_pairs(rows, variant, prov, raw):
                paired.setdefault((r["test"], r["size"]), {})[prov] = (r["us"], base)
        for (test, size), by in paired.items():
            cells = [f"{prov} {_fmt_us(a)} / {_fmt_us(b)} ({a / b:.2f}x)" for prov, (a, b) in by.items()]
            out.append(f"  {test + ' ' + str(size) + ' B':<18} " + "   ".join(cells))
        out.append("")
    ic = extra.get("icount") or {}
    if ic:
        out.append("instructions per call (callgrind, N vs 2N calls):")
        for tr, calls in ic.items():
            if not isinstance(calls, dict):
                continue
            for fn, m in calls.items():
                out.append(f"  {tr:<5} {fn:<10} total {m.get('total', '-'):>7}  hpsync {m.get('hpsync', '-'):>7}"
                           f"  to fabric call {m.get('to_fabric', '-'):>7}  provider {m.get('provider', '-'):>7}")
        out.append("")
    launch = extra.get("launch") or {}
    if launch:
        out.append("2-PE launch, median: " + ", ".join(
            f"{k} {v['median_s'] * 1000:.1f} ms" for k, v in launch.items() if v.get("median_s")))
        out.append("")
    out.extend(text.targets_section(run))
    return "\n".join(out)

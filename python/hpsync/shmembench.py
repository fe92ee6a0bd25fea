# SPDX-License-Identifier: MIT
"""Pure functions of `hpsync bench shmem`: callgrind parsing, instruction
counts by difference, rows, target verdicts and the text report.  No
processes are started here (hpsync.bench_shmem does that)."""

from __future__ import annotations

from typing import Any, Sequence

from .stats import median

VARIANTS = ["hpsync-node", "hpsync-ofi-shm", "hpsync-ofi-tcp", "oshmem"]
SUBJECT = "hpsync-node"
OSHMEM = "oshmem"

# Targets of issue 6 on this machine.
PUT_QUIET_MAX_US = 0.05
FETCH_ADD_MAX_US = 0.1
PUT_RATE_MIN_MPS = 30.0
BARRIER_MAX_US = 0.15
OFI_RAW_MAX_RATIO = 1.2
INT_P_MAX_INSNS = 16
QUIET_MAX_INSNS = 11
LAUNCH_MAX_S = 0.3

HPSYNC_OBJECTS = ("libhpsync-shmem", "hps-shmem-icount")


# ---- callgrind ----------------------------------------------------------------

def parse_callgrind(text: str) -> dict[str, Any]:
    """A callgrind output file written with --dump-instr=yes --compress-pos=no
    --compress-strings=no: the total Ir, the self Ir of every instruction
    (object, function, address) and every call site (caller object,
    function, address, callee object, function, calls, inclusive Ir)."""
    npos = 1
    total = None
    ob = fn = cob = cfn = None
    pending_call: tuple[int, str | None, str | None] | None = None
    selfc: dict[tuple[str, str, int], int] = {}
    calls: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("positions:"):
            npos = len(line.split()[1:])
        elif line.startswith(("summary:", "totals:")):
            total = int(line.split()[1])
        elif line.startswith("ob="):
            ob = line[3:]
        elif line.startswith("fn="):
            fn, cob, cfn = line[3:], None, None
        elif line.startswith("cob="):
            cob = line[4:]
        elif line.startswith("cfn="):
            cfn = line[4:]
        elif line.startswith("calls="):
            pending_call = (int(line[6:].split()[0]), cob, cfn)
        elif line[0] in "0123456789+-*":
            parts = line.split()
            if len(parts) < npos + 1 or ob is None or fn is None:
                continue
            addr = int(parts[0], 16) if parts[0].startswith("0x") else int(parts[0], 0)
            ir = int(parts[npos])
            if pending_call is not None:
                n, c_ob, c_fn = pending_call
                calls.append({"ob": ob, "fn": fn, "addr": addr, "cob": c_ob or ob,
                              "cfn": c_fn, "calls": n, "ir": ir})
                pending_call = None
                cob = None
            else:
                selfc[(ob, fn, addr)] = selfc.get((ob, fn, addr), 0) + ir
    if total is None:
        raise ValueError("no summary or totals line")
    return {"total": total, "self": selfc, "calls": calls}


def is_hpsync(obj: str) -> bool:
    return any(h in obj for h in HPSYNC_OBJECTS)


def callgrind_metrics(parsed: dict[str, Any]) -> dict[str, int]:
    """total: everything collected; hpsync: instructions in hpsync's own code
    (library and program); to_fabric: hpsync's instructions up to the first
    call into libfabric, i.e. all of hpsync's except those after the call
    site (higher addresses) in the function that makes the call; provider:
    the rest (libfabric and what it calls)."""
    selfc: dict[tuple[str, str, int], int] = parsed["self"]
    hps = sum(v for (ob, _fn, _a), v in selfc.items() if is_hpsync(ob))
    sites: dict[tuple[str, str], int] = {}
    for c in parsed["calls"]:
        if is_hpsync(c["ob"]) and "libfabric" in (c["cob"] or ""):
            key = (c["ob"], c["fn"])
            sites[key] = min(sites.get(key, c["addr"]), c["addr"])
    after = sum(v for (ob, fn, a), v in selfc.items()
                if (ob, fn) in sites and a > sites[(ob, fn)])
    return {"total": int(parsed["total"]), "hpsync": hps, "to_fabric": hps - after,
            "provider": int(parsed["total"]) - hps, "fabric_calls": len(sites)}


def per_call(small: dict[str, int], large: dict[str, int], n: int) -> dict[str, float]:
    """Metrics of runs with n and 2n calls -> per call, one-time costs removed."""
    return {k: round((large[k] - small[k]) / n, 2) for k in small if k != "fabric_calls"}


# ---- rows ---------------------------------------------------------------------

def summarise(samples: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Samples (variant, round, test, size, ns_min, ns_median) -> one row per
    (variant, test, size): the median over rounds of each run's median, and
    the best batch seen."""
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for s in samples:
        groups.setdefault((s["variant"], s["test"], int(s["size"])), []).append(s)
    rows = []
    for (variant, test, size), ss in groups.items():
        ns = median(s["ns_median"] for s in ss)
        row = {"variant": variant, "test": test, "size": size, "rounds": len(ss),
               "us": round(ns / 1000, 5) if ns is not None else None,
               "us_best": round(min(s["ns_min"] for s in ss) / 1000, 5)}
        if test == "put_rate" and ns:
            row["mops"] = round(1e3 / ns, 2)
        rows.append(row)
    order = {v: i for i, v in enumerate(VARIANTS)}
    rows.sort(key=lambda r: (order.get(r["variant"], 99), r["test"], r["size"]))
    return rows


def find(rows: Sequence[dict[str, Any]], variant: str, test: str, size: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["variant"] == variant and r["test"] == test
                 and r["size"] == size), None)


def _t(tid: str, description: str, passed: bool | None, detail: str) -> dict[str, Any]:
    return {"id": tid, "description": description, "passed": passed, "detail": detail}


def _us(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f} us"


def evaluate_targets(rows: Sequence[dict[str, Any]], raw: dict[str, Any] | None,
                     icount: dict[str, Any], launch: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per target of the issue; passed None = not measurable here."""
    out = []
    put = find(rows, SUBJECT, "put_quiet", 8)
    osh = find(rows, OSHMEM, "put_quiet", 8)
    v = put["us"] if put else None
    out.append(_t("put_quiet", f"on-node 8 B put+quiet <= {PUT_QUIET_MAX_US} us",
                  None if v is None else v <= PUT_QUIET_MAX_US, _us(v)))
    if osh is None or v is None:
        out.append(_t("put_quiet_vs_oshmem", "on-node 8 B put+quiet <= OSHMEM's", None,
                      "OSHMEM not measured"))
    else:
        out.append(_t("put_quiet_vs_oshmem", "on-node 8 B put+quiet <= OSHMEM's",
                      v <= osh["us"], f"{_us(v)} vs {_us(osh['us'])} ({v / osh['us']:.2f}x)"))
    r = find(rows, SUBJECT, "fetch_add", 8)
    v = r["us"] if r else None
    out.append(_t("fetch_add", f"on-node fetch-add <= {FETCH_ADD_MAX_US} us",
                  None if v is None else v <= FETCH_ADD_MAX_US, _us(v)))
    r = find(rows, SUBJECT, "put_rate", 8)
    m = r.get("mops") if r else None
    out.append(_t("put_rate", f"on-node 8 B put rate >= {PUT_RATE_MIN_MPS} M/s",
                  None if m is None else m >= PUT_RATE_MIN_MPS,
                  "n/a" if m is None else f"{m:.1f} M/s"))
    r = find(rows, SUBJECT, "barrier", 0)
    v = r["us"] if r else None
    out.append(_t("barrier", f"2-PE barrier <= {BARRIER_MAX_US} us",
                  None if v is None else v <= BARRIER_MAX_US, _us(v)))
    for prov, variant in (("shm", "hpsync-ofi-shm"), ("tcp;ofi_rxm", "hpsync-ofi-tcp")):
        lib = find(rows, variant, "put_quiet", 8)
        base = (raw or {}).get(prov, {}).get("inject")
        desc = f"{prov}: 8 B put+quiet <= {OFI_RAW_MAX_RATIO}x bare fi_inject_write + counter wait"
        if lib is None or base is None:
            out.append(_t(f"ofi_raw_{prov}", desc, None,
                          "library or raw baseline not measured"))
        else:
            ratio = lib["us"] / base
            out.append(_t(f"ofi_raw_{prov}", desc, ratio <= OFI_RAW_MAX_RATIO,
                          f"{_us(lib['us'])} vs {_us(base)} ({ratio:.2f}x; vs inject+read "
                          f"{_us((raw or {}).get(prov, {}).get('inject_read'))})"))
    ofi = icount.get("ofi", {})
    node = icount.get("node", {})
    p = ofi.get("int_p", {}).get("to_fabric")
    out.append(_t("int_p_insns", f"shmem_int_p <= {INT_P_MAX_INSNS} instructions to the fabric call",
                  None if p is None else p <= INT_P_MAX_INSNS,
                  "n/a" if p is None else f"{p:g} to a global, "
                  f"{ofi.get('int_p_heap', {}).get('to_fabric', 'n/a')} to a heap object "
                  f"(on-node, entry to return: {node.get('int_p', {}).get('total', 'n/a')})"))
    q = ofi.get("quiet", {}).get("total")
    out.append(_t("quiet_insns", f"idle shmem_quiet <= {QUIET_MAX_INSNS} instructions (ofi)",
                  None if q is None else q <= QUIET_MAX_INSNS,
                  "n/a" if q is None else f"{q:g} (on-node: {node.get('quiet', {}).get('total', 'n/a')})"))
    lt = launch.get("hpsync", {}).get("median_s")
    out.append(_t("launch", f"2-PE oshrun launch <= {LAUNCH_MAX_S} s",
                  None if lt is None else lt <= LAUNCH_MAX_S,
                  "n/a" if lt is None else f"{lt * 1000:.1f} ms"
                  + (f" (Open MPI's oshrun {launch['oshmem']['median_s'] * 1000:.0f} ms)"
                     if launch.get("oshmem", {}).get("median_s") else "")))
    return out


# ---- text report --------------------------------------------------------------

def _fmt_us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 100 else f"{x:.1f}"


def render(doc: dict[str, Any]) -> str:
    rows = doc.get("rows", [])
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    out = [f"hpsync bench shmem: 2 PEs on {doc.get('context', {}).get('host', '?')}, "
           f"{doc.get('params', {}).get('rounds', '?')} round(s) per variant", ""]
    for name, info in doc.get("variants", {}).items():
        out.append(f"  {name:<15} {info['status']:<9} {info.get('note') or ''}")
    out.append("")
    head = f"  {'':<18}" + "".join(f"{v:>16}" for v in variants)

    def table(title: str, keys: list[tuple[str, int, str]], ratio: bool = True) -> None:
        out.append(title)
        out.append(head)
        for test, size, label in keys:
            cells = []
            base = find(rows, SUBJECT, test, size)
            for v in variants:
                r = find(rows, v, test, size)
                if r is None:
                    cells.append(f"{'-':>16}")
                    continue
                txt = _fmt_us(r["us"])
                if ratio and base and v != SUBJECT and base["us"]:
                    txt += f" ({r['us'] / base['us']:.1f}x)"
                cells.append(f"{txt:>16}")
            out.append(f"  {label:<18}" + "".join(cells))
        out.append("")

    sizes = sorted({r["size"] for r in rows if r["test"] == "put_quiet"})
    table("put + quiet latency, us (x hpsync-node), median of rounds",
          [("put_quiet", s, f"{s} B") for s in sizes])
    table("get latency, us", [("get", s, f"{s} B") for s in sizes])
    table("8 B operations, us", [("pingpong", 8, "ping-pong (rt/2)"),
                                 ("put_rate", 8, "put in a burst"),
                                 ("fetch_add", 8, "fetch-add"), ("cswap", 8, "compare-swap"),
                                 ("barrier", 0, "barrier_all")])
    rates = [f"{r['variant']} {r['mops']:.1f} M/s" for r in rows
             if r["test"] == "put_rate" and r.get("mops")]
    if rates:
        out.append("8 B put rate: " + ", ".join(rates))
        out.append("")
    raw = doc.get("ofi_raw") or {}
    if raw:
        out.append("bare libfabric (hps-bench-ofi-raw), 8 B, us: " + "; ".join(
            f"{p}: " + ", ".join(f"{op} {_fmt_us(v)}" for op, v in ops.items())
            for p, ops in raw.items()))
        out.append("")
    ic = doc.get("icount", {})
    if ic:
        out.append("instructions per call (callgrind, N vs 2N calls):")
        for tr, calls in ic.items():
            if not isinstance(calls, dict):
                continue
            for fn, m in calls.items():
                out.append(f"  {tr:<5} {fn:<10} total {m.get('total', '-'):>7}  hpsync {m.get('hpsync', '-'):>7}"
                           f"  to fabric call {m.get('to_fabric', '-'):>7}  provider {m.get('provider', '-'):>7}")
        out.append("")
    launch = doc.get("launch", {})
    if launch:
        out.append("2-PE launch of /bin/true, median: " + ", ".join(
            f"{k} {v['median_s'] * 1000:.1f} ms" for k, v in launch.items() if v.get("median_s")))
        out.append("")
    out.append("targets:")
    for t in doc.get("targets", []):
        verdict = {True: "PASS", False: "FAIL", None: "SKIP"}[t["passed"]]
        out.append(f"  {verdict}  {t['description']}: {t['detail']}")
    for w in doc.get("warnings", []):
        out.append(f"  note: {w}")
    return "\n".join(out)

# SPDX-License-Identifier: MIT
"""Pure functions of `hpsync bench shmem`: callgrind parsing, instruction
counts by difference, rows, target verdicts and the text report.  No
processes are started here (hpsync.bench_shmem does that)."""

from __future__ import annotations

import json
from typing import Any, Sequence

from .stats import median

VARIANTS = ["hpsync-node", "hpsync-ofi-shm", "hpsync-ofi-tcp", "hpsync-ofi-sockets", "oshmem"]
SUBJECT = "hpsync-node"
OSHMEM = "oshmem"
OFI_VARIANTS = {"hpsync-ofi-shm": "shm", "hpsync-ofi-tcp": "tcp;ofi_rxm",
                "hpsync-ofi-sockets": "sockets"}

# Targets of issue 6 on this machine.
PUT_QUIET_MAX_US = 0.05
FETCH_ADD_MAX_US = 0.1
PUT_RATE_MIN_MPS = 30.0
OFI_RAW_MAX_RATIO = 1.2
INT_P_MAX_INSNS = 16
QUIET_MAX_INSNS = 11
# Targets of issue 13.
BARRIER_MAX_US = 0.15
CROWDED_MAX_RATIO = 1.5
OFI_BARE_MAX_RATIO = 1.5
AMO_PUT_MAX_RATIO = 1.5
LAUNCH_MAX_S = 0.02
# A verdict needs this many rounds; fewer is "inconclusive".
MIN_ROUNDS = 3

# Each library test and the hps-bench-ofi-raw op doing the same work with
# bare libfabric: (raw op, its size or None for the test's own, what).  A
# put + quiet is complete at the target: raw "put" is an inject and a read
# when it fits the inject size, else a write and its delivery counter.
OFI_RAW_EQUIVALENTS: dict[str, tuple[str, int | None, str]] = {
    "put_quiet": ("put", None, "bare put + completion"),
    "get": ("get", None, "bare read"),
    "put_bw": ("put_bw", None, "bare windowed puts"),
    "put_rate": ("put_bw", 8, "bare windowed 8 B puts"),
    "add_rate": ("atomic_bw", 8, "bare injected atomics"),
    "fetch_add": ("fetch_add", 8, "bare fetching atomic"),
    "barrier": ("barrier", 8, "bare 2-process barrier"),
}

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


# ---- the plan -----------------------------------------------------------------

# One-sided tests (2 PEs: PE 0 times, PE 1 is the target), then collectives
# (every PE, back to back), in the order hps-bench-shmem runs them.
SIZED_TESTS = ("put_quiet", "get", "put_bw")
P2P_TESTS = ("pingpong", "put_rate", "add_rate", "fetch_add", "cswap")
COLL_TESTS: list[tuple[str, int]] = [("barrier", 0), ("broadcast", 8), ("collect", 8),
                                      ("fcollect", 8), ("reduce", 8), ("reduce", 65536),
                                      ("alltoall", 8)]
NPES = (2, 4)


def sizes_up_to(max_size: int) -> list[int]:
    """1 B to max_size in powers of 4, and 8 B (the targets' size)."""
    out, s = [], 1
    while s <= max_size:
        out.append(s)
        if s == 4:
            out.append(8)
        s *= 4
    return out


def plan(npes: int, max_size: int) -> list[tuple[str, int]]:
    """(test, size) in run order for a job of npes PEs: everything at 2 PEs,
    the collectives alone above."""
    tests: list[tuple[str, int]] = []
    if npes == 2:
        for t in SIZED_TESTS:
            tests += [(t, s) for s in sizes_up_to(max_size)]
        tests += [(t, 8) for t in P2P_TESTS]
    return tests + COLL_TESTS


def parse_output(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """hps-bench-shmem's stdout, complete or cut short: (header, results).
    Results are one JSON object a line, so every finished one survives a
    run that was ended (a did-not-finish row included)."""
    rows = []
    for line in text.splitlines():
        line = line.strip().rstrip(",")
        if line.startswith('{"test"'):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    head: dict[str, Any] = {}
    cut = text.find('"results"')
    if cut > 0:
        try:
            head = json.loads(text[text.index("{"):cut].rstrip().rstrip(",") + "}")
        except ValueError:
            head = {}
    return head, rows


# ---- rows ---------------------------------------------------------------------

def summarise(samples: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Samples (variant, npes, round, test, size, ns_min, ns_median, or dnf)
    -> one row per (variant, npes, test, size): the median over rounds of
    each run's median, the best batch seen, each round's figure (for the
    verdicts) and how many rounds did not finish."""
    groups: dict[tuple[str, int, str, int], list[dict[str, Any]]] = {}
    for s in samples:
        key = (s["variant"], int(s.get("npes", 2)), s["test"], int(s["size"]))
        groups.setdefault(key, []).append(s)
    rows = []
    for (variant, npes, test, size), ss in groups.items():
        done = sorted((s for s in ss if not s.get("dnf")), key=lambda s: s.get("round", 0))
        ns = median(s["ns_median"] for s in done)
        row = {"variant": variant, "npes": npes, "test": test, "size": size,
               "rounds": len(done), "dnf": len(ss) - len(done),
               "us": round(ns / 1000, 5) if ns is not None else None,
               "us_best": round(min(s["ns_min"] for s in done) / 1000, 5) if done else None,
               "per_round": {int(s.get("round", 0)): round(s["ns_median"] / 1000, 5) for s in done}}
        if test in ("put_rate", "add_rate", "put_bw") and ns:
            row["mops"] = round(1e3 / ns, 3)
        if test == "put_bw" and ns:
            row["mb_s"] = round(size * 1e3 / ns, 1)
        rows.append(row)
    order = {v: i for i, v in enumerate(VARIANTS)}
    rows.sort(key=lambda r: (order.get(r["variant"], 99), r["npes"], r["test"], r["size"]))
    return rows


def find(rows: Sequence[dict[str, Any]], variant: str, test: str, size: int,
         npes: int = 2) -> dict[str, Any] | None:
    return next((r for r in rows if r["variant"] == variant and r["test"] == test
                 and r["size"] == size and r.get("npes", 2) == npes), None)


# ---- verdicts -----------------------------------------------------------------

def verdict(values: Sequence[float], limit: float) -> str:
    """PASS when every round is within limit, FAIL when none is, and
    "inconclusive" with fewer than MIN_ROUNDS rounds or rounds on both sides
    (one noisy round never makes a FAIL)."""
    if len(values) < MIN_ROUNDS:
        return "inconclusive"
    if max(values) <= limit:
        return "PASS"
    if min(values) > limit:
        return "FAIL"
    return "inconclusive"


def paired_ratios(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[float]:
    """a's figure over b's, round by round (rounds are interleaved, so a
    round's two figures were measured under the same conditions)."""
    if not a or not b:
        return []
    pa, pb = a.get("per_round", {}), b.get("per_round", {})
    return [pa[r] / pb[r] for r in sorted(pa) if r in pb and pb[r]]


def _t(tid: str, description: str, result: str | None, detail: str) -> dict[str, Any]:
    """result: PASS, FAIL, inconclusive, or None (not measurable here)."""
    passed = {"PASS": True, "FAIL": False}.get(result or "")
    return {"id": tid, "description": description, "passed": passed,
            "verdict": result or "n/a", "detail": detail}


def _us(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f} us"


def _spread(values: Sequence[float], unit: str = "x") -> str:
    if not values:
        return "no rounds"
    lo, hi = min(values), max(values)
    f = (lambda v: f"{v:.2f}x") if unit == "x" else (lambda v: f"{v:.3f} us")
    return f"{f(lo)}" if len(values) == 1 else f"{f(lo)}-{f(hi)} over {len(values)} rounds"


def _ratio_target(tid: str, desc: str, ours: dict[str, Any] | None,
                  theirs: dict[str, Any] | None, limit: float, who: str) -> dict[str, Any]:
    if ours is None or theirs is None or ours["us"] is None or theirs["us"] is None:
        return _t(tid, desc, None, f"{who} or hpsync not measured")
    ratios = paired_ratios(ours, theirs)
    return _t(tid, desc, verdict(ratios, limit),
              f"{_us(ours['us'])} vs {_us(theirs['us'])} (per round {_spread(ratios)})")


def _raw_figure(raw: dict[str, Any] | None, prov: str, op: str, size: int) -> float | None:
    """hps-bench-ofi-raw's median for (provider, op, bytes), in us."""
    return (raw or {}).get(prov, {}).get(f"{op}@{size}")


def _bare_pairs(rows: Sequence[dict[str, Any]], variant: str, prov: str,
                raw: dict[str, Any] | None) -> list[tuple[dict[str, Any], float, str]]:
    """(row, bare libfabric figure, what the bare figure is) for each row of
    variant at 2 PEs that hps-bench-ofi-raw measured an equivalent of
    (OFI_RAW_EQUIVALENTS)."""
    out = []
    for r in rows:
        if r["variant"] != variant or r.get("npes", 2) != 2 or r["us"] is None:
            continue
        if r["test"] not in OFI_RAW_EQUIVALENTS:
            continue
        op, size, what = OFI_RAW_EQUIVALENTS[r["test"]]
        base = _raw_figure(raw, prov, op, r["size"] if size is None else size)
        if base:
            out.append((r, base, what))
    return out


def evaluate_targets(rows: Sequence[dict[str, Any]], raw: dict[str, Any] | None,
                     icount: dict[str, Any], launch: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per target of issues 6 and 13; n/a = not measurable here."""
    out = []

    def absolute(tid: str, desc: str, r: dict[str, Any] | None, limit: float,
                 scale: float = 1.0) -> None:
        if r is None or r["us"] is None:
            out.append(_t(tid, desc, None, "not measured"))
            return
        vals = [v * scale for v in r["per_round"].values()]
        out.append(_t(tid, desc, verdict(vals, limit), f"{_us(r['us'] * scale)} "
                      f"({_spread(vals, 'us')})"))

    # Issue 6, on-node at 2 PEs.
    absolute("put_quiet", f"on-node 8 B put+quiet <= {PUT_QUIET_MAX_US} us",
             find(rows, SUBJECT, "put_quiet", 8), PUT_QUIET_MAX_US)
    out.append(_ratio_target("put_quiet_vs_oshmem", "on-node 8 B put+quiet <= OSHMEM's",
                             find(rows, SUBJECT, "put_quiet", 8),
                             find(rows, OSHMEM, "put_quiet", 8), 1.0, "OSHMEM"))
    absolute("fetch_add", f"on-node fetch-add <= {FETCH_ADD_MAX_US} us",
             find(rows, SUBJECT, "fetch_add", 8), FETCH_ADD_MAX_US)
    r = find(rows, SUBJECT, "put_rate", 8)
    if r is None or not r.get("mops"):
        out.append(_t("put_rate", f"on-node 8 B put rate >= {PUT_RATE_MIN_MPS} M/s", None,
                      "not measured"))
    else:
        # At least the rate means at most the time per put.
        limit_us = 1.0 / PUT_RATE_MIN_MPS
        vals = list(r["per_round"].values())
        out.append(_t("put_rate", f"on-node 8 B put rate >= {PUT_RATE_MIN_MPS} M/s",
                      verdict(vals, limit_us), f"{r['mops']:.1f} M/s"))
    # Issue 13: barrier and collectives on-node.
    absolute("barrier", f"on-node 2-PE barrier <= {BARRIER_MAX_US} us",
             find(rows, SUBJECT, "barrier", 0), BARRIER_MAX_US)
    for test, size in COLL_TESTS:
        if test == "barrier":
            continue
        name = f"{test} {size} B"
        out.append(_ratio_target(f"coll2_{test}_{size}", f"on-node 2 PEs: {name} <= OSHMEM's",
                                 find(rows, SUBJECT, test, size, 2),
                                 find(rows, OSHMEM, test, size, 2), 1.0, "OSHMEM"))
    for test, size in COLL_TESTS:
        name = f"{test} {size} B" if test != "barrier" else "barrier"
        out.append(_ratio_target(f"coll4_{test}_{size}",
                                 f"on-node 4 PEs on 2 CPUs: {name} <= {CROWDED_MAX_RATIO}x OSHMEM's",
                                 find(rows, SUBJECT, test, size, 4),
                                 find(rows, OSHMEM, test, size, 4), CROWDED_MAX_RATIO, "OSHMEM"))
    # Over libfabric: non-fetching atomics against puts (injected and
    # counted alike, not round trips).
    for variant in OFI_VARIANTS:
        out.append(_ratio_target(f"amo_vs_put_{variant}",
                                 f"{variant}: 8 B atomic add rate within {AMO_PUT_MAX_RATIO}x of "
                                 "the put rate", find(rows, variant, "add_rate", 8),
                                 find(rows, variant, "put_rate", 8), AMO_PUT_MAX_RATIO, "put"))
    # Over libfabric: against the bare equivalents, and collectives finishing.
    for variant, prov in OFI_VARIANTS.items():
        pairs = _bare_pairs(rows, variant, prov, raw)
        desc = f"{prov}: every row within {OFI_BARE_MAX_RATIO}x of bare libfabric"
        if not pairs:
            out.append(_t(f"ofi_bare_{prov}", desc, None,
                          "library or bare libfabric baseline not measured"))
        else:
            verdicts = {}
            worst = max(pairs, key=lambda p: p[0]["us"] / p[1])
            for r, base, _what in pairs:
                verdicts[(r["test"], r["size"])] = verdict(
                    [v / base for v in r["per_round"].values()], OFI_BARE_MAX_RATIO)
            res = ("FAIL" if "FAIL" in verdicts.values() else
                   "inconclusive" if "inconclusive" in verdicts.values() else "PASS")
            fails = [f"{t} {s} B" for (t, s), v in verdicts.items() if v == "FAIL"]
            out.append(_t(f"ofi_bare_{prov}", desc, res,
                          f"{len(pairs)} rows; worst {worst[0]['test']} {worst[0]['size']} B "
                          f"{worst[0]['us'] / worst[1]:.2f}x ({worst[2]})"
                          + (f"; over: {', '.join(fails)}" if fails else "")))
        lib = find(rows, variant, "put_quiet", 8)
        base = _raw_figure(raw, prov, "inject", 8)
        desc = f"{prov}: 8 B put+quiet <= {OFI_RAW_MAX_RATIO}x bare fi_inject_write + counter wait"
        if lib is None or lib["us"] is None or base is None:
            out.append(_t(f"ofi_raw_{prov}", desc, None, "library or raw baseline not measured"))
        else:
            vals = [v / base for v in lib["per_round"].values()]
            out.append(_t(f"ofi_raw_{prov}", desc, verdict(vals, OFI_RAW_MAX_RATIO),
                          f"{_us(lib['us'])} vs {_us(base)} ({lib['us'] / base:.2f}x; vs inject+read "
                          f"{_us(_raw_figure(raw, prov, 'inject_read', 8))})"))
        mine = [r for r in rows if r["variant"] == variant and r.get("npes", 2) == 4]
        desc = f"{prov}: every collective finishes at 4 PEs"
        if not mine:
            out.append(_t(f"ofi_coll4_{prov}", desc, None, "not measured"))
        else:
            dnf = [f"{r['test']} {r['size']} B" for r in mine if r["dnf"]]
            missing = [f"{t} {s} B" for t, s in COLL_TESTS if not find(rows, variant, t, s, 4)]
            out.append(_t(f"ofi_coll4_{prov}", desc, "FAIL" if dnf or missing else "PASS",
                          "all finished" if not dnf and not missing else
                          "did not finish: " + ", ".join(dnf + missing)))
    ofi = icount.get("ofi", {})
    node = icount.get("node", {})
    p = ofi.get("int_p", {}).get("to_fabric")
    out.append(_t("int_p_insns", f"shmem_int_p <= {INT_P_MAX_INSNS} instructions to the fabric call",
                  None if p is None else "PASS" if p <= INT_P_MAX_INSNS else "FAIL",
                  "n/a" if p is None else f"{p:g} to a global, "
                  f"{ofi.get('int_p_heap', {}).get('to_fabric', 'n/a')} to a heap object "
                  f"(on-node, entry to return: {node.get('int_p', {}).get('total', 'n/a')})"))
    q = ofi.get("quiet", {}).get("total")
    out.append(_t("quiet_insns", f"idle shmem_quiet <= {QUIET_MAX_INSNS} instructions (ofi)",
                  None if q is None else "PASS" if q <= QUIET_MAX_INSNS else "FAIL",
                  "n/a" if q is None else f"{q:g} (on-node: {node.get('quiet', {}).get('total', 'n/a')})"))
    lt = launch.get("hpsync", {})
    desc = f"2-PE launch of a trivial OpenSHMEM program <= {LAUNCH_MAX_S * 1000:.0f} ms"
    if not lt.get("runs_s"):
        out.append(_t("launch", desc, None, lt.get("note", "not measured")))
    else:
        osh = launch.get("oshmem", {}).get("median_s")
        out.append(_t("launch", desc, verdict(lt["runs_s"], LAUNCH_MAX_S),
                      f"{lt['median_s'] * 1000:.1f} ms median of {len(lt['runs_s'])}"
                      + (f" (Open MPI's oshrun {osh * 1000:.0f} ms)" if osh else "")))
    return out


# ---- text report --------------------------------------------------------------

def _fmt_us(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 100 else f"{x:.1f}"


def render(doc: dict[str, Any]) -> str:
    rows = doc.get("rows", [])
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    params = doc.get("params", {})
    load = params.get("load", 0)
    out = [f"hpsync bench shmem: {doc.get('context', {}).get('host', '?')}, "
           f"{doc.get('context', {}).get('cpus', '?')} CPUs, "
           f"{params.get('rounds', '?')} round(s) per variant"
           + (f", beside {load} busy loop(s)" if load else ""), ""]
    for name, info in doc.get("variants", {}).items():
        out.append(f"  {name:<19} {info['status']:<9} {info.get('note') or ''}")
    out.append("")
    head = f"  {'':<20}" + "".join(f"{v:>19}" for v in variants)

    def cell(r: dict[str, Any] | None, base: dict[str, Any] | None, ratio: bool) -> str:
        if r is None:
            return f"{'-':>19}"
        if r["us"] is None:
            return f"{'did not finish':>19}"
        txt = _fmt_us(r["us"])
        if ratio and base and base is not r and base["us"]:
            txt += f" ({r['us'] / base['us']:.1f}x)"
        if r["dnf"]:
            txt += " !"
        return f"{txt:>19}"

    def table(title: str, keys: list[tuple[str, int, str]], npes: int = 2) -> None:
        if not any(find(rows, v, t, s, npes) for v in variants for t, s, _ in keys):
            return
        out.append(title)
        out.append(head)
        for test, size, label in keys:
            base = find(rows, SUBJECT, test, size, npes)
            out.append(f"  {label:<20}" + "".join(cell(find(rows, v, test, size, npes), base, True)
                                                  for v in variants))
        out.append("")

    sizes = sorted({r["size"] for r in rows if r["test"] == "put_quiet"})
    table("put + quiet latency, us (x hpsync-node), median of rounds",
          [("put_quiet", s, f"{s} B") for s in sizes])
    table("get latency, us", [("get", s, f"{s} B") for s in sizes])
    bw = sorted({r["size"] for r in rows if r["test"] == "put_bw"})
    table("put_nbi bursts + quiet, us per message", [("put_bw", s, f"{s} B") for s in bw])
    table("8 B operations, us", [("pingpong", 8, "ping-pong (rt/2)"),
                                 ("put_rate", 8, "put in a burst"),
                                 ("add_rate", 8, "atomic add in a burst"),
                                 ("fetch_add", 8, "fetch-add"), ("cswap", 8, "compare-swap")])
    coll = [(t, s, t if t == "barrier" else f"{t} {s} B") for t, s in COLL_TESTS]
    for npes in NPES:
        table(f"collectives back to back at {npes} PEs, us per call", coll, npes)
    rates = [f"{r['variant']} {r['mops']:.1f} M/s" for r in rows
             if r["test"] == "put_rate" and r.get("mops")]
    if rates:
        out.append("8 B put rate: " + ", ".join(rates))
    bws = [f"{r['variant']} {r['mb_s']:.0f} MB/s" for r in rows
           if r["test"] == "put_bw" and r.get("mb_s") and r["size"] == max(bw or [0])]
    if bws:
        out.append(f"{max(bw)} B put bandwidth: " + ", ".join(bws))
    if rates or bws:
        out.append("")
    raw = doc.get("ofi_raw") or {}
    if raw:
        out.append("over libfabric against bare libfabric (hps-bench-ofi-raw), 2 PEs, "
                   "us per operation: library / bare (ratio)")
        paired: dict[tuple[str, int], dict[str, tuple[float, float]]] = {}
        for variant, prov in OFI_VARIANTS.items():
            for r, base, _what in _bare_pairs(rows, variant, prov, raw):
                paired.setdefault((r["test"], r["size"]), {})[prov] = (r["us"], base)
        for (test, size), by in paired.items():
            cells = [f"{prov} {_fmt_us(a)} / {_fmt_us(b)} ({a / b:.2f}x)"
                     for prov, (a, b) in by.items()]
            out.append(f"  {test + ' ' + str(size) + ' B':<18} " + "   ".join(cells))
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
        out.append("2-PE launch, median: " + ", ".join(
            f"{k} {v['median_s'] * 1000:.1f} ms" for k, v in launch.items() if v.get("median_s")))
        out.append("")
    out.append("targets:")
    for t in doc.get("targets", []):
        out.append(f"  {t.get('verdict', 'n/a'):<12}  {t['description']}: {t['detail']}")
    for w in doc.get("warnings", []):
        out.append(f"  note: {w}")
    return "\n".join(out)

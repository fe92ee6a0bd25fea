# SPDX-License-Identifier: MIT
"""Pure functions of `bench shmem`: callgrind out-files, instruction counts
by difference, the test plan, rows and measurements.  No processes are
started here (measure.py does that).

Samples, one per (variant, PEs, round, test, size):
  {"variant", "npes", "round", "test", "size", "iters", "ns_reps", "ns_min",
   "ns_median", "context"}, or {..., "dnf": true, "why"} for a test that did
not finish within its time limit.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ... import schema, stats
from ..base import Analysis, Row

VARIANTS = ["hpsync-node", "hpsync-ofi-shm", "hpsync-ofi-tcp", "hpsync-ofi-sockets", "oshmem"]
SUBJECT = "hpsync-node"
OSHMEM = "oshmem"
OFI_VARIANTS = {"hpsync-ofi-shm": "shm", "hpsync-ofi-tcp": "tcp;ofi_rxm",
                "hpsync-ofi-sockets": "sockets"}
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
    --compress-strings=no (callgrind's documented format): the total Ir, the
    self Ir of every instruction (object, function, address) and every call
    site (caller object, function, address, callee object, function, calls,
    inclusive Ir)."""
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


def callgrind_metrics(parsed: Mapping[str, Any]) -> dict[str, int]:
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
    after = sum(v for (ob, fn, a), v in selfc.items() if (ob, fn) in sites and a > sites[(ob, fn)])
    return {"total": int(parsed["total"]), "hpsync": hps, "to_fabric": hps - after,
            "provider": int(parsed["total"]) - hps, "fabric_calls": len(sites)}


def per_call(small: Mapping[str, int], large: Mapping[str, int], n: int) -> dict[str, float]:
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
RATE_TESTS = ("put_rate", "add_rate", "put_bw")
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


# ---- rows ---------------------------------------------------------------------

def _groups(samples: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int, str, int], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, int, str, int], list[Mapping[str, Any]]] = {}
    for s in samples:
        groups.setdefault((s["variant"], int(s.get("npes", 2)), s["test"], int(s["size"])), []).append(s)
    order = {v: i for i, v in enumerate(VARIANTS)}
    return dict(sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 99), *kv[0][1:])))


def _done(ss: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted((s for s in ss if not s.get("dnf")), key=lambda s: s.get("round", 0))


def summarise(samples: Sequence[Mapping[str, Any]]) -> list[Row]:
    """One row per (variant, npes, test, size): the median over rounds of
    each run's median, the best batch seen, each round's figure (for the
    per-round figures) and how many rounds did not finish."""
    rows = []
    for (variant, npes, test, size), ss in _groups(samples).items():
        done = _done(ss)
        ns = stats.median(s["ns_median"] for s in done)
        row: Row = {"variant": variant, "npes": npes, "test": test, "size": size,
                    "rounds": len(done), "dnf": len(ss) - len(done),
                    "us": round(ns / 1000, 5) if ns is not None else None,
                    "us_best": round(min(s["ns_min"] for s in done) / 1000, 5) if done else None,
                    "per_round": {int(s.get("round", 0)): round(s["ns_median"] / 1000, 5) for s in done}}
        if test in RATE_TESTS and ns:
            row["mops"] = round(1e3 / ns, 3)
        if test == "put_bw" and ns:
            row["mb_s"] = round(size * 1e3 / ns, 1)
        rows.append(row)
    return rows


def find(rows: Sequence[Row], variant: str, test: str, size: int, npes: int = 2) -> Row | None:
    return next((r for r in rows if r["variant"] == variant and r["test"] == test
                 and r["size"] == size and r.get("npes", 2) == npes), None)


def raw_figure(raw: Mapping[str, Any] | None, prov: str, op: str, size: int) -> float | None:
    """hps-bench-ofi-raw's median for (provider, op, bytes), in us."""
    v = (raw or {}).get(prov, {}).get(f"{op}@{size}")
    return None if v is None else float(v)


def bare_pairs(rows: Sequence[Row], variant: str, prov: str,
               raw: Mapping[str, Any] | None) -> list[tuple[Row, float, str]]:
    """(row, bare libfabric figure, what the bare figure is) for each row of
    variant at 2 PEs that hps-bench-ofi-raw measured an equivalent of."""
    out = []
    for r in rows:
        if r["variant"] != variant or r.get("npes", 2) != 2 or r["us"] is None:
            continue
        if r["test"] in OFI_RAW_EQUIVALENTS:
            op, size, what = OFI_RAW_EQUIVALENTS[r["test"]]
            base = raw_figure(raw, prov, op, r["size"] if size is None else size)
            if base:
                out.append((r, base, what))
    return out


# ---- measurements -----------------------------------------------------------------

def _us_measurements(rows: Sequence[Row], contexts: Mapping[str, int | None]) -> list[schema.Measurement]:
    out = []
    for r in rows:
        rounds = sorted(r["per_round"])
        if not rounds:
            continue
        dims = {"test": r["test"], "variant": r["variant"], "npes": r["npes"], "size": r["size"]}
        us = [r["per_round"][n] for n in rounds]
        cid = contexts.get(r["variant"])
        out.append(schema.measurement(dims, "us", "us", us, "lower", cid, rounds))
        if r["test"] in RATE_TESTS:
            out.append(schema.measurement(dims, "mops", "M/s", [1.0 / u for u in us if u > 0],
                                          "higher", cid, [n for n, u in zip(rounds, us) if u > 0]))
    return out


def _libfabric_measurements(rows: Sequence[Row], raw: Mapping[str, Any] | None,
                            contexts: Mapping[str, int | None]) -> list[schema.Measurement]:
    """Per round, each library row over its bare libfabric equivalent, and
    the 8 B put + quiet over bare fi_inject_write + counter; per variant, how
    many collectives did not finish at 4 PEs (did-not-finish or missing)."""
    out = []
    for variant, prov in OFI_VARIANTS.items():
        cid = contexts.get(variant)
        for r, base, _what in bare_pairs(rows, variant, prov, raw):
            rounds = sorted(r["per_round"])
            out.append(schema.measurement(
                {"test": r["test"], "variant": variant, "npes": 2, "size": r["size"]}, "ratio_vs_bare",
                "x", [r["per_round"][n] / base for n in rounds], "lower", cid, rounds))
        lib, inject = find(rows, variant, "put_quiet", 8), raw_figure(raw, prov, "inject", 8)
        if lib and lib["per_round"] and inject:
            rounds = sorted(lib["per_round"])
            out.append(schema.measurement(
                {"test": "put_quiet", "variant": variant, "npes": 2, "size": 8}, "ratio_vs_inject",
                "x", [lib["per_round"][n] / inject for n in rounds], "lower", cid, rounds))
    for variant in dict.fromkeys(r["variant"] for r in rows if r["npes"] == 4):
        unfinished = [(t, s) for t, s in COLL_TESTS
                      if (r := find(rows, variant, t, s, 4)) is None or r["dnf"]]
        out.append(schema.measurement({"test": "collectives", "variant": variant, "npes": 4},
                                      "unfinished", "tests", [len(unfinished)], "lower",
                                      contexts.get(variant)))
    return out


def _other_measurements(extra: Mapping[str, Any], contexts: Mapping[str, int | None]) -> list[schema.Measurement]:
    """Instruction counts (one figure each), launch times (one per launch),
    bare libfabric's own figures (one per repetition)."""
    out = []
    for transport, calls in (extra.get("icount") or {}).items():
        if not isinstance(calls, dict):
            continue
        for fn, m in calls.items():
            for metric in ("total", "hpsync", "to_fabric", "provider"):
                if isinstance(m, dict) and isinstance(m.get(metric), (int, float)):
                    out.append(schema.measurement({"test": "icount", "transport": transport,
                                                   "function": fn}, f"instructions_{metric}",
                                                  "instructions", [m[metric]], "lower"))
    for launcher, lt in (extra.get("launch") or {}).items():
        if lt.get("runs_s"):
            out.append(schema.measurement({"test": "launch", "launcher": launcher}, "s", "s",
                                          lt["runs_s"], "lower", contexts.get(SUBJECT)))
    reps = extra.get("ofi_raw_reps") or {}
    for prov, ops in (extra.get("ofi_raw") or {}).items():
        for name, med in ops.items():
            op, _, size = name.partition("@")
            out.append(schema.measurement({"test": "ofi-raw", "op": op, "provider": prov,
                                           "size": int(size)}, "us", "us",
                                          reps.get(prov, {}).get(name) or [med], "lower",
                                          contexts.get("ofi-raw"), value=float(med)))
    return out


def notes_for(extra: Mapping[str, Any], params: Mapping[str, Any]) -> list[str]:
    notes = [f"{v}: {i['status']}: {i['note']}" for v, i in extra.get("variants", {}).items()
             if i.get("note")]
    if extra.get("ofi_raw_note"):
        notes.append(f"bare libfabric baseline: {extra['ofi_raw_note']}")
    if (extra.get("icount") or {}).get("note"):
        notes.append(extra["icount"]["note"])
    notes.append("put_quiet targets a buffer the other PE does not read (issue cost); "
                 "pingpong is a real round trip / 2 (shmem_long_p + wait_until); collectives "
                 "are back to back (1.4 active-set forms, two pSync arrays), one closing barrier "
                 "per batch")
    if params.get("rounds", 0) < MIN_ROUNDS:
        notes.append(f"fewer than {MIN_ROUNDS} rounds: timing verdicts are inconclusive")
    return notes


def analyse(extra: Mapping[str, Any], params: Mapping[str, Any]) -> Analysis:
    rows = summarise(extra["samples"])
    contexts = {k: v for k, v in (extra.get("context_ids") or {}).items()}
    ms = (_us_measurements(rows, contexts) + _libfabric_measurements(rows, extra.get("ofi_raw"), contexts)
          + _other_measurements(extra, contexts))
    return Analysis(rows, ms, notes_for(extra, params))

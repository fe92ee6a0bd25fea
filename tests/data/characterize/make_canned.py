#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerates the canned probe documents in probes_a/ and probes_b/.

Machine A is a quiet 4-core box; machine B is a slower VM: 1.25x slower,
steal time during the handoff probe, a bimodal mutex handoff, only 3
repetitions of the bandwidth curves (so compare must say '?'), no pools
document (a probe that was missing there), and a data TLB that reaches
fewer pages, with no gain from huge pages.
Run it from anywhere; output is deterministic.
"""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
EDGES = 40


def dist(samples: list[float], unit: str = "ns", keep: int = 64) -> dict:
    v = sorted(samples)
    n = len(v)

    def q(p: float) -> float:
        pos = p * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)

    lo, hi = max(v[0], 1e-3), max(v[-1], v[0] * 1.0001)
    edges = [lo * (hi / lo) ** (i / EDGES) for i in range(EDGES + 1)]
    counts = [0] * EDGES
    for x in v:
        b = 0 if x <= lo else int(math.log(x / lo) / math.log(hi / lo) * EDGES)
        counts[min(max(b, 0), EDGES - 1)] += 1
    logs = [math.log(x) for x in v]
    # Bimodal as the C code decides it, roughly: two clusters a factor 2 apart.
    best = max(range(1, n), key=lambda i: logs[i] - logs[i - 1])
    bimodal = (sum(logs[best:]) / (n - best) - sum(logs[:best]) / best) >= math.log(2) \
        and min(best, n - best) >= n * 0.05
    k = min(keep, n)
    kept = [v[i * (n - 1) // (k - 1)] for i in range(k)] if k > 1 else v[:1]
    return {"unit": unit, "n": n, "min": v[0], "p1": q(0.01), "median": q(0.5), "p90": q(0.9),
            "p99": q(0.99), "p999": q(0.999), "max": v[-1], "mean": sum(v) / n,
            "bimodal": bool(bimodal), "hist": {"edges": edges, "counts": counts},
            "samples": [round(x, 3) for x in kept]}


def lognormal(rng: random.Random, median: float, sigma: float, n: int) -> list[float]:
    return [median * math.exp(rng.gauss(0, sigma)) for _ in range(n)]


def context(machine: str) -> dict:
    if machine == "a":
        return {"schema_version": 1, "host": "box-a", "cpu_model": "Intel(R) Xeon(R) Gold 6230",
                "packages": 1, "cores": 4, "pus": 8, "numa_nodes": 1,
                "l1d": {"size": 32768, "ways": 8, "line": 64, "sets": 64},
                "timer": {"clock": "CLOCK_MONOTONIC", "clocksource": "tsc",
                          "clock_gettime_ns": 18.9, "clock_step_ns": 1, "rdtsc": True},
                "compiler": "12.2.0", "compile_flags": "-O2 -g", "git_commit": "1b649dc0ffee",
                "kernel": "6.1.0-18-amd64", "arch": "x86_64", "glibc": "2.36"}
    return {"schema_version": 1, "host": "vm-b", "cpu_model": "AMD EPYC", "packages": 1,
            "cores": 4, "pus": 4, "numa_nodes": 1,
            "l1d": {"size": 32768, "ways": 8, "line": 64, "sets": 64},
            "timer": {"clock": "CLOCK_MONOTONIC", "clocksource": "tsc",
                      "clock_gettime_ns": 23.3, "clock_step_ns": 20, "rdtsc": True},
            "compiler": "12.2.0", "compile_flags": "-O2 -g", "git_commit": "1b649dc0ffee",
            "kernel": "6.18.44-fc-v595", "arch": "x86_64", "glibc": "2.36"}


def doc(machine: str, probe: str, params: dict, results: list, steal: float = 0.0) -> dict:
    return {"schema_version": 1, "probe": probe, "context": context(machine), "params": params,
            "steal_ms": steal, "results": results}


def curves(rng: random.Random, metric: str, unit: str, base: float, slow: float,
           nreps: int, scale: dict[str, list[float]]) -> list:
    rows = []
    for mapping, factors in scale.items():
        for t, f in zip((1, 2, 4), factors):
            reps = [base * f / slow * (1 + rng.gauss(0, 0.01)) for _ in range(nreps)]
            rows.append({"kind": "curve", "metric": metric, "mapping": mapping, "threads": t,
                         "value": sorted(reps)[len(reps) // 2], "unit": unit,
                         "reps": [round(r, 4) for r in reps]})
    return rows


def machine(m: str) -> dict[str, dict]:
    rng = random.Random(42 if m == "a" else 7)
    slow = 1.0 if m == "a" else 1.25
    out: dict[str, dict] = {}
    out["compute"] = doc(m, "compute", {"reps": 5, "duration_ms": 200}, curves(
        rng, "flops", "GFLOP/s", 12.0, slow, 5,
        {"compact": [1, 1.6, 3.1], "scatter": [1, 2.0, 3.9], "os": [1, 1.9, 3.5]}))
    nb = 5 if m == "a" else 3
    out["membw"] = doc(m, "membw", {"bytes": 268435456, "reps": nb},
                       curves(rng, "read_bw", "GB/s", 14.0, slow, nb,
                              {"compact": [1, 1.7, 2.2], "scatter": [1, 1.9, 2.6]})
                       + curves(rng, "copy_bw", "GB/s", 9.0, slow, nb,
                                {"compact": [1, 1.5, 1.8], "scatter": [1, 1.8, 2.1]}))
    out["timer"] = doc(m, "timer", {"samples": 100000}, [
        {"kind": "scalar", "metric": "tsc_ghz", "value": 2.1 if m == "a" else 2.6, "unit": "GHz"},
        {"kind": "scalar", "metric": "rdtsc_cost", "value": 7.1 * slow, "unit": "ns"},
        {"kind": "scalar", "metric": "clock_gettime_cost", "value": 18.9 * slow, "unit": "ns"},
        {"kind": "scalar", "metric": "clock_step", "value": 1.0 if m == "a" else 20.0, "unit": "ns"},
        {"kind": "latency", "metric": "back_to_back", "variant": "clock_gettime",
         "dist": dist(lognormal(rng, 19 * slow, 0.05, 4000))},
        {"kind": "latency", "metric": "back_to_back", "variant": "rdtsc",
         "dist": dist(lognormal(rng, 7 * slow, 0.05, 4000))}])
    create_ret = lognormal(rng, 21000 * slow, 0.2, 500)
    start = [c * (0.6 + 0.2 * rng.random()) for c in create_ret]
    out["create"] = doc(m, "create", {"threads": 500}, [
        {"kind": "pairs", "metric": "thread_create", "variant": "pthread",
         "x": "create_return_ns", "y": "thread_start_ns",
         "pairs": [[round(a, 1), round(b, 1)] for a, b in list(zip(create_ret, start))[:200]]},
        {"kind": "latency", "metric": "thread_create", "variant": "create_return",
         "dist": dist(create_ret)},
        {"kind": "latency", "metric": "thread_create", "variant": "thread_start",
         "dist": dist(start)}])
    # Machine B's mutex handoff is bimodal: a fast spinning level and a futex level.
    if m == "a":
        hand = lognormal(rng, 180, 0.15, 3000)
    else:
        hand = lognormal(rng, 220, 0.1, 1800) + lognormal(rng, 9000, 0.2, 1200)
    out["mutex"] = doc(m, "mutex", {"iters": 3000}, [
        {"kind": "latency", "metric": "uncontended", "variant": "glibc",
         "dist": dist(lognormal(rng, 17 * slow, 0.03, 2000))},
        {"kind": "latency", "metric": "uncontended", "variant": "adaptive",
         "dist": dist(lognormal(rng, 11 * slow, 0.03, 2000))},
        {"kind": "latency", "metric": "handoff", "variant": "glibc", "dist": dist(hand)}])
    out["handoff"] = doc(m, "handoff", {"iters": 2000}, [
        {"kind": "latency", "metric": "futex_wake", "variant": "same_core",
         "dist": dist(lognormal(rng, 3500 * slow, 0.2, 2000))},
        {"kind": "latency", "metric": "futex_wake", "variant": "other_core",
         "dist": dist(lognormal(rng, 6000 * slow, 0.25, 2000))}],
        steal=0.0 if m == "a" else 37.5)
    sig = lognormal(rng, 8000 * slow, 0.3, 300)
    wake = [s * (1.1 + 0.3 * rng.random()) for s in sig]
    out["condvar"] = doc(m, "condvar", {"iters": 300}, [
        {"kind": "latency", "metric": "signal_to_wake", "variant": "pthread", "dist": dist(wake)},
        {"kind": "pairs", "metric": "signal_to_wake", "variant": "pthread",
         "x": "signal_return_ns", "y": "wake_ns",
         "pairs": [[round(a, 1), round(b, 1)] for a, b in zip(sig, wake)]}])
    out["cas"] = doc(m, "cas", {"duration_ms": 100, "reps": 5}, curves(
        rng, "cas_ops", "Mops/s", 95.0, slow, 5,
        {"compact": [1, 0.45, 0.30], "scatter": [1, 0.35, 0.22]}) + [
        {"kind": "latency", "metric": "cas_uncontended", "variant": "lock_cmpxchg",
         "dist": dist(lognormal(rng, 6.5 * slow, 0.04, 1000))}])
    cpus = [0, 1, 2, 3]
    med = [[0.0 if i == j else (45.0 if i // 2 == j // 2 else 110.0) * slow * (1 + 0.03 * rng.random())
            for j in cpus] for i in cpus]
    p99 = [[0.0 if i == j else med[i][j] * 1.6 for j in cpus] for i in cpus]
    out["c2c"] = doc(m, "c2c", {"iters": 5000}, [
        {"kind": "matrix", "metric": "c2c_latency", "cpus": cpus,
         "median": [[round(x, 2) for x in r] for r in med],
         "p99": [[round(x, 2) for x in r] for r in p99], "unit": "ns"}])
    if m == "a":   # B has no pools program: it was missing there.
        rows = []
        for metric, base in (("fft", 900.0), ("matmul", 1500.0)):
            for pool, f in (("mutex", 1.0), ("lockfree", 0.8), ("stealing", 0.65)):
                for t in (1, 2, 4):
                    ms = lognormal(rng, base * f / (t ** 0.8), 0.05, 20)
                    rows.append({"kind": "pool", "metric": metric, "pool": pool, "threads": t,
                                 "levels": 10, "dist": dist(ms, unit="us"),
                                 "tasks": 2047, "failed_cas": 0 if pool == "mutex" else 13 * t,
                                 "check_ok": True})
        out["pools"] = doc(m, "pools", {"levels": 10, "reps": 20}, rows)
    out["tlb"] = tlb(m, slow)
    return out


def tlb(m: str, slow: float) -> dict:
    """A's first-level TLB reaches 64 pages, B's 48; huge pages reach further on A only."""
    rng = random.Random(11 if m == "a" else 13)
    edge = 64 if m == "a" else 48
    rows = []
    for variant, reach in (("4k", edge), ("thp", 512 if m == "a" else edge)):
        for pages in (8, 16, 32, 48, 64, 96, 128, 256, 512):
            base = 1.2 * slow if pages <= reach else 3.5 * slow
            reps = [round(base * (1 + abs(rng.gauss(0, 0.02))), 4) for _ in range(5)]
            row = {"kind": "sweep", "metric": "load_ns", "variant": variant, "x": "pages",
                   "pages": pages, "value": sorted(reps)[2], "unit": "ns", "reps": reps}
            if variant == "thp":
                row["huge_kib"] = 2048
            rows.append(row)
        rows.append({"kind": "scalar", "metric": f"reach_pages_{variant}", "value": reach,
                     "unit": "pages", "beyond_sweep": reach == 512, "per_rep": [reach] * 5})
    return doc(m, "tlb", {"reps": 5, "batches": 5, "max_pages": 512}, rows)


def main() -> None:
    for m in ("a", "b"):
        d = HERE / f"probes_{m}"
        d.mkdir(exist_ok=True)
        for name, body in machine(m).items():
            (d / f"{name}.json").write_text(json.dumps(body, indent=1) + "\n")


if __name__ == "__main__":
    main()

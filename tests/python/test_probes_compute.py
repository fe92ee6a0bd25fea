# SPDX-License-Identifier: MIT
"""The compute, memory-bandwidth, timer and TLB probes: schema, curves, and the
checks that the arithmetic kernels really do the work they count."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HPSYNC_BUILD", REPO / "build")) / "bin"
MAPPINGS = ["compact", "scatter", "os"]


def probe_path(name: str) -> Path:
    path = BIN / f"hps-probe-{name}"
    assert path.is_file(), f"{path} missing: run make first"
    return path


def run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(probe_path(name)), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def document(name: str, *args: str) -> dict[str, Any]:
    proc = run(name, *args)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["schema_version"] == 1
    assert doc["probe"] == name
    for key in ("host", "cpu_model", "pus", "l1d", "timer", "compiler", "git_commit"):
        assert key in doc["context"], key
    assert isinstance(doc["params"], dict)
    assert isinstance(doc["steal_ms"], (int, float))
    assert isinstance(doc["results"], list) and doc["results"]
    return doc


def default_threads(pus: int) -> list[int]:
    """1, then powers of two and their 1.5x steps, up to 2x the PUs."""
    out, p = [1], 2
    while p <= 2 * pus:
        out.append(p)
        if p + p // 2 <= 2 * pus:
            out.append(p + p // 2)
        p *= 2
    return out


def curves(doc: dict[str, Any], metric: str) -> dict[tuple[str, int], dict[str, Any]]:
    rows = [r for r in doc["results"] if r["kind"] == "curve" and r["metric"] == metric]
    return {(r["mapping"], r["threads"]): r for r in rows}


def check_curves(doc: dict[str, Any], metric: str, unit: str, reps: int) -> None:
    got = curves(doc, metric)
    want = {(m, t) for m in MAPPINGS for t in default_threads(doc["context"]["pus"])}
    assert set(got) == want, metric
    assert doc["params"]["threads"] == default_threads(doc["context"]["pus"])
    assert doc["params"]["mappings"] == MAPPINGS
    for row in got.values():
        assert set(row) >= {"kind", "metric", "mapping", "threads", "value", "unit", "reps"}
        assert row["unit"] == unit
        assert len(row["reps"]) == reps
        assert row["value"] > 0 and all(v > 0 for v in row["reps"])
        assert min(row["reps"]) <= row["value"] <= max(row["reps"])


# ---- compute -----------------------------------------------------------------


def test_compute_document() -> None:
    doc = document("compute", "--quick", "--iters", "20000", "--reps", "2")
    for metric in ("int_ops_per_sec", "fp_ops_per_sec"):
        check_curves(doc, metric, "ops/s", 2)
        for row in curves(doc, metric).values():
            assert re.fullmatch(r"[0-9a-f]{16}", row["checksum"])
    p = doc["params"]
    assert p["iters_int"] == p["iters_fp"] == 20000 and not p["iters_calibrated"]
    assert p["int_chains"] > 0 and p["fp_chains"] > 0 and p["ops_per_chain_step"] == 2


def checksums(seed: int) -> dict[tuple[str, str, int], str]:
    doc = document("compute", "--iters", "5000", "--reps", "2", "--threads", "1,2",
                   "--mappings", "compact,os", "--seed", str(seed))
    return {(r["metric"], r["mapping"], r["threads"]): r["checksum"] for r in doc["results"]}


def test_compute_checksum_depends_on_seed_not_mapping() -> None:
    """The work is a function of the runtime seed: nothing was precomputed."""
    a, b = checksums(1), checksums(2)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] != b[key], key
    for metric in ("int_ops_per_sec", "fp_ops_per_sec"):
        for t in (1, 2):
            assert a[(metric, "compact", t)] == a[(metric, "os", t)]
        assert a[(metric, "compact", 1)] != a[(metric, "compact", 2)]


def elapsed(doc: dict[str, Any], metric: str, iters: int) -> float:
    """Seconds of the fastest repetition, from the counted ops and the rate."""
    p = doc["params"]
    chains = p["int_chains"] if metric.startswith("int") else p["fp_chains"]
    ops = iters * chains * p["ops_per_chain_step"]
    row = curves(doc, metric)[("compact", 1)]
    return float(ops / max(row["reps"]))


def test_compute_time_scales_with_iterations() -> None:
    """8x the iterations must take several times longer: a loop the compiler
    had reduced to a closed form would take the same time at any count."""
    small, large = 300000, 2400000
    args = ("--threads", "1", "--mappings", "compact", "--reps", "3")
    d1 = document("compute", "--iters", str(small), *args)
    d8 = document("compute", "--iters", str(large), *args)
    for metric in ("int_ops_per_sec", "fp_ops_per_sec"):
        ratio = elapsed(d8, metric, large) / elapsed(d1, metric, small)
        assert ratio > 3.0, (metric, ratio)


def loop_body(binary: Path, symbol: str) -> list[str]:
    """Mnemonics of the hottest loop in symbol: between a backward branch and
    its target (the largest such range)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}",
                          str(binary)], capture_output=True, text=True, check=True).stdout
    insns: list[tuple[int, str, str]] = []
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    best: list[str] = []
    for addr, mnem, ops in insns:
        m = re.match(r"([0-9a-f]+) <", ops)
        if mnem.startswith("j") and m and int(m.group(1), 16) < addr:
            target = int(m.group(1), 16)
            body = [mn for a, mn, _ in insns if target <= a <= addr]
            if len(body) > len(best):
                best = body
    return best


@pytest.mark.skipif(platform.machine() != "x86_64" or not shutil.which("objdump"),
                    reason="needs objdump on x86-64")
def test_compute_kernels_keep_every_operation() -> None:
    """objdump: one multiply and one add per chain in each kernel's loop."""
    binary = probe_path("compute")
    doc = document("compute", "--iters", "1000", "--reps", "1", "--threads", "1",
                   "--mappings", "os")
    int_chains, fp_chains = doc["params"]["int_chains"], doc["params"]["fp_chains"]
    body = loop_body(binary, "hps_probe_int_kernel")
    assert sum(m.startswith("imul") for m in body) >= int_chains, body
    assert sum(m.startswith(("add", "lea")) for m in body) >= int_chains, body
    body = loop_body(binary, "hps_probe_fp_kernel")
    fma = sum(m.startswith("vfmadd") for m in body)
    mul = sum(m.startswith(("mulsd", "vmulsd")) for m in body)
    add = sum(m.startswith(("addsd", "vaddsd")) for m in body)
    assert fma >= fp_chains or (mul >= fp_chains and add >= fp_chains), body


# ---- memory bandwidth ------------------------------------------------------------


def test_membw_document() -> None:
    proc = run("membw", "--quick", "--buffer-mib", "1", "--reps", "2")
    assert proc.returncode == 0, proc.stderr
    assert "include cache hits" in proc.stderr      # a tiny buffer is called what it is
    doc = document("membw", "--quick", "--buffer-mib", "1", "--reps", "2")
    check_curves(doc, "read_bytes_per_sec", "B/s", 2)
    check_curves(doc, "write_bytes_per_sec", "B/s", 2)
    p = doc["params"]
    assert p["buffer_bytes"] == 1 << 20 and p["llc_bytes"] > 0


def test_membw_default_buffer_is_far_beyond_the_llc() -> None:
    """--quick alone must size buffers at >= 2x the LLC (checked on one point)."""
    doc = document("membw", "--quick", "--threads", "1", "--mappings", "compact",
                   "--reps", "1")
    assert doc["params"]["buffer_bytes"] >= 2 * doc["params"]["llc_bytes"]
    assert doc["params"]["buffer_llc_ratio"] >= 2


# ---- timer ---------------------------------------------------------------------------


def test_timer_document() -> None:
    doc = document("timer", "--quick", "--samples", "2000")
    scalars = {r["metric"]: r for r in doc["results"] if r["kind"] == "scalar"}
    for name in ("clock_monotonic_cost_ns", "clock_monotonic_step_ns",
                 "clock_realtime_cost_ns", "clock_realtime_step_ns"):
        assert scalars[name]["value"] > 0 and scalars[name]["unit"] == "ns", name
    assert scalars["tsc_invariant"]["value"] in (-1, 0, 1)
    variants = ["clock_monotonic", "clock_realtime"]
    if platform.machine() in ("x86_64", "i686"):
        variants.insert(0, "rdtsc")
        for name in ("tsc_hz", "tsc_step_ticks", "tsc_step_ns", "tsc_read_ticks",
                     "tsc_read_ns"):
            assert scalars[name]["value"] > 0, name
        assert scalars["tsc_hz"]["unit"] == "Hz"
    lat = [r for r in doc["results"] if r["kind"] == "latency"]
    assert [r["variant"] for r in lat] == variants
    for r in lat:
        assert r["metric"] == "back_to_back_ns"
        d = r["dist"]
        assert d["n"] == 2000 and d["unit"] == "ns"
        assert d["min"] <= d["median"] <= d["p99"] <= d["max"]
        assert {"p1", "p90", "p999", "mean", "bimodal", "hist", "samples"} <= set(d)


# ---- TLB reach ---------------------------------------------------------------------------


def thp_on() -> bool:
    try:
        mode = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False
    return "[always]" in mode or "[madvise]" in mode


def reach_of(values: list[float], pages: list[int]) -> int:
    """The probe's rule: the largest count up to which every point is within 10 % of the first."""
    out = pages[0]
    for v, p in zip(values[1:], pages[1:]):
        if v > 1.10 * values[0]:
            break
        out = p
    return out


def test_tlb_document() -> None:
    doc = document("tlb", "--quick", "--reps", "3", "--batches", "2", "--max-pages", "100")
    variants = ["4k", "thp"] if thp_on() else ["4k"]
    sweep = [r for r in doc["results"] if r["kind"] == "sweep"]
    assert sorted({r["variant"] for r in sweep}) == sorted(variants)
    scalars = {r["metric"]: r for r in doc["results"] if r["kind"] == "scalar"}
    for v in variants:
        rows = [r for r in sweep if r["variant"] == v]
        pages = [r["pages"] for r in rows]
        # The quick sweep up to --max-pages, and the count asked for itself.
        assert pages == [8, 16, 32, 48, 56, 64, 72, 96, 100], pages
        for r in rows:
            assert r["metric"] == "load_ns" and r["unit"] == "ns" and r["x"] == "pages"
            assert len(r["reps"]) == 3
            assert r["value"] == sorted(r["reps"])[1]          # the median of the reps
            # A dependent load takes a cycle at the very least: a chase that the
            # compiler dropped or overlapped would come out far below.
            assert min(r["reps"]) > 0.2, r
            if v == "thp":
                assert r["huge_kib"] >= 0
        reach = scalars[f"reach_pages_{v}"]
        assert reach["unit"] == "pages"
        assert reach["value"] == reach_of([r["value"] for r in rows], pages)
        assert reach["beyond_sweep"] == (reach["value"] == 100)
        assert reach["per_rep"] == [reach_of([r["reps"][k] for r in rows], pages) for k in range(3)]


def test_tlb_stays_in_the_first_level_cache() -> None:
    """Every page's line is on its own L1 set up to 64 pages, so 16 pages cost what 8
    do (within 25 %, best of several reps against noise).  Were the lines all at the
    same page offset, 16 of them would share one set of an 8- or 12-way L1 and miss."""
    doc = document("tlb", "--quick", "--reps", "5", "--batches", "3", "--max-pages", "16")
    rows = {r["pages"]: r for r in doc["results"] if r["kind"] == "sweep" and r["variant"] == "4k"}
    assert min(rows[16]["reps"]) < 1.25 * min(rows[8]["reps"]), rows


# ---- arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize("name,args", [
    ("compute", ["--bogus"]),
    ("compute", ["--threads", "0"]),
    ("compute", ["--threads", "1,,2"]),
    ("compute", ["--threads", "1,2,"]),
    ("compute", ["--mappings", "compact,nowhere"]),
    ("compute", ["--mappings", "os,os"]),
    ("compute", ["--iters", "x"]),
    ("compute", ["--reps"]),
    ("membw", ["--buffer-mib", "0"]),
    ("membw", ["--threads", "a"]),
    ("membw", ["--mappings", ""]),
    ("timer", ["--samples", "5"]),
    ("timer", ["--threads", "1"]),
    ("tlb", ["--max-pages", "4"]),
    ("tlb", ["--max-pages", "1000"]),
    ("tlb", ["--reps", "0"]),
    ("tlb", ["--batches", "x"]),
    ("tlb", ["--threads", "2"]),
])
def test_bad_arguments(name: str, args: list[str]) -> None:
    proc = run(name, *args)
    assert proc.returncode == 2, (args, proc.stderr)
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr

# SPDX-License-Identifier: MIT
"""`bench malloc`: pure computations on canned inputs, the C program, one small real run."""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from hpsync import runs, schema
from hpsync.bench.malloc import analyse as mallocs
from hpsync.bench.malloc import measure as bench_malloc
from hpsync.bench.malloc import render as malloc_render

REPO = Path(__file__).resolve().parents[2]
BENCH = Path(os.environ.get("HPSYNC_BUILD", REPO / "build")) / "bin" / "hps-bench-malloc"
Run = Callable[..., subprocess.CompletedProcess[str]]

# A cachegrind.out as valgrind 3.19 writes it: one function's records split
# over two file blocks (code inlined from another file), trailing zero
# counts left out, and a function with no misses.
CACHEGRIND_OUT = """\
desc: D1 cache:         32768 B, 64 B, 8-way associative
cmd: hps-bench-malloc --mode ring --sim --laps 50
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=/src/ring.c
fn=ring_walk_6
41 1
45 6400 0 0 6400 6400 0 0 0 0
fl=/src/other.h
fn=ring_walk_6
12 5 0 0 3 1 0 2 1 0
fn=ring_walk_0
45 6400 0 0 6400 0
summary: 12805 0 0 12803 6401 0 2 1 0
"""


def targets_by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in doc["targets"]}


def analysed(doc: dict[str, Any]) -> dict[str, Any]:
    """A canned schema-1 document, upgraded (re-analysed) as `report` reads it."""
    return runs.upgrade(doc, "canned")


# ---- pure functions ---------------------------------------------------------

def test_set_spread() -> None:
    base = 0x7F0000001000
    # 1 KiB apart on 64 sets of 64 B: every 16th set, 32 blocks each.
    assert mallocs.set_spread([base + 1024 * i for i in range(128)], 64, 64) == (4, 32)
    assert mallocs.set_spread([base + 64 * i for i in range(128)], 64, 64) == (64, 2)
    assert mallocs.set_spread([base + 4096 * i for i in range(128)], 64, 64) == (1, 128)
    # 1 KiB + 64 B apart walks through all sets.
    used, most = mallocs.set_spread([base + 1088 * i for i in range(128)], 64, 64)
    assert used == 64 and most == 2
    # The pages a ring's first lines span: 2 KiB apart, 128 of them on 64 pages,
    # 2112 B apart (cia's class) on 66 here; an address's page, not the address.
    assert mallocs.page_span([base + 2048 * i for i in range(128)], 4096) == 64
    assert mallocs.page_span([base + 2112 * i for i in range(128)], 4096) == 66
    assert mallocs.page_span([base, base + 4095, base + 4096], 4096) == 2
    assert mallocs.page_span([], 4096) == 0
    # Only the line an address falls in counts, not the address itself.
    assert mallocs.set_indices([base, base + 63, base + 64], 64, 64) == [0, 0, 1]
    assert mallocs.set_spread([], 64, 64) == (0, 0)
    with pytest.raises(ValueError):
        mallocs.set_spread([base], 0, 64)
    assert mallocs.spread_ok(32, 8) and not mallocs.spread_ok(31, 4) and not mallocs.spread_ok(64, 9)


def test_parse_cachegrind() -> None:
    events, totals = mallocs.parse_cachegrind(CACHEGRIND_OUT)
    assert events[:5] == ["Ir", "I1mr", "ILmr", "Dr", "D1mr"]
    assert totals["ring_walk_6"][events.index("Ir")] == 6406
    assert mallocs.d1_misses(events, totals, "ring_walk_6") == 6400 + 1 + 1
    assert mallocs.d1_misses(events, totals, "ring_walk_0") == 0
    assert mallocs.d1_misses(events, totals, "never_ran") == 0
    with pytest.raises(ValueError):
        mallocs.parse_cachegrind("fn=x\n1 2 3\n")
    with pytest.raises(ValueError):
        mallocs.d1_misses(["Ir", "Dr"], {}, "x")


def test_misses_per_lap() -> None:
    # The same layout: the difference cancels the runs' shared constant.
    assert mallocs.misses_per_lap([50, 150], [6401, 19201], True) == (128.0, "difference")
    # Different layouts (a randomising allocator): each run's per-lap mean.
    value, method = mallocs.misses_per_lap([50, 150], [150, 525], False)
    assert method == "mean-per-run" and value == pytest.approx((3.0 + 3.5) / 2)
    assert mallocs.misses_per_lap([50, 150], [10, 5], True)[0] == 0.0


def test_valgrind_ll_and_geometries() -> None:
    assert bench_malloc.valgrind_ll({"size": 33554432, "ways": 16, "line": 64}) == "33554432,16,64"
    # 30 MiB 20-way: 24576 sets, rounded down to 16384.
    assert bench_malloc.valgrind_ll({"size": 30 << 20, "ways": 20, "line": 64}) == f"{16384 * 20 * 64},20,64"
    geoms, notes = bench_malloc.d1_geometries({"size": 32768, "ways": 8, "line": 64})
    assert [g["d1"] for g in geoms] == ["32768,8,64"] and not notes
    assert geoms[0]["labels"] == ["this machine", "reference"]
    geoms, notes = bench_malloc.d1_geometries({"size": 49152, "ways": 12, "line": 64})
    assert [g["d1"] for g in geoms] == ["49152,12,64", "32768,8,64"] and not notes
    geoms, notes = bench_malloc.d1_geometries({"size": 48 * 1024, "ways": 8, "line": 64})
    assert [g["d1"] for g in geoms] == ["32768,8,64"] and "power-of-two" in notes[0]


def test_scenarios() -> None:
    assert bench_malloc.scenarios([2, 4]) == [("local", 1), ("local", 2), ("local", 4),
                                             ("prodcons", 2), ("prodcons", 4)]
    assert bench_malloc.scenarios([1, 3]) == [("local", 1), ("local", 3)]
    assert bench_malloc.pattern_scenarios([2, 4]) == [("large", 1), ("stress", 4), ("server", 2),
                                                      ("pipeline", 2)]
    ns = argparse.Namespace(quick=False, allocators=None, reps=None, duration_ms=None, threads=None)
    assert bench_malloc.make_params(ns).patterns == bench_malloc.pattern_scenarios([2, 4])


def test_rows_and_targets(canned: Callable[[str], Any]) -> None:
    doc = analysed(canned("bench_malloc_samples.json"))
    assert schema.validate(doc) == []
    rows = doc["extra"]["rows"]
    spread = mallocs.rows_of(rows, "spread", allocator="jemalloc", size=1024, state="fresh")
    assert spread[0]["sets_used"] == 4 and not spread[0]["meets_target"]
    # rand's rounds differ: the row keeps the worst one, and a note says so.
    r = mallocs.rows_of(rows, "spread", allocator="rand", size=1024)[0]
    assert (r["sets_used"], r["max_per_set"]) == (50, 7) and r["varies"]
    ring = {r["size"]: r for r in mallocs.rows_of(rows, "ring", allocator="hpsync")}
    # Round 2 ran 1.5x slower as a whole: the per-round ratio does not see it.
    assert ring[64]["ns_per_node"] == pytest.approx(1.10)
    assert ring[2048]["ratio_vs_64"] == pytest.approx(1.15 / 1.10)
    assert ring[1024]["laps_per_sec"] == pytest.approx(1e9 / (1.12 * 128))
    # Samples stored before the pages were kept have none; the row says so with None.
    assert all(r["pages"] is None for r in ring.values())
    with_pages = canned("bench_malloc_samples.json")
    for sm in with_pages["samples"]["ring"]:
        sm["pages"] = 60 + sm["round"] if sm["size"] == 2048 else 2
    doc2 = analysed(with_pages)
    ring2 = {r["size"]: r for r in mallocs.rows_of(doc2["extra"]["rows"], "ring", allocator="hpsync")}
    assert ring2[2048]["pages"] == 60 + max(s["round"] for s in with_pages["samples"]["ring"])
    ms2 = {schema.key(m): m for m in doc2["measurements"]}
    assert ms2["ring/first_line_pages/hpsync/size=2048"]["reps"] == sorted(
        60 + s["round"] for s in with_pages["samples"]["ring"]
        if s["allocator"] == "hpsync" and s["size"] == 2048)
    page = malloc_render.render(doc2)
    line_2k = next(ln for ln in page.splitlines() if ln.strip().startswith("2048 "))
    assert f"{ring2[2048]['pages']}p" in line_2k and "Np: the pages the first lines span" in page
    assert "Np:" not in malloc_render.render(doc)
    cg = {r["allocator"]: r for r in mallocs.rows_of(rows, "cachegrind", size=1024)}
    assert cg["jemalloc"]["d1_misses_per_lap"] == 128.0 and cg["jemalloc"]["method"] == "difference"
    assert cg["rand"]["method"] == "mean-per-run"
    st = {r["allocator"]: r for r in mallocs.rows_of(rows, "mix", pattern="local", threads=1)}
    assert st["hpsync"]["best_baseline"] == "mimalloc"
    # Round 0 ran at 0.3x for everybody: per-round ratios are unaffected.
    assert st["hpsync"]["ops_ratio_vs_best"] == pytest.approx(36 / 41)
    assert st["hpsync"]["ops_ratio_vs_glibc"] == pytest.approx(36 / 33)
    assert st["hpsync"]["rss_ratio_vs_mimalloc"] == pytest.approx(1.1)
    pat = {r["pattern"]: r for r in mallocs.rows_of(rows, "pattern", allocator="hpsync")}
    assert set(pat) == set(mallocs.PATTERNS) and pat["stress"]["threads"] == 4
    # Round 1 ran at half speed for everybody: per-round ratios are unaffected.
    assert pat["large"]["best_baseline"] == "mimalloc" and pat["large"]["best_rss_baseline"] == "glibc"
    assert pat["large"]["ops_ratio_vs_best"] == pytest.approx(20 / 22)
    assert pat["large"]["rss_ratio_vs_best"] == pytest.approx(48 / 42)

    ms = {schema.key(m): m for m in doc["measurements"]}
    # The targets' derived figures: per round, over every size (and state).
    assert ms["spread/fewest_sets/hpsync"]["reps"] == [54, 54]
    assert ms["spread/fewest_sets/jemalloc"]["value"] == min(
        r["sets_used"] for r in mallocs.rows_of(rows, "spread", allocator="jemalloc"))
    assert ms["ring/worst_ratio_vs_64/hpsync"]["value"] == pytest.approx(1.15 / 1.10)
    assert ms["cachegrind/misses_vs_fewest_unaware/hpsync/32768,8,64/size=1024"]["value"] == 0
    assert len(ms["pattern/slowdown_vs_best/hpsync/large T=1"]["reps"]) == 3

    t = targets_by_id(doc)
    assert list(t) == ["index-spread-sets", "index-spread-per-set", "ring", "cachegrind",
                       "single-thread", "multithread", "peak-rss",
                       *(f"pattern-ops_{p}" for p in mallocs.PATTERNS),
                       *(f"pattern-rss_{p}" for p in mallocs.PATTERNS)]
    verdict = {k: v["verdict"] for k, v in t.items()}
    assert verdict["index-spread-sets"] == verdict["index-spread-per-set"] == "PASS"
    assert verdict["ring"] == "PASS" and "1.05x" in t["ring"]["detail"]
    assert verdict["cachegrind"] == "PASS"
    assert verdict["single-thread"] == "FAIL" and "0.88x" in t["single-thread"]["detail"]
    assert verdict["multithread"] == "PASS" and "prodcons 2.00x" in t["multithread"]["detail"]
    # Peak RSS is judged from one round: prodcons 2T at 1.30x mimalloc's.
    assert verdict["peak-rss"] == "FAIL" and "prodcons 2T 1.30x" in t["peak-rss"]["detail"]
    assert verdict["pattern-ops_large"] == "PASS" and verdict["pattern-rss_large"] == "PASS"
    assert verdict["pattern-rss_stress"] == "FAIL" and "1.38x" in t["pattern-rss_stress"]["detail"]
    # The server's rounds straddle 1.2x and the pipeline's swing from 0.91x
    # to 2x: too noisy to fail.
    assert verdict["pattern-ops_server"] == verdict["pattern-ops_pipeline"] == "inconclusive"
    assert "rounds on both sides of 1.2" in t["pattern-ops_pipeline"]["detail"]
    notes = "\n".join(doc["warnings"])
    assert "tcmalloc: missing" in notes and "rand laid the ring out differently" in notes
    assert "index spread differs between rounds for rand" in notes


def test_targets_judge_only_what_was_measured(canned: Callable[[str], Any]) -> None:
    raw = canned("bench_malloc_samples.json")
    no_subject = copy.deepcopy(raw)
    for part in no_subject["samples"].values():
        part[:] = [s for s in part if s["allocator"] != mallocs.SUBJECT]
    t = targets_by_id(analysed(no_subject))
    assert all(v["verdict"] == "n/a" for v in t.values())
    no_refs = copy.deepcopy(raw)
    no_refs["samples"]["cachegrind"] = [s for s in raw["samples"]["cachegrind"]
                                        if s["allocator"] not in mallocs.INDEX_UNAWARE]
    no_refs["samples"]["mix"] = [s for s in raw["samples"]["mix"] if s["allocator"] != "mimalloc"]
    t = targets_by_id(analysed(no_refs))
    assert t["cachegrind"]["verdict"] == "n/a" and t["peak-rss"]["verdict"] == "n/a"
    assert "needs mimalloc" in t["peak-rss"]["detail"]
    assert t["single-thread"]["passed"] is True                 # best left: jemalloc, 36/38
    # A worse ring at 2 KiB fails the ring target; 4 KiB is not judged.
    slow = copy.deepcopy(raw)
    for s in slow["samples"]["ring"]:
        if s["allocator"] == "hpsync" and s["size"] == 2048:
            s["ns_per_node"] *= 1.2
    assert targets_by_id(analysed(slow))["ring"]["verdict"] == "FAIL"
    # prodcons 2T below glibc: a FAIL when every round says so, inconclusive
    # when the rounds fall on both sides of the target.
    behind = copy.deepcopy(raw)
    for s in behind["samples"]["mix"]:
        if s["allocator"] == "hpsync" and s["pattern"] == "prodcons":
            s["ops_per_sec"] = {0: 2.0e6, 1: 9.0e6, 2: 9.5e6}[s["round"]]
    t = targets_by_id(analysed(behind))
    assert t["multithread"]["verdict"] == "FAIL" and "prodcons" in t["multithread"]["detail"]
    for s in behind["samples"]["mix"]:
        if s["allocator"] == "hpsync" and s["pattern"] == "prodcons":
            s["ops_per_sec"] = {0: 4.0e6, 1: 6.0e6, 2: 11.0e6}[s["round"]]
    t = targets_by_id(analysed(behind))
    assert t["multithread"]["verdict"] == "inconclusive" and t["multithread"]["passed"] is None
    assert "rounds on both sides of 1" in t["multithread"]["detail"]


def test_render(canned: Callable[[str], Any]) -> None:
    text = malloc_render.render(analysed(canned("bench_malloc_samples.json")))
    for heading in ("1. Index spread", "2. Ring traversal", "3. Simulated L1", "4. malloc/free mix",
                    "5. Peak RSS", "6. Patterns", "7. Peak RSS of the patterns", "Targets"):
        assert heading in text
    assert "4/32*" in text and "FAIL          single-thread" in text
    assert "inconclusive  pipeline: ops/s" in text and "FAIL          stress: peak RSS" in text
    assert "PASS          large: ops/s" in text
    assert "tcmalloc  missing" in text


# ---- the C program ----------------------------------------------------------

def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BENCH), *args], capture_output=True, text=True, timeout=60,
                          env=env, check=False)


def test_program_rejects_bad_arguments(built: None) -> None:
    for args in (["--mode", "nope"], ["--mode", "spread", "--sim"], ["--mode", "ring", "--laps", "0"],
                 ["--mode", "mix", "--pattern", "prodcons", "--threads", "3"],
                 ["--mode", "mix", "--pattern", "pipeline", "--threads", "3"],
                 ["--mode", "mix", "--pattern", "fifo"], ["--bogus"]):
        proc = run(args)
        assert proc.returncode == 2, args
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) >= 1


def test_program_documents(built: None) -> None:
    doc = json.loads(run(["--mode", "spread", "--warmup", "1000"]).stdout)
    assert "libc.so" in doc["malloc_provider"] and doc["l1d"]["line"] > 0
    states = {(r["state"], r["size"]) for r in doc["rows"]}
    assert ("fresh", 64) in states and ("warm", 65536) in states and ("fresh", 4080) in states
    assert all(len(r["addresses"]) == 128 for r in doc["rows"])
    assert all(len(set(r["addresses"])) == 128 for r in doc["rows"])
    doc = json.loads(run(["--mode", "ring", "--laps", "10", "--reps", "2"]).stdout)
    sizes = [r["size"] for r in doc["rows"]]
    assert sizes[0] == 64 and 1024 in sizes and 8192 in sizes
    assert len({r["walk_function"] for r in doc["rows"]}) == len(sizes)
    assert all(r["ns_per_node_min"] > 0 and len(r["ns_per_node_reps"]) == 2 for r in doc["rows"])
    doc = json.loads(run(["--mode", "mix", "--pattern", "prodcons", "--threads", "2",
                          "--duration-ms", "50"]).stdout)
    row = doc["rows"][0]
    assert row["ops"] == row["mallocs"] + row["frees"] and row["frees"] > 0
    assert row["rss_peak_kib"] >= row["rss_start_kib"] > 0
    for pattern, threads in bench_malloc.pattern_scenarios([2]):
        doc = json.loads(run(["--mode", "mix", "--pattern", pattern, "--threads", str(threads),
                              "--duration-ms", "50"]).stdout)
        row = doc["rows"][0]
        assert row["pattern"] == pattern and row["threads"] == threads
        assert row["ops"] == row["mallocs"] + row["frees"] and row["mallocs"] > 0 and row["frees"] > 0
        assert row["rss_peak_kib"] >= row["rss_start_kib"] > 0


# A malloc whose blocks overlap by 16 bytes (and whose free does nothing):
# the mix must notice instead of reporting a figure.
OVERLAPPING_MALLOC = r"""
#include <stddef.h>
#include <string.h>
static char arena[128 << 20];
static size_t off;
void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    return arena + __atomic_fetch_add(&off, n - 16, __ATOMIC_RELAXED) % (sizeof arena - (8 << 20));
}
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { void *p = malloc(a * b); memset(p, 0, a * b); return p; }
void *realloc(void *p, size_t n) { void *q = malloc(n); if (p) memmove(q, p, n); return q; }
"""


def test_program_detects_overlapping_blocks(built: None, tmp_path: Path) -> None:
    src = tmp_path / "overlap.c"
    src.write_text(OVERLAPPING_MALLOC)
    lib = tmp_path / "liboverlap.so"
    # -fno-builtin: GCC would turn calloc's malloc+memset into a call to calloc.
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-fno-builtin", "-o", str(lib), str(src)],
                   check=True)
    env = dict(os.environ, LD_PRELOAD=str(lib))
    for pattern in ("local", "prodcons", *mallocs.PATTERNS):
        proc = run(["--mode", "mix", "--pattern", pattern, "--threads", "2", "--duration-ms", "50"],
                   env=env)
        assert proc.returncode == 1, (pattern, proc.stderr)
        assert "allocator is broken" in proc.stderr and proc.stdout == ""


# ---- one small real run -----------------------------------------------------

def test_cli_rejects_bad_arguments(hpsync: Run) -> None:
    for args in (["--allocators", "nope"], ["--allocators", ""], ["--reps", "0"],
                 ["--threads", "0"], ["--duration-ms", "x"]):
        proc = hpsync("bench", "malloc", *args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_quick_run(hpsync: Run) -> None:
    proc = hpsync("bench", "malloc", "--quick", "--json", "--reps", "1", "--duration-ms", "50",
                  "--threads", "2", timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "bench-malloc" and doc["run_id"] >= 1 and schema.validate(doc) == []
    assert doc["contexts"] and "hps-bench-malloc" in doc["contexts"][0]["programs"]
    for key in ("params", "targets", "warnings", "measurements"):
        assert key in doc, key
    extra = doc["extra"]
    for key in ("l1d", "llc", "allocators", "cachegrind", "samples", "rows"):
        assert key in extra, key
    status = {n: a["status"] for n, a in extra["allocators"].items()}
    assert list(status) == list(mallocs.ALLOCATORS) and status["glibc"] == "measured"
    assert set(status.values()) <= {"measured", "missing", "failed"}
    measured = [n for n, s in status.items() if s == "measured"]
    for n, a in extra["allocators"].items():
        if a["status"] == "missing":
            assert f"{n}: not measured" in proc.stderr and a["note"]
    rows = extra["rows"]
    for name in measured:
        assert len(mallocs.rows_of(rows, "spread", allocator=name)) == 2 * 31
        assert len(mallocs.rows_of(rows, "ring", allocator=name)) == 12
        mix = mallocs.rows_of(rows, "mix", allocator=name)
        assert [(r["pattern"], r["threads"]) for r in mix] == bench_malloc.scenarios([2])
        assert all(r["ops_per_sec"] > 0 and r["rss_peak_kib"] > 0 for r in mix)
        pat = mallocs.rows_of(rows, "pattern", allocator=name)
        assert sorted((r["pattern"], r["threads"]) for r in pat) == sorted(bench_malloc.pattern_scenarios([2]))
        assert all(r["ops_per_sec"] > 0 and r["rss_peak_kib"] > 0 for r in pat)
    assert {t["id"] for t in doc["targets"]} >= {"index-spread-sets", "ring", "single-thread"}
    # One round: every timed verdict is inconclusive, never a FAIL.
    timed = [t for t in doc["targets"] if t["id"].startswith(("pattern-ops", "ring", "single", "multi"))]
    assert timed and all(t["verdict"] in ("inconclusive", "n/a") for t in timed)
    if extra["cachegrind"]["valgrind"]:
        # The ring rows count sets in this machine's L1: compare with its simulation.
        l1 = extra["l1d"]
        ways = l1["ways"]
        ring = {(r["allocator"], r["size"]): r for r in mallocs.rows_of(rows, "ring")}
        cg = mallocs.rows_of(rows, "cachegrind", d1=f"{l1['size']},{ways},{l1['line']}")
        assert len(cg) == 12 * len(measured)
        for r in cg:
            if r["method"] != "difference" or not r["same_layout_as_timed"]:
                continue
            lay = ring[(r["allocator"], r["size"])]
            # LRU over a cyclic walk: a set holding <= 6 of the ring's lines
            # (room left for the stack and the mutex) never misses; lines
            # beyond 8 per set miss on every lap.
            if lay["max_per_set"] <= ways - 2:
                assert r["d1_misses_per_lap"] < 1, r
            assert r["d1_misses_per_lap"] + 1 >= mallocs.NODES - ways * lay["sets_used"], r

# SPDX-License-Identifier: MIT
"""The CLI end to end: ./hpsync as a subprocess from the repository root."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Callable

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_doctor_json(hpsync: Run) -> None:
    proc = hpsync("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for key in ("schema_version", "context", "cpu", "hypervisor", "tsx", "tsc", "clock",
                "topology", "os", "settings", "peers"):
        assert key in doc, key
    topo = doc["topology"]
    assert topo["pus"] >= topo["cores"] >= topo["packages"] >= 1
    assert topo["numa_nodes"] >= 1
    l1d = topo["l1d"]
    assert l1d["line"] in (32, 64, 128, 256) and l1d["size"] >= 4096
    if l1d["ways"] > 0:
        assert l1d["sets"] == l1d["size"] // (l1d["ways"] * l1d["line"])
    tsx = doc["tsx"]
    assert tsx["rtm_usable"] == (tsx["rtm"] and not tsx["rtm_always_abort"])
    if doc["tsc"]["present"]:
        assert 0.1 < doc["tsc"]["ghz"] < 10.0
        assert doc["tsc"]["step_ticks"] >= 1
    assert 0 < doc["clock"]["clock_gettime_ns"] < 10_000
    assert doc["cpu"]["vendor"] and doc["cpu"]["model_name"]
    assert doc["os"]["glibc"][0].isdigit()
    names = {s["name"] for s in doc["settings"]}
    assert {"HPSYNC_LOCK", "HPSYNC_STATS", "HPSYNC_STATS_FILE"} <= names
    for lib in ("jemalloc", "mimalloc", "tcmalloc", "libfabric"):
        assert lib in doc["peers"]["libraries"]


def test_doctor_human(hpsync: Run) -> None:
    proc = hpsync("doctor")
    assert proc.returncode == 0, proc.stderr
    for word in ("CPU", "RTM usable", "TSC", "L1d", "Settings", "HPSYNC_LOCK"):
        assert word in proc.stdout


def test_run_bad_lock(hpsync: Run) -> None:
    proc = hpsync("run", "--lock", "x", "--", "true")
    assert proc.returncode == 2
    assert one_line_error(proc).startswith("hpsync: unknown lock 'x' (choose from ttas,")


def test_run_missing_program(hpsync: Run) -> None:
    proc = hpsync("run", "--", "hpsync-no-such-program-here")
    assert proc.returncode != 0
    assert "not found" in one_line_error(proc)


def test_run_mcs_true(hpsync: Run) -> None:
    proc = hpsync("run", "--lock", "mcs", "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_run_exit_status_passes_through(hpsync: Run) -> None:
    proc = hpsync("run", "--lock", "clh", "--", "sh", "-c", "exit 7")
    assert proc.returncode == 7


def test_run_sets_environment(hpsync: Run, tmp_path: Path) -> None:
    proc = hpsync("run", "--lock", "ticket", "--stats-file", str(tmp_path / "s.txt"), "--",
                  "sh", "-c", 'echo "$HPSYNC_LOCK $HPSYNC_STATS $LD_PRELOAD"')
    assert proc.returncode == 0, proc.stderr
    lock, stats, preload = proc.stdout.split()
    assert (lock, stats) == ("ticket", "1")
    assert preload.split(":")[0].endswith("libhpsync-preload.so")


@pytest.mark.parametrize("args", [
    ["frobnicate"],
    ["bench", "locks", "--threads", "0"],
    ["bench", "locks", "--threads", "abc"],
    ["bench", "locks", "--duration-ms", "abc"],
    ["bench", "locks", "--reps", "0"],
    ["bench", "nosuch"],
    ["run"],
    [],
])
def test_bad_input_is_one_line(hpsync: Run, args: list[str]) -> None:
    proc = hpsync(*args)
    assert proc.returncode != 0
    one_line_error(proc)
    assert proc.stdout == ""


def test_missing_build_says_make(tmp_path: Path) -> None:
    proc = subprocess.run(["./hpsync", "doctor"], cwd=Path(__file__).resolve().parents[2],
                          env={"PATH": "/usr/bin:/bin", "HPSYNC_BUILD": str(tmp_path / "nobuild")},
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert "run make first" in one_line_error(proc)


def test_bench_locks_json_and_store(hpsync: Run, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    proc = hpsync("bench", "locks", "--json", "--quick", "--threads", "1,2", "--duration-ms", "10",
                  "--reps", "1", "--iters", "2000", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "bench-locks" and doc["context"]["schema_version"] == 1
    rows = doc["rows"]
    locks_seen = {r["lock"] for r in rows}
    assert locks_seen == {"glibc", "ttas", "ticket", "mcs", "hemlock", "adaptive"}
    for r in rows:
        for key in ("lock", "threads", "ops_per_sec", "ns_per_op"):
            assert key in r
        assert r["ops_per_sec"] > 0 and r["ns_per_op"] > 0
    unc = [r for r in rows if r["mode"] == "uncontended"]
    assert len(unc) == 6 and all("ns_ratio_vs_glibc" in r for r in unc)
    tp = [r for r in rows if r["mode"] == "throughput"]
    assert sorted({r["threads"] for r in tp}) == [1, 2]
    assert all("ops_ratio_vs_glibc" in r for r in tp)
    assert len(doc["targets"]) == 3

    listed = hpsync("runs", "--db", str(db), "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [r["id"] for r in runs] == [doc["run_id"]]
    assert runs[0]["kind"] == "bench-locks"


def test_bench_locks_human_no_store(hpsync: Run, tmp_path: Path) -> None:
    proc = hpsync("bench", "locks", "--quick", "--threads", "2", "--duration-ms", "10",
                  "--reps", "1", "--iters", "2000", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert "Targets" in proc.stdout and "adaptive" in proc.stdout
    assert not (tmp_path / "data" / "hpsync" / "results.db").exists()


def test_run_elide_sets_the_setting(hpsync: Run) -> None:
    """--elide reaches the program as HPSYNC_ELIDE=1 (a no-op here without RTM)."""
    r = hpsync("run", "--elide", "--", "sh", "-c", 'echo "$HPSYNC_ELIDE"')
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"

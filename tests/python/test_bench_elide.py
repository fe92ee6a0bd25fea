# SPDX-License-Identifier: MIT
"""`bench elide`: pure computations on canned documents, the C program, one tiny real run."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from hpsync import runs, schema
from hpsync.bench import elide, locks

REPO = Path(__file__).resolve().parents[2]
BENCH = Path(os.environ.get("HPSYNC_BUILD", REPO / "build")) / "bin" / "hps-bench-elide"
Run = Callable[..., subprocess.CompletedProcess[str]]
ROW_KEYS = ("mode", "workload", "threads", "lock", "variant", "backend", "ns_per_op", "ops_per_sec")


def analysed(canned: Callable[[str], Any], name: str) -> dict[str, Any]:
    """A canned schema-1 document, upgraded (re-analysed) as `report` reads it."""
    return runs.upgrade(canned(name), name)


def reanalysed(doc: dict[str, Any]) -> dict[str, Any]:
    return runs.upgrade(doc, "canned")


def targets_by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in doc["targets"]}


def statement(doc: dict[str, Any]) -> str:
    return elide.rtm_statement(doc["extra"]["rtm"])


# ---- pure functions on canned JSON ------------------------------------------

def test_no_rtm_document(canned: Callable[[str], Any]) -> None:
    doc = analysed(canned, "bench_elide_nortm.json")
    assert "NOT usable" in statement(doc) and "cannot be measured" in statement(doc)
    t = targets_by_id(doc)
    assert t["layer-overhead_adaptive"]["passed"] is True
    assert "+0.30 ns" in t["layer-overhead_adaptive"]["detail"]
    assert t["layer-overhead_hemlock"]["passed"] is False          # +2.4 ns in every rep
    assert t["interposer-overhead"]["passed"] is True              # +0.2 ns, backend off
    for tid in ("low-conflict-speedup", "high-conflict-slowdown"):
        assert t[tid]["passed"] is None and t[tid]["verdict"] == "n/a"
        assert "needs usable RTM" in t[tid]["detail"]
    assert not [r for r in doc["extra"]["rows"] if r["mode"] == "throughput"]


def test_no_rtm_rows(canned: Callable[[str], Any]) -> None:
    rows = analysed(canned, "bench_elide_nortm.json")["extra"]["rows"]
    for r in rows:
        for key in ROW_KEYS:
            assert key in r, (key, r)
    el = elide.find_row(rows, "layer-overhead", variant="elided", lock="adaptive")
    assert el is not None
    assert el["ns_per_op"] == pytest.approx(2.5) and el["plain_ns_per_op"] == pytest.approx(2.2)
    assert el["diff_ns_vs_plain"] == pytest.approx(0.3)
    assert el["ratio_vs_plain"] == pytest.approx(2.5 / 2.2)
    assert el["ops_per_sec"] == pytest.approx(1e9 / 2.5)
    pol = elide.find_row(rows, "policy")
    assert pol is not None and pol["ns_per_op"] == pytest.approx(3.1)
    assert pol["net_ns_per_decision"] == pytest.approx(1.1)
    assert sum(pol["action_shares"].values()) == pytest.approx(1.0)
    heavy = elide.find_row(rows, "elided-uncontended", "inject:abort-heavy", "elided")
    assert heavy is not None and heavy["emulated"] and heavy["backend"] == "inject"
    assert heavy["per_acquisition"]["aborts"] > heavy["per_acquisition"]["commits"]
    ip = elide.find_row(rows, "interposer-overhead", variant="elided")
    assert ip is not None and ip["diff_ns_vs_plain"] == pytest.approx(0.2)


def test_rtm_document(canned: Callable[[str], Any]) -> None:
    doc = analysed(canned, "bench_elide_rtm.json")
    assert statement(doc).startswith("RTM is usable")
    t = targets_by_id(doc)
    assert t["layer-overhead_adaptive"]["passed"] is True          # +1 ns
    assert t["layer-overhead_ttas"]["passed"] is False             # +3 ns
    # HPSYNC_ELIDE=1 really elides with RTM: not the layer's cost, so not judged.
    assert t["interposer-overhead"]["passed"] is None
    assert "judged only where RTM is absent" in t["interposer-overhead"]["detail"]
    low = t["low-conflict-speedup"]
    assert low["passed"] is True                                   # 1T 0.9x and 2T 1.2x not judged
    assert "1T" not in low["detail"] and "4T 1.50x" in low["detail"]
    high = t["high-conflict-slowdown"]
    assert high["passed"] is False and "8T 0.90x" in high["detail"]
    tp = [r for r in doc["extra"]["rows"] if r["mode"] == "throughput"]
    assert len(tp) == 2 * 2 * 5
    row = elide.find_row(tp, "throughput", "low-conflict", "elided", threads=8)
    assert row is not None and row["ratio_vs_plain"] == pytest.approx(1.8)
    assert row["ns_per_op"] == pytest.approx(1e9 / row["ops_per_sec"])
    assert row["fairness"] == pytest.approx(0.8)


def _set_ratio(doc: dict[str, Any], workload: str, threads: int, ratio: float) -> None:
    for s in doc["samples"]["throughput"]:
        if s["workload"] == workload and s["threads"] == threads and s["variant"] == "elided":
            s["ops_per_sec"] = (20e6 if workload == "low-conflict" else 15e6) * ratio


def test_throughput_target_boundaries(canned: Callable[[str], Any]) -> None:
    doc = copy.deepcopy(canned("bench_elide_rtm.json"))
    for t in (1, 2, 4, 8, 16):
        _set_ratio(doc, "high-conflict", t, 0.95)                  # exactly 5 % slower: PASS
    _set_ratio(doc, "low-conflict", 16, 1.3)                       # exactly 1.3x: PASS
    t = targets_by_id(reanalysed(doc))
    assert t["high-conflict-slowdown"]["passed"] is True
    assert t["low-conflict-speedup"]["passed"] is True
    _set_ratio(doc, "low-conflict", 4, 1.29)
    assert targets_by_id(reanalysed(doc))["low-conflict-speedup"]["passed"] is False
    # Only 1 and 2 threads measured: the 4+ thread target is not measured.
    doc["samples"]["throughput"] = [s for s in doc["samples"]["throughput"] if s["threads"] < 4]
    t = targets_by_id(reanalysed(doc))
    assert t["low-conflict-speedup"]["passed"] is None
    assert t["high-conflict-slowdown"]["passed"] is True            # 1T, 2T at 0.95x


def test_overhead_boundary_and_warnings(canned: Callable[[str], Any]) -> None:
    doc = copy.deepcopy(canned("bench_elide_nortm.json"))
    doc["samples"]["overhead"][0]["elided_ns_per_op_reps"] = [4.2, 4.1, 4.3]    # +2.0 ns exactly
    doc["samples"]["overhead"][1]["elided_ns_per_op_reps"] = [1.2, 1.2, 1.2]    # -1 ns: layout
    doc["params"]["iters"] = 1000
    out = reanalysed(doc)
    assert targets_by_id(out)["layer-overhead_adaptive"]["passed"] is True
    text = " ".join(out["warnings"])
    assert "shorter than 100000" in text
    assert "elided faster than plain (ttas -1.00 ns)" in text
    assert "injected test backend" in text


def test_interposer_overhead_judges_every_round(canned: Callable[[str], Any]) -> None:
    """+0.2 ns in the median but one round +3 ns: the rounds straddle the
    2 ns limit, so the verdict is inconclusive, never a FAIL or a PASS."""
    doc = copy.deepcopy(canned("bench_elide_nortm.json"))
    for s in doc["samples"]["interposer"]:
        if s["variant"] == "elided" and s["round"] == 1:
            s["ns_per_op"] += 3.0
    t = targets_by_id(reanalysed(doc))["interposer-overhead"]
    assert t["verdict"] == "inconclusive" and "rounds on both sides of 2" in t["detail"]


def test_measurements(canned: Callable[[str], Any]) -> None:
    run = analysed(canned, "bench_elide_rtm.json")
    ms = {schema.key(m): m for m in run["measurements"]}
    layer = ms["layer-overhead/ns_per_op/adaptive/elided"]
    assert len(layer["reps"]) == 3 and layer["unit"] == "ns"
    assert "throughput/ops_per_sec/low-conflict/elided T=8" in ms
    assert ms["interposer-overhead/ns_per_op/elided/rtm"]["dims"]["backend"] == "rtm"
    assert schema.validate(run) == []


def test_thread_counts() -> None:
    assert elide.thread_counts(2) == [1, 2, 4]
    assert elide.thread_counts(6) == [1, 2, 4, 6, 8, 12]
    assert elide.thread_counts(1) == [1, 2]
    assert elide.thread_counts(8, [16, 1, 16]) == [1, 16]


def test_render(canned: Callable[[str], Any]) -> None:
    text = elide.render(analysed(canned, "bench_elide_nortm.json"))
    first = text.splitlines()[2]
    assert first.startswith("RTM is NOT usable")
    for word in ("PASS", "FAIL", "n/a", "hps_elide_decide", "inject:commit", "HPSYNC_ELIDE=1",
                 "not measured, RTM is not usable"):
        assert word in text, word
    text = elide.render(analysed(canned, "bench_elide_rtm.json"))
    assert "low-conflict" in text and "elided/plain" in text and "1.80x" in text


# ---- the C program ----------------------------------------------------------

def run_bench(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HPSYNC_") and k != "LD_PRELOAD"}
    return subprocess.run([str(BENCH), *args], capture_output=True, text=True, timeout=60,
                          env={**base, **(env or {})}, check=False)


def test_program_rejects_bad_arguments(built: None) -> None:
    for args in (["--mode", "nope"], ["--mode", "overhead", "--iters", "0"],
                 ["--mode", "overhead", "--algos", "bogus"], ["--bogus", "1"],
                 ["--mode", "throughput", "--workload", "mid", "--variant", "plain"],
                 ["--mode", "throughput", "--workload", "low", "--variant", "x"], ["--mode"]):
        proc = run_bench(args)
        assert proc.returncode == 2, args
        assert proc.stdout == ""
        assert proc.stderr.strip(), args


def test_program_throughput_validates_under_injection(built: None) -> None:
    """Without RTM the throughput workloads still run (the injected backend
    takes the real lock), so their mutual-exclusion check is exercised here."""
    for workload in ("low", "high"):
        proc = run_bench(["--mode", "throughput", "--workload", workload, "--threads", "3",
                          "--duration-ms", "30", "--variant", "elided", "--stats"],
                         env={"HPSYNC_ELIDE_BACKEND": "inject:commit"})
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["backend"] == "inject" and isinstance(doc["rtm_usable"], bool)
        row = doc["rows"][0]
        assert row["counter_ok"] and row["ops"] > 0 and row["threads"] == 3
        # A 'commit' step that finds the lock held answers "busy", as RTM
        # would: every acquisition commits, falls back to the lock, or skips.
        per_op = row["per_op"]
        assert 0 < per_op["commits"] <= 1.0
        assert per_op["commits"] + per_op["fallbacks"] + per_op["skips"] == pytest.approx(1.0)


# ---- the CLI ----------------------------------------------------------------

def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_cli_bad_input(hpsync: Run) -> None:
    for args in (["--iters", "0"], ["--threads", "x"], ["--reps", "-1"], ["--bogus"]):
        proc = hpsync("bench", "elide", *args)
        assert proc.returncode == 2, args
        assert proc.stdout == ""
        one_line_error(proc)


def test_cli_tiny_real_run(hpsync: Run, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    proc = hpsync("bench", "elide", "--quick", "--iters", "20000", "--reps", "3", "--json",
                  "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "bench-elide" and doc["run_id"] >= 1 and schema.validate(doc) == []
    assert isinstance(doc["extra"]["rtm"]["rtm_usable"], bool)
    assert statement(doc).startswith("RTM is")
    for key in ("host", "cpu_model", "cores", "timer", "compiler", "git_commit"):
        assert key in doc["contexts"][0], key
    # hps-bench-elide and hps-bench-locks (through the interposer): one build, one context.
    assert {"hps-bench-elide", "hps-bench-locks"} <= set(doc["contexts"][0]["programs"])
    rows = doc["extra"]["rows"]
    modes = {r["mode"] for r in rows}
    assert {"layer-overhead", "interposer-overhead", "policy", "elided-uncontended"} <= modes
    for r in rows:
        for key in ROW_KEYS:
            assert key in r, (key, r)
        assert r["ns_per_op"] is None or r["ns_per_op"] > 0
    locks_measured = {r["lock"] for r in rows if r["mode"] == "layer-overhead"}
    assert locks_measured == set(locks.algorithms())
    ids = {t["id"] for t in doc["targets"]}
    assert {"layer-overhead_adaptive", "interposer-overhead", "low-conflict-speedup",
            "high-conflict-slowdown"} <= ids
    if not doc["extra"]["rtm"]["rtm_usable"]:
        assert all(t["passed"] is None for t in doc["targets"] if "conflict" in t["id"])
    assert any("shorter than 100000" in w for w in doc["warnings"])
    runs = hpsync("runs", "--db", str(db), "--json")
    assert json.loads(runs.stdout)[0]["kind"] == "bench-elide"

# SPDX-License-Identifier: MIT
"""Pure computations of `bench locks` on canned samples (tests/data/)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from hpsync import bench_locks, locks, render
from hpsync.errors import CliError


def analysed(canned: Callable[[str], Any], name: str) -> dict[str, Any]:
    doc = canned(name)
    return bench_locks.analyse(doc, doc["cores"])


def test_summarise_takes_medians_over_rounds(canned: Callable[[str], Any]) -> None:
    rows = locks.summarise(canned("bench_locks_pass.json")["samples"])
    glibc = locks.find_row(rows, "uncontended", "glibc")
    assert glibc is not None
    assert glibc["ns_per_op"] == pytest.approx(11.0)
    assert glibc["ns_per_op_single_threaded"] == pytest.approx(10.0)
    assert glibc["ops_per_sec"] == pytest.approx(1e9 / 11.0)
    tp16 = locks.find_row(rows, "throughput", "glibc", 16)
    assert tp16 is not None and tp16["ops_per_sec"] == pytest.approx(50e6)
    assert tp16["ns_per_op"] == pytest.approx(20.0)
    assert tp16["fairness"] == pytest.approx(0.9)


def test_every_row_has_required_fields(canned: Callable[[str], Any]) -> None:
    rows = analysed(canned, "bench_locks_pass.json")["rows"]
    assert {r["lock"] for r in rows} == set(locks.CONFIGS)
    for r in rows:
        for key in ("lock", "threads", "ops_per_sec", "ns_per_op", "mode"):
            assert key in r, (key, r)
    assert len([r for r in rows if r["mode"] == "uncontended"]) == 6
    assert len([r for r in rows if r["mode"] == "throughput"]) == 6 * 4


def test_ratios_against_glibc(canned: Callable[[str], Any]) -> None:
    rows = analysed(canned, "bench_locks_pass.json")["rows"]
    adaptive = locks.find_row(rows, "uncontended", "adaptive")
    assert adaptive is not None
    assert adaptive["ns_ratio_vs_glibc"] == pytest.approx(8.5 / 11.0)
    mcs16 = locks.find_row(rows, "throughput", "mcs", 16)
    assert mcs16 is not None and mcs16["ops_ratio_vs_glibc"] == pytest.approx(26 / 50)
    glibc2 = locks.find_row(rows, "throughput", "glibc", 2)
    assert glibc2 is not None and glibc2["ops_ratio_vs_glibc"] == pytest.approx(1.0)


def test_ratios_without_baseline_are_none() -> None:
    rows = locks.add_ratios([{"mode": "throughput", "lock": "mcs", "threads": 2,
                              "ops_per_sec": 5.0, "ns_per_op": 1.0}])
    assert rows[0]["ops_ratio_vs_glibc"] is None


def test_targets_pass(canned: Callable[[str], Any]) -> None:
    targets = analysed(canned, "bench_locks_pass.json")["targets"]
    assert [t["id"] for t in targets] == ["uncontended", "adaptive-throughput", "oversubscribed"]
    assert all(t["passed"] is True for t in targets), targets


def test_targets_fail(canned: Callable[[str], Any]) -> None:
    targets = {t["id"]: t for t in analysed(canned, "bench_locks_fail.json")["targets"]}
    assert targets["uncontended"]["passed"] is False          # 10 / 11 = 0.91 > 0.9
    assert targets["adaptive-throughput"]["passed"] is False  # 0.8x at 16 threads
    assert targets["oversubscribed"]["passed"] is False       # mcs 0.2x
    assert "mcs 0.20x" in targets["oversubscribed"]["detail"]


def test_oversubscribed_boundary_is_inclusive(canned: Callable[[str], Any]) -> None:
    rows = analysed(canned, "bench_locks_pass.json")["rows"]
    hem = locks.find_row(rows, "throughput", "hemlock", 16)
    assert hem is not None and hem["ops_ratio_vs_glibc"] == pytest.approx(0.5)


def test_targets_not_measured() -> None:
    targets = locks.evaluate_targets([], cores=2)
    assert [t["passed"] for t in targets] == [None, None, None]
    # Thread counts without 8 x cores: the oversubscription target is not judged.
    rows = locks.add_ratios([
        {"mode": "throughput", "lock": "glibc", "threads": 2, "ops_per_sec": 10.0, "ns_per_op": 0.1},
        {"mode": "throughput", "lock": "mcs", "threads": 2, "ops_per_sec": 1.0, "ns_per_op": 1.0},
    ])
    assert locks.evaluate_targets(rows, cores=2)[2]["passed"] is None


def test_interleaving_and_thread_counts() -> None:
    assert locks.interleaved_order(0, ["a", "b", "c"]) == ["a", "b", "c"]
    assert locks.interleaved_order(1, ["a", "b", "c"]) == ["c", "b", "a"]
    assert locks.thread_counts(2) == [1, 2, 8, 16]
    assert locks.thread_counts(1) == [1, 2, 4, 8]
    assert locks.thread_counts(4, [3, 1, 3]) == [1, 3]


def test_warnings_for_few_rounds(canned: Callable[[str], Any]) -> None:
    warnings = analysed(canned, "bench_locks_pass.json")["warnings"]
    assert any("round" in w for w in warnings)


def test_render_table_lists_every_lock(canned: Callable[[str], Any]) -> None:
    text = render.bench_locks(analysed(canned, "bench_locks_fail.json"))
    for lock in locks.CONFIGS:
        assert lock in text
    assert "FAIL" in text and "16 thr" in text


def test_program_output_extraction(canned: Callable[[str], Any]) -> None:
    doc = canned("hps_bench_locks_uncontended.json")
    assert bench_locks._uncontended_row(doc, "multi_threaded_process")["ns_per_op_min"] == 4.9
    bench_locks._check_provider("adaptive", doc)
    with pytest.raises(CliError):
        bench_locks._check_provider("glibc", doc)


def test_lock_names_include_alias() -> None:
    assert locks.lock_names() == ["ttas", "ticket", "mcs", "hemlock", "adaptive", "clh"]

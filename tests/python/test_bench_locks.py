# SPDX-License-Identifier: MIT
"""`bench locks`: the pure analysis on canned samples (tests/data/), the
verdicts the targets table gives them, the text report."""

from __future__ import annotations

import argparse
from typing import Any, Callable

import pytest

from hpsync import doctor, runs, schema
from hpsync.bench import locks
from hpsync.errors import CliError


def run_of(canned: Callable[[str], Any], name: str) -> dict[str, Any]:
    """A canned schema-1 document, upgraded (re-analysed) as `report` reads it."""
    return runs.upgrade(canned(name), name)


def verdicts(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in run["targets"]}


def by_key(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {schema.key(m): m for m in run["measurements"]}


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


def test_rows_and_ratios(canned: Callable[[str], Any]) -> None:
    rows = run_of(canned, "bench_locks_pass.json")["extra"]["rows"]
    assert {r["lock"] for r in rows} == set(locks.configs())
    for r in rows:
        for key in ("lock", "threads", "ops_per_sec", "ns_per_op", "mode"):
            assert key in r, (key, r)
    assert len([r for r in rows if r["mode"] == "uncontended"]) == 6
    assert len([r for r in rows if r["mode"] == "throughput"]) == 6 * 4
    adaptive = locks.find_row(rows, "uncontended", "adaptive")
    assert adaptive is not None and adaptive["ns_ratio_vs_glibc"] == pytest.approx(8.5 / 11.0)
    mcs16 = locks.find_row(rows, "throughput", "mcs", 16)
    assert mcs16 is not None and mcs16["ops_ratio_vs_glibc"] == pytest.approx(26 / 50)
    # No glibc row: no ratio, not a crash.
    alone = locks.summarise({"throughput": [{"lock": "mcs", "threads": 2, "round": 0,
                                             "ops_per_sec": 5.0, "ops_min_thread": 1,
                                             "ops_max_thread": 1}]})
    assert alone[0]["ops_ratio_vs_glibc"] is None


def test_measurements_keep_every_round(canned: Callable[[str], Any]) -> None:
    run = run_of(canned, "bench_locks_pass.json")
    ms = by_key(run)
    unc = ms["uncontended/ns_per_op/adaptive"]
    assert unc["unit"] == "ns" and unc["better"] == "lower" and len(unc["reps"]) == 3
    assert unc["value"] == pytest.approx(8.5) and unc["rounds"] == [0, 1, 2]
    assert ms["throughput/ops_per_sec/glibc T=16"]["better"] == "higher"
    # 8 x cores (2 cores: 16 threads): each algorithm's per-round ratio to glibc.
    over = [m for m in run["measurements"] if m["dims"]["part"] == "oversubscribed"]
    assert {m["dims"]["lock"] for m in over} == set(locks.algorithms())
    assert all(m["dims"]["threads"] == 16 for m in over)
    # Round by round (25/40, 25/60), not a ratio of medians (25/50).
    hem = ms["oversubscribed/ops_ratio_vs_glibc/hemlock T=16"]
    assert hem["reps"] == pytest.approx([25 / 40, 25 / 60]) and hem["rounds"] == [0, 1]


def test_verdicts(canned: Callable[[str], Any]) -> None:
    v = verdicts(run_of(canned, "bench_locks_pass.json"))
    assert list(v) == ["uncontended", "adaptive-throughput", "oversubscribed"]
    assert v["uncontended"]["verdict"] == "PASS" and v["uncontended"]["passed"] is True
    # The canned throughput has one round per figure: never judged.
    assert v["adaptive-throughput"]["verdict"] == "inconclusive"
    assert "1 round(s), fewer than 3" in v["adaptive-throughput"]["detail"]
    fail = verdicts(run_of(canned, "bench_locks_fail.json"))
    # 10 / 11 = 0.91 over 0.9 in the median, but one round is below: noisy, not FAIL.
    assert fail["uncontended"]["verdict"] == "inconclusive"
    assert "rounds on both sides of 0.9" in fail["uncontended"]["detail"]


def test_uncontended_fails_when_every_round_misses(canned: Callable[[str], Any]) -> None:
    doc = canned("bench_locks_fail.json")
    for s in doc["samples"]["uncontended"]:
        if s["lock"] == "adaptive":
            s["ns_per_op"] = 20.0
    v = verdicts(runs.upgrade(doc, "x"))
    assert v["uncontended"]["verdict"] == "FAIL" and v["uncontended"]["passed"] is False


def test_thread_counts() -> None:
    assert locks.thread_counts(2) == [1, 2, 8, 16]
    assert locks.thread_counts(1) == [1, 2, 4, 8]
    assert locks.thread_counts(4, [3, 1, 3]) == [1, 3]


def test_params() -> None:
    ns = argparse.Namespace(quick=True, threads=None, duration_ms=None, reps=None, iters=None)
    p = locks.make_params(ns, cores=2)
    assert (p.rounds, p.tp_rounds, p.threads, p.cores) == (3, 1, [1, 2, 8, 16], 2)
    assert p.configs == ["glibc", *locks.algorithms()]


def test_warnings_for_few_rounds(canned: Callable[[str], Any]) -> None:
    assert any("round" in w for w in run_of(canned, "bench_locks_pass.json")["warnings"])


def test_render_lists_every_lock(canned: Callable[[str], Any]) -> None:
    text = locks.render(run_of(canned, "bench_locks_pass.json"))
    for lock in locks.configs():
        assert lock in text
    assert "PASS          default lock (adaptive)" in text and "16 thr" in text
    assert "inconclusive  adaptive throughput" in text


def test_program_output_extraction(canned: Callable[[str], Any]) -> None:
    doc = canned("hps_bench_locks_uncontended.json")
    assert locks.uncontended_row(doc, "multi_threaded_process")["ns_per_op_min"] == 4.9
    locks.check_provider("adaptive", doc)
    with pytest.raises(CliError):
        locks.check_provider("glibc", doc)


def test_lock_names_include_alias() -> None:
    published = doctor.lock_algorithms()
    assert locks.lock_names() == [*locks.algorithms(), *published.aliases]
    assert all(published.resolve(a) in locks.algorithms() for a in published.aliases)
    assert locks.configs() == (locks.BASELINE, *locks.algorithms())


def test_published_locks_parse() -> None:
    """doctor.parse_locks on a canned "locks" object; a list without its
    default is refused."""
    canned = {"default": "b", "algorithms": [
        {"name": "a", "aliases": [], "description": "x"},
        {"name": "b", "aliases": ["bee"], "description": "y"}]}
    p = doctor.parse_locks(canned)
    assert (p.names, p.default, p.accepted(), p.resolve("bee")) == (("a", "b"), "b", ["a", "b", "bee"], "b")
    with pytest.raises(CliError):
        doctor.parse_locks({"default": "c", "algorithms": canned["algorithms"]})
    with pytest.raises(CliError):
        doctor.parse_locks({})

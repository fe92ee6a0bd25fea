# SPDX-License-Identifier: MIT
"""compare, report and repeatability on a run of every kind (canned), and
the whole pipeline end to end: two real `bench locks --quick` runs stored
in a fresh database, compared, reported and checked for repeatability."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from hpsync import characterize, compare, plots, report, runner, runs, schema
from hpsync.bench import locks
from test_characterize import run_of

Run = Callable[..., subprocess.CompletedProcess[str]]
CANNED = {"bench-locks": "bench_locks_pass.json", "bench-elide": "bench_elide_rtm.json",
          "bench-malloc": "bench_malloc_samples.json", "bench-shmem": "bench_shmem_samples.json"}
KINDS = sorted(CANNED) + [characterize.KIND]


def canned_run(canned: Callable[[str], Any], kind: str) -> dict[str, Any]:
    if kind == characterize.KIND:
        return run_of("a")
    return runs.upgrade(canned(CANNED[kind]), kind)


def slower(run: dict[str, Any], factor: float) -> dict[str, Any]:
    """The same run with every figure factor times larger."""
    out = copy.deepcopy(run)
    for m in out["measurements"]:
        m["reps"] = [r * factor for r in m["reps"]]
        if m["value"] is not None:
            m["value"] *= factor
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_compare_any_kind(canned: Callable[[str], Any], kind: str) -> None:
    a = canned_run(canned, kind)
    b = slower(a, 1.25)
    comp = compare.compare_runs(a, b)
    assert len(comp.rows) == len(a["measurements"]) and not comp.only_a and not comp.only_b
    with_value = [r for r in comp.rows if r.a]
    assert with_value and all(r.ratio == pytest.approx(1.25) for r in with_value)
    for r in comp.rows:
        assert r.mark in ("*", "=", "?")
        assert (r.p is None) == (r.mark == "?")
        if r.mark == "*" and r.verdict:
            # 25 % more is worse where lower is better, better where higher is.
            assert r.verdict == "worse" or "/s" in r.unit or r.unit in ("M/s", "x", "")
    text = compare.render(comp, "A", "B", schema.first_context(a), schema.first_context(b))
    assert "B/A" in text and "spread A" in text
    assert len(compare.to_csv(comp).splitlines()) == len(comp.rows) + 1


@pytest.mark.parametrize("kind", KINDS)
def test_repeatability_any_kind(canned: Callable[[str], Any], kind: str) -> None:
    a = canned_run(canned, kind)
    spreads = compare.repeatability([a, slower(a, 1.1), slower(a, 0.9)])
    assert spreads and all(s.cv == pytest.approx(0.1) for s in spreads if s.values[0])
    assert "measurements within 10% CV over 3 runs" in compare.render_repeatability(spreads)


@pytest.mark.parametrize("kind", KINDS)
def test_report_any_kind(canned: Callable[[str], Any], kind: str,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind's page has every section and one image per planned figure.
    Drawing is stubbed here (matplotlib draws for real in the end-to-end
    test below and in test_report_render.py)."""
    for name in ("curves", "latencies", "pairs", "matrix", "pools", "measurement_lines",
                 "measurement_bars"):
        monkeypatch.setattr(plots, name, lambda *a, **k: b"\x89PNG")
    run = canned_run(canned, kind)
    page = report.html(run, "canned")
    for section in ("id='contexts'", "id='params'", "id='measurements'", "id='figures'"):
        assert section in page, section
    figs = report.plan(run)
    assert figs and page.count("<img ") == len(figs)
    if kind != characterize.KIND:
        assert "id='targets'" in page and "id='report'" in page
        assert page.count("<tr") >= len(run["measurements"])


def test_measurement_figures_plot_against_threads_or_size(canned: Callable[[str], Any]) -> None:
    plan = {f.title: f.kind for f in report.measurement_plan(canned_run(canned, "bench-shmem"))}
    assert plan["put_quiet: us"] == "lines"              # against size, a line per variant
    assert plan["barrier: us"] == "lines"                # against PEs
    assert plan["icount: instructions_total"] == "bars"


# ---- end to end ---------------------------------------------------------------

TINY = ["--quick", "--threads", "1,2", "--duration-ms", "10", "--reps", "1", "--iters", "2000"]


def check_locks_document(doc: dict[str, Any]) -> None:
    """What `bench locks --json` prints: a run of the one schema."""
    assert doc["kind"] == "bench-locks" and schema.validate(doc) == [] and doc["run_id"] == 1
    ctx = doc["contexts"]
    assert len(ctx) == 1 and ctx[0]["schema_version"] == 1 and ctx[0]["programs"] == ["hps-bench-locks"]
    assert ctx[0]["processes"] == 6 * (1 + 2)     # uncontended, then 1 and 2 threads, per config
    rows = doc["extra"]["rows"]
    assert {r["lock"] for r in rows} == set(locks.configs())
    for r in rows:
        assert r["ops_per_sec"] > 0 and r["ns_per_op"] > 0 and r["threads"] >= 1
    unc = [r for r in rows if r["mode"] == "uncontended"]
    assert len(unc) == 6 and all("ns_ratio_vs_glibc" in r for r in unc)
    tp = [r for r in rows if r["mode"] == "throughput"]
    assert sorted({r["threads"] for r in tp}) == [1, 2] and all("ops_ratio_vs_glibc" in r for r in tp)
    # One round: no verdict is a FAIL.
    assert [t["id"] for t in doc["targets"]] == ["uncontended", "adaptive-throughput", "oversubscribed"]
    assert all(t["verdict"] in ("inconclusive", "n/a") for t in doc["targets"])
    # Every measurement keeps its raw rounds and says where it was measured.
    assert all(len(m["reps"]) == 1 and m["context"] == 0 for m in doc["measurements"])
    # The steal time each process ran under, where /proc/stat has it, and a
    # note of it among the warnings.
    if runner.steal_ms() is not None:
        steal = doc["extra"]["steal"]
        assert len(steal) == ctx[0]["processes"] and all(0 <= p["share"] < 1 for p in steal)
        assert [w for w in doc["warnings"] if w.startswith(f"hypervisor steal: {len(steal)} processes")]
        # And what other processes took meanwhile (the test suite's own
        # parallel jobs, if any): a share of the machine, with its note.
        assert all(0 <= p["others_share"] <= 1 and p["others_ms"] >= 0 for p in steal)
        assert [w for w in doc["warnings"]
                if w.startswith(f"other processes: {len(steal)} processes ran beside others taking a median")]


def test_two_quick_lock_runs_compare_and_report(hpsync: Run, tmp_path: Path) -> None:
    db = str(tmp_path / "fresh.db")
    first = hpsync("bench", "locks", *TINY, "--json", "--db", db)
    assert first.returncode == 0, first.stderr
    check_locks_document(json.loads(first.stdout))
    second = hpsync("bench", "locks", *TINY, "--check", "--db", db)
    # One round: nothing can FAIL, so --check exits 0 and says what it found.
    assert second.returncode == 0, second.stderr
    assert "Targets" in second.stdout and "FAIL" not in second.stdout
    assert "check: 0 PASS, 0 FAIL" in second.stderr
    listed = json.loads(hpsync("runs", "--db", db, "--json").stdout)
    assert [r["id"] for r in listed] == [2, 1] and {r["kind"] for r in listed} == {"bench-locks"}

    cmp = hpsync("compare", "1", "2", "--db", db)
    assert cmp.returncode == 0, cmp.stderr
    assert "uncontended/ns_per_op/adaptive" in cmp.stdout and "throughput/ops_per_sec/glibc T=2" in cmp.stdout
    assert "too few for a significance test" in cmp.stderr          # one round each: '?'
    table = [ln for ln in cmp.stdout.splitlines() if ln.startswith(("uncontended/", "throughput/"))]
    assert len(table) == 6 * 2 + 6 * 2 and all(" ? " in ln for ln in table)

    page = tmp_path / "r.html"
    rep = hpsync("report", "2", "-o", str(page), "--db", db)
    assert rep.returncode == 0, rep.stderr
    said = re.search(r"report of run 2 \(bench-locks\): (\d+) figures, (\d+) measurements, 3 verdicts",
                     rep.stderr)
    assert said and int(said.group(1)) >= 2 and int(said.group(2)) == 24
    html = page.read_text()
    assert html.count("<img ") == int(said.group(1)) and "hpsync bench locks:" in html
    csv = hpsync("report", "1", "--csv", "--db", db)
    assert csv.returncode == 0 and len(csv.stdout.splitlines()) == 25

    rep2 = hpsync("repeatability", "1", "2", "--db", db)
    assert rep2.returncode == 0 and "measurements within 10% CV over 2 runs" in rep2.stdout
    mixed = hpsync("repeatability", "1", str(Path(__file__).parents[1] / "data" / "bench_elide_rtm.json"),
                   "--db", db)
    assert mixed.returncode == 2 and "runs of one kind" in mixed.stderr

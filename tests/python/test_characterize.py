# SPDX-License-Identifier: MIT
"""characterize / report / compare on canned probe documents (no probes needed)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hpsync import characterize, compare, schema, stats

REPO = Path(__file__).resolve().parents[2]
CANNED = REPO / "tests" / "data" / "characterize"


def probe_docs(machine: str) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((CANNED / f"probes_{machine}").glob("*.json"))}


def run_of(machine: str) -> dict[str, Any]:
    docs = probe_docs(machine)
    outcomes = []
    for probe in characterize.REGISTRY:
        if probe.name in docs:
            outcomes.append(characterize.Outcome(probe.name, probe.program, ["--quick"], "ok", 0.1,
                                                 document=docs[probe.name]))
        else:
            outcomes.append(characterize.Outcome(probe.name, probe.program, ["--quick"], "missing",
                                                 0.0, error="not found"))
    return characterize.assemble(outcomes, quick=True, created="2026-01-01T00:00:00+00:00")


def test_canned_documents_are_valid() -> None:
    for m in ("a", "b"):
        for name, doc in probe_docs(m).items():
            assert characterize.validate(doc, name) is None, (m, name)


def test_flags_and_timer_facts() -> None:
    a, b = run_of("a"), run_of("b")
    assert a["extra"]["flags"] == []
    kinds = {(f["probe"], f["flag"]) for f in b["extra"]["flags"]}
    assert kinds == {("handoff", "steal"), ("mutex", "bimodal")}
    assert a["extra"]["timer"]["measured"]["tsc_ghz"] == {"value": 2.1, "unit": "GHz"}
    assert a["extra"]["timer"]["context"]["clocksource"] == "tsc"
    assert b["warnings"] == ["pools: missing: not found"]


def test_summary_gives_the_tlb_reach() -> None:
    """The tlb probe's reach per variant, with the spread over reps when there is
    one, and the load cost at both ends of the sweep; nothing without the probe."""
    from hpsync import report
    text = report.summary(run_of("b"))
    assert "Data TLB (one line in each of N pages)" in text
    assert "  4k: within 10 % of the first point up to 48 pages; 1.52 ns a load at 8 pages, 4.46 at 512" in text
    assert "  thp: within 10 % of the first point up to 48 pages" in text
    assert "(the whole sweep)" in report.summary(run_of("a"))       # A's thp reaches 512
    no_tlb = run_of("b")
    no_tlb["extra"]["probes"] = [p for p in no_tlb["extra"]["probes"] if p["name"] != "tlb"]
    assert "Data TLB" not in report.summary(no_tlb)


def test_run_follows_the_schema() -> None:
    """A characterization is a run like any other: every probe's context,
    a measurement per figure with its raw repetitions."""
    a = run_of("a")
    assert schema.validate(a) == [] and a["kind"] == "characterize"
    assert a["contexts"] and a["contexts"][0]["processes"] == len(probe_docs("a"))
    ms = {schema.key(m): m for m in a["measurements"]}
    flops = ms["compute/flops/compact T=1"]
    assert flops["unit"] and len(flops["reps"]) == 5 and flops["better"] == "higher"
    lat = ms["mutex/uncontended/glibc"]
    assert lat["better"] == "lower" and lat["value"] == probe_docs("a")["mutex"]["results"][0]["dist"]["median"]
    assert all(m["context"] == 0 for m in a["measurements"])


def test_mann_whitney() -> None:
    # Exact two-sided p for complete separation of 5 vs 5 is 2/252.
    assert stats.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert stats.mann_whitney_p([1, 2, 3, 4, 5], [1.5, 2.5, 3.5, 4.5, 5.5]) == pytest.approx(0.6905, abs=1e-3)
    # Ties take the normal approximation; identical samples are not different.
    assert stats.mann_whitney_p([1.0] * 6, [1.0] * 6) == 1.0


def test_compare_ratios_and_significance() -> None:
    comp = compare.compare_runs(run_of("a"), run_of("b"))
    rows = {r.key: r for r in comp.rows}
    flops = rows["compute/flops/compact T=1"]
    assert flops.ratio == pytest.approx(1 / 1.25, rel=0.05)
    assert flops.mark == compare.MARK_SIGNIFICANT and flops.n_a == flops.n_b == 5
    # B measured bandwidth with 3 reps: no test, a '?' and a warning.
    bw = rows["membw/read_bw/scatter T=4"]
    assert bw.mark == compare.MARK_UNKNOWN and bw.p is None
    assert any("fewer than 5 repetitions" in w for w in comp.warnings)
    # Latencies compare medians; flags travel with the row.
    hand = rows["mutex/handoff/glibc"]
    a_med = probe_docs("a")["mutex"]["results"][2]["dist"]["median"]
    b_med = probe_docs("b")["mutex"]["results"][2]["dist"]["median"]
    assert hand.ratio == pytest.approx(b_med / a_med)
    assert "B:bimodal" in hand.flags
    assert "B:steal" in rows["handoff/futex_wake/other_core"].flags
    assert rows["c2c/c2c_latency/off-diagonal median"].ratio == pytest.approx(1.25, rel=0.05)
    # B has no pools: those measurements are listed as only in A.
    assert any(k.startswith("pools/fft/mutex") for k in comp.only_a)
    assert comp.only_b == []
    # Significantly faster or slower says which way is better.
    assert flops.verdict == "worse"                      # fewer flops in B
    # Same run against itself: ratios 1, nothing significant.
    same = compare.compare_runs(run_of("a"), run_of("a"))
    assert all(r.ratio in (None, pytest.approx(1.0)) for r in same.rows)
    assert all(r.mark != compare.MARK_SIGNIFICANT for r in same.rows)


def test_compare_csv() -> None:
    comp = compare.compare_runs(run_of("a"), run_of("b"))
    rows = list(csv.DictReader(io.StringIO(compare.to_csv(comp))))
    assert len(rows) == len(comp.rows)
    assert list(rows[0]) == compare.CSV_HEADER
    assert {r["mark"] for r in rows} >= {"*", "?"}


def write_run(tmp_path: Path, name: str, run: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(run))
    return path


def hpsync(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(["./hpsync", *args], cwd=REPO, env=e, capture_output=True, text=True,
                          timeout=60, check=False)


def test_report_html_from_file(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    src = write_run(tmp_path, "a.json", run_of("a"))
    out = tmp_path / "r.html"
    r = hpsync("report", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    # compute 1, membw 2, timer 1, create 2, mutex 2, handoff 1, condvar 2, cas 2, c2c 1,
    # pools 2, tlb 1
    assert page.count("<img ") == 17
    assert page.count("data:image/png;base64,") == 17
    for section in ("id='flags'", "id='contexts'", "id='timer'", "id='latencies'", "p99.9",
                    "Intel(R) Xeon(R) Gold 6230", "GHz"):
        assert section in page
    assert "http" not in page.replace("http-equiv", "")   # self-contained


def test_report_flags_and_single_probe(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    src = write_run(tmp_path, "b.json", run_of("b"))
    out = tmp_path / "b.html"
    assert hpsync("report", str(src), "-o", str(out)).returncode == 0
    page = out.read_text()
    assert page.count("class='flag'") >= 3          # steal, bimodal, missing pools
    assert "<tr class='flagged'>" in page
    assert "status-missing" in page
    # A single probe's document is a report of its own.
    one = tmp_path / "one.html"
    r = hpsync("report", str(CANNED / "probes_a" / "c2c.json"), "-o", str(one))
    assert r.returncode == 0, r.stderr
    assert one.read_text().count("<img ") == 1


def make_fake_build(tmp_path: Path) -> Path:
    """A build tree whose probes print canned JSON: one missing, one failing, one malformed."""
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    programs = {p.name: p.program for p in characterize.REGISTRY}
    for name, doc in probe_docs("b").items():
        if name in ("cas", "c2c", "condvar"):
            continue
        script = bin_dir / programs[name]
        script.write_text(f"#!/bin/sh\ncat '{CANNED / 'probes_b' / (name + '.json')}'\n")
        script.chmod(0o755)
    (bin_dir / "hps-probe-c2c").write_text("#!/bin/sh\necho 'hps-probe-c2c: cannot pin' >&2\nexit 3\n")
    (bin_dir / "hps-probe-condvar").write_text("#!/bin/sh\necho '{\"schema_version\": 1,'\n")
    for p in ("hps-probe-c2c", "hps-probe-condvar"):
        (bin_dir / p).chmod(0o755)
    return tmp_path / "build"


def test_characterize_with_fake_probes(tmp_path: Path) -> None:
    build = make_fake_build(tmp_path)
    db = tmp_path / "r.db"
    r = hpsync("characterize", "--quick", "--json", "--db", str(db), env={"HPSYNC_BUILD": str(build)})
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)
    status = {p["name"]: p["status"] for p in run["extra"]["probes"]}
    assert status == {"timer": "ok", "compute": "ok", "membw": "ok", "tlb": "ok", "create": "ok",
                      "mutex": "ok",
                      "handoff": "ok", "condvar": "failed", "cas": "missing", "c2c": "failed",
                      "pools": "missing"}
    errs = [ln for ln in r.stderr.splitlines() if "characterize:" in ln]
    assert any("cas missing" in ln for ln in errs)
    assert any("c2c failed: exit status 3: hps-probe-c2c: cannot pin" in ln for ln in errs)
    assert any("condvar failed: malformed JSON" in ln for ln in errs)
    assert {(f["probe"], f["flag"]) for f in run["extra"]["flags"]} == {("handoff", "steal"),
                                                                         ("mutex", "bimodal")}
    assert run["run_id"] == 1
    # Stored: report --csv and compare read it back by id.
    csv_out = hpsync("report", "1", "--csv", "--db", str(db))
    assert csv_out.returncode == 0 and csv_out.stdout.startswith("key,metric,value")
    cmp = hpsync("compare", "1", str(write_run(tmp_path, "a.json", run_of("a"))), "--db", str(db))
    assert cmp.returncode == 0, cmp.stderr
    assert "B/A" in cmp.stdout and "compute/flops/compact T=1" in cmp.stdout
    assert "warning:" in cmp.stderr


def test_characterize_only_and_bad_input(tmp_path: Path) -> None:
    build = make_fake_build(tmp_path)
    r = hpsync("characterize", "--only", "timer,c2c", "--no-store", "--json",
               env={"HPSYNC_BUILD": str(build)})
    assert r.returncode == 0, r.stderr
    assert [p["name"] for p in json.loads(r.stdout)["extra"]["probes"]] == ["timer", "c2c"]
    bad = hpsync("characterize", "--only", "nope", "--no-store")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    missing = hpsync("report", "99", "--db", str(tmp_path / "x.db"))
    assert missing.returncode == 1 and missing.stderr.startswith("hpsync: no run 99")
    # A schema-1 benchmark run without its samples cannot be upgraded: one line says so.
    locks = tmp_path / "locks.json"
    locks.write_text(json.dumps({"schema_version": 1, "kind": "bench-locks", "rows": []}))
    wrong = hpsync("compare", str(locks), str(locks))
    assert wrong.returncode == 1 and len(wrong.stderr.strip().splitlines()) == 1
    assert "without its samples; it cannot be converted: run `hpsync bench locks` again" in wrong.stderr


def test_progress_bar_on_tty() -> None:
    stream = io.StringIO()
    probes = list(characterize.REGISTRY[:2])
    prog = characterize.Progress(probes, quick=True, stream=stream, tty=True)
    prog.starting(probes[0])
    prog.finished(characterize.Outcome("timer", "x", [], "ok", 0.5, document={}))
    prog.starting(probes[1])
    prog.finished(characterize.Outcome("compute", "x", [], "missing", 0.0, error="gone"))
    out = stream.getvalue()
    assert "\r[" in out and "s left" in out and "compute missing: gone" in out


def test_repeatability_cv_is_computed_per_measurement() -> None:
    def run(med: float) -> dict[str, Any]:
        doc = {"schema_version": 1, "probe": "mutex", "steal_ms": 0, "params": {}, "context": {},
               "results": [{"kind": "latency", "metric": "lock_unlock", "variant": "glibc",
                            "dist": {"unit": "ns", "n": 3, "median": med,
                                     "samples": [med - 1, med, med + 1], "bimodal": False}}]}
        return characterize.from_probe_document(doc)

    spreads = compare.repeatability([run(10.0), run(12.0), run(14.0)])
    assert len(spreads) == 1
    s = spreads[0]
    assert s.key == "mutex/lock_unlock/glibc" and s.values == (10.0, 12.0, 14.0)
    assert abs(s.cv - 2.0 / 12.0) < 1e-12          # stdev 2 over mean 12
    assert s.within == pytest.approx(1 / 12)        # the middle run's reps: stdev 1 over 12
    text = compare.render_repeatability(spreads)
    assert "0/1 measurements within 10% CV over 3 runs" in text
    assert stats.coefficient_of_variation([5.0, 5.0]) == 0.0


def test_repeatability_flags_two_level_runs() -> None:
    from hpsync import compare
    assert compare.run_levels([10.0, 10.5, 11.0]) == ()
    assert compare.run_levels([158.0, 27.0, 160.0, 29.0]) == ((27.0, 29.0), (158.0, 160.0))
    assert compare.run_levels([5.0]) == ()

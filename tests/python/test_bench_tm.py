# SPDX-License-Identifier: MIT
"""`bench tm`: the pure analysis on canned samples (tests/data/bench_tm_samples.json:
three rounds of seq, mutex, itm ml_wt/gl_wt and four hpsync backends at 1,
2 and 8 threads, each variant a fixed fraction of seq's figure per row),
the targets' verdicts (n/a without hpsync), the text report and figures,
and one real quick run of the variants built today."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Callable

import pytest

from hpsync import report, schema, stats
from hpsync.bench import base, targets, tm
from hpsync.errors import CliError

CANNED = "bench_tm_samples.json"


def analysed(doc: dict[str, Any]) -> dict[str, Any]:
    return base.analyse_run(tm.BENCH, {**doc, "kind": tm.BENCH.kind})


def without(doc: dict[str, Any], keep: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return {**doc, "extra": {**doc["extra"], "samples": [s for s in doc["extra"]["samples"] if keep(s)]}}


def verdicts(run: dict[str, Any]) -> dict[str, str]:
    return {t["id"]: t["verdict"] for t in run["targets"]}


def by_key(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {schema.key(m): m for m in run["measurements"]}


def test_targets_from_canned_rounds(canned: Callable[[str], Any]) -> None:
    run = analysed(canned(CANNED))
    # 1 thread: norec (0.6 of seq) beats stm (0.5); ml_wt is 0.25 of seq.
    m = by_key(run)["best-stm-norec/ratio_vs_itm_ml_wt/geomean T=1"]
    assert m["value"] == pytest.approx(0.6 / 0.25)
    assert len(m["reps"]) == 3
    assert by_key(run)["best-stm-norec/ratio_vs_seq/geomean T=1"]["value"] == pytest.approx(0.6)
    # 2 threads: norec 0.9 over the better itm method, gl_wt at 0.4.
    assert by_key(run)["best-stm-norec/ratio_vs_itm_best/list T=2"]["value"] == pytest.approx(0.9 / 0.4)
    # 8 threads: stm falls to 0.3 from 0.8 at 2 threads.
    assert by_key(run)["scaling-8-vs-2/ratio/tree-1k/hpsync-stm T=8"]["value"] == pytest.approx(0.3 / 0.8)
    # auto against the best other backend: sgl at 1 thread (0.8), norec at 2 (0.9).
    assert by_key(run)["auto-vs-best-backend/ratio/bank T=1"]["value"] == pytest.approx(0.78 / 0.8)
    assert by_key(run)["auto-vs-best-backend/ratio/bank T=2"]["value"] == pytest.approx(0.87 / 0.9)
    v = verdicts(run)
    assert v["tm-1t-vs-ml_wt"] == "PASS" and v["tm-1t-vs-ml_wt-rows"] == "PASS"
    assert v["tm-1t-vs-seq"] == "PASS"
    assert v["tm-2t-vs-itm"] == "PASS" and v["tm-2t-vs-itm-rows"] == "PASS"
    assert v["tm-8t-scaling"] == "FAIL"
    assert v["tm-auto"] == "PASS"


def test_without_hpsync_every_target_is_na(canned: Callable[[str], Any]) -> None:
    """What main measures today: seq, mutex and libitm only."""
    run = analysed(without(canned(CANNED), lambda s: not s["variant"].startswith("hpsync-")))
    assert set(verdicts(run).values()) == {"n/a"}
    assert len(verdicts(run)) == len(targets.for_bench("tm")) == 12   # 7 + the itm group's 5
    # The bar hpsync must beat is still measured: ml_wt's slowdown per row.
    slow = by_key(run)["slowdown-vs-seq/x/list/itm-ml_wt T=1"]
    assert slow["value"] == pytest.approx(4.0) and slow["better"] == "lower"


def test_better_backend_is_chosen_per_row_by_median(canned: Callable[[str], Any]) -> None:
    doc = canned(CANNED)
    for s in doc["extra"]["samples"]:
        if s["variant"] == "hpsync-stm" and s["row"] == "counter" and s["threads"] == 1:
            s["ops_per_sec"] *= 3         # stm now 1.5 of seq on the counter, norec 0.6
    k = by_key(analysed(doc))
    assert k["best-stm-norec/ratio_vs_itm_ml_wt/counter T=1"]["value"] == pytest.approx(1.5 / 0.25)
    assert k["best-stm-norec/ratio_vs_itm_ml_wt/bank T=1"]["value"] == pytest.approx(0.6 / 0.25)


def test_one_row_below_itm_fails_the_row_target(canned: Callable[[str], Any]) -> None:
    doc = canned(CANNED)
    for s in doc["extra"]["samples"]:
        if s["variant"] in tm.SOFTWARE and s["row"] == "tree-64k" and s["threads"] == 1:
            s["ops_per_sec"] *= 0.3       # 0.18 of seq, below ml_wt's 0.25
    v = verdicts(analysed(doc))
    assert v["tm-1t-vs-ml_wt-rows"] == "FAIL"


def test_geomean_needs_every_row_and_one_round_is_inconclusive(canned: Callable[[str], Any]) -> None:
    run = analysed(without(canned(CANNED), lambda s: not (s["variant"] == "itm-ml_wt"
                                                            and s["row"] == "bank")))
    assert "best-stm-norec/ratio_vs_itm_ml_wt/geomean T=1" not in by_key(run)
    assert verdicts(run)["tm-1t-vs-ml_wt"] == "n/a"
    quick = analysed(without(canned(CANNED), lambda s: s["round"] == 0))
    assert verdicts(quick)["tm-1t-vs-ml_wt"] == "inconclusive"
    assert verdicts(quick)["tm-8t-scaling"] == "inconclusive"


def test_rows_render_and_figures(canned: Callable[[str], Any]) -> None:
    run = analysed(canned(CANNED))
    rows = run["extra"]["rows"]
    r = tm.find_row(rows, "list", "itm-ml_wt", 1)
    assert r is not None and r["ratio_vs_seq"] == pytest.approx(0.25) and r["rounds"] == 3
    assert tm.find_row(rows, "list", "hpsync-stm", 2)["aborts_per_commit"] == pytest.approx(0.05, rel=0.1)
    out = tm.render(run)
    for needle in ("1 thread(s)", "8 thread(s)", "itm-ml_wt", "hpsync-auto", "aborts per commit",
                   "hpsync-htm, hpsync-hybrid: n/a", "FAIL"):
        assert needle in out, needle
    # The report draws throughput against threads per row, one line per variant.
    titles = [f.title for f in report.measurement_plan(run)]
    assert "tree-64k: ops_per_sec" in titles and "bank: aborts_per_commit" in titles
    json.dumps(run)


def test_params_and_bad_input() -> None:
    ns = argparse.Namespace(quick=True, threads=None, duration_ms=None, reps=None, variants=None)
    p = tm.make_params(ns)
    assert p.threads == [1, 2, 4, 8] and p.rounds == 1 and p.duration_ms == 50
    assert "itm-serialirr" not in p.variants and "hpsync-auto" in p.variants
    assert tm.variant_list("seq, itm-serialirr") == ["seq", "itm-serialirr"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown variant 'tl2'"):
        tm.variant_list("seq,tl2")
    stm = tm.BY_NAME["hpsync-stm"]
    tm.check_variant(stm, {"variant": "hpsync", "backend": "stm"})
    with pytest.raises(CliError, match="HPSYNC_TM=stm ran backend 'sgl'"):
        tm.check_variant(stm, {"variant": "hpsync", "backend": "sgl"})
    tm.check_variant(tm.BY_NAME["hpsync-auto"], {"variant": "hpsync", "backend": "norec"})
    with pytest.raises(CliError, match="variant 'mutex'"):
        tm.check_variant(tm.BY_NAME["seq"], {"variant": "mutex"})
    env = tm.env_for(tm.BY_NAME["itm-gl_wt"])
    assert env["ITM_DEFAULT_METHOD"] == "gl_wt" and "HPSYNC_TM" not in env
    assert math.isclose(stats.geomean_per_round({"a": {0: 2.0}, "b": {0: 8.0, 1: 1.0}})[0], 4.0)


def test_quick_run_of_todays_variants(hpsync: Callable[..., Any]) -> None:
    """The real CLI on the real programs: every built variant's results
    validate, the document has the measurements, hpsync says why it is not
    measured (until the TM library is in the tree)."""
    p = hpsync("bench", "tm", "--quick", "--json", "--no-store", "--threads", "1,2",
               "--duration-ms", "5", "--variants", "seq,mutex,itm-ml_wt,hpsync-stm", timeout=120)
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)
    keys = by_key(run)
    for v in ("seq", "mutex", "itm-ml_wt"):
        assert f"tree-64k/ops_per_sec/{v} T=1" in keys
    assert "counter/ops_per_sec/mutex T=2" in keys and "counter/ops_per_sec/seq T=2" not in keys
    stm = run["extra"]["variants"]["hpsync-stm"]["status"]
    assert stm == ("measured" if (tm.runner.build_dir() / "bin/hps-bench-tm-hpsync").exists()
                   else "missing")
    bad = hpsync("bench", "tm", "--variants", "seq,nope", "--no-store")
    assert bad.returncode == 2 and "unknown variant 'nope'" in bad.stderr


def test_itm_group() -> None:
    """--group itm: the -fgnu-tm program on libitm and on libhpsync-itm
    (preloaded), beside the native backends; a run that did not reach the
    runtime it names is refused."""
    ns = argparse.Namespace(quick=True, threads=None, duration_ms=None, reps=None, variants=None,
                            group="itm")
    p = tm.make_params(ns)
    assert {"itm-ml_wt", "itm-gl_wt", "itm-serialirr", "itm-default", "itm-hpsync-stm",
            "itm-hpsync-norec", "itm-hpsync-auto", "hpsync-stm"} <= set(p.variants)
    assert "mutex" not in p.variants
    default = tm.make_params(argparse.Namespace(quick=True, threads=None, duration_ms=None,
                                                reps=None, variants=None))
    assert not any(v.startswith("itm-hpsync-") for v in default.variants)
    with pytest.raises(argparse.ArgumentTypeError, match="unknown group 'x'"):
        tm.group_name("x")
    v = tm.BY_NAME["itm-hpsync-norec"]
    assert v.program == "itm" and v.itm_preload and v.env == {"HPSYNC_TM": "norec"}
    tm.check_variant(v, {"variant": "itm", "itm_library": "hpsync libhpsync-itm (GCC TM ABI 0.90)"})
    with pytest.raises(CliError, match="ran on 'libitm"):
        tm.check_variant(v, {"variant": "itm", "itm_library": "libitm 0.90"})
    with pytest.raises(CliError, match="ran on"):
        tm.check_variant(tm.BY_NAME["itm-ml_wt"], {"variant": "itm", "itm_library": "hpsync x"})


def test_itm_group_figures() -> None:
    """The group's derived figures on canned samples: the better of
    itm-hpsync stm/norec over libitm's best, auto over libitm's default,
    and native over itm-hpsync (the ABI's cost)."""
    def s(v: str, row: str, ops: float) -> dict[str, Any]:
        return {"variant": v, "row": row, "threads": 1, "round": 0, "ops_per_sec": ops,
                "ops_min_thread": ops, "ops_max_thread": ops, "tm": None, "context": None}
    samples = []
    for row in tm.ROWS:
        samples += [s("itm-ml_wt", row, 10), s("itm-gl_wt", row, 20), s("itm-default", row, 40),
                    s("itm-hpsync-stm", row, 30), s("itm-hpsync-norec", row, 25),
                    s("itm-hpsync-auto", row, 50), s("hpsync-stm", row, 36), s("hpsync-norec", row, 1)]
    got = {(m["dims"]["part"], m["dims"]["workload"], m["metric"]): m["reps"]
           for m in tm.measurements(samples) if "part" in m["dims"]}
    assert got[("itm-hpsync-stm-norec", "geomean", "ratio_vs_itm_best")] == pytest.approx([1.5])
    assert got[("itm-hpsync-auto", "bank", "ratio_vs_itm_default")] == pytest.approx([1.25])
    assert got[("itm-overhead", "geomean", "native_over_itm")] == pytest.approx([1.2])

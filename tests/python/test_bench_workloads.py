# SPDX-License-Identifier: MIT
"""`bench workloads`, the judging half: the pure analysis and targets on
made-up samples, the report's figures, compare across two runs, and a real
quick run end to end.  The runner and the program contract:
test_bench_workloads_run.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hpsync import compare, report, runner, schema
from hpsync.bench import base, targets, tm
from hpsync.bench.workloads import BENCH, describe, measure, render
from hpsync.bench.workloads import analyse as W
from hpsync.errors import CliError
from workloads_util import BUILD, REPO, by_key, run_cli


# ---- analysis, targets, report and compare on made-up samples --------------------------

def desc_of(name: str, variants: list[dict[str, Any]], metrics: list[dict[str, Any]], dims: list[str],
            figures: list[dict[str, Any]] | None = None, allocators: bool = False) -> dict[str, Any]:
    return {"workload": name, "title": name, "variants": variants, "metrics": metrics, "dims": dims,
            "allocators": allocators, "figures": figures or []}


MOPS = [{"name": "insert_mops", "unit": "Mops/s", "better": "higher", "speedup": True},
        {"name": "lookup_mops", "unit": "Mops/s", "better": "higher", "speedup": True}]


def suite_run(olc_lookup: float = 3.5, cia_1k: float = 1.05, tm_gain: float = 1.2,
              rounds: int = 3, host: str = "a", dyn: float = 0.95,
              solo: dict[str, list[int]] | None = None, ser: float = 0.4,
              stolen: dict[tuple[str, int], Any] | None = None,
              loaded: dict[tuple[str, int], float] | None = None) -> dict[str, Any]:
    """A run of three made-up workloads at 1 and 2 threads: the ART (olc
    inserts 2.5x the mutex at 2 threads, lookups olc_lookup x), the ring
    under glibc and hpsync (cia's 1 KiB ring cia_1k x its 64 B floor) and
    scatter (the better TM variant tm_gain x the mutex, granularity sweep
    with a controller at dyn x the best static k, and serialized chunks at
    ser x the mutex; solo: per scatter TM variant, its sections on the bias
    per round, of 1000; stolen: per (variant, round), its processes' steal
    share (or (share, ms)), 0.01 elsewhere; loaded: per (variant, round),
    the share other processes took beside its processes, 0 elsewhere)."""
    works = {
        "art": desc_of("art", [{"name": "mutex", "kind": "lock", "baseline": True},
                               {"name": "elide-r0", "kind": "elide", "restarts": 0},
                               {"name": "elide-r3", "kind": "elide", "restarts": 3},
                               {"name": "olc", "kind": "other"}], MOPS, ["keyset"],
                       [{"shape": "restarts", "metric": "insert_mops"}]),
        "ring": desc_of("ring", [{"name": "mutex", "kind": "lock", "baseline": True}],
                        [{"name": "ns_per_node", "unit": "ns/node", "better": "lower"}], ["size"],
                        [{"shape": "curve", "x": "size", "metric": "ns_per_node", "series": "allocator"}],
                        allocators=True),
        "scatter": desc_of("scatter", [{"name": "mutex", "kind": "lock", "baseline": True},
                                       {"name": "tm-k1", "kind": "tm", "granularity": 1},
                                       {"name": "tm-k8", "kind": "tm", "granularity": 8},
                                       {"name": "tm-ser", "kind": "tm", "serial": True},
                                       {"name": "tm-auto", "kind": "tm", "controller": True}],
                           [{"name": "updates_per_sec", "unit": "upd/s", "better": "higher"}], [],
                           [{"shape": "granularity", "metric": "updates_per_sec"}]),
    }
    samples: list[dict[str, Any]] = []

    def add(w: str, v: str, t: int, r: int, metrics: dict[str, float], dims: dict[str, Any] | None = None,
            allocator: str | None = None, **more: Any) -> None:
        got = (stolen or {}).get((v, r), 0.01)
        steal = got if isinstance(got, tuple) else (got, 1000 * got)   # processes of 1 s
        others = (loaded or {}).get((v, r), 0.0)
        samples.append({"workload": w, "variant": v, "threads": t, "round": r, "allocator": allocator,
                        "dims": dims or {}, "metrics": metrics, "tm": None, "elision": None,
                        "context": 0, "process": (w, v, r),
                        "steal_share": steal[0], "steal_ms": steal[1],
                        "others_share": others, "others_ms": 1000 * others, **more})

    for r in range(rounds):
        noise = 1 + 0.02 * r
        for t in (1, 2):
            for ks in ("dense", "random"):
                add("art", "mutex", t, r, {"insert_mops": 2 * noise, "lookup_mops": 4 * noise}, {"keyset": ks})
                gain = (2.5, olc_lookup) if t == 2 else (1.0, 1.0)
                add("art", "olc", t, r, {"insert_mops": 2 * gain[0] * noise,
                                         "lookup_mops": 4 * gain[1] * noise}, {"keyset": ks})
                for v, k in (("elide-r0", 0.8), ("elide-r3", 1.1)):
                    add("art", v, t, r, {"insert_mops": 2 * k, "lookup_mops": 4 * k}, {"keyset": ks},
                        elision={"commits": 100, "aborts_by_cause": {"busy": 30 * t, "conflict": 5}})
            for a in ("glibc", "hpsync"):
                for size in (64, 1024, 4096):
                    f = {64: 1.0, 1024: cia_1k if a == "hpsync" else 1.3, 4096: 2.5}[size]
                    # cia spreads the first lines; glibc's 1 KiB ring piles up on one set
                    # in round 1 (a process's layout can differ from another's).
                    per_set = 2 if a == "hpsync" or size != 1024 else 4 + 60 * (r == 1)
                    add("ring", "mutex", t, r, {"ns_per_node": 3.0 * f * noise}, {"size": size}, a,
                        layout={"pages": max(2, size // 32), "page_bytes": 4096,
                                "max_lines_per_set": per_set, "l1_sets": 64, "l1_line": 64})
            add("scatter", "mutex", t, r, {"updates_per_sec": 100 * noise})
            def tm(v: str, commits: int, causes: dict[str, int]) -> dict[str, Any]:
                st: dict[str, Any] = {"commits": commits, "aborts_by_cause": causes}
                if solo and v in solo:
                    st["solo"] = solo[v][r] * commits // 1000
                return st
            for v, k in (("tm-k1", 0.5), ("tm-k8", tm_gain), ("tm-ser", ser)):
                add("scatter", v, t, r, {"updates_per_sec": 100 * k * t ** 0.5 * noise},
                    tm=tm(v, 1000, {"conflict": 40 * t, "capacity": 3}))
            add("scatter", "tm-auto", t, r, {"updates_per_sec": 100 * tm_gain * dyn * t ** 0.5 * noise},
                granularity=6, tm=tm("tm-auto", 900, {"conflict": 20}))
    doc = schema.envelope(BENCH.kind, {"rounds": rounds, "quick": False},
                          [{"id": 0, "host": host, "programs": ["hps-workload-art"], "processes": 1}],
                          {"samples": samples, "workloads": works,
                           "steal": [{"share": s["steal_share"], "ms": s["steal_ms"],
                                      "others_share": s["others_share"], "others_ms": s["others_ms"]}
                                     for s in {str(x["process"]): x for x in samples}.values()],
                           "variants": {w: {v["name"]: {"status": "measured", "note": ""}
                                            for v in d["variants"]} for w, d in works.items()},
                           "allocators": {"measured": ["glibc", "hpsync"], "missing": {}}})
    return base.analyse_run(BENCH, doc)


def verdicts(run: dict[str, Any]) -> dict[str, str]:
    return {t["id"]: t["verdict"] for t in run["targets"]}


def test_targets_judged_per_round() -> None:
    good = verdicts(suite_run())
    assert good["workloads-art-olc-insert_dense"] == "PASS"
    assert good["workloads-art-olc-lookup_random"] == "PASS"
    assert good["workloads-ring-cia-floor_mutex"] == "PASS"
    assert good["workloads-tm-vs-mutex_scatter"] == "PASS"
    assert good["workloads-tm-vs-mutex_physics"] == "n/a"
    assert good["workloads-validate_2"] == "PASS" and good["workloads-validate_8"] == "n/a"
    bad = verdicts(suite_run(olc_lookup=2.0, cia_1k=1.3, tm_gain=0.6))
    assert bad["workloads-art-olc-lookup_dense"] == "FAIL"
    assert bad["workloads-art-olc-insert_dense"] == "PASS"
    assert bad["workloads-ring-cia-floor_mutex"] == "FAIL"
    assert bad["workloads-tm-vs-mutex_scatter"] == "FAIL"
    assert verdicts(suite_run(rounds=1))["workloads-art-olc-insert_dense"] == "inconclusive"


def test_controller_judged_against_the_best_static_k() -> None:
    """Issue 16's targets: the controller over the static k with the best
    median and over k = 1, paired round by round, per backend."""
    run = suite_run()
    m = by_key(run)
    key = "dyn-vs-static/updates_per_sec_vs_best_static/scatter/default T=2"
    assert m[key]["value"] == pytest.approx(0.95)
    assert m["dyn-vs-static/updates_per_sec_vs_k1/scatter/default T=1"]["value"] == \
        pytest.approx(1.2 * 0.95 / 0.5)
    # A controller 5 % behind passes; 20 % behind fails; and below k = 1 too.
    t = [targets.Target(id="dyn", bench="workloads", description="d",
                        select={"part": "dyn-vs-static", "metric": "updates_per_sec_vs_best_static"},
                        op=">=", limit=0.909),
         targets.Target(id="k1", bench="workloads", description="d",
                        select={"part": "dyn-vs-static", "metric": "updates_per_sec_vs_k1"},
                        op=">=", limit=1.0)]
    assert [v["verdict"] for v in targets.evaluate(t, run["measurements"])] == ["PASS", "PASS"]
    slow = suite_run(dyn=0.8)["measurements"]
    assert [v["verdict"] for v in targets.evaluate(t, slow)] == ["FAIL", "PASS"]
    slower = suite_run(dyn=0.3)["measurements"]
    assert [v["verdict"] for v in targets.evaluate(t, slower)] == ["FAIL", "FAIL"]
    # Static serialized chunks are among the static choices: the best of
    # them all is what the controller must come near.
    m = by_key(suite_run(ser=1.5))
    assert m[key]["value"] == pytest.approx(1.2 * 0.95 / 1.5)
    # The suite's own targets name the real workloads: absent here.
    v = verdicts(run)
    assert v["workloads-coarsen-dyn-vs-best_histogram"] == "n/a"


def test_controller_judged_per_conflict_level() -> None:
    """The issue's wording: per workload and conflict level (--describe's
    "conflict"), the geometric mean of the controller's ratio to the best
    static choice over the level's rows, backends and thread counts, per
    round; rows without a level stay out."""
    rows = {"r-a": ("low", 0.9), "r-b": ("low", 1.0), "r-c": ("high", 0.8), "r-x": (None, 0.1)}
    variants = [{"name": "mutex", "kind": "lock", "baseline": True}]
    for g in ("norec", "stm"):
        variants += [{"name": f"{g}:tm-k1", "kind": "tm", "group": g, "granularity": 1},
                     {"name": f"{g}:tm-k8", "kind": "tm", "group": g, "granularity": 8},
                     {"name": f"{g}:tm-dyn", "kind": "tm", "group": g, "controller": True}]
    desc = desc_of("histogram", variants, [{"name": "ops_per_sec", "unit": "ops/s", "better": "higher"}],
                   ["row"])
    desc["conflict"] = {r: lv for r, (lv, _) in rows.items() if lv}
    samples = []
    for r in range(3):
        for t in (1, 2):
            for row, (_, dyn) in rows.items():
                # The stm backend's controller is 2 % better than norec's, round 2 5 % worse.
                for g, own in (("norec", 1.0), ("stm", 1.02)):
                    figs = {f"{g}:tm-k1": 50.0, f"{g}:tm-k8": 100.0,
                            f"{g}:tm-dyn": 100.0 * dyn * own * (0.95 if r == 2 else 1.0)}
                    for v, f in figs.items():
                        samples.append({"workload": "histogram", "variant": v, "threads": t, "round": r,
                                        "allocator": None, "dims": {"row": row},
                                        "metrics": {"ops_per_sec": f}, "tm": None, "elision": None,
                                        "context": 0})
    extra = {"samples": samples, "workloads": {"histogram": desc}}
    levels = [m for m in W.analyse(extra, {}).measurements if m["dims"].get("part") == "dyn-vs-static-level"]
    got = {m["dims"]["conflict"]: m for m in levels if "_best_" in m["metric"]}
    tuned = {m["dims"]["conflict"]: m for m in levels if "_tuned_" in m["metric"]}
    assert sorted(got) == ["high", "low"] == sorted(tuned)          # r-x names no level
    # k = 8 is best in every round: the tuned choice is the same one.
    assert tuned["low"]["reps"] == pytest.approx(got["low"]["reps"])
    low = (0.9 * 1.0) ** 0.5 * 1.02 ** 0.5
    assert got["low"]["reps"] == pytest.approx([low, low, low * 0.95])
    assert got["low"]["metric"] == "ops_per_sec_vs_best_static_geomean"
    assert got["high"]["reps"] == pytest.approx([0.8 * 1.02 ** 0.5] * 2 + [0.8 * 1.02 ** 0.5 * 0.95])
    t = next(x for x in targets.table() if x.id == "workloads-coarsen-dyn-level")
    v = {x["id"]: x for x in targets.evaluate([t], list(got.values()))}
    assert v["workloads-coarsen-dyn-level_histogram_low"]["verdict"] == "PASS"
    assert v["workloads-coarsen-dyn-level_histogram_high"]["verdict"] == "FAIL"
    assert "histogram, low conflict" in v["workloads-coarsen-dyn-level_histogram_low"]["description"]
    t = next(x for x in targets.table() if x.id == "workloads-coarsen-dyn-level-tuned")
    v = {x["id"]: x["verdict"] for x in targets.evaluate([t], levels)}
    assert v == {"workloads-coarsen-dyn-level-tuned_histogram_low": "PASS",
                 "workloads-coarsen-dyn-level-tuned_histogram_high": "FAIL"}
    # A round that lacks one of the level's points is left out, not averaged over fewer.
    short = [s for s in samples if not (s["round"] == 1 and s["dims"]["row"] == "r-b"
                                        and s["variant"] == "stm:tm-dyn" and s["threads"] == 2)]
    got = {m["dims"]["conflict"]: m for m in W.analyse({**extra, "samples": short}, {}).measurements
           if m["dims"].get("part") == "dyn-vs-static-level" and "_best_" in m["metric"]}
    assert got["low"]["rounds"] == [0, 2]


def test_tuned_static_choice_leaves_its_round_out() -> None:
    """Per round, the static choice with the best median over the other
    rounds, and its figure in that round; none with one round."""
    figs = [(1.0, "A", {0: 10.0, 1: 12.0, 2: 8.0}), (8.0, "B", {0: 11.0, 1: 9.0, 2: 10.0})]
    assert W._tuned(figs, 1) == ({0: 10.0, 1: 9.0, 2: 8.0}, {0: "A", 1: "B", 2: "A"})
    # Lower is better: round 0 picks B (median of 9 and 10 is less than A's 10).
    assert W._tuned(figs, -1) == ({0: 11.0, 1: 12.0, 2: 10.0}, {0: "B", 1: "A", 2: "B"})
    assert W._tuned([(1.0, "A", {0: 5.0})], 1) == ({}, {})
    # A choice missing a round is tuned where it has one, compared where it has one.
    short = figs + [(64.0, "C", {0: 50.0, 1: 50.0})]
    assert W._tuned(short, 1) == ({0: 50.0, 1: 50.0, 2: 8.0}, {0: "C", 1: "C", 2: "A"})


def _equal_controller_level(rounds: int, points: int, sigma: float, seed: int) -> dict[str, list[float]]:
    """A level of made-up points whose controller costs exactly what the
    best static choice costs, four static choices within 5 % at the top,
    every figure with lognormal noise of sd sigma: the two level means."""
    import random
    rng = random.Random(seed)
    top = {"k1": 0.2, "k4": 0.5, "k16": 0.9, "k64": 1.0, "k256": 0.98, "k1024": 0.97, "ser": 0.95}
    variants = [{"name": f"tm-{k}", "kind": "tm", "group": "g", "granularity": i + 1} for i, k in enumerate(top)]
    variants.append({"name": "tm-dyn", "kind": "tm", "group": "g", "controller": True})
    desc = desc_of("histogram", variants, [{"name": "ops_per_sec", "unit": "ops/s", "better": "higher"}], ["row"])
    desc["conflict"] = {f"r{i}": "changing" for i in range(points)}
    samples = [{"workload": "histogram", "variant": v, "threads": 1, "round": r, "allocator": None,
                "dims": {"row": f"r{i}"}, "metrics": {"ops_per_sec": f * rng.lognormvariate(0.0, sigma)},
                "tm": None, "elision": None, "context": 0}
               for i in range(points) for r in range(rounds)
               for v, f in [(f"tm-{k}", x) for k, x in top.items()] + [("tm-dyn", 1.0)]]
    ms = W.analyse({"samples": samples, "workloads": {"histogram": desc}}, {}).measurements
    return {m["metric"].split("_vs_")[1].split("_")[0]: m["reps"] for m in ms
            if m["dims"].get("part") == "dyn-vs-static-level"}


def test_best_static_choice_is_picked_on_luck() -> None:
    """Why the tuned choice is judged too: with the changing row's noise (sd
    0.14 a figure), a controller as fast as the best static choice reads
    ~0.95x the in-sample best (the best median is the luckiest of the four
    near-equal choices, in the very rounds it is compared in) and ~1.02x
    the tuned one (which now and then picks a choice 2-5 % slower)."""
    import math
    got = _equal_controller_level(rounds=3, points=60, sigma=0.14, seed=7)
    best, tuned = (math.exp(sum(map(math.log, got[k])) / 3) for k in ("best", "tuned"))
    assert 0.91 < best < 0.97, got
    assert 0.98 < tuned < 1.06, got
    # Without noise both are the truth.
    got = _equal_controller_level(rounds=3, points=2, sigma=0.0, seed=7)
    assert got["best"] == pytest.approx([1.0] * 3) and got["tuned"] == pytest.approx([1.0] * 3)


def test_regime_note() -> None:
    """The controller's round pairs whose shares of sections on the bias lie
    more than 0.1 apart are counted in a warning, at 2 threads and more."""
    note = [w for w in suite_run()["warnings"] if w.startswith("coarsening")]
    assert note == []          # no solo counts: nothing to tell
    same = suite_run(solo={"tm-k8": [500, 500, 500], "tm-auto": [450, 560, 500]})["warnings"]
    assert not [w for w in same if w.startswith("coarsening")]
    apart = suite_run(solo={"tm-k8": [900, 900, 900], "tm-auto": [100, 900, 850]})["warnings"]
    lines = [w for w in apart if w.startswith("coarsening")]
    # Round 0 at 2 threads only (1 thread is not counted) lay apart.
    assert len(lines) == 1 and "less on the bias 1, 0.95; within 0.1 2, 0.95" in lines[0], lines
    assert "more on the bias" not in lines[0]


def test_rounds_under_steal_are_flagged() -> None:
    """A measurement is flagged "steal" when a process behind one of its
    rounds lost 5 % of the machine or more; a ratio when either side did.
    The run says how much its processes lost, and a target's detail points
    at the flag without judging otherwise."""
    quiet = suite_run()
    assert not [m for m in quiet["measurements"] if m.get("flags")]
    note = [w for w in quiet["warnings"] if w.startswith("hypervisor steal")]
    assert note and "lost a median 1.0 %" in note[0] and "; 0 lost 5 % or more (and 30 ms)" in note[0], note
    run = suite_run(stolen={("tm-k8", 1): 0.08, ("tm-auto", 2): 0.049}, dyn=0.8)
    ms = by_key(run)
    flagged = {k for k, m in ms.items() if "steal" in m.get("flags", [])}
    assert "scatter/updates_per_sec/tm-k8 T=2" in flagged
    assert "scatter/updates_per_sec_vs_mutex/tm-k8 T=1" in flagged
    # The controller's ratio to the best static k (tm-k8) shares its rounds;
    # the one to k = 1 does not (4.9 % is under the line).
    assert "dyn-vs-static/updates_per_sec_vs_best_static/scatter/default T=2" in flagged
    assert "dyn-vs-static/updates_per_sec_vs_k1/scatter/default T=2" not in flagged
    assert "scatter/updates_per_sec/tm-auto T=2" not in flagged
    assert "best-tm/updates_per_sec_vs_mutex/scatter T=2" in flagged
    assert not [k for k in flagged if k.startswith(("art/", "ring/", "scatter/updates_per_sec/mutex"))]
    note = [w for w in run["warnings"] if w.startswith("hypervisor steal")][0]
    assert "(max 8.0 %); 1 lost 5 % or more (and 30 ms): the measurements of their rounds are " \
        "flagged" in note
    # A share over the line from a tick or two of a short process is no burst.
    short = suite_run(stolen={("tm-k8", 1): (0.08, 20)})
    assert not [m for m in short["measurements"] if m.get("flags")]
    t = [targets.Target(id="dyn", bench="workloads", description="d",
                        select={"part": "dyn-vs-static", "metric": "updates_per_sec_vs_best_static"},
                        op=">=", limit=0.909)]
    (v,) = targets.evaluate(t, run["measurements"])
    # tm-k8's round 1 process ran both thread counts.
    assert v["verdict"] == "FAIL"
    assert v["detail"].count("[a round ran under hypervisor steal]") == 2, v["detail"]
    # Compare passes the flag on, with one warning.
    diff = compare.compare_runs(quiet, run)
    assert any("flag steal" in w for w in diff.warnings)


def test_rounds_beside_other_load_are_flagged() -> None:
    """Like steal: a measurement is flagged "load" when a process behind
    one of its rounds ran beside other processes that took 10 % of the
    machine (and 200 ms); the note, a target's detail and compare say so."""
    quiet = suite_run()
    note = [w for w in quiet["warnings"] if w.startswith("other processes")]
    assert note and "; 0 ran beside 10 % or more" in note[0], note
    run = suite_run(loaded={("tm-k8", 1): 0.5, ("tm-auto", 2): 0.09}, dyn=0.8)
    flagged = {k for k, m in by_key(run).items() if "load" in m.get("flags", [])}
    assert "scatter/updates_per_sec/tm-k8 T=2" in flagged
    assert "dyn-vs-static/updates_per_sec_vs_best_static/scatter/default T=2" in flagged
    assert "scatter/updates_per_sec/tm-auto T=2" not in flagged          # 9 % is under the line
    assert not [k for k, m in by_key(run).items() if "steal" in m.get("flags", [])]
    note = [w for w in run["warnings"] if w.startswith("other processes")][0]
    assert "(max 50.0 %); 1 ran beside 10 % or more (and 200 ms): the measurements of their rounds " \
        "are flagged 'load'" in note, note
    t = [targets.Target(id="dyn", bench="workloads", description="d",
                        select={"part": "dyn-vs-static", "metric": "updates_per_sec_vs_best_static"},
                        op=">=", limit=0.909)]
    (v,) = targets.evaluate(t, run["measurements"])
    assert v["detail"].count("[a round ran beside other processes' load]") == 2, v["detail"]
    diff = compare.compare_runs(quiet, run)
    assert any("flag load" in w for w in diff.warnings)


def test_steal_is_read_around_each_process(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 0 5 100 0 0 0 250 0 0\ncpu0 5 0 2 50 0 0 0 125 0 0\n")
    hz = os.sysconf("SC_CLK_TCK")
    assert runner.steal_ms(stat) == pytest.approx(250 * 1000.0 / hz)
    stat.write_text("cpu  10 0 5 100\n")           # an old kernel: no steal column
    assert runner.steal_ms(stat) is None
    assert runner.steal_ms(tmp_path / "none") is None
    cpus = os.cpu_count() or 1
    assert runner.steal_share(1000.0, 1000.0 + 40.0 * cpus, 1.0) == pytest.approx(0.04)
    assert runner.steal_share(None, 5.0, 1.0) is None
    assert runner.steal_share(9.0, 5.0, 1.0) is None   # a counter that went back
    # The busy columns: user, nice, system, irq and softirq (not idle, iowait, steal).
    stat.write_text("cpu  10 2 5 100 7 1 3 250 0 0\n")
    assert runner.busy_ms(stat) == pytest.approx(21 * 1000.0 / hz)
    assert runner.busy_ms(tmp_path / "none") is None


def test_other_processes_are_told_from_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window's others_* is the machine's busy time less this process's
    and its waited-for children's, over the machine's CPU time; a child's
    own work is ours, not another process's."""
    import subprocess
    import sys
    before = runner.own_cpu_ms()
    subprocess.run([sys.executable, "-c", "import time\nt=time.process_time()\n"
                    "while time.process_time()-t<0.3: pass"], check=True)
    assert runner.own_cpu_ms() - before >= 280.0
    # The arithmetic, on made-up counters: 2 s of wall time, 900 ms busy, 300 of them ours.
    cpus = os.cpu_count() or 1
    clock = iter([100.0, 102.0])
    busy = iter([1000.0, 1900.0])
    own = iter([50.0, 350.0])
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(runner, "busy_ms", lambda path=None: next(busy))
    monkeypatch.setattr(runner, "own_cpu_ms", lambda: next(own))
    monkeypatch.setattr(runner, "steal_ms", lambda path=None: 0.0)
    w = runner.StealWindow().close()
    assert w == {"share": 0.0, "ms": 0, "others_share": round(600.0 / (2000.0 * cpus), 3), "others_ms": 600}
    # Ticks can make ours exceed the busy time over a short stretch: never below 0.
    clock, busy, own = iter([0.0, 1.0]), iter([0.0, 10.0]), iter([0.0, 30.0])
    assert runner.StealWindow().close()["others_share"] == 0.0


def test_load_note() -> None:
    quiet = [{"share": 0.0, "ms": 0, "others_share": 0.01, "others_ms": 20}] * 3
    (line,) = base.load_note(quiet)
    assert line.startswith("other processes: 3 processes ran beside others taking a median 1.0 % of the "
                           "machine's CPU time") and "; 0 ran beside 10 % or more" in line
    assert "shared machine" not in line
    busy = quiet + [{"share": 0.0, "ms": 0, "others_share": 0.5, "others_ms": 4000},
                    {"share": 0.0, "ms": 0, "others_share": 0.5, "others_ms": 100}]   # too short to tell
    (line,) = base.load_note(busy)
    assert "(max 50.0 %); 1 ran beside" in line and "describe a shared machine" in line
    # Runs stored before the load was measured say nothing of it.
    assert base.load_note([{"share": 0.0, "ms": 0}]) == [] and base.load_note(None) == []


def test_ring_layout_is_measured_and_shown() -> None:
    """The pages a ring's first lines span and the most on one set become
    measurements (each round's worst process) and a table in the text."""
    run = suite_run()
    ms = {schema.key(m): m for m in run["measurements"]}
    pages = ms["layout/first_line_pages/ring/hpsync/size=4096"]
    assert pages["value"] == 128 and pages["unit"] == "pages" and len(pages["reps"]) == 3
    glibc_1k = ms["layout/max_lines_per_set/ring/glibc/size=1024"]
    assert sorted(glibc_1k["reps"]) == [4, 4, 64]
    assert ms["layout/max_lines_per_set/ring/hpsync/size=1024"]["reps"] == [2, 2, 2]
    text = render.render(run)
    assert "layout of the first lines" in text
    assert [ln.split()[2:] for ln in text.splitlines() if ln.startswith("size 1024")] == [
        ["glibc", "32", "4-64"], ["hpsync", "32", "2"]]
    # Only the ring reports a layout.
    assert not any("layout" in schema.key(m) and "/art/" in schema.key(m) for m in run["measurements"])


def test_real_ring_reports_where_its_lines_lie() -> None:
    """hps-workload-ring's layout per row: a 4 KiB node's first line is on a
    page of its own (128 pages, whatever the allocator); 128 lines over the
    L1's sets put at least 128 / sets on one; under cia, whose classes are
    odd numbers of lines, no set holds more than a few at 1 KiB and 2 KiB."""
    prog = BUILD / "bin" / "hps-workload-ring"
    cia = BUILD / "lib" / "libhpsync-malloc.so"
    if not prog.is_file() or not cia.is_file():
        pytest.fail(f"{prog} or {cia} missing: run make first")
    for preload in ("", str(cia)):
        env = {**os.environ, "LD_PRELOAD": preload}
        p = subprocess.run([str(prog), "--rows", "64,1024,2048,4096", "--variants", "mutex", "--threads", "1",
                            "--reps", "1", "--quick"], capture_output=True, text=True, env=env, timeout=120,
                           check=False)
        assert p.returncode == 0, p.stderr
        rows = {r["row"]: r["layout"] for r in json.loads(p.stdout)["rows"]}
        assert rows["4096"]["pages"] == 128
        for name, lay in rows.items():
            assert lay["page_bytes"] > 0 and lay["l1_sets"] >= 1
            assert -(-128 // lay["l1_sets"]) <= lay["max_lines_per_set"] <= 128, (name, lay)
            assert int(name) * 128 // lay["page_bytes"] // 2 <= lay["pages"] <= 128, (name, lay)
        if preload and rows["64"]["l1_sets"] == 64:
            assert rows["1024"]["max_lines_per_set"] <= 4 and rows["2048"]["max_lines_per_set"] <= 4, rows


def test_report_draws_the_papers_shapes(tmp_path: Path) -> None:
    run = suite_run()
    kinds: dict[str, list[str]] = {}
    for f in report.plan(run):
        kinds.setdefault(f.kind, []).append(f.title)
    assert set(kinds) == {"speedup", "restarts", "curve", "granularity", "aborts"}
    assert any(t.startswith("art: insert_mops speed-up") for t in kinds["speedup"])
    assert kinds["curve"][0].startswith("ring: ns_per_node vs size by allocator")
    assert kinds["restarts"] == ["art: insert_mops vs restarts (keyset dense)",
                                 "art: insert_mops vs restarts (keyset random)"]
    # In the suite's order: scatter before the ART.
    assert kinds["aborts"] == ["scatter: TM aborts per commit by cause",
                               "art: elision aborts per commit by cause"]
    page = report.html(run, "made up")
    assert page.count("<img ") == sum(map(len, kinds.values()))
    text = render.render(run)
    assert "art: art" in text and "2.50x mutex" in text
    assert "time:" not in text                 # a run stored before the seconds were kept
    run["extra"]["seconds"] = {"scatter": 3.0, "art": 75.4}
    assert "  time: art 1m15s, scatter 3s\n" in render.render(run)


def granularity_marks(run: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The lines and marks the scatter granularity figure is drawn from."""
    samples = [s for s in run["extra"]["samples"] if s["workload"] == "scatter"]
    desc = run["extra"]["workloads"]["scatter"]
    captured: list[Any] = []
    orig = render.plots.marked_lines
    render.plots.marked_lines = lambda ln, mk, *a: captured.append((ln, mk)) or b""  # type: ignore
    try:
        for _, _, draw in render._by_variant_attr("scatter", desc, samples, {"metric": "updates_per_sec"},
                                                  "granularity", "granularity"):
            draw()
    finally:
        render.plots.marked_lines = orig  # type: ignore
    (lines, marks), = captured
    return lines, {m.label: m for m in marks}


def test_granularity_marks_the_controller() -> None:
    run = suite_run()
    figs = render.figures(run)
    assert [t for k, t, _ in figs if k == "granularity"] == ["scatter: updates_per_sec vs granularity"]
    lines, marks = granularity_marks(run)
    assert [ln.xs for ln in lines] == [[1.0, 8.0], [1.0, 8.0]]
    assert [ln.label for ln in lines] == ["1T", "2T"]
    # The controller's point: its chosen k (6) at its own figure, in its line's colour.
    auto = marks["tm-auto 1T"]
    assert auto.x == 6.0 and auto.series == "1T" and not auto.hollow
    assert auto.y == pytest.approx(100 * 1.2 * 0.95 * 1.02)
    # Serialized chunks have no k on the axis: a level at their median, per line.
    ser = marks["tm-ser 2T"]
    assert ser.x is None and ser.series == "2T"
    assert ser.y == pytest.approx(100 * 0.4 * 2 ** 0.5 * 1.02)
    assert sorted(marks) == ["tm-auto 1T", "tm-auto 2T", "tm-ser 1T", "tm-ser 2T"]


def test_granularity_marks_a_serialized_controller() -> None:
    """A controller that ended on serialized chunks in most of its threads
    in most rounds is a hollow star, labelled so; a minority is not."""
    run = suite_run()
    for s in run["extra"]["samples"]:
        if s["variant"] == "tm-auto":
            # 2 threads: both serialized in rounds 0 and 1; 1 thread: in round 0 only.
            s["tm"]["serial_end"] = s["threads"] if s["round"] < (2 if s["threads"] == 2 else 1) else 0
    _, marks = granularity_marks(run)
    assert marks["tm-auto 2T (serialized)"].hollow
    assert not marks["tm-auto 1T"].hollow


def test_compare_across_two_machines(tmp_path: Path) -> None:
    a, b = suite_run(host="a"), suite_run(olc_lookup=4.0, host="b")
    comp = compare.compare_runs(a, b)
    rows = {r.key: r for r in comp.rows}
    r = rows["art/lookup_mops_vs_mutex/olc/dense T=2"]
    assert r.ratio == pytest.approx(4.0 / 3.5)
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    p = subprocess.run(["./hpsync", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")],
                       cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    assert "lookup_mops_vs_mutex" in p.stdout


def test_compare_says_when_the_runs_did_different_work() -> None:
    """A budget that cut one machine's suite and not the other's is named in
    one warning; equal work (or a run of a kind without a work factor)
    says nothing."""
    def with_work(scale: float | None, quick: bool = False) -> dict[str, Any]:
        run = suite_run()
        run["params"]["quick"] = quick
        if scale is not None:
            run["extra"]["scale"] = scale
        return run
    said = [w for w in compare.compare_runs(with_work(1.0), with_work(0.456)).warnings
            if "different amounts of work" in w]
    assert len(said) == 1 and "A: default" in said[0] and "B: default, work x0.46" in said[0]
    said = compare.compare_runs(with_work(0.5, quick=True), with_work(0.5)).warnings
    assert any("A: --quick, work x0.50, B: default, work x0.50" in w for w in said)
    for a, b in ((with_work(0.7), with_work(0.7)), (with_work(None), with_work(0.5))):
        assert not any("different amounts" in w for w in compare.compare_runs(a, b).warnings)


def test_harness_rows_flatten_and_map_back() -> None:
    """The harness's form: variants nested in a row, TM variants known to
    the program by one name per backend, the controller's k from k_end."""
    d = describe.parse({"workload": "h", "variants": [
        {"name": "mutex", "kind": "lock", "baseline": True},
        {"name": "norec:tm-dyn", "arg": "tm-dyn", "kind": "tm", "controller": True,
         "env": {"HPSYNC_TM": "norec"}},
        {"name": "stm:tm-dyn", "arg": "tm-dyn", "kind": "tm", "controller": True,
         "env": {"HPSYNC_TM": "stm"}}],
        "metrics": [{"name": "ops_per_sec", "better": "higher"}], "dims": ["row"]}, "hps-workload-h")
    groups = measure.env_groups(d.variants)
    assert [[v.name for v in g] for g in groups] == [["mutex", "norec:tm-dyn"], ["stm:tm-dyn"]]
    step = measure.Step(0, d, groups[0], [2], None, {}, 1.0)
    assert step.argv(Path("/p"), False)[-4:] == ["--variants", "mutex,tm-dyn", "--reps", "1"]
    doc = {"workload": "h", "rows": [{"row": "b16", "threads": 2, "params": {"bins": 16}, "variants": [
        {"variant": "mutex", "secs": [0.5], "ops_per_sec": 10.0, "tm": None},
        {"variant": "tm-dyn", "secs": [0.25], "ops_per_sec": 20.0,
         "tm": {"commits": 4, "aborts_by_cause": {"conflict": 2}, "k_end": [8, 16, 32]}}]}]}
    ss = measure.samples_of(step, doc, None)
    assert [(s["variant"], s["dims"], s["metrics"]) for s in ss] == [
        ("mutex", {"row": "b16"}, {"ops_per_sec": 10.0}),
        ("norec:tm-dyn", {"row": "b16"}, {"ops_per_sec": 20.0})]
    assert ss[1]["granularity"] == 16.0
    with pytest.raises(CliError, match="no row for norec:tm-dyn@2"):
        measure.samples_of(step, {**doc, "rows": [{**doc["rows"][0], "variants": doc["rows"][0]["variants"][:1]}]},
                           None)


def test_real_quick_run_of_scatter(tmp_path: Path) -> None:
    """The real harness program, quick, through the CLI: its description,
    the per-backend processes and the controller's point."""
    if not (BUILD / "bin" / "hps-workload-scatter").is_file():
        pytest.fail("build/bin/hps-workload-scatter missing: run make first")
    p = run_cli(BUILD, tmp_path, "bench", "workloads", "scatter", "--quick", "--slices", "2", "--json",
                "--no-store")
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)
    assert run["params"]["slices"] == 2
    samples = run["extra"]["samples"]
    assert {"critical", "norec:tm-dyn", "stm:tm-k1"} <= {s["variant"] for s in samples}
    assert all(s.get("granularity", 0) >= 1 for s in samples if s["variant"].endswith("tm-dyn"))
    assert any(f[0] == "granularity" for f in render.figures(run))
    v = {t["id"]: t["verdict"] for t in run["targets"]}
    assert v["workloads-validate_2"] == "PASS"

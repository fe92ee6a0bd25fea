# SPDX-License-Identifier: MIT
"""The targets table and its evaluator: PASS, FAIL, inconclusive (too few
rounds, or rounds on both sides of the limit) and n/a, on plain
measurements."""

from __future__ import annotations

from typing import Any

import pytest

from hpsync import schema
from hpsync.bench import BENCHES, targets


def m(lock: str, reps: list[float], threads: int | None = None, metric: str = "ns_per_op",
      rounds: list[int] | None = None) -> dict[str, Any]:
    dims: dict[str, Any] = {"part": "uncontended", "lock": lock}
    if threads is not None:
        dims["threads"] = threads
    return schema.measurement(dims, metric, "ns", reps, "lower", rounds=rounds)


def target(**kw: Any) -> targets.Target:
    doc = {"target": [{"id": "t", "bench": "locks", "description": "d", "op": "<=", "limit": 1.0,
                       "select": {"lock": "adaptive", "metric": "ns_per_op"}, **kw}]}
    return targets.parse(doc)[0]


def one(t: targets.Target, ms: list[dict[str, Any]]) -> dict[str, Any]:
    (v,) = targets.evaluate([t], ms)
    return v


def test_judge() -> None:
    j = targets.judge
    assert j([0.5, 0.6, 0.7], "<=", 1.0, 3) == ("PASS", "")
    assert j([1.5, 1.6, 1.7], "<=", 1.0, 3) == ("FAIL", "")
    assert j([0.5, 0.6], "<=", 1.0, 3) == ("inconclusive", "2 round(s), fewer than 3")
    # The spread crosses the target: one noisy round never makes a FAIL (nor a PASS).
    assert j([0.5, 0.6, 1.9], "<=", 1.0, 3) == ("inconclusive", "rounds on both sides of 1")
    assert j([0.5, 1.2, 1.3], "<=", 1.0, 3)[0] == "inconclusive"
    assert j([1.0, 1.0, 1.0], "<=", 1.0, 3)[0] == "PASS"           # on the limit passes
    assert j([0.95 * (1 - 1e-12)] * 3, ">=", 0.95, 3)[0] == "PASS"  # within rounding
    assert j([2.0], ">=", 1.0, 1)[0] == "PASS"
    assert targets.combine([]) == "n/a"
    assert targets.combine(["PASS", "inconclusive", "FAIL"]) == "FAIL"
    assert targets.combine(["PASS", "inconclusive"]) == "inconclusive"
    assert targets.combine(["PASS", "PASS"]) == "PASS"


def test_absolute_and_not_measured() -> None:
    t = target(absent="needs X")
    assert one(t, [m("adaptive", [0.5, 0.7, 0.9])])["verdict"] == "PASS"
    v = one(t, [m("glibc", [0.5, 0.7, 0.9])])
    assert (v["verdict"], v["passed"], v["detail"]) == ("n/a", None, "not measured (needs X)")
    # A description's per-group field, when no group was measured, says so in words.
    t = target(description="{variant} at 2 threads", per=("variant",))
    assert one(t, [m("glibc", [0.5, 0.7, 0.9])])["description"] == "(each variant) at 2 threads"


def test_unmet_says_where_to_look_only_when_not_met() -> None:
    t = target(unmet="look at the pages")
    assert "look at the pages" not in one(t, [m("adaptive", [0.5, 0.7, 0.9])])["detail"]
    fail = one(t, [m("adaptive", [1.5, 1.7, 1.9])])
    assert fail["verdict"] == "FAIL" and fail["detail"].endswith(" (not met: look at the pages)")
    unsure = one(t, [m("adaptive", [0.5, 1.7, 1.9])])
    assert unsure["verdict"] == "inconclusive" and "(not met: look at the pages)" in unsure["detail"]
    assert "look at" not in one(t, [m("glibc", [1.5, 1.7, 1.9])])["detail"]    # n/a: not measured


def test_ratio_pairs_rounds() -> None:
    """Rounds are interleaved: each round's figure is judged against the
    reference's same round, so a round the machine slowed as a whole
    cancels out."""
    t = target(against={"lock": "glibc"}, limit=0.9)
    mine = m("adaptive", [5.0, 10.0, 5.0])          # round 1 ran at half speed
    ref = m("glibc", [6.0, 12.0, 6.0])
    v = one(t, [mine, ref])
    assert v["verdict"] == "PASS" and "0.83x" in v["detail"]
    assert v["judged"] == ["uncontended/ns_per_op/adaptive"]
    # Rounds are matched by number, not position: a round that did not finish is skipped.
    gap = m("adaptive", [5.0, 5.0], rounds=[0, 2])
    assert targets.figures(gap, ref, "ratio") == pytest.approx([5 / 6, 5 / 6])
    # A reference with one figure stands for every round.
    single = m("glibc", [10.0])
    assert targets.figures(mine, single, "difference") == [-5.0, 0.0, -5.0]
    # No reference measured: nothing to judge.
    assert one(t, [mine])["verdict"] == "n/a"


def test_several_measurements_and_per_groups() -> None:
    t = target(select={"part": "uncontended", "metric": "ns_per_op", "threads": {"min": 2}},
               per=["lock"], description="{lock} at 2+ threads")
    ms = [m("mcs", [0.5] * 3, 2), m("mcs", [1.5] * 3, 4), m("ttas", [0.5] * 3, 4),
          m("ttas", [9.0] * 3, 1)]                  # 1 thread: not selected
    vs = {v["id"]: v for v in targets.evaluate([t], ms)}
    assert vs["t_mcs"]["verdict"] == "FAIL" and vs["t_mcs"]["description"] == "mcs at 2+ threads"
    assert vs["t_mcs"]["detail"] == "2T 0.5 ns (all 3 rounds); 4T 1.5 ns (all 3 rounds)"
    assert vs["t_ttas"]["verdict"] == "PASS"
    # A per dim the selector lists: every listed value gets a verdict, n/a if unmeasured.
    t = target(select={"lock": ["mcs", "clh"], "metric": "ns_per_op"}, per=["lock"])
    assert {v["id"]: v["verdict"] for v in targets.evaluate([t], ms)} == {"t_mcs": "FAIL",
                                                                           "t_clh": "n/a"}


def test_many_points_name_the_unsure_ones() -> None:
    """Past DETAIL_MAX points the detail names the worst, the failing, and,
    when none fails, the points whose rounds straddle the limit."""
    t = target(select={"part": "uncontended", "metric": "ns_per_op"})
    ms = [m("adaptive", [0.9, 0.95, 0.97], threads) for threads in range(1, targets.DETAIL_MAX + 2)]
    ms.append(m("adaptive", [0.2, 1.3, 0.3], 99))          # median fine, a round past 1.0
    v = one(t, ms)
    assert v["verdict"] == "inconclusive"
    assert v["detail"].endswith("; inconclusive: 99T 0.3 ns (0.2 ns to 1.3 ns over 3 rounds) "
                                "[inconclusive: rounds on both sides of 1]"), v["detail"]
    assert "worst " in v["detail"] and "0.95 ns" in v["detail"]


def test_selectors() -> None:
    x = m("mcs", [1.0], 4)
    assert targets.matches({"lock": "mcs"}, x) and targets.matches({"lock": ["a", "mcs"]}, x)
    assert targets.matches({"threads": {"min": 2, "max": 4}}, x)
    assert not targets.matches({"threads": {"min": 5}}, x)
    assert not targets.matches({"size": 8}, x)                  # a dim it does not have
    assert not targets.matches({"metric": "ops_per_sec"}, x)


@pytest.mark.parametrize("change, message", [
    ({"op": "<"}, "op must be one of"),
    ({"relation": "ratio"}, "does not fit no 'against'"),
    ({"against": {"lock": "glibc"}, "relation": "value"}, "does not fit an 'against'"),
    ({"colour": "red"}, "unknown field 'colour'"),
    ({"select": {}}, "select must name dims"),
])
def test_bad_tables_are_refused(change: dict[str, Any], message: str) -> None:
    row = {"id": "t", "bench": "locks", "description": "d", "op": "<=", "limit": 1.0,
           "select": {"lock": "adaptive"}, **change}
    with pytest.raises(ValueError, match=message):
        targets.parse({"target": [row]})


def test_the_shipped_table() -> None:
    table = targets.table()
    assert {t.bench for t in table} == set(BENCHES)
    ids = [t.id for t in table]
    assert len(ids) == len(set(ids))
    # Every target of the issues that used to live in code.
    assert {"uncontended", "adaptive-throughput", "oversubscribed", "layer-overhead",
            "interposer-overhead", "low-conflict-speedup", "high-conflict-slowdown",
            "index-spread-sets", "index-spread-per-set", "ring", "cachegrind", "single-thread",
            "multithread", "peak-rss", "pattern-ops", "pattern-rss", "put_quiet",
            "put_quiet_vs_oshmem", "fetch_add", "put_rate", "barrier", "coll2", "coll4",
            "amo_vs_put", "ofi_bare", "ofi_raw", "ofi_coll4", "int_p_insns", "quiet_insns",
            "launch", "tm-1t-vs-ml_wt", "tm-1t-vs-ml_wt-rows", "tm-1t-vs-seq", "tm-2t-vs-itm",
            "tm-2t-vs-itm-rows", "tm-8t-scaling", "tm-auto", "itm-1t-vs-itm", "itm-2t-vs-itm",
            "itm-vs-itm-rows", "itm-auto-vs-default", "itm-overhead", "workloads-validate",
            "workloads-tm-vs-mutex", "workloads-tm-vs-mutex-histogram", "workloads-art-olc-insert",
            "workloads-art-olc-lookup", "workloads-ring-cia-floor", "workloads-coarsen-dyn-vs-best",
            "workloads-coarsen-dyn-level", "workloads-coarsen-dyn-level-tuned",
            "workloads-coarsen-dyn-vs-k1"} == set(ids)

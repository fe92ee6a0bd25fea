# SPDX-License-Identifier: MIT
"""`bench workloads`, the measuring half: the workload program's contract
(--describe), slices and whole runs, the time budget, and the runner on a
test double of a workload program (tests/python/progs/fake_workload.py,
installed as build/bin/hps-workload-fake in a private build tree).  The
analysis, targets, report and compare: test_bench_workloads.py."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hpsync import compare, report, runner, schema
from hpsync.bench import targets, tm
from hpsync.bench.workloads import describe, measure
from hpsync.errors import CliError
from hpsync.progress import Progress, clock
from workloads_util import BUILD, FAKE, REPO, by_key, run_cli


# ---- the workload program's contract ----------------------------------------------

def fake_describe(**change: Any) -> dict[str, Any]:
    doc = json.loads(subprocess.run([str(FAKE), "--describe"], capture_output=True, text=True,
                                    check=True).stdout)
    doc["workload"] = "fake"
    doc.update(change)
    return doc


def test_describe_parses_the_double() -> None:
    d = describe.parse(fake_describe(), "hps-workload-fake")
    assert d.baseline == "mutex"
    assert [v.name for v in d.chosen(quick=True)] == ["mutex", "elide-r0", "elide-r3", "stm", "norec", "htm"]
    assert "tts" in [v.name for v in d.chosen(quick=False)]
    assert d.variant("stm").env == {"HPSYNC_TM": "stm"} and d.variant("htm").needs == ("rtm",)
    assert d.variant("elide-r3").restarts == 3 and d.variant("ctl").controller


@pytest.mark.parametrize("change, why", [
    ({"variants": []}, "no variants"),
    ({"variants": [{"name": "a", "kind": "magic"}]}, "kind must be"),
    ({"variants": [{"name": "a", "kind": "lock", "needs": ["avx9"]}]}, "needs takes"),
    ({"metrics": [{"name": "x", "better": "bigger"}]}, "better"),
    ({"dims": ["threads"]}, "dims"),
    ({"figures": [{"shape": "pie"}]}, "shape"),
    ({"threads": {"default": [0]}}, "threads"),
    ({"conflict": {"b16": 3}}, "conflict must map"),
    ({"conflict": ["b16"]}, "conflict must map"),
])
def test_describe_names_each_mistake(change: dict[str, Any], why: str) -> None:
    with pytest.raises(CliError, match=why):
        describe.parse(fake_describe(**change), "hps-workload-fake")


def test_env_groups_split_only_conflicting_settings() -> None:
    d = describe.parse(fake_describe(), "hps-workload-fake")
    groups = measure.env_groups([d.variant(n) for n in ("mutex", "stm", "elide-r0", "norec", "tts")])
    assert [[v.name for v in g] for g in groups] == [["mutex", "stm", "elide-r0", "tts"], ["norec"]]


def test_scale_multiplies_the_modes_own() -> None:
    """--scale reaches the programs that take it, times the mode's own
    --scale (--quick's 0.25), and no other program."""
    takes = describe.Description("w", "t", "p", (), (), scale=True,
                                 args={"quick": ["--quick", "--scale", "0.25"], "default": []})
    fixed = describe.Description("w", "t", "p", (), (), args={"quick": ["--quick"]})
    assert measure.scaled(takes, takes.args["quick"], 4.0) == ["--quick", "--scale", "1"]
    assert measure.scaled(takes, takes.args["default"], 2.5) == ["--scale", "2.5"]
    assert measure.scaled(takes, takes.args["default"], 1.0) == []
    assert measure.scaled(fixed, fixed.args["quick"], 4.0) == ["--quick"]


def test_slices_split_a_run_where_the_input_stays() -> None:
    """--slices S: S repetitions at 1/S of the work each (times the mode's
    and the user's --scale), for a program whose input does not change with
    --scale; the graph's does (slices false): it runs whole."""
    args = {"quick": ["--quick", "--scale", "0.25"], "default": []}
    sliced = describe.Description("w", "t", "p", (), (), scale=True, slices=True, args=args)
    whole = describe.Description("w", "t", "p", (), (), scale=True, args=args)
    def tail(d: describe.Description, quick: bool, scale: float, n: int) -> list[str]:
        (slices, runs, rows), = measure.sliced(d, "quick" if quick else "default", n)
        return measure.Step(0, d, [], [1], None, {}, 1.0, slices, rows, runs).argv(Path("/p"), quick, scale)[1:]
    assert tail(sliced, False, 1.0, 8) == ["--scale", "0.125", "--threads", "1", "--variants", "", "--reps", "8"]
    assert tail(sliced, True, 2.0, 4) == ["--quick", "--scale", "0.125", "--threads", "1", "--variants", "",
                                          "--reps", "4"]
    assert tail(sliced, False, 1.0, 1)[-2:] == ["--reps", "1"] and "--scale" not in tail(sliced, False, 1.0, 1)
    assert tail(whole, False, 1.0, 8) == ["--threads", "1", "--variants", "", "--reps", "1"]
    # A row whose input changes partway (histogram's b1m-b16) runs whole, in a process of its own,
    # WHOLE_RUNS times at all the work (none of it divided among them).
    phased = describe.Description("w", "t", "p", (), (), scale=True, slices=True, args=args,
                                  rows={"default": ["a", "b", "ab"], "quick": ["a"]}, whole_rows=("ab",))
    w = measure.WHOLE_RUNS
    assert w > 1
    assert measure.sliced(phased, "default", 8) == [(8, 1, ("a", "b")), (1, w, ("ab",))]
    assert measure.sliced(phased, "quick", 8) == [(8, 1, ())]
    assert measure.sliced(phased, "default", 1) == [(1, 1, ())]
    step = measure.Step(0, phased, [], [2], None, {}, 1.0, 1, ("ab",), w)
    argv = step.argv(Path("/p"), False, 0.5)
    assert argv[1:5] == ["--scale", "0.5", "--rows", "ab"] and "[ab]" in step.label()
    assert argv[-2:] == ["--reps", str(w)]
    def params(**given: Any) -> measure.Params:
        args = {"names": [], "threads": None, "reps": None, "quick": False, "scale": None, "slices": None}
        return measure.make_params(argparse.Namespace(**{**args, **given}))
    assert params().slices == 8 and params(quick=True).slices == 1 and params(slices=3).slices == 3
    assert describe.parse(fake_describe(scale=True, slices=True), "hps-workload-fake").slices
    assert not describe.parse(fake_describe(slices=True), "hps-workload-fake").slices  # no --scale


def test_slices_pool_into_one_figure() -> None:
    """A variant's slices did equal work: its figure is all the work over
    all the time (a rate's harmonic mean, a time per operation's mean),
    not the median of the slices, which would drop the controller's climb
    in the first."""
    row = {"ops_per_sec_reps": [10.0, 30.0, 30.0], "ns_per_node_reps": [10.0, 30.0, 50.0]}
    assert measure._figure(row, "ops_per_sec", "higher") == pytest.approx(3 / (1 / 10 + 2 / 30))
    assert measure._figure(row, "ns_per_node", "lower") == pytest.approx(30.0)
    assert measure._figure({"ops_per_sec_reps": [7.0]}, "ops_per_sec", "higher") == 7.0
    assert measure._figure({"ops_per_sec": 5.0}, "ops_per_sec", "higher") == 5.0


@pytest.mark.parametrize("name, sliced, whole", [("histogram", True, ("b1m-b16",)), ("scatter", True, ()),
                                                 ("ring", True, ()), ("graph", False, ())])
def test_real_programs_say_whether_they_slice(name: str, sliced: bool, whole: tuple[str, ...]) -> None:
    prog = BUILD / "bin" / f"hps-workload-{name}"
    if not prog.is_file():
        pytest.fail(f"{prog} missing: run make first")
    d = describe.describe(prog)
    assert d.slices is sliced and d.whole_rows == whole
    assert set(d.rows["quick"]) <= set(d.rows["default"]) and set(whole) <= set(d.rows["default"])
    # The coarsening workloads name every row's conflict level (the per-level target).
    if name in ("histogram", "scatter"):
        assert set(d.conflict) == set(d.rows["default"])
        assert set(d.conflict.values()) <= {"low", "high", "changing"}
        assert d.as_dict()["conflict"] == d.conflict
    else:
        assert d.conflict == {}


@pytest.mark.parametrize("bad", ["0", "-1", "65", "abc", "nan", "inf"])
def test_scale_out_of_range_is_one_line(bad: str) -> None:
    r = subprocess.run([str(REPO / "hpsync"), "bench", "workloads", "--scale", bad, "--no-store"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "argument --scale" in r.stderr and len(r.stderr.strip().splitlines()) <= 3


def test_progress_plain_lines_and_eta() -> None:
    t = [0.0]
    out = io.StringIO()
    p = Progress([1.0, 1.0, 2.0], stream=out, now=lambda: t[0], tty=False)
    p.step("first")
    assert p.eta() == pytest.approx(4.0)
    t[0] = 3.0                       # the first unit of cost took 3 s
    p.finish_step()
    assert p.eta() == pytest.approx(9.0)
    p.step("second")
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("hpsync: [") and "0/3 first" in lines[0] and "ETA 4s" in lines[0]
    assert "1/3 second" in lines[1] and "ETA 9s" in lines[1] and "\r" not in out.getvalue()
    tty = io.StringIO()
    q = Progress([1.0], stream=tty, now=lambda: 0.0, tty=True)
    q.step("x")
    q.say("a message")
    q.finish_step()
    q.close()
    assert tty.getvalue().startswith("\r\x1b[K[") and "hpsync: a message\n" in tty.getvalue()
    assert clock(185) == "3m05s" and clock(42) == "42s"


# ---- the runner on the double --------------------------------------------------------

@pytest.fixture
def fake_build(tmp_path: Path) -> Path:
    """A build tree with the double as two workloads (fakealloc runs under
    each allocator), hps-doctor, and of the allocators only hpsync's cia:
    rand is "not built"."""
    b = tmp_path / "build"
    (b / "bin").mkdir(parents=True)
    (b / "lib").mkdir()
    for name in ("fake", "fakealloc"):
        shutil.copy(FAKE, b / "bin" / f"hps-workload-{name}")
    os.symlink(BUILD / "bin" / "hps-doctor", b / "bin" / "hps-doctor")
    os.symlink(BUILD / "lib" / "libhpsync-malloc.so", b / "lib" / "libhpsync-malloc.so")
    return b


def test_runner_on_the_double(fake_build: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    db = tmp_path / "r.db"
    # Hardware off: the variant list is a machine without RTM's.
    p = run_cli(fake_build, tmp_path, "bench", "workloads", "fake", "--reps", "2", "--json",
                "--db", str(db), FAKE_LOG=str(log), HPSYNC_ELIDE_BACKEND="off")
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)
    assert run["kind"] == "bench-workloads" and run["run_id"] and schema.validate(run) == []
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    # One process per round and settings group; rounds reverse the order.
    assert all(c["argv"][-2:] == ["--reps", "1"] and "--size-list" in c["argv"] for c in calls)
    variants = [c["argv"][c["argv"].index("--variants") + 1] for c in calls]
    assert variants == ["mutex,tts,elide-r0,elide-r3,stm", "norec",
                        "norec,elide-r3,elide-r0,tts,mutex", "stm"]
    assert [c["tm"] for c in calls] == ["stm", "norec", "norec", "stm"]
    m = by_key(run)
    # The double's model: ops = BASE * threads ** SCALE.
    assert m["fake/ops_per_sec/stm/size=64 T=2"]["reps"] == pytest.approx([160.0, 160.0])
    assert m["fake/ops_per_sec_vs_1thread/stm/size=64 T=2"]["value"] == pytest.approx(2.0)
    assert m["fake/ops_per_sec_vs_mutex/norec/size=64 T=2"]["value"] == pytest.approx(95 * 2 ** 0.8 / 100)
    # Lower is better: the speed-up is the same, the other way up.
    assert m["fake/seconds_vs_mutex/stm/size=1024 T=2"]["value"] == pytest.approx(1.6)
    # The better TM variant at 2 threads is norec (165 ops/s against stm's 160).
    assert m["best-tm/ops_per_sec_vs_mutex/fake/size=64 T=2"]["value"] == pytest.approx(95 * 2 ** 0.8 / 100)
    assert m["fake/aborts_per_commit/stm/size=64/conflict/tm T=2"]["value"] == pytest.approx(0.02)
    assert m["fake/aborts_per_commit/elide-r0/size=64/busy/elision T=1"]["value"] == pytest.approx(0.1)
    # The share of sections on the bias: the double runs 1000 / threads of them alone.
    assert m["fake/solo_share/stm/size=64 T=2"]["reps"] == pytest.approx([0.5, 0.5])
    assert "fake/solo_share/mutex/size=64 T=2" not in m
    assert m["fake/validated/tts/size=64 T=1"]["reps"] == [1.0, 1.0]
    # Where the time went: each workload's processes, wall seconds.
    assert set(run["extra"]["seconds"]) == {"fake"} and run["extra"]["seconds"]["fake"] > 0
    if not tm.rtm_usable():
        assert run["extra"]["variants"]["fake"]["htm"]["status"] == "n/a"
        assert not any(s["variant"] == "htm" for s in run["extra"]["samples"])
    v = {t["id"]: t["verdict"] for t in run["targets"]}
    assert v["workloads-validate_1"] == "PASS" and v["workloads-validate_8"] == "n/a"
    assert v["workloads-art-olc-insert_dense"] == "n/a"
    # Stored: the report and compare read it back.
    assert run_cli(fake_build, tmp_path, "runs", "--db", str(db)).stdout.count("bench-workloads") == 1


def test_budget_defaults_and_fit() -> None:
    """The budget: the mode's unless --scale chose the work or --budget 0;
    the factor fits what is left at the measured speed, within its floor."""
    P = measure.Params
    assert measure.budget_seconds(P([], None, 3)) == 15 * 60
    assert measure.budget_seconds(P([], None, 1, quick=True)) == 2 * 60
    assert measure.budget_seconds(P([], None, 3, scale=4.0)) is None
    assert measure.budget_seconds(P([], None, 3, scale=4.0, budget=30.0)) == 30 * 60
    assert measure.budget_seconds(P([], None, 3, budget=0.0)) is None

    class D:
        def __init__(self, scale: bool) -> None:
            self.scale = scale

    class S:
        def __init__(self, cost: float, scale: bool) -> None:
            self.cost, self.desc = cost, D(scale)

    steps = [S(10.0, True), S(10.0, True), S(20.0, False), S(60.0, True)]   # 100 s estimated
    # At the estimate's speed it fits 120 s: no cut.
    assert measure.fit_scale(steps, 120.0, 10.0, 10.0) == (1.0, 100.0)
    # Twice as slow (20 s for the first 10): 200 s projected for 150 s of budget.
    x, projected = measure.fit_scale(steps, 150.0, 20.0, 10.0)
    assert projected == 200.0
    # What is left (130 s) at speed 2 is 65 estimated seconds (with the
    # margin), less the fixed 20, over the 80 scalable.
    assert x == pytest.approx((measure.BUDGET_MARGIN * 130.0 / 2.0 - 20.0) / 80.0)
    # Far too slow: the floor.
    assert measure.fit_scale(steps, 100.0, 90.0, 10.0)[0] == measure.BUDGET_FLOOR
    # Nothing scalable: nothing to cut.
    assert measure.fit_scale([S(10.0, False), S(90.0, False)], 10.0, 20.0, 10.0)[0] == 1.0


def test_budget_starts_again_smaller(fake_build: Path, tmp_path: Path) -> None:
    """A run its first steps say will not fit starts again with the work
    cut to fit, says so in one line, and the document records the factor."""
    log = tmp_path / "calls.jsonl"
    p = run_cli(fake_build, tmp_path, "bench", "workloads", "fake", "--reps", "2", "--json",
                "--no-store", "--budget", "0.02", FAKE_LOG=str(log), FAKE_SLEEP="0.4",
                FAKE_SCALABLE="1", HPSYNC_ELIDE_BACKEND="off")
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)
    fit = run["extra"]["budget"]
    assert fit["minutes"] == 0.02 and measure.BUDGET_FLOOR <= fit["scale"] < 1.0, fit
    assert run["extra"]["scale"] == pytest.approx(fit["scale"], rel=1e-3)
    lines = [x for x in p.stderr.splitlines() if "budget 0.02 min" in x]
    assert len(lines) == 1 and "starting again" in lines[0], p.stderr
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    scales = [c["argv"][c["argv"].index("--scale") + 1] if "--scale" in c["argv"] else None
              for c in calls]
    # The first steps at full size, then the whole plan again at the cut.
    first = scales.index(next(x for x in scales if x is not None))
    assert first >= 2 and all(x is None for x in scales[:first])
    assert all(x is not None and float(x) == pytest.approx(fit["scale"], rel=1e-3)
               for x in scales[first:])
    # The samples are the second attempt's only: one per variant, size, thread count and round.
    assert len({(s["variant"], s["threads"], s["round"], s["dims"]["size"])
                for s in run["extra"]["samples"]}) == len(run["extra"]["samples"])
    # --budget 0: no cut, however slow.
    q = run_cli(fake_build, tmp_path, "bench", "workloads", "fake", "--reps", "1", "--json",
                "--no-store", "--budget", "0", FAKE_SLEEP="0.3", FAKE_SCALABLE="1",
                HPSYNC_ELIDE_BACKEND="off")
    assert q.returncode == 0 and json.loads(q.stdout)["extra"]["budget"] is None, q.stderr


@pytest.mark.parametrize("bad", ["-1", "x", "2000"])
def test_budget_out_of_range_is_one_line(bad: str) -> None:
    r = subprocess.run([str(REPO / "hpsync"), "bench", "workloads", "--budget", bad, "--no-store"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "argument --budget" in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 3


def test_wrong_result_fails_the_run_and_stores_nothing(fake_build: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    p = run_cli(fake_build, tmp_path, "bench", "workloads", "--quick", "--db", str(db), FAKE_WRONG="stm")
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("hpsync: workload fake, variant stm: wrong result:") and "sum 7" in last
    assert "nothing stored" in last
    assert not db.exists() or "bench-workloads" not in run_cli(
        fake_build, tmp_path, "runs", "--db", str(db)).stdout


def test_missing_peer_costs_one_line(fake_build: Path, tmp_path: Path) -> None:
    p = run_cli(fake_build, tmp_path, "bench", "workloads", "fakealloc", "--quick", "--json",
                "--no-store", "--allocators", "glibc,hpsync,rand")
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "rand" in ln and "[" not in ln]
    assert len(lines) == 1 and "not installed" in lines[0]
    run = json.loads(p.stdout)
    assert {s["allocator"] for s in run["extra"]["samples"]} == {"glibc", "hpsync"}
    assert run["extra"]["allocators"]["missing"].keys() == {"rand"}


def test_unknown_workload_is_one_line(fake_build: Path, tmp_path: Path) -> None:
    p = run_cli(fake_build, tmp_path, "bench", "workloads", "nosuch", "--no-store")
    assert p.returncode == 2
    assert p.stderr.strip() == "hpsync: unknown workload 'nosuch' (built here: fake, fakealloc)"

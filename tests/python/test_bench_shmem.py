# SPDX-License-Identifier: MIT
"""`hpsync bench shmem`: pure functions on canned data, the JSON Lines the
program writes, and tiny real runs of the hpsync on-node variant."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import pytest

from hpsync import runner, schema
from hpsync.bench import shmem as bench
from hpsync.bench import targets
from hpsync.bench.base import analyse_run
from hpsync.bench.shmem import analyse as shmembench
from hpsync.bench.shmem import measure
from hpsync.bench.shmem import render as shmem_render

CG = """# callgrind format
positions: instr
events: Ir
summary: 300
ob=/x/build/lib/libhpsync-shmem.so.0
fn=shmem_int_p
0x100 10
0x104 5
cob=/usr/lib/libfabric.so.1
cfn=0xd7b00
calls=10 0xd7b00
0x108 250
0x10c 7
ob=/usr/lib/libfabric.so.1
fn=0xd7b00
0xd7b00 250
"""


def test_parse_callgrind_and_metrics() -> None:
    parsed = shmembench.parse_callgrind(CG)
    assert parsed["total"] == 300
    assert parsed["calls"][0]["addr"] == 0x108 and parsed["calls"][0]["ir"] == 250
    m = shmembench.callgrind_metrics(parsed)
    assert m == {"total": 300, "hpsync": 22, "to_fabric": 15, "provider": 278, "fabric_calls": 1}
    big = {k: v * 2 for k, v in m.items()}
    assert shmembench.per_call(m, big, 10)["to_fabric"] == 1.5


def test_parse_callgrind_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        shmembench.parse_callgrind("nothing here\n")


def _samples(rounds: int = 3, npes: int = 2) -> list[dict[str, Any]]:
    out = []
    for v, put, fadd, bar in (("hpsync-node", 10.0, 5.0, 100.0), ("oshmem", 30.0, 400.0, 250.0)):
        for rnd in range(rounds):
            out += [{"variant": v, "npes": npes, "round": rnd, "test": "put_quiet", "size": 8,
                     "iters": 1, "ns_min": put - 1, "ns_median": put + rnd},
                    {"variant": v, "round": rnd, "test": "fetch_add", "size": 8, "iters": 1,
                     "ns_min": fadd, "ns_median": fadd},
                    {"variant": v, "round": rnd, "test": "put_rate", "size": 8, "iters": 1,
                     "ns_min": 4.0, "ns_median": 5.0},
                    {"variant": v, "round": rnd, "test": "barrier", "size": 0, "iters": 1,
                     "ns_min": bar, "ns_median": bar}]
    return out


def analysed(samples: list[dict[str, Any]], raw: dict[str, Any] | None = None,
             icount: dict[str, Any] | None = None, launch: dict[str, Any] | None = None,
             rounds: int = 3) -> dict[str, Any]:
    extra = {"samples": samples, "variants": {}, "ofi_raw": raw, "icount": icount or {},
             "launch": launch or {}}
    return analyse_run(bench.BENCH, schema.envelope(bench.BENCH.kind, {"rounds": rounds}, [], extra))


def _ids(run: dict[str, Any]) -> dict[str, str]:
    return {t["id"]: t["verdict"] for t in run["targets"]}


def test_summarise_and_targets() -> None:
    rows = shmembench.summarise(_samples())
    r = shmembench.find(rows, "hpsync-node", "put_quiet", 8)
    assert r is not None
    assert r["us"] == 0.011 and r["us_best"] == 0.009 and r["rounds"] == 3 and r["npes"] == 2
    assert r["per_round"] == {0: 0.01, 1: 0.011, 2: 0.012}
    assert shmembench.find(rows, "oshmem", "put_rate", 8)["mops"] == 200.0  # type: ignore[index]
    raw = {"shm": {"inject@8": 0.3, "inject_read@8": 0.8}}
    icount = {"node": {"int_p": {"total": 16.0}, "quiet": {"total": 5.0}},
              "ofi": {"int_p": {"to_fabric": 20.0}, "quiet": {"total": 10.0}}}
    launch = {"hpsync": {"median_s": 0.002, "runs_s": [0.002, 0.003, 0.002]}}
    run = analysed(_samples(), raw, icount, launch)
    assert schema.validate(run) == []
    ts = _ids(run)
    assert ts["put_quiet"] == "PASS" and ts["put_quiet_vs_oshmem"] == "PASS"
    assert ts["fetch_add"] == "PASS" and ts["put_rate"] == "PASS" and ts["barrier"] == "PASS"
    assert ts["ofi_raw_hpsync-ofi-shm"] == "n/a" and ts["ofi_raw_hpsync-ofi-tcp"] == "n/a"
    assert ts["int_p_insns"] == "FAIL" and ts["quiet_insns"] == "PASS" and ts["launch"] == "PASS"
    assert ts["coll4"] == "n/a"                        # no 4-PE rows
    passed = {t["id"]: t["passed"] for t in run["targets"]}
    assert passed["barrier"] is True and passed["int_p_insns"] is False and passed["launch"] is True
    text = shmem_render.render(run)
    assert "PASS          on-node 8 B put+quiet" in text and "FAIL          shmem_int_p" in text
    ms = {schema.key(m): m for m in run["measurements"]}
    assert ms["put_rate/mops/hpsync-node/npes=2/size=8"]["value"] == pytest.approx(200.0)
    assert ms["icount/instructions_to_fabric/ofi/int_p"]["reps"] == [20.0]
    assert ms["launch/s/hpsync"]["reps"] == [0.002, 0.003, 0.002]


def test_one_round_is_never_a_verdict() -> None:
    one = _ids(analysed(_samples(rounds=1), rounds=1))
    assert one["barrier"] == "inconclusive" and one["put_quiet"] == "inconclusive"


def test_collective_ratio_targets_pair_rounds() -> None:
    samples = []
    for rnd, (ours, theirs) in enumerate([(5.0, 4.0), (6.0, 4.0), (5.5, 3.0)]):
        for v, ns in (("hpsync-node", ours), ("oshmem", theirs)):
            samples.append({"variant": v, "npes": 4, "round": rnd, "test": "fcollect", "size": 8,
                            "iters": 1, "ns_min": ns * 1000, "ns_median": ns * 1000})
    run = analysed(samples)
    ms = {schema.key(m): m for m in run["measurements"]}
    ours, theirs = (ms[f"fcollect/us/{v}/npes=4/size=8"] for v in ("hpsync-node", "oshmem"))
    assert targets.figures(ours, theirs, "ratio") == pytest.approx([1.25, 1.5, 5.5 / 3.0])
    ts = _ids(run)
    assert ts["coll4_fcollect_8"] == "inconclusive"             # 1.25x, 1.5x, 1.83x against 1.5x
    samples = [dict(s, ns_median=s["ns_median"] * (3 if s["variant"] == "hpsync-node" else 1))
               for s in samples]
    ts = _ids(analysed(samples))
    assert ts["coll4_fcollect_8"] == "FAIL" and ts["coll2"] == "n/a"


def test_libfabric_targets_dnf_and_bare_rows() -> None:
    samples = []
    for rnd in range(3):
        for t, s, ns in (("put_quiet", 8, 1000.0), ("get", 8, 700.0), ("put_bw", 1024, 900.0),
                         ("put_rate", 8, 300.0), ("add_rate", 8, 400.0)):
            samples.append({"variant": "hpsync-ofi-shm", "npes": 2, "round": rnd, "test": t,
                            "size": s, "iters": 1, "ns_min": ns, "ns_median": ns})
        for t, s in shmembench.COLL_TESTS:
            dnf = t == "collect" and rnd == 1
            samples.append({"variant": "hpsync-ofi-shm", "npes": 4, "round": rnd, "test": t,
                            "size": s, **({"dnf": True} if dnf else
                                          {"iters": 1, "ns_min": 5e3, "ns_median": 5e3})})
    rows = shmembench.summarise(samples)
    c = shmembench.find(rows, "hpsync-ofi-shm", "collect", 8, 4)
    assert c is not None and c["dnf"] == 1 and c["rounds"] == 2
    # Each test against its raw equivalent: put 0.8 us against put+quiet 1.0: 1.25x;
    # get 0.5 against 0.7: 1.4x; put_bw@1024 0.5 against 0.9: 1.8x; put_rate against
    # put_bw@8 and add_rate against atomic_bw@8.  inject (no equivalent) is not paired.
    raw = {"shm": {"inject@8": 0.3, "put@8": 0.8, "get@8": 0.5, "put_bw@1024": 0.5,
                   "put_bw@8": 0.25, "atomic_bw@8": 0.3}}
    run = analysed(samples, raw)
    ts = _ids(run)
    assert ts["ofi_bare_hpsync-ofi-shm"] == "FAIL"
    detail = next(t["detail"] for t in run["targets"] if t["id"] == "ofi_bare_hpsync-ofi-shm")
    assert "put_bw 1024 B 1.80x" in detail and "put_quiet 8 B 1.25x" in detail
    assert ts["ofi_coll4_hpsync-ofi-shm"] == "FAIL" and ts["ofi_coll4_hpsync-ofi-sockets"] == "n/a"
    assert ts["amo_vs_put_hpsync-ofi-shm"] == "PASS"          # 400/300 = 1.33x
    assert ts["ofi_raw_hpsync-ofi-shm"] == "FAIL"            # 1.0 us against 0.3 us inject
    text = shmem_render.render(run)
    assert "collectives back to back at 4 PEs" in text and " !" in text
    assert "put_bw 1024 B" in text and "shm 0.900 / 0.500 (1.80x)" in text


def test_json_lines_survive_a_cut_run(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    out.write_text('{"type": "header", "library": "x", "npes": 2}\n'
                   '{"type": "result", "test": "barrier", "size": 0, "npes": 2, "ns": [1.0, 2.0]}\n'
                   '{"type": "result", "test": "broadcast", "size": 8, "npes": 2, "dnf": true}\n'
                   '{"type": "result", "test": "coll')
    lines = runner.read_json_lines(out)
    assert [x.get("test") for x in lines] == [None, "barrier", "broadcast"] and lines[2]["dnf"]
    assert runner.read_json_lines(tmp_path / "none.jsonl") == []
    out.write_text('{"type": "header"}\nWarning: not JSON\n{"type": "end"}\n')
    with pytest.raises(ValueError):
        runner.read_json_lines(out)


def test_plan() -> None:
    p2 = shmembench.plan(2, 64)
    assert ("put_quiet", 8) in p2 and ("put_bw", 64) in p2 and ("add_rate", 8) in p2
    assert p2[-len(shmembench.COLL_TESTS):] == shmembench.COLL_TESTS
    assert shmembench.plan(4, 1 << 20) == shmembench.COLL_TESTS
    assert shmembench.sizes_up_to(64) == [1, 4, 8, 16, 64]


def test_params() -> None:
    q = measure.make_params(argparse.Namespace(quick=True, variants=None, reps=None, load=None))
    assert q.rounds == 1 and q.variants == shmembench.VARIANTS and q.npes == [2, 4]
    p = measure.make_params(argparse.Namespace(quick=False, variants=["hpsync-node"], reps=2, load=2))
    assert p.load == 2 and p.rounds == 2


def _built() -> None:
    try:
        runner.program(measure.PROGRAM)
        runner.program("oshrun")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"not built: {exc}")


def test_real_run_on_node() -> None:
    _built()
    params = measure.Params(variants=["hpsync-node"], rounds=1, time_ms=2, reps=2,
                            max_size=64, icount_n=10, launches=1)
    got = measure.run_variant("hpsync-node", 2, params, None)
    assert got.header is not None, got.note
    assert got.note is None
    h = got.header
    assert h["library"] == "hpsync-shmem" and h["npes"] == 2 and h["transport"] == "shm"
    # hpsync's build writes its context block: the same fields as every program's.
    assert got.context is not None and got.context["cores"] >= 1 and "git_commit" in got.context
    tests = {(r["test"], r["size"]) for r in got.results}
    assert set(shmembench.plan(2, 64)) == tests
    assert all(r["ns_median"] > 0 and len(r["ns"]) == 2 and not r.get("dnf") for r in got.results)
    got = measure.run_variant("hpsync-node", 4, params, None)
    assert {(r["test"], r["size"]) for r in got.results} == set(shmembench.COLL_TESTS)
    assert all(r["npes"] == 4 for r in got.results)


def test_a_test_past_its_limit_is_one_row() -> None:
    """The watchdog ends a test that runs too long with a did-not-finish row,
    and the run goes on with the next test."""
    _built()
    # 5 batches of 10^7 calls (the cap): seconds at any speed, against 0.3 s.
    # The batch is sized from 32 warm-up calls, which can be slow (first
    # touch, a preempted PE); so long a time per batch keeps it at the cap
    # unless a warm-up call took over 12 us.
    params = measure.Params(variants=["hpsync-node"], rounds=1, time_ms=600000, reps=5,
                            max_size=64, icount_n=10, launches=1, limit_s=0.3)
    t0 = time.monotonic()
    got = measure.run_variant("hpsync-node", 2, params, None,
                              tests=[("barrier", 0), ("broadcast", 8)])
    assert [(r["test"], r.get("dnf")) for r in got.results] == [("barrier", True), ("broadcast", True)]
    assert time.monotonic() - t0 < 20

# SPDX-License-Identifier: MIT
"""`hpsync bench shmem`: pure functions on canned data, and a tiny real run
of the hpsync on-node variant."""

from __future__ import annotations

import time

import pytest

from hpsync import bench_shmem, runner, shmembench

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


def test_parse_callgrind_and_metrics():
    parsed = shmembench.parse_callgrind(CG)
    assert parsed["total"] == 300
    assert parsed["calls"][0]["addr"] == 0x108 and parsed["calls"][0]["ir"] == 250
    m = shmembench.callgrind_metrics(parsed)
    assert m == {"total": 300, "hpsync": 22, "to_fabric": 15, "provider": 278, "fabric_calls": 1}
    big = {k: v * 2 for k, v in m.items()}
    assert shmembench.per_call(m, big, 10)["to_fabric"] == 1.5


def test_parse_callgrind_rejects_garbage():
    with pytest.raises(ValueError):
        shmembench.parse_callgrind("nothing here\n")


def _samples(rounds: int = 3, npes: int = 2):
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


def _ids(targets):
    return {t["id"]: t["verdict"] for t in targets}


def test_summarise_and_targets():
    rows = shmembench.summarise(_samples())
    r = shmembench.find(rows, "hpsync-node", "put_quiet", 8)
    assert r["us"] == 0.011 and r["us_best"] == 0.009 and r["rounds"] == 3 and r["npes"] == 2
    assert r["per_round"] == {0: 0.01, 1: 0.011, 2: 0.012}
    assert shmembench.find(rows, "oshmem", "put_rate", 8)["mops"] == 200.0
    raw = {"shm": {"inject@8": 0.3, "inject_read@8": 0.8}}
    icount = {"node": {"int_p": {"total": 16.0}, "quiet": {"total": 5.0}},
              "ofi": {"int_p": {"to_fabric": 20.0}, "quiet": {"total": 10.0}}}
    launch = {"hpsync": {"median_s": 0.002, "runs_s": [0.002, 0.003, 0.002]}}
    targets = shmembench.evaluate_targets(rows, raw, icount, launch)
    ts = _ids(targets)
    assert ts["put_quiet"] == "PASS" and ts["put_quiet_vs_oshmem"] == "PASS"
    assert ts["fetch_add"] == "PASS" and ts["put_rate"] == "PASS" and ts["barrier"] == "PASS"
    assert ts["ofi_raw_shm"] == "n/a" and ts["ofi_raw_tcp;ofi_rxm"] == "n/a"
    assert ts["int_p_insns"] == "FAIL" and ts["quiet_insns"] == "PASS" and ts["launch"] == "PASS"
    assert ts["coll4_barrier_0"] == "n/a"          # no 4-PE rows
    passed = {t["id"]: t["passed"] for t in targets}
    assert passed["barrier"] is True and passed["int_p_insns"] is False and passed["launch"] is True
    doc = {"rows": rows, "targets": targets, "variants": {"hpsync-node": {"status": "measured"}},
           "ofi_raw": raw, "icount": icount, "launch": launch, "warnings": ["x"]}
    text = shmembench.render(doc)
    assert "PASS          on-node 8 B put+quiet" in text and "FAIL          shmem_int_p" in text


def test_verdicts_need_three_rounds_and_agreement():
    v = shmembench.verdict
    assert v([0.1, 0.1], 0.15) == "inconclusive"                # too few rounds
    assert v([0.1, 0.12, 0.14], 0.15) == "PASS"
    assert v([0.2, 0.3, 0.16], 0.15) == "FAIL"
    assert v([0.1, 0.1, 0.9], 0.15) == "inconclusive"           # one noisy round: never FAIL
    one = shmembench.evaluate_targets(shmembench.summarise(_samples(rounds=1)), None, {}, {})
    assert _ids(one)["barrier"] == "inconclusive" and _ids(one)["put_quiet"] == "inconclusive"


def test_collective_ratio_targets_pair_rounds():
    samples = []
    for rnd, (ours, theirs) in enumerate([(5.0, 4.0), (6.0, 4.0), (5.5, 3.0)]):
        for v, ns in (("hpsync-node", ours), ("oshmem", theirs)):
            samples.append({"variant": v, "npes": 4, "round": rnd, "test": "fcollect", "size": 8,
                            "iters": 1, "ns_min": ns * 1000, "ns_median": ns * 1000})
    rows = shmembench.summarise(samples)
    ours, theirs = (shmembench.find(rows, v, "fcollect", 8, 4) for v in ("hpsync-node", "oshmem"))
    assert shmembench.paired_ratios(ours, theirs) == [1.25, 1.5, 5.5 / 3.0]
    ts = _ids(shmembench.evaluate_targets(rows, None, {}, {}))
    assert ts["coll4_fcollect_8"] == "inconclusive"             # 1.25x, 1.5x, 1.83x against 1.5x
    samples = [dict(s, ns_median=s["ns_median"] * (3 if s["variant"] == "hpsync-node" else 1))
               for s in samples]
    ts = _ids(shmembench.evaluate_targets(shmembench.summarise(samples), None, {}, {}))
    assert ts["coll4_fcollect_8"] == "FAIL" and ts["coll2_fcollect_8"] == "n/a"


def test_libfabric_targets_dnf_and_bare_rows():
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
    assert c["dnf"] == 1 and c["rounds"] == 2
    # Each test against its raw equivalent: put 0.8 us against put+quiet 1.0: 1.25x;
    # get 0.5 against 0.7: 1.4x; put_bw@1024 0.5 against 0.9: 1.8x; put_rate against
    # put_bw@8 and add_rate against atomic_bw@8.  inject (no equivalent) is not paired.
    raw = {"shm": {"inject@8": 0.3, "put@8": 0.8, "get@8": 0.5, "put_bw@1024": 0.5,
                   "put_bw@8": 0.25, "atomic_bw@8": 0.3}}
    targets = shmembench.evaluate_targets(rows, raw, {}, {})
    ts = _ids(targets)
    assert ts["ofi_bare_shm"] == "FAIL"
    detail = next(t["detail"] for t in targets if t["id"] == "ofi_bare_shm")
    assert "5 rows" in detail and "worst put_bw 1024 B 1.80x" in detail
    assert "over: put_bw 1024 B" in detail              # the only one past 1.5x
    assert ts["ofi_coll4_shm"] == "FAIL" and ts["ofi_coll4_sockets"] == "n/a"
    assert ts["amo_vs_put_hpsync-ofi-shm"] == "PASS"          # 400/300 = 1.33x
    text = shmembench.render({"rows": rows, "targets": targets, "variants": {}, "ofi_raw": raw})
    assert "collectives back to back at 4 PEs" in text and " !" in text
    assert "put_bw 1024 B" in text and "shm 0.900 / 0.500 (1.80x)" in text


def test_parse_output_survives_a_cut_run():
    text = ('{\n  "program": "hps-bench-shmem",\n  "library": "x",\n  "npes": 2,\n'
            '  "params": {"time_ms": 1.0},\n  "results": [\n'
            '    {"test": "barrier", "size": 0, "npes": 2, "iters": 5, "reps": 1, "ns_min": 1.0, '
            '"ns_median": 2.0, "ns_max": 3.0},\n'
            '    {"test": "broadcast", "size": 8, "npes": 2, "dnf": true, "limit_s": 1.0}\n')
    head, rows = shmembench.parse_output(text)
    assert head["library"] == "x" and head["npes"] == 2
    assert [r["test"] for r in rows] == ["barrier", "broadcast"] and rows[1]["dnf"] is True
    assert shmembench.parse_output("garbage") == ({}, [])


def test_plan():
    p2 = shmembench.plan(2, 64)
    assert ("put_quiet", 8) in p2 and ("put_bw", 64) in p2 and ("add_rate", 8) in p2
    assert p2[-len(shmembench.COLL_TESTS):] == shmembench.COLL_TESTS
    assert shmembench.plan(4, 1 << 20) == shmembench.COLL_TESTS
    assert shmembench.sizes_up_to(64) == [1, 4, 8, 16, 64]


def test_params():
    q = bench_shmem.make_params(True)
    assert q.rounds == 1 and q.variants == shmembench.VARIANTS and q.npes == [2, 4]
    assert bench_shmem.make_params(False, ["hpsync-node"], 2, load=2).load == 2


def _built() -> None:
    try:
        runner.program(bench_shmem.PROGRAM)
        runner.program("oshrun")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"not built: {exc}")


def test_real_run_on_node():
    _built()
    params = bench_shmem.Params(variants=["hpsync-node"], rounds=1, time_ms=2, reps=1,
                                max_size=64, icount_n=10, launches=1)
    head, results, note = bench_shmem.run_variant("hpsync-node", 2, params, None)
    assert head is not None, note
    assert note is None
    assert head["library"] == "hpsync-shmem" and head["npes"] == 2 and head["transport"] == "shm"
    tests = {(r["test"], r["size"]) for r in results}
    assert set(shmembench.plan(2, 64)) == tests
    assert all(r["ns_median"] > 0 and not r.get("dnf") for r in results)
    head, results, note = bench_shmem.run_variant("hpsync-node", 4, params, None)
    assert {(r["test"], r["size"]) for r in results} == set(shmembench.COLL_TESTS)
    assert all(r["npes"] == 4 for r in results)


def test_a_test_past_its_limit_is_one_row():
    """The watchdog ends a test that runs too long with a did-not-finish row,
    and the run goes on with the next test."""
    _built()
    # 5 batches of 10^7 calls (the cap): seconds at any speed, against 0.3 s.
    # The batch is sized from 32 warm-up calls, which can be slow (first
    # touch, a preempted PE); so long a time per batch keeps it at the cap
    # unless a warm-up call took over 12 us.
    params = bench_shmem.Params(variants=["hpsync-node"], rounds=1, time_ms=600000, reps=5,
                                max_size=64, icount_n=10, launches=1, limit_s=0.3)
    t0 = time.monotonic()
    head, results, note = bench_shmem.run_variant(
        "hpsync-node", 2, params, None, tests=[("barrier", 0), ("broadcast", 8)])
    assert [(r["test"], r.get("dnf")) for r in results] == [("barrier", True), ("broadcast", True)]
    assert time.monotonic() - t0 < 20

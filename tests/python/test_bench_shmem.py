# SPDX-License-Identifier: MIT
"""`hpsync bench shmem`: pure functions on canned data, and a tiny real run
of the hpsync on-node variant."""

from __future__ import annotations

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


def _samples():
    out = []
    for v, put, fadd, bar in (("hpsync-node", 10.0, 5.0, 100.0), ("oshmem", 30.0, 400.0, 250.0)):
        for rnd in range(3):
            out += [{"variant": v, "round": rnd, "test": "put_quiet", "size": 8, "iters": 1,
                     "ns_min": put - 1, "ns_median": put + rnd},
                    {"variant": v, "round": rnd, "test": "fetch_add", "size": 8, "iters": 1,
                     "ns_min": fadd, "ns_median": fadd},
                    {"variant": v, "round": rnd, "test": "put_rate", "size": 8, "iters": 1,
                     "ns_min": 4.0, "ns_median": 5.0},
                    {"variant": v, "round": rnd, "test": "barrier", "size": 0, "iters": 1,
                     "ns_min": bar, "ns_median": bar}]
    return out


def test_summarise_and_targets():
    rows = shmembench.summarise(_samples())
    r = shmembench.find(rows, "hpsync-node", "put_quiet", 8)
    assert r["us"] == 0.011 and r["us_best"] == 0.009 and r["rounds"] == 3
    assert shmembench.find(rows, "oshmem", "put_rate", 8)["mops"] == 200.0
    raw = {"shm": {"inject": 0.3, "inject_read": 0.8}}
    icount = {"node": {"int_p": {"total": 16.0}, "quiet": {"total": 5.0}},
              "ofi": {"int_p": {"to_fabric": 20.0}, "quiet": {"total": 10.0}}}
    launch = {"hpsync": {"median_s": 0.002}}
    ts = {t["id"]: t["passed"] for t in shmembench.evaluate_targets(rows, raw, icount, launch)}
    assert ts["put_quiet"] and ts["put_quiet_vs_oshmem"] and ts["fetch_add"] and ts["put_rate"]
    assert ts["barrier"] is True
    assert ts["ofi_raw_shm"] is None and ts["ofi_raw_tcp;ofi_rxm"] is None
    assert ts["int_p_insns"] is False and ts["quiet_insns"] is True and ts["launch"] is True
    doc = {"rows": rows, "targets": shmembench.evaluate_targets(rows, raw, icount, launch),
           "variants": {"hpsync-node": {"status": "measured"}}, "ofi_raw": raw,
           "icount": icount, "launch": launch, "warnings": ["x"]}
    text = shmembench.render(doc)
    assert "PASS  on-node 8 B put+quiet" in text and "FAIL  shmem_int_p" in text


def test_params():
    q = bench_shmem.make_params(True)
    assert q.rounds == 1 and q.variants == shmembench.VARIANTS
    assert bench_shmem.make_params(False, ["hpsync-node"], 2).rounds == 2


def test_real_run_on_node():
    try:
        runner.program(bench_shmem.PROGRAM)
        runner.program("oshrun")
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"not built: {exc}")
    params = bench_shmem.Params(variants=["hpsync-node"], rounds=1, time_ms=2, reps=1,
                                max_size=64, icount_n=10, launches=1)
    doc, note = bench_shmem.run_variant("hpsync-node", params, None, timeout=60)
    assert doc is not None, note
    assert note is None
    assert doc["library"] == "hpsync-shmem" and doc["npes"] == 2 and doc["transport"] == "shm"
    tests = {(r["test"], r["size"]) for r in doc["results"]}
    assert {("put_quiet", 8), ("get", 64), ("pingpong", 8), ("put_rate", 8), ("fetch_add", 8),
            ("cswap", 8), ("barrier", 0)} <= tests
    assert all(r["ns_median"] > 0 for r in doc["results"])

# SPDX-License-Identifier: MIT
"""Threads/locks/condvar/atomics probes: real --quick runs, schema and sanity of the figures."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hpsync.bench import locks

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HPSYNC_BUILD", REPO / "build")) / "bin"
ORDER = ("min", "p1", "median", "p90", "p99", "p999", "max")

# Small sample counts keep the whole file well under 25 s on a 2-vCPU guest.
PROBES: dict[str, list[str]] = {
    "create": ["--samples", "60"],
    "mutex": ["--samples", "50"],
    "handoff": ["--samples", "40", "--hold-us", "20"],
    "condvar": ["--samples", "40", "--waiters", "3", "--settle-us", "10"],
    "cas": ["--samples", "1", "--duration-ms", "10", "--max-threads", "3"],
}
# (metric, variant) latency rows and (x, y, variant) pairs rows each probe must have.
LATENCY: dict[str, list[tuple[str, str]]] = {
    "create": [(m, v) for m in ("create_return", "thread_start") for v in ("joinable", "detached")],
    "mutex": [("lock_unlock", v) for v in ("glibc", "glibc_adaptive_np", *locks.algorithms())],
    "handoff": [(m, v) for m in ("unlock", "wake") for v in ("glibc", "adaptive")],
    "condvar": [(m, v) for m in ("call", "wake") for v in ("signal", "broadcast_1", "broadcast_3")]
    + [("wake_last", "broadcast_3")],
}
PAIRS: dict[str, list[tuple[str, str, str]]] = {
    "create": [("create_return", "thread_start", v) for v in ("joinable", "detached")],
    "handoff": [("unlock", "wake", v) for v in ("glibc", "adaptive")],
    "condvar": [("call", "wake", "signal"), ("call", "wake", "broadcast_1"),
                ("call", "wake_last", "broadcast_3")],
}


# The lock cost is measured once, by hps-bench-locks; --probe is the probe.
PROGRAM = {"mutex": ["hps-bench-locks", "--probe"]}


def run_probe(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    prog, *first = PROGRAM.get(name, [f"hps-probe-{name}"])
    exe = BIN / prog
    assert exe.is_file(), f"{exe} missing: run make first"
    args = (*first, *args)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=20,
                          check=False, env=env)


@pytest.fixture(scope="module", params=sorted(PROBES))
def doc(request: pytest.FixtureRequest) -> dict[str, Any]:
    name: str = request.param
    p = run_probe(name, "--quick", *PROBES[name])
    assert p.returncode == 0, p.stderr
    d: dict[str, Any] = json.loads(p.stdout)      # exactly one document on stdout
    assert d["probe"] == name
    return d


def test_envelope(doc: dict[str, Any]) -> None:
    assert doc["schema_version"] == 1
    for key in ("host", "cpu_model", "pus", "timer", "compiler", "git_commit"):
        assert key in doc["context"], key
    assert isinstance(doc["params"], dict) and doc["params"]["timer"] in ("rdtsc", "CLOCK_MONOTONIC")
    assert isinstance(doc["steal_ms"], (int, float))
    assert isinstance(doc["results"], list) and doc["results"]
    for row in doc["results"]:
        assert row["kind"] in ("latency", "pairs", "curve", "scalar")
        assert isinstance(row["metric"], str) and row["metric"]


def test_latency_rows(doc: dict[str, Any]) -> None:
    rows = {(r["metric"], r["variant"]): r for r in doc["results"] if r["kind"] == "latency"}
    for key in LATENCY.get(doc["probe"], []):
        assert key in rows, (key, sorted(rows))
    for key, row in rows.items():
        d = row["dist"]
        assert d["unit"] == "ns" and d["n"] > 0, key
        vals = [d[k] for k in ORDER]
        assert all(v > 0 for v in vals), (key, vals)
        assert vals == sorted(vals), (key, vals)
        assert d["samples"] and len(d["samples"]) <= 2000
        assert len(d["hist"]["counts"]) + 1 == len(d["hist"]["edges"])


def test_pairs_rows(doc: dict[str, Any]) -> None:
    pairs = {(r["x"], r["y"], r["variant"]): r for r in doc["results"] if r["kind"] == "pairs"}
    for key in PAIRS.get(doc["probe"], []):
        assert key in pairs, (key, sorted(pairs))
        ps = pairs[key]["pairs"]
        assert ps and all(len(p) == 2 and p[0] >= 0 and p[1] >= 0 for p in ps)


def test_cas_curves() -> None:
    p = run_probe("cas", "--quick", *PROBES["cas"])
    assert p.returncode == 0, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout)
    curves = [r for r in doc["results"] if r["kind"] == "curve"]
    got = {(r["metric"], r["mapping"], r["threads"]) for r in curves}
    for metric in ("cas_success_per_sec", "cas_fail_per_success"):
        for mapping in ("compact", "scatter"):
            for t in (1, 2, 3):
                assert (metric, mapping, t) in got
    for r in curves:
        assert r["reps"] and r["unit"]
        if r["metric"] == "cas_success_per_sec":
            assert r["value"] > 0
        else:
            assert r["value"] >= 0
            if r["threads"] == 1:
                assert r["value"] == 0          # nobody else to fail against


@pytest.mark.parametrize("name", sorted(PROBES))
@pytest.mark.parametrize("args", [["--bogus"], ["--samples"], ["--samples", "0"],
                                  ["--samples", "x"]])
def test_bad_arguments(name: str, args: list[str]) -> None:
    p = run_probe(name, *args)
    assert p.returncode == 2
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr

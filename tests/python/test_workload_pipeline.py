# SPDX-License-Identifier: MIT
"""The pipeline workload (bench/workloads/pipeline.c) on the harness's two
optional switches: its own TM variants are described per backend (tm_own)
and it has no coarsened variants (no_tm); a quick run through the CLI
measures every variant and validates at 1, 2 and 8 threads."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hpsync.bench.workloads import describe

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))
PROG = BUILD / "bin" / "hps-workload-pipeline"


def program() -> Path:
    if not PROG.is_file():
        pytest.fail(f"{PROG} missing: run make first")
    return PROG


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    e.update(env)
    return subprocess.run([str(program()), *args], env=e, capture_output=True, text=True,
                          timeout=120, check=False)


def test_describe_lists_the_tm_variants_per_backend_and_no_coarsening() -> None:
    p = run("--describe")
    assert p.returncode == 0, p.stderr
    d = describe.parse(json.loads(p.stdout), PROG.name)
    names = {v.name: v for v in d.variants}
    assert d.baseline == "mutex" and names["mutex"].kind == "lock"
    for b in ("sgl", "norec", "stm", "htm", "hybrid"):
        for own in ("tx-cond", "tx-abort", "spin"):
            v = names[f"{b}:{own}"]
            assert (v.kind, v.arg, v.group, dict(v.env)) == ("tm", own, b, {"HPSYNC_TM": b})
            assert v.granularity is None and not v.controller
            assert v.quick == (b != "sgl")
            assert v.needs == (("rtm",) if b in ("htm", "hybrid") else ())
    assert not [n for n in names if "tm-k" in n or "tm-dyn" in n]
    assert not [f for f in d.figures if f.get("shape") == "granularity"]


@pytest.mark.parametrize("args", [["--variants", "tm-k4"], ["--variants", "tm-dyn"], ["--k", "4"]])
def test_coarsened_variants_are_refused(args: list[str]) -> None:
    p = run("--quick", "--scale", "0.01", *args)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_document_rows_carry_the_layout_and_tm_statistics() -> None:
    p = run("--quick", "--scale", "0.02", "--reps", "1", "--threads", "1,2,8", HPSYNC_TM="norec")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    rows = {(r["row"], r["threads"]): r for r in doc["rows"]}
    assert set(rows) == {(r, t) for r in ("cap4", "cap256") for t in (1, 2, 8)}
    layout = {t: (rows["cap4", t]["params"]["stage_threads"], rows["cap4", t]["params"]["stages_in_turn"])
              for t in (1, 2, 8)}
    assert layout == {1: ([1, 1, 1], True), 2: ([1, 1], False), 8: ([3, 3, 2], False)}
    for r in doc["rows"]:
        ent: dict[str, Any] = {e["variant"]: e for e in r["variants"]}
        assert ent["mutex"]["tm"] is None and ent["mutex"]["kind"] == "plain"
        for own in ("tx-cond", "tx-abort", "spin"):
            # Every hand-off is a section: at least a push and a pop per item.
            assert ent[own]["kind"] == "tm-own"
            assert ent[own]["tm"]["commits"] >= 2 * r["params"]["items"]

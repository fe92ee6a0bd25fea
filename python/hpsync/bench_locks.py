# SPDX-License-Identifier: MIT
"""`hpsync bench locks`: run hps-bench-locks for glibc and every algorithm.

Measurement only: this module runs programs and collects their JSON into
samples; hpsync.locks turns samples into rows, ratios and target verdicts,
and hpsync.render prints them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import locks, runner
from .errors import CliError

PROGRAM = "hps-bench-locks"


@dataclass(frozen=True)
class Params:
    threads: list[int]
    duration_ms: int
    rounds: int                 # interleaved rounds for the uncontended figure
    tp_rounds: int              # interleaved rounds for each throughput figure
    iters: int                  # lock+unlock pairs per timed batch
    batches: int                # timed batches per uncontended run (best is kept)
    quick: bool = False
    configs: list[str] = field(default_factory=lambda: list(locks.CONFIGS))


def make_params(cores: int, quick: bool, threads: list[int] | None,
                duration_ms: int | None, reps: int | None, iters: int | None) -> Params:
    """Defaults: a full run takes about half a minute here, --quick a few seconds."""
    return Params(
        threads=locks.thread_counts(cores, threads),
        duration_ms=duration_ms or (100 if quick else 300),
        rounds=reps or (3 if quick else 5),
        tp_rounds=reps or (1 if quick else 3),
        iters=iters or (300_000 if quick else 2_000_000),
        batches=3 if quick else 5,
        quick=quick,
    )


def _env_for(config: str) -> dict[str, str]:
    return runner.clean_env() if config == locks.BASELINE else runner.preload_env(config)


def _check_provider(config: str, doc: dict[str, Any]) -> None:
    """Fail loudly if the preload did not (or did) take: a silent glibc
    figure labelled "mcs" would be worse than no figure."""
    provider = str(doc.get("mutex_provider", ""))
    interposed = runner.PRELOAD_NAME in provider
    if interposed != (config != locks.BASELINE):
        raise CliError(f"{config}: pthread_mutex_lock came from {provider!r}, "
                       f"expected {'the hpsync preload' if config != locks.BASELINE else 'libc'}")


def _uncontended_row(doc: dict[str, Any], phase: str) -> dict[str, Any]:
    for row in doc.get("rows", []):
        if row.get("phase") == phase:
            return dict(row)
    raise CliError(f"{PROGRAM} output lacks the {phase} row")


def measure(params: Params, log: Callable[[str], None] = runner.log) -> dict[str, Any]:
    """Run every configuration; returns the run's document (without rows yet)."""
    prog = str(runner.program(PROGRAM))
    runner.preload_library()            # fail before measuring anything
    samples: dict[str, list[dict[str, Any]]] = {"uncontended": [], "throughput": []}
    context: dict[str, Any] = {}
    started = time.monotonic()

    log(f"uncontended: {params.rounds} interleaved round(s) x {len(params.configs)} "
        f"configurations, {params.batches} batches of {params.iters} lock+unlock pairs")
    for rnd in range(params.rounds):
        for config in locks.interleaved_order(rnd, params.configs):
            doc = runner.run_json([prog, "--mode", "uncontended", "--iters", str(params.iters),
                                   "--reps", str(params.batches)], env=_env_for(config))
            _check_provider(config, doc)
            context = context or doc.get("context", {})
            multi = _uncontended_row(doc, "multi_threaded_process")
            single = _uncontended_row(doc, "single_threaded_process")
            # Best batch of the run (preemption only ever adds time), median
            # over rounds (drift cancels between interleaved rounds).
            samples["uncontended"].append({
                "lock": config, "round": rnd,
                "ns_per_op": multi["ns_per_op_min"],
                "ns_per_op_single_threaded": single["ns_per_op_min"],
            })

    log(f"throughput: threads {','.join(map(str, params.threads))}, {params.duration_ms} ms "
        f"each, {params.tp_rounds} round(s)")
    for rnd in range(params.tp_rounds):
        for threads in params.threads:
            for config in locks.interleaved_order(rnd, params.configs):
                doc = runner.run_json([prog, "--mode", "throughput", "--threads", str(threads),
                                       "--duration-ms", str(params.duration_ms)],
                                      env=_env_for(config))
                _check_provider(config, doc)
                row = doc["rows"][0]
                samples["throughput"].append({
                    "lock": config, "threads": threads, "round": rnd,
                    "ops_per_sec": row["ops_per_sec"],
                    "ops_min_thread": row["ops_min_thread"],
                    "ops_max_thread": row["ops_max_thread"],
                })
            log(f"  round {rnd + 1}/{params.tp_rounds}: {threads} threads done")

    return {
        **runner.doc_header("bench-locks", started, params),
        "context": context,
        "samples": samples,
    }


def cores_of_machine() -> int:
    """Cores as the benchmark's 'N x cores' means them: hwloc via hps-doctor's
    context is authoritative, os.cpu_count() is the fallback."""
    try:
        doc = runner.run_json([str(runner.program("hps-doctor"))])
        cores = int(doc.get("context", {}).get("cores") or 0)
        if cores > 0:
            return cores
    except CliError:
        pass
    return os.cpu_count() or 1


def analyse(doc: dict[str, Any], cores: int) -> dict[str, Any]:
    """Add rows, ratios, target verdicts and warnings to a measured document."""
    rows = locks.add_ratios(locks.summarise(doc["samples"]))
    return {**doc, "cores": cores, "rows": rows,
            "targets": locks.evaluate_targets(rows, cores),
            "warnings": locks.warnings_for(rows)}

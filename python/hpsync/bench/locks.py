# SPDX-License-Identifier: MIT
"""`hpsync bench locks`: glibc's mutex against every hpsync algorithm
through the interposer, with one program, build/bin/hps-bench-locks.

measure: one process per (round, configuration), configurations interleaved;
analyse: samples -> rows (medians, ratios to glibc) and measurements; render:
the uncontended and throughput tables.  The targets are in targets.toml.

Samples, one per program run:
  uncontended: {"lock", "round", "ns_per_op" (best batch), "batches" (every
                batch), "ns_per_op_single_threaded", "context"}
  throughput:  {"lock", "threads", "round", "ops_per_sec", "ops_min_thread",
                "ops_max_thread", "context"}
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .. import render as text
from .. import args as argtypes
from .. import doctor, runner, schema, stats
from ..errors import CliError
from .base import Analysis, Bench, Option, Row, Session, interleaved, per_round, round_ratios
from .base import context_of, warn_few_and_noisy

PROGRAM = "hps-bench-locks"
KIND = "bench-locks"
BASELINE = "glibc"
OVERSUB_FACTOR = 8                # "8 x cores" threads: the oversubscribed figure
MIN_ROUNDS = 3
NOISY = 0.5


def algorithms() -> tuple[str, ...]:
    """The interposer's algorithms, in the order tables show them, as the
    build publishes them (doctor.lock_algorithms(); aliases such as "clh"
    are not separate configurations)."""
    return doctor.lock_algorithms().names


def default_lock() -> str:
    """What HPSYNC_LOCK selects when unset."""
    return doctor.lock_algorithms().default


def lock_names() -> list[str]:
    """Every name `--lock` accepts."""
    return doctor.lock_algorithms().accepted()


def configs() -> tuple[str, ...]:
    return (BASELINE,) + algorithms()


def thread_counts(cores: int, explicit: Sequence[int] | None = None) -> list[int]:
    """1, 2, 4 x cores and 8 x cores (deduplicated, ascending), unless given."""
    if explicit:
        return sorted(set(explicit))
    return sorted({1, 2, 4 * cores, OVERSUB_FACTOR * cores})


def cores_of_machine() -> int:
    """Cores as 'N x cores' means them: hwloc via hps-doctor's context is
    authoritative, os.cpu_count() is the fallback."""
    try:
        doc = runner.run_json([str(runner.program("hps-doctor"))])
        cores = int(doc.get("context", {}).get("cores") or 0)
        if cores > 0:
            return cores
    except CliError:
        pass
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Params:
    threads: list[int]
    duration_ms: int
    rounds: int                 # interleaved rounds for the uncontended figure
    tp_rounds: int              # interleaved rounds for each throughput figure
    iters: int                  # lock+unlock pairs per timed batch
    batches: int                # timed batches per uncontended run (best is kept)
    cores: int = 1
    quick: bool = False
    configs: list[str] = field(default_factory=lambda: list(configs()))


def make_params(args: argparse.Namespace, cores: int | None = None) -> Params:
    """Defaults: a full run takes about half a minute here, --quick a few seconds."""
    cores = cores or cores_of_machine()
    quick = bool(args.quick)
    return Params(threads=thread_counts(cores, args.threads),
                  duration_ms=args.duration_ms or (100 if quick else 300),
                  rounds=args.reps or (3 if quick else 5),
                  tp_rounds=args.reps or (1 if quick else 3),
                  iters=args.iters or (300_000 if quick else 2_000_000),
                  batches=3 if quick else 5, cores=cores, quick=quick)


# ---- measure ---------------------------------------------------------------------

def env_for(config: str) -> dict[str, str]:
    return runner.clean_env() if config == BASELINE else runner.preload_env(config)


def check_provider(config: str, doc: Mapping[str, Any]) -> None:
    """Fail loudly if the preload did not (or did) take: a silent glibc
    figure labelled "mcs" would be worse than no figure."""
    provider = str(doc.get("mutex_provider", ""))
    if (runner.PRELOAD_NAME in provider) != (config != BASELINE):
        raise CliError(f"{config}: pthread_mutex_lock came from {provider!r}, "
                       f"expected {'the hpsync preload' if config != BASELINE else 'libc'}")


def uncontended_row(doc: Mapping[str, Any], phase: str) -> dict[str, Any]:
    for row in doc.get("rows", []):
        if row.get("phase") == phase:
            return dict(row)
    raise CliError(f"{PROGRAM} output lacks the {phase} row")


def uncontended_argv(iters: int, batches: int) -> list[str]:
    return [str(runner.program(PROGRAM)), "--mode", "uncontended", "--iters", str(iters),
            "--reps", str(batches)]


def measure(params: Params, session: Session) -> dict[str, Any]:
    prog = str(runner.program(PROGRAM))
    runner.preload_library()            # fail before measuring anything
    samples: dict[str, list[dict[str, Any]]] = {"uncontended": [], "throughput": []}
    session.log(f"uncontended: {params.rounds} interleaved round(s) x {len(params.configs)} "
                f"configurations, {params.batches} batches of {params.iters} lock+unlock pairs")
    for rnd in range(params.rounds):
        for config in interleaved(rnd, params.configs):
            doc, cid = session.run(uncontended_argv(params.iters, params.batches), env_for(config))
            check_provider(config, doc)
            multi = uncontended_row(doc, "multi_threaded_process")
            single = uncontended_row(doc, "single_threaded_process")
            # Best batch of the run (preemption only ever adds time), median
            # over rounds (drift cancels between interleaved rounds).
            samples["uncontended"].append({
                "lock": config, "round": rnd, "ns_per_op": multi["ns_per_op_min"],
                "batches": multi["ns_per_op_reps"],
                "ns_per_op_single_threaded": single["ns_per_op_min"], "context": cid})
    session.log(f"throughput: threads {','.join(map(str, params.threads))}, {params.duration_ms} "
                f"ms each, {params.tp_rounds} round(s)")
    for rnd in range(params.tp_rounds):
        for threads in params.threads:
            for config in interleaved(rnd, params.configs):
                doc, cid = session.run([prog, "--mode", "throughput", "--threads", str(threads),
                                        "--duration-ms", str(params.duration_ms)], env_for(config))
                check_provider(config, doc)
                row = doc["rows"][0]
                samples["throughput"].append({
                    "lock": config, "threads": threads, "round": rnd,
                    "ops_per_sec": row["ops_per_sec"], "ops_min_thread": row["ops_min_thread"],
                    "ops_max_thread": row["ops_max_thread"], "context": cid})
            session.log(f"  round {rnd + 1}/{params.tp_rounds}: {threads} threads done")
    return {"samples": samples}


# ---- analyse (pure) -------------------------------------------------------------------

def ordered(names: Iterable[str]) -> list[str]:
    """glibc first, then the locks in the order they first appear (a run's
    first round measures them in the published order): analysis needs no
    build, so a stored run renders anywhere."""
    seen = list(dict.fromkeys(names))
    return [BASELINE] * (BASELINE in seen) + [n for n in seen if n != BASELINE]


def summarise(samples: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Row]:
    """Per-configuration medians over rounds, as table rows, with ratios to
    glibc's row of the same mode and threads (ns_ratio_vs_glibc for
    uncontended rows, lower is better; ops_ratio_vs_glibc for throughput
    rows, higher is better).  Throughput rows carry ns_per_op = 1e9 / ops/s,
    the mean interval between two critical sections of the whole process."""
    rows: list[Row] = []
    unc = samples.get("uncontended", [])
    for lock in ordered(s["lock"] for s in unc):
        mine = [s for s in unc if s["lock"] == lock]
        ns = [float(s["ns_per_op"]) for s in mine]
        med = stats.strict_median(ns)
        rows.append({"mode": "uncontended", "lock": lock, "threads": 1, "ns_per_op": med,
                     "ops_per_sec": 1e9 / med if med > 0 else None,
                     "ns_per_op_single_threaded":
                         stats.strict_median(s["ns_per_op_single_threaded"] for s in mine),
                     "rounds": len(ns), "spread": stats.spread(ns)})
    tp = samples.get("throughput", [])
    for threads in sorted({int(s["threads"]) for s in tp}):
        at = [s for s in tp if int(s["threads"]) == threads]
        for lock in ordered(s["lock"] for s in at):
            mine = [s for s in at if s["lock"] == lock]
            ops = [float(s["ops_per_sec"]) for s in mine]
            med = stats.strict_median(ops)
            fair = [s["ops_min_thread"] / s["ops_max_thread"] for s in mine if s.get("ops_max_thread")]
            rows.append({"mode": "throughput", "lock": lock, "threads": threads,
                         "ops_per_sec": med, "ns_per_op": 1e9 / med if med > 0 else None,
                         "fairness": stats.median(fair), "rounds": len(ops),
                         "spread": stats.spread(ops)})
    base = {(r["mode"], r["threads"]): r for r in rows if r["lock"] == BASELINE}
    for r in rows:
        b = base.get((r["mode"], r["threads"]))
        if r["mode"] == "uncontended":
            r["ns_ratio_vs_glibc"] = stats.ratio(r["ns_per_op"], b and b["ns_per_op"])
        else:
            r["ops_ratio_vs_glibc"] = stats.ratio(r["ops_per_sec"], b and b["ops_per_sec"])
    return rows


def measurements(samples: Mapping[str, Sequence[Mapping[str, Any]]], cores: int,
                 context: int | None = None) -> list[schema.Measurement]:
    """Every figure with its per-round values; and, at 8 x cores threads,
    each algorithm's per-round ratio to glibc (the oversubscription target's
    figure)."""
    out: list[schema.Measurement] = []
    unc = samples.get("uncontended", [])
    for lock in ordered(s["lock"] for s in unc):
        mine = [s for s in unc if s["lock"] == lock]
        cid = context_of(mine, context)
        for metric, key in (("ns_per_op", "ns_per_op"),
                            ("ns_per_op_single_threaded_process", "ns_per_op_single_threaded")):
            reps, rounds = per_round(mine, key)
            out.append(schema.measurement({"part": "uncontended", "lock": lock}, metric, "ns",
                                          reps, "lower", cid, rounds))
    tp = samples.get("throughput", [])
    oversub = OVERSUB_FACTOR * cores
    for threads in sorted({int(s["threads"]) for s in tp}):
        at = [s for s in tp if int(s["threads"]) == threads]
        base = [s for s in at if s["lock"] == BASELINE]
        for lock in ordered(s["lock"] for s in at):
            mine = [s for s in at if s["lock"] == lock]
            reps, rounds = per_round(mine, "ops_per_sec")
            out.append(schema.measurement({"part": "throughput", "lock": lock, "threads": threads},
                                          "ops_per_sec", "ops/s", reps, "higher",
                                          context_of(mine, context), rounds))
            if threads == oversub and lock != BASELINE and base:
                ratios, rr = round_ratios(mine, base, "ops_per_sec")
                out.append(schema.measurement(
                    {"part": "oversubscribed", "lock": lock, "threads": threads},
                    "ops_ratio_vs_glibc", "x", ratios, "higher", context_of(mine, context), rr))
    return out


def analyse(extra: Mapping[str, Any], params: Mapping[str, Any]) -> Analysis:
    rows = summarise(extra["samples"])
    return Analysis(rows, measurements(extra["samples"], int(params.get("cores") or 1)),
                    warn_few_and_noisy(rows, "rounds", MIN_ROUNDS, NOISY,
                                       lambda r: f"{r['lock']}@{r['threads']}T"))


# ---- render -----------------------------------------------------------------------------

def find_row(rows: Sequence[Row], mode: str, lock: str, threads: int | None = None) -> Row | None:
    return next((r for r in rows if r["mode"] == mode and r["lock"] == lock
                 and (threads is None or r["threads"] == threads)), None)


def render(run: Mapping[str, Any]) -> str:
    """The uncontended table, the throughput table, the targets."""
    rows: list[Row] = run["extra"]["rows"]
    params = run.get("params", {})
    out = [f"hpsync bench locks: {text.context_line(schema.first_context(run))}", ""]
    unc = [r for r in rows if r["mode"] == "uncontended"]
    if unc:
        out.append(f"Uncontended lock+unlock, 1 thread, in a process that has created a thread "
                   f"(median of {params.get('rounds', '?')} interleaved rounds)")
        out.append(text.table(
            ["lock", "ns/op", "vs glibc", "single-threaded process ns/op"],
            [[r["lock"], f"{r['ns_per_op']:.2f}", text.ratio(r.get("ns_ratio_vs_glibc")),
              f"{r['ns_per_op_single_threaded']:.2f}"] for r in unc],
            [False, True, True, True]))
        out.append("")
    tp = [r for r in rows if r["mode"] == "throughput"]
    if tp:
        threads = sorted({r["threads"] for r in tp})
        out.append(f"Throughput, ops/s with one shared mutex (x glibc), "
                   f"{params.get('duration_ms', '?')} ms, median of {params.get('tp_rounds', '?')} "
                   f"round(s)")
        body = []
        for lock in ordered(r["lock"] for r in tp):
            cells = [lock]
            for t in threads:
                r = find_row(tp, "throughput", lock, t)
                cells.append("-" if r is None else text.si(r["ops_per_sec"]) if lock == BASELINE
                             else f"{text.si(r['ops_per_sec'])} ({text.ratio(r.get('ops_ratio_vs_glibc'))})")
            body.append(cells)
        out.append(text.table(["lock"] + [f"{t} thr" for t in threads], body,
                              [False] + [True] * len(threads)))
        out.append("")
    out.extend(text.targets_section(run))
    return "\n".join(out)


OPTIONS = (
    Option("--threads", argtypes.thread_list, "LIST", "thread counts, e.g. 1,2,8 (default 1, 2, 4x and 8x cores)"),
    Option("--duration-ms", argtypes.positive_int, "N", "per throughput run"),
    Option("--reps", argtypes.positive_int, "N", "interleaved rounds per figure"),
    Option("--iters", argtypes.positive_int, "N", "lock+unlock pairs per uncontended batch"),
)

BENCH = Bench("locks", "glibc vs every hpsync lock: uncontended cost, throughput", OPTIONS,
              make_params, measure, analyse, render)

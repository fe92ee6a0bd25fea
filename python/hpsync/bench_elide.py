# SPDX-License-Identifier: MIT
"""`hpsync bench elide`: what lock elision costs, and (with RTM) what it buys.

Two halves, kept apart as in bench locks:

* measure() runs build/bin/hps-bench-elide (and hps-bench-locks through the
  interposer) and collects the programs' JSON into samples;
* summarise(), evaluate_targets(), warnings_for() and analyse() are pure
  functions of those samples: the tests feed them canned documents from
  tests/data/.  hpsync.render.bench_elide prints the result.

Sample kinds (one entry per program run or per in-process measurement):
  overhead:    {"lock", "backend", "iters", "plain_ns_per_op_reps", "elided_ns_per_op_reps"}
  policy:      {"iters", "ns_per_decision_reps", "loop_ns_per_call_reps", "actions_in_mix", "cfg"}
  elided:      {"workload", "setting", "lock", "backend", "iters",
                "plain_ns_per_op_reps", "elided_ns_per_op_reps", "per_acquisition"}
  interposer:  {"variant", "setting", "lock", "round", "ns_per_op"}
  throughput:  {"workload", "variant", "lock", "threads", "round", "backend",
                "ops_per_sec", "ops_min_thread", "ops_max_thread"}
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import locks, runner, stats
from .errors import CliError

PROGRAM = "hps-bench-elide"
LOCKS_PROGRAM = "hps-bench-locks"
KIND = "bench-elide"

# The targets.
OVERHEAD_MAX_NS = 2.0             # elision layer, backend off: <= 2 ns over the plain lock
LOW_CONFLICT_MIN_RATIO = 1.3      # elided/plain throughput, low conflict, at >= 4 threads
LOW_CONFLICT_MIN_THREADS = 4
HIGH_CONFLICT_MIN_RATIO = 0.95    # elided at most 5 % slower under high conflict
MIN_BATCH = 100_000               # the timer steps in ~10 ns: shorter batches are coarse
MIN_ROUNDS_FOR_CONFIDENCE = 3
EPS = 1e-9                        # ratios of equal-looking figures are not exact in binary
LAYOUT_NOISE_NS = 0.5             # "elided faster than plain" beyond this is code layout

# Injected sequences for the full elided lock+unlock.  The abort-heavy one
# never makes the lock skip elision (a commit comes before three fallbacks in
# a row), so every acquisition goes through the policy:
#   1st: retry, retry, retry (RETRY x3), conflict -> lock
#   2nd: capacity -> lock
#   3rd: busy x3 (wait, retry), commit
# i.e. 9 begins, 8 aborts and 1 commit per 3 acquisitions.
INJECT_SEQUENCES: tuple[tuple[str, str], ...] = (
    ("inject:commit", "commit"),
    ("inject:abort-heavy", "retry*3,conflict,capacity,busy*3,commit"),
)
WORKLOADS: tuple[str, ...] = ("low-conflict", "high-conflict")
VARIANTS: tuple[str, ...] = ("plain", "elided")

Row = dict[str, Any]


@dataclass(frozen=True)
class Params:
    iters: int                  # operations per timed batch (overhead, policy, elided, interposer)
    reps: int                   # interleaved repetitions inside one process
    interposer_rounds: int      # interleaved processes per interposer figure
    interposer_batches: int     # timed batches per interposer process (best is kept)
    threads: list[int]          # throughput thread counts (only run with RTM)
    duration_ms: int
    tp_rounds: int
    high_conflict_keys: int = 4
    quick: bool = False
    algos: list[str] = field(default_factory=lambda: [locks.DEFAULT_LOCK] + [
        a for a in locks.ALGORITHMS if a != locks.DEFAULT_LOCK])


def thread_counts(cores: int, explicit: Sequence[int] | None = None) -> list[int]:
    """1, 2, 4, ... up to 2 x cores, plus cores and 2 x cores, unless given."""
    if explicit:
        return sorted(set(explicit))
    top = max(1, 2 * cores)
    out = {cores, top}
    t = 1
    while t <= top:
        out.add(t)
        t *= 2
    return sorted(c for c in out if c >= 1)


def make_params(cores: int, quick: bool, threads: list[int] | None = None,
                duration_ms: int | None = None, reps: int | None = None,
                iters: int | None = None) -> Params:
    """--quick: a few seconds here; the full run about ten (more with RTM)."""
    return Params(
        iters=iters or (200_000 if quick else 1_000_000),
        reps=reps or (9 if quick else 15),
        interposer_rounds=reps or (4 if quick else 8),
        interposer_batches=3 if quick else 5,
        threads=thread_counts(cores, threads),
        duration_ms=duration_ms or (100 if quick else 300),
        tp_rounds=min(reps, 5) if reps else (1 if quick else 3),
        quick=quick,
    )


# ---- measurement ------------------------------------------------------------

def _env(backend: str | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """A clean environment, with HPSYNC_ELIDE_BACKEND set when asked."""
    env = runner.clean_env(base)
    if backend is not None:
        env["HPSYNC_ELIDE_BACKEND"] = backend
    return env


def _expect_backend(doc: dict[str, Any], want: str, what: str) -> None:
    got = doc.get("backend")
    if got != want:
        raise CliError(f"{what}: elision backend is {got!r}, expected {want!r}")


def measure(params: Params, log: Callable[[str], None] = runner.log) -> dict[str, Any]:
    """Run every part; returns the run's document (samples, no rows yet)."""
    prog = str(runner.program(PROGRAM))
    locks_prog = str(runner.program(LOCKS_PROGRAM))
    runner.preload_library()            # fail before measuring anything
    started = time.monotonic()
    it, reps = str(params.iters), str(params.reps)

    info = runner.run_json([prog, "--mode", "info"], env=_env())
    rtm = bool(info.get("rtm_usable"))
    default_backend = str(info.get("backend"))
    log(f"RTM usable: {'yes' if rtm else 'no'} (default elision backend: {default_backend})")
    samples: dict[str, list[dict[str, Any]]] = {
        "overhead": [], "policy": [], "elided": [], "interposer": [], "throughput": []}

    # (1) The layer's cost when no backend runs.  Where RTM is usable the
    # default would run transactions, so the layer is measured with "off".
    log(f"elision layer, backend off: {params.reps} interleaved reps x "
        f"{len(params.algos)} locks x 2, {params.iters} pairs each")
    doc = runner.run_json([prog, "--mode", "overhead", "--iters", it, "--reps", reps,
                           "--algos", ",".join(params.algos)],
                          env=_env("off" if rtm else None))
    _expect_backend(doc, "off", "overhead")
    for row in doc["rows"]:
        samples["overhead"].append({"lock": row["lock"], "backend": doc["backend"],
                                    "iters": row["iters"],
                                    "plain_ns_per_op_reps": row["plain_ns_per_op_reps"],
                                    "elided_ns_per_op_reps": row["elided_ns_per_op_reps"]})

    # (3) The policy engine alone, and a full elided pair per injected sequence.
    log(f"policy: {params.reps} reps of {params.iters} decisions")
    doc = runner.run_json([prog, "--mode", "policy", "--iters", it, "--reps", reps], env=_env())
    row = doc["rows"][0]
    samples["policy"].append({k: row[k] for k in ("iters", "ns_per_decision_reps",
                                                  "loop_ns_per_call_reps", "actions_in_mix",
                                                  "cfg")})
    settings = [(name, f"inject:{seq}", "inject") for name, seq in INJECT_SEQUENCES]
    if rtm:
        settings.append(("rtm", "rtm", "rtm"))
    for name, setting, want in settings:
        log(f"elided lock+unlock, HPSYNC_ELIDE_BACKEND={setting}")
        doc = runner.run_json([prog, "--mode", "elided", "--iters", it, "--reps", reps,
                               "--algo", locks.DEFAULT_LOCK], env=_env(setting))
        _expect_backend(doc, want, setting)
        row = doc["rows"][0]
        samples["elided"].append({
            "workload": name, "setting": setting, "lock": row["lock"], "backend": doc["backend"],
            "iters": row["iters"], "plain_ns_per_op_reps": row["plain_ns_per_op_reps"],
            "elided_ns_per_op_reps": row["elided_ns_per_op_reps"],
            "per_acquisition": row["per_acquisition"]})

    # (2) Through the interposer: the uncontended pthread_mutex loop of
    # hps-bench-locks with HPSYNC_ELIDE=0 and =1, interleaved processes.
    log(f"interposer: {params.interposer_rounds} interleaved round(s) of HPSYNC_ELIDE=0/1, "
        f"{params.interposer_batches} batches of {params.iters} pairs")
    for rnd in range(params.interposer_rounds):
        for variant in locks.interleaved_order(rnd, VARIANTS):
            flag = "1" if variant == "elided" else "0"
            env = runner.preload_env(locks.DEFAULT_LOCK)
            env["HPSYNC_ELIDE"] = flag
            doc = runner.run_json([locks_prog, "--mode", "uncontended", "--iters", it,
                                   "--reps", str(params.interposer_batches)], env=env)
            provider = str(doc.get("mutex_provider", ""))
            if runner.PRELOAD_NAME not in provider:
                raise CliError(f"HPSYNC_ELIDE={flag}: pthread_mutex_lock came from "
                               f"{provider!r}, not the hpsync preload")
            multi = next((r for r in doc.get("rows", [])
                          if r.get("phase") == "multi_threaded_process"), None)
            if multi is None:
                raise CliError(f"{LOCKS_PROGRAM} output lacks the multi_threaded_process row")
            samples["interposer"].append({
                "variant": variant, "setting": f"HPSYNC_ELIDE={flag}", "lock": locks.DEFAULT_LOCK,
                "round": rnd, "ns_per_op": multi["ns_per_op_min"],
                "backend": ("rtm" if rtm else "off") if variant == "elided" else "off"})

    # Elided vs plain throughput: only meaningful where transactions run.
    if rtm:
        log(f"throughput: threads {','.join(map(str, params.threads))}, {params.duration_ms} ms "
            f"each, {params.tp_rounds} round(s), low and high conflict")
        for rnd in range(params.tp_rounds):
            for workload in WORKLOADS:
                for threads in params.threads:
                    for variant in locks.interleaved_order(rnd, VARIANTS):
                        argv = [prog, "--mode", "throughput", "--workload", workload.split("-")[0],
                                "--threads", str(threads), "--duration-ms", str(params.duration_ms),
                                "--variant", variant, "--algo", locks.DEFAULT_LOCK,
                                "--keys", str(params.high_conflict_keys)]
                        doc = runner.run_json(argv, env=_env("rtm" if variant == "elided" else "off"))
                        _expect_backend(doc, "rtm" if variant == "elided" else "off",
                                        f"{workload} {variant}")
                        row = doc["rows"][0]
                        samples["throughput"].append({
                            "workload": workload, "variant": variant, "lock": row["lock"],
                            "threads": threads, "round": rnd, "backend": doc["backend"],
                            "ops_per_sec": row["ops_per_sec"],
                            "ops_min_thread": row["ops_min_thread"],
                            "ops_max_thread": row["ops_max_thread"]})
                log(f"  round {rnd + 1}/{params.tp_rounds}: {workload} done")
    else:
        log("throughput elided vs plain: skipped, RTM is not usable on this machine")

    return {
        **runner.doc_header(KIND, started, params),
        "rtm": {"rtm_usable": rtm, "default_backend": default_backend},
        "context": info.get("context", {}),
        "samples": samples,
    }


# ---- pure computations ----------------------------------------------------------

def _pair_rows(mode: str, workload: str, lock: str, backend: str, plain: Sequence[float],
               elided: Sequence[float], extra: dict[str, Any] | None = None) -> list[Row]:
    """A plain row and an elided row from same-process interleaved reps."""
    p_med, e_med = stats.strict_median(plain), stats.strict_median(elided)
    base = {"mode": mode, "workload": workload, "threads": 1, "lock": lock}
    plain_row: Row = {**base, "variant": "plain", "backend": "none",
                      "ns_per_op": p_med, "ns_per_op_min": float(min(plain)),
                      "ops_per_sec": 1e9 / p_med if p_med > 0 else None,
                      "reps": len(plain), "ns_per_op_reps": list(plain), "spread": stats.spread(plain)}
    paired = [e - p for p, e in zip(plain, elided)]
    elided_row: Row = {**base, "variant": "elided", "backend": backend,
                       "ns_per_op": e_med, "ns_per_op_min": float(min(elided)),
                       "ops_per_sec": 1e9 / e_med if e_med > 0 else None,
                       "reps": len(elided), "ns_per_op_reps": list(elided),
                       "spread": stats.spread(elided),
                       "plain_ns_per_op": p_med,
                       "diff_ns_vs_plain": e_med - p_med,
                       "paired_diff_ns_median": stats.median(paired),
                       "diff_ns_min_vs_min": float(min(elided)) - float(min(plain)),
                       "ratio_vs_plain": stats.ratio(e_med, p_med),
                       **(extra or {})}
    return [plain_row, elided_row]


def summarise(samples: dict[str, list[dict[str, Any]]]) -> list[Row]:
    """Rows for every measured figure (medians over reps or rounds)."""
    rows: list[Row] = []
    for s in samples.get("overhead", []):
        rows += _pair_rows("layer-overhead", "uncontended", s["lock"], s["backend"],
                           s["plain_ns_per_op_reps"], s["elided_ns_per_op_reps"],
                           {"api": "hps_elide_lock/unlock vs hps_lock_lock/unlock"})

    for s in samples.get("policy", []):
        dec, loop = s["ns_per_decision_reps"], s["loop_ns_per_call_reps"]
        d_med, l_med = stats.strict_median(dec), stats.strict_median(loop)
        acts = s.get("actions_in_mix", {})
        total = sum(acts.values()) or 1
        rows.append({
            "mode": "policy", "workload": "status-mix", "threads": 1, "lock": None,
            "variant": "hps_elide_decide", "backend": "none",
            "ns_per_op": d_med, "ns_per_op_min": float(min(dec)),
            "ops_per_sec": 1e9 / d_med if d_med > 0 else None,
            "loop_ns_per_op": l_med, "net_ns_per_decision": d_med - l_med,
            "reps": len(dec), "ns_per_op_reps": list(dec), "spread": stats.spread(dec),
            "action_shares": {k: v / total for k, v in acts.items()},
            "cfg": s.get("cfg", {}),
        })

    for s in samples.get("elided", []):
        rows += _pair_rows("elided-uncontended", s["workload"], s["lock"], s["backend"],
                           s["plain_ns_per_op_reps"], s["elided_ns_per_op_reps"],
                           {"setting": s["setting"], "per_acquisition": s.get("per_acquisition", {}),
                            "emulated": s["backend"] == "inject"})
        rows[-2]["setting"] = None

    inter = samples.get("interposer", [])
    for variant in VARIANTS:
        mine = [s for s in inter if s["variant"] == variant]
        if not mine:
            continue
        ns = [float(s["ns_per_op"]) for s in mine]
        med = stats.strict_median(ns)
        rows.append({
            "mode": "interposer-overhead", "workload": "uncontended", "threads": 1,
            "lock": mine[0]["lock"], "variant": variant, "setting": mine[0]["setting"],
            "backend": mine[0].get("backend", "off"),
            "ns_per_op": med, "ns_per_op_min": min(ns),
            "ops_per_sec": 1e9 / med if med > 0 else None,
            "rounds": len(ns), "ns_per_op_rounds": ns, "spread": stats.spread(ns),
        })
    plain_i = find_row(rows, "interposer-overhead", "uncontended", "plain")
    elided_i = find_row(rows, "interposer-overhead", "uncontended", "elided")
    if plain_i and elided_i:
        elided_i["plain_ns_per_op"] = plain_i["ns_per_op"]
        elided_i["diff_ns_vs_plain"] = elided_i["ns_per_op"] - plain_i["ns_per_op"]
        elided_i["ratio_vs_plain"] = stats.ratio(elided_i["ns_per_op"], plain_i["ns_per_op"])

    tp = samples.get("throughput", [])
    for workload in [w for w in WORKLOADS if any(s["workload"] == w for s in tp)]:
        for threads in sorted({int(s["threads"]) for s in tp if s["workload"] == workload}):
            pair: dict[str, Row] = {}
            for variant in VARIANTS:
                mine = [s for s in tp if s["workload"] == workload
                        and int(s["threads"]) == threads and s["variant"] == variant]
                if not mine:
                    continue
                ops = [float(s["ops_per_sec"]) for s in mine]
                med = stats.strict_median(ops)
                fair = [s["ops_min_thread"] / s["ops_max_thread"]
                        for s in mine if s.get("ops_max_thread")]
                pair[variant] = {
                    "mode": "throughput", "workload": workload, "threads": threads,
                    "lock": mine[0]["lock"], "variant": variant, "backend": mine[0]["backend"],
                    "ops_per_sec": med, "ns_per_op": 1e9 / med if med > 0 else None,
                    "fairness": stats.median(fair),
                    "rounds": len(ops), "ops_per_sec_rounds": ops, "spread": stats.spread(ops),
                }
            if "plain" in pair and "elided" in pair:
                pair["elided"]["ratio_vs_plain"] = stats.ratio(pair["elided"]["ops_per_sec"],
                                                                pair["plain"]["ops_per_sec"])
            rows += [pair[v] for v in VARIANTS if v in pair]
    return rows


def find_row(rows: Sequence[Row], mode: str, workload: str | None = None,
             variant: str | None = None, lock: str | None = None,
             threads: int | None = None) -> Row | None:
    for r in rows:
        if (r["mode"] == mode and (workload is None or r.get("workload") == workload)
                and (variant is None or r.get("variant") == variant)
                and (lock is None or r.get("lock") == lock)
                and (threads is None or r.get("threads") == threads)):
            return r
    return None


def rtm_statement(rtm: dict[str, Any]) -> str:
    """The first thing a reader must know: can this machine elide at all?"""
    backend = rtm.get("default_backend", "?")
    if rtm.get("rtm_usable"):
        return (f"RTM is usable on this machine: elision runs hardware transactions "
                f"(default backend: {backend}).")
    return (f"RTM is NOT usable on this machine (default backend: {backend}): elision is off, "
            f"so the elided-vs-plain speedup targets cannot be measured here; what is measured "
            f"is what the elision layer costs when it cannot run.")


def evaluate_targets(rows: Sequence[Row], rtm_usable: bool) -> list[dict[str, Any]]:
    """The issue's targets as {id, description, passed: True|False|None, detail}."""
    out: list[dict[str, Any]] = []
    for r in rows:
        if r["mode"] != "layer-overhead" or r["variant"] != "elided":
            continue
        t = {"id": f"layer-overhead-{r['lock']}",
             "description": f"{r['lock']}{' (default)' if r['lock'] == locks.DEFAULT_LOCK else ''}: "
                            f"hps_elide_lock/unlock, elision off, <= {OVERHEAD_MAX_NS:g} ns over "
                            f"hps_lock_lock/unlock"}
        if r.get("backend") != "off":
            out.append({**t, "passed": None, "detail": f"measured with backend {r.get('backend')}"})
            continue
        out.append({**t, "passed": r["diff_ns_vs_plain"] <= OVERHEAD_MAX_NS + EPS,
                    "detail": f"{r['diff_ns_vs_plain']:+.2f} ns ({r['ns_per_op']:.2f} vs "
                              f"{r['plain_ns_per_op']:.2f} ns, {r['ratio_vs_plain']:.2f}x)"})

    t = {"id": "interposer-overhead",
         "description": f"interposer, adaptive: HPSYNC_ELIDE=1 <= {OVERHEAD_MAX_NS:g} ns over "
                        f"HPSYNC_ELIDE=0 when RTM is absent"}
    r = find_row(rows, "interposer-overhead", variant="elided")
    if r is None or r.get("diff_ns_vs_plain") is None:
        out.append({**t, "passed": None, "detail": "not measured"})
    elif r.get("backend") != "off":
        out.append({**t, "passed": None,
                    "detail": f"RTM runs here, so HPSYNC_ELIDE=1 elides: {r['diff_ns_vs_plain']:+.2f} ns "
                              f"is the cost of an uncontended RTM section, not of the layer"})
    else:
        out.append({**t, "passed": r["diff_ns_vs_plain"] <= OVERHEAD_MAX_NS + EPS,
                    "detail": f"{r['diff_ns_vs_plain']:+.2f} ns ({r['ns_per_op']:.2f} vs "
                              f"{r['plain_ns_per_op']:.2f} ns, {r['ratio_vs_plain']:.2f}x)"})

    out.append(_throughput_target(
        rows, rtm_usable, "low-conflict", "low-conflict-speedup",
        f"low conflict: elided >= {LOW_CONFLICT_MIN_RATIO:g}x plain throughput at "
        f"{LOW_CONFLICT_MIN_THREADS}+ threads",
        LOW_CONFLICT_MIN_RATIO, LOW_CONFLICT_MIN_THREADS))
    out.append(_throughput_target(
        rows, rtm_usable, "high-conflict", "high-conflict-slowdown",
        f"high conflict: elided at most {round((1 - HIGH_CONFLICT_MIN_RATIO) * 100)}% slower "
        f"than plain at every thread count", HIGH_CONFLICT_MIN_RATIO, 1))
    return out


def _throughput_target(rows: Sequence[Row], rtm_usable: bool, workload: str, tid: str,
                       description: str, min_ratio: float, min_threads: int) -> dict[str, Any]:
    t = {"id": tid, "description": description}
    if not rtm_usable:
        return {**t, "passed": None,
                "detail": "not measurable: RTM is not usable on this machine"}
    mine = [r for r in rows if r["mode"] == "throughput" and r["workload"] == workload
            and r["variant"] == "elided" and r["threads"] >= min_threads
            and r.get("ratio_vs_plain") is not None]
    if not mine:
        return {**t, "passed": None,
                "detail": f"not measured (no thread count >= {min_threads})"}
    parts = [f"{r['threads']}T {r['ratio_vs_plain']:.2f}x" for r in mine]
    return {**t, "passed": all(r["ratio_vs_plain"] >= min_ratio - EPS for r in mine),
            "detail": ", ".join(parts)}


def warnings_for(rows: Sequence[Row], params: dict[str, Any]) -> list[str]:
    """Caveats a reader should see next to the figures."""
    out: list[str] = []
    iters = int(params.get("iters") or 0)
    if iters and iters < MIN_BATCH:
        out.append(f"batches of {iters} operations are shorter than {MIN_BATCH}: the timer's "
                   f"~10 ns step is no longer negligible")
    counts = [r.get("reps") or r.get("rounds") or 0 for r in rows]
    few = sorted({c for c in counts if c and c < MIN_ROUNDS_FOR_CONFIDENCE})
    if few:
        out.append(f"only {few[0]} repetition(s) behind some figures: medians of fewer than "
                   f"{MIN_ROUNDS_FOR_CONFIDENCE} are noisy on a shared machine")
    noisy = [r for r in rows if (r.get("spread") or 0) > 0.5]
    if noisy:
        names = ", ".join(f"{r['mode']}/{r.get('setting') or r.get('lock') or r['workload']}"
                          f"/{r['variant']}"
                          + (f"@{r['threads']}T" if r["mode"] == "throughput" else "")
                          for r in noisy[:5])
        out.append(f"repetitions disagree by more than 50% for {names}"
                   + (" ..." if len(noisy) > 5 else ""))
    faster = [r for r in rows if r["mode"] in ("layer-overhead", "interposer-overhead")
              and r["variant"] == "elided" and r.get("backend") == "off"
              and (r.get("diff_ns_vs_plain") or 0) < -LAYOUT_NOISE_NS]
    if faster:
        names = ", ".join(f"{r['lock']} {r['diff_ns_vs_plain']:+.2f} ns" for r in faster)
        out.append(f"elided faster than plain ({names}): with elision off the layer only adds "
                   f"work, so this is code placement and machine noise, i.e. the resolution "
                   f"of the comparison")
    if any(r["mode"] == "elided-uncontended" and r.get("emulated") for r in rows):
        out.append("inject rows run the injected test backend: every 'committed' section takes "
                   "the real lock, so they show the policy's and bookkeeping's cost, not "
                   "transactional execution")
    return out


def analyse(doc: dict[str, Any]) -> dict[str, Any]:
    """Add rows, target verdicts, the RTM statement and warnings to a measured document."""
    rtm = doc.get("rtm", {})
    rows = summarise(doc["samples"])
    return {**doc, "rtm_statement": rtm_statement(rtm), "rows": rows,
            "targets": evaluate_targets(rows, bool(rtm.get("rtm_usable"))),
            "warnings": warnings_for(rows, doc.get("params", {}))}

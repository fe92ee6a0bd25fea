# SPDX-License-Identifier: MIT
"""`hpsync bench elide`: what lock elision costs, and (with RTM) what it buys.

measure runs build/bin/hps-bench-elide (and hps-bench-locks through the
interposer); analyse turns the samples into rows and measurements; render
prints the four parts.  The targets are in targets.toml.

Sample kinds (one entry per program run or per in-process measurement):
  overhead:    {"lock", "backend", "iters", "plain_ns_per_op_reps", "elided_ns_per_op_reps"}
  policy:      {"iters", "ns_per_decision_reps", "loop_ns_per_call_reps", "actions_in_mix", "cfg"}
  elided:      {"workload", "setting", "lock", "backend", "iters",
                "plain_ns_per_op_reps", "elided_ns_per_op_reps", "per_acquisition"}
  interposer:  {"variant", "setting", "lock", "round", "ns_per_op", "backend"}
  throughput:  {"workload", "variant", "lock", "threads", "round", "backend",
                "ops_per_sec", "ops_min_thread", "ops_max_thread"}
each with the "context" of the process that measured it.
"""

from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .. import args as argtypes
from .. import render as text
from .. import runner, schema, stats
from ..errors import CliError
from . import locks
from .base import Analysis, Bench, Option, Row, Session, context_of, interleaved, per_round

PROGRAM = "hps-bench-elide"
KIND = "bench-elide"
MIN_BATCH = 100_000               # the timer steps in ~10 ns: shorter batches are coarse
MIN_ROUNDS = 3
NOISY = 0.5
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


def default_algos() -> list[str]:
    first = locks.default_lock()
    return [first] + [a for a in locks.algorithms() if a != first]


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
    algos: list[str] = field(default_factory=default_algos)


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


def make_params(args: argparse.Namespace, cores: int | None = None) -> Params:
    """--quick: a few seconds here; the full run about ten (more with RTM)."""
    quick, reps = bool(args.quick), args.reps
    return Params(iters=args.iters or (200_000 if quick else 1_000_000),
                  reps=reps or (9 if quick else 15),
                  interposer_rounds=reps or (4 if quick else 8),
                  interposer_batches=3 if quick else 5,
                  threads=thread_counts(cores or locks.cores_of_machine(), args.threads),
                  duration_ms=args.duration_ms or (100 if quick else 300),
                  tp_rounds=min(reps, 5) if reps else (1 if quick else 3), quick=quick)


# ---- measure -------------------------------------------------------------------------

def _env(backend: str | None = None) -> dict[str, str]:
    """A clean environment, with HPSYNC_ELIDE_BACKEND set when asked."""
    env = runner.clean_env()
    if backend is not None:
        env["HPSYNC_ELIDE_BACKEND"] = backend
    return env


def _expect_backend(doc: Mapping[str, Any], want: str, what: str) -> None:
    if doc.get("backend") != want:
        raise CliError(f"{what}: elision backend is {doc.get('backend')!r}, expected {want!r}")


def measure(params: Params, session: Session) -> dict[str, Any]:
    prog = str(runner.program(PROGRAM))
    runner.preload_library()            # fail before measuring anything
    it, reps = str(params.iters), str(params.reps)
    info, _ = session.run([prog, "--mode", "info"], _env())
    rtm = bool(info.get("rtm_usable"))
    default_backend = str(info.get("backend"))
    session.log(f"RTM usable: {'yes' if rtm else 'no'} (default elision backend: {default_backend})")
    samples: dict[str, list[dict[str, Any]]] = {k: [] for k in
                                                ("overhead", "policy", "elided", "interposer",
                                                 "throughput")}

    # (1) The layer's cost when no backend runs.  Where RTM is usable the
    # default would run transactions, so the layer is measured with "off".
    session.log(f"elision layer, backend off: {params.reps} interleaved reps x "
                f"{len(params.algos)} locks x 2, {params.iters} pairs each")
    doc, cid = session.run([prog, "--mode", "overhead", "--iters", it, "--reps", reps,
                            "--algos", ",".join(params.algos)], _env("off" if rtm else None))
    _expect_backend(doc, "off", "overhead")
    for row in doc["rows"]:
        samples["overhead"].append({"lock": row["lock"], "backend": doc["backend"], "iters": row["iters"],
                                    "plain_ns_per_op_reps": row["plain_ns_per_op_reps"],
                                    "elided_ns_per_op_reps": row["elided_ns_per_op_reps"],
                                    "context": cid})

    # (3) The policy engine alone, and a full elided pair per injected sequence.
    session.log(f"policy: {params.reps} reps of {params.iters} decisions")
    doc, cid = session.run([prog, "--mode", "policy", "--iters", it, "--reps", reps], _env())
    row = doc["rows"][0]
    samples["policy"].append({**{k: row[k] for k in ("iters", "ns_per_decision_reps",
                                                     "loop_ns_per_call_reps", "actions_in_mix",
                                                     "cfg")}, "context": cid})
    settings = [(name, f"inject:{seq}", "inject") for name, seq in INJECT_SEQUENCES]
    if rtm:
        settings.append(("rtm", "rtm", "rtm"))
    for name, setting, want in settings:
        session.log(f"elided lock+unlock, HPSYNC_ELIDE_BACKEND={setting}")
        doc, cid = session.run([prog, "--mode", "elided", "--iters", it, "--reps", reps,
                                "--algo", locks.default_lock()], _env(setting))
        _expect_backend(doc, want, setting)
        row = doc["rows"][0]
        samples["elided"].append({
            "workload": name, "setting": setting, "lock": row["lock"], "backend": doc["backend"],
            "iters": row["iters"], "plain_ns_per_op_reps": row["plain_ns_per_op_reps"],
            "elided_ns_per_op_reps": row["elided_ns_per_op_reps"],
            "per_acquisition": row["per_acquisition"], "context": cid})

    # (2) Through the interposer: the uncontended pthread_mutex loop of
    # hps-bench-locks with HPSYNC_ELIDE=0 and =1, interleaved processes.
    session.log(f"interposer: {params.interposer_rounds} interleaved round(s) of HPSYNC_ELIDE=0/1, "
                f"{params.interposer_batches} batches of {params.iters} pairs")
    for rnd in range(params.interposer_rounds):
        for variant in interleaved(rnd, VARIANTS):
            flag = "1" if variant == "elided" else "0"
            env = runner.preload_env(locks.default_lock())
            env["HPSYNC_ELIDE"] = flag
            doc, cid = session.run(locks.uncontended_argv(params.iters, params.interposer_batches), env)
            locks.check_provider(locks.default_lock(), doc)
            multi = locks.uncontended_row(doc, "multi_threaded_process")
            samples["interposer"].append({
                "variant": variant, "setting": f"HPSYNC_ELIDE={flag}", "lock": locks.default_lock(),
                "round": rnd, "ns_per_op": multi["ns_per_op_min"],
                "backend": ("rtm" if rtm else "off") if variant == "elided" else "off",
                "context": cid})

    # Elided vs plain throughput: only meaningful where transactions run.
    if rtm:
        session.log(f"throughput: threads {','.join(map(str, params.threads))}, "
                    f"{params.duration_ms} ms each, {params.tp_rounds} round(s), low and high conflict")
        for rnd in range(params.tp_rounds):
            for workload in WORKLOADS:
                for threads in params.threads:
                    for variant in interleaved(rnd, VARIANTS):
                        backend = "rtm" if variant == "elided" else "off"
                        doc, cid = session.run(
                            [prog, "--mode", "throughput", "--workload", workload.split("-")[0],
                             "--threads", str(threads), "--duration-ms", str(params.duration_ms),
                             "--variant", variant, "--algo", locks.default_lock(),
                             "--keys", str(params.high_conflict_keys)], _env(backend))
                        _expect_backend(doc, backend, f"{workload} {variant}")
                        row = doc["rows"][0]
                        samples["throughput"].append({
                            "workload": workload, "variant": variant, "lock": row["lock"],
                            "threads": threads, "round": rnd, "backend": doc["backend"],
                            "ops_per_sec": row["ops_per_sec"], "ops_min_thread": row["ops_min_thread"],
                            "ops_max_thread": row["ops_max_thread"], "context": cid})
                session.log(f"  round {rnd + 1}/{params.tp_rounds}: {workload} done")
    else:
        session.log("throughput elided vs plain: skipped, RTM is not usable on this machine")
    return {"rtm": {"rtm_usable": rtm, "default_backend": default_backend}, "samples": samples}


# ---- analyse (pure) ----------------------------------------------------------------------

def _pair_rows(mode: str, workload: str, lock: str, backend: str, plain: Sequence[float],
               elided: Sequence[float], extra: dict[str, Any] | None = None) -> list[Row]:
    """A plain row and an elided row from same-process interleaved reps."""
    p_med, e_med = stats.strict_median(plain), stats.strict_median(elided)
    base = {"mode": mode, "workload": workload, "threads": 1, "lock": lock}

    def row(variant: str, be: str, reps: Sequence[float], med: float) -> Row:
        return {**base, "variant": variant, "backend": be, "ns_per_op": med,
                "ns_per_op_min": float(min(reps)), "ops_per_sec": 1e9 / med if med > 0 else None,
                "reps": len(reps), "spread": stats.spread(reps)}
    elided_row = row("elided", backend, elided, e_med)
    elided_row.update({"plain_ns_per_op": p_med, "diff_ns_vs_plain": e_med - p_med,
                       "paired_diff_ns_median": stats.median(e - p for p, e in zip(plain, elided)),
                       "ratio_vs_plain": stats.ratio(e_med, p_med), **(extra or {})})
    return [row("plain", "none", plain, p_med), elided_row]


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


def summarise(samples: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Row]:
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
        rows.append({"mode": "policy", "workload": "status-mix", "threads": 1, "lock": None,
                     "variant": "hps_elide_decide", "backend": "none", "ns_per_op": d_med,
                     "ns_per_op_min": float(min(dec)), "ops_per_sec": 1e9 / d_med if d_med > 0 else None,
                     "loop_ns_per_op": l_med, "net_ns_per_decision": d_med - l_med,
                     "reps": len(dec), "spread": stats.spread(dec),
                     "action_shares": {k: v / total for k, v in acts.items()}, "cfg": s.get("cfg", {})})
    for s in samples.get("elided", []):
        rows += _pair_rows("elided-uncontended", s["workload"], s["lock"], s["backend"],
                           s["plain_ns_per_op_reps"], s["elided_ns_per_op_reps"],
                           {"setting": s["setting"], "per_acquisition": s.get("per_acquisition", {}),
                            "emulated": s["backend"] == "inject"})
        rows[-2]["setting"] = None
    inter = samples.get("interposer", [])
    for variant in VARIANTS:
        mine = [s for s in inter if s["variant"] == variant]
        if mine:
            ns = [float(s["ns_per_op"]) for s in mine]
            med = stats.strict_median(ns)
            rows.append({"mode": "interposer-overhead", "workload": "uncontended", "threads": 1,
                         "lock": mine[0]["lock"], "variant": variant, "setting": mine[0]["setting"],
                         "backend": mine[0].get("backend", "off"), "ns_per_op": med,
                         "ns_per_op_min": min(ns), "ops_per_sec": 1e9 / med if med > 0 else None,
                         "rounds": len(ns), "spread": stats.spread(ns)})
    plain_i = find_row(rows, "interposer-overhead", variant="plain")
    elided_i = find_row(rows, "interposer-overhead", variant="elided")
    if plain_i and elided_i:
        elided_i.update({"plain_ns_per_op": plain_i["ns_per_op"],
                         "diff_ns_vs_plain": elided_i["ns_per_op"] - plain_i["ns_per_op"],
                         "ratio_vs_plain": stats.ratio(elided_i["ns_per_op"], plain_i["ns_per_op"])})
    tp = samples.get("throughput", [])
    for workload in [w for w in WORKLOADS if any(s["workload"] == w for s in tp)]:
        for threads in sorted({int(s["threads"]) for s in tp if s["workload"] == workload}):
            pair: dict[str, Row] = {}
            for variant in VARIANTS:
                mine = [s for s in tp if s["workload"] == workload and int(s["threads"]) == threads
                        and s["variant"] == variant]
                if not mine:
                    continue
                ops = [float(s["ops_per_sec"]) for s in mine]
                med = stats.strict_median(ops)
                fair = [s["ops_min_thread"] / s["ops_max_thread"] for s in mine if s.get("ops_max_thread")]
                pair[variant] = {"mode": "throughput", "workload": workload, "threads": threads,
                                 "lock": mine[0]["lock"], "variant": variant,
                                 "backend": mine[0]["backend"], "ops_per_sec": med,
                                 "ns_per_op": 1e9 / med if med > 0 else None,
                                 "fairness": stats.median(fair), "rounds": len(ops),
                                 "spread": stats.spread(ops)}
            if "plain" in pair and "elided" in pair:
                pair["elided"]["ratio_vs_plain"] = stats.ratio(pair["elided"]["ops_per_sec"],
                                                                pair["plain"]["ops_per_sec"])
            rows += [pair[v] for v in VARIANTS if v in pair]
    return rows


def measurements(samples: Mapping[str, Sequence[Mapping[str, Any]]],
                 context: int | None = None) -> list[schema.Measurement]:
    """Every figure with its repetitions: in-process reps for the layer,
    policy and elided pairs (plain and elided alternate rep by rep), rounds
    for the interposer and throughput figures.  The interposer's dims carry
    the backend, so the layer-cost target only judges HPSYNC_ELIDE=1 where no
    transaction runs."""
    out: list[schema.Measurement] = []

    def add(dims: dict[str, Any], metric: str, unit: str, reps: Sequence[float], better: str,
            ss: Sequence[Mapping[str, Any]], rounds: Sequence[int] | None = None) -> None:
        out.append(schema.measurement(dims, metric, unit, reps, better, context_of(ss, context), rounds))
    for s in samples.get("overhead", []):
        for v in VARIANTS:
            add({"part": "layer-overhead", "lock": s["lock"], "variant": v}, "ns_per_op", "ns",
                s[f"{v}_ns_per_op_reps"], "lower", [s])
    for s in samples.get("policy", []):
        add({"part": "policy", "variant": "hps_elide_decide"}, "ns_per_op", "ns",
            s["ns_per_decision_reps"], "lower", [s])
        add({"part": "policy", "variant": "empty-call"}, "ns_per_op", "ns",
            s["loop_ns_per_call_reps"], "lower", [s])
    for s in samples.get("elided", []):
        for v in VARIANTS:
            add({"part": "elided-uncontended", "setting": s["setting"], "variant": v}, "ns_per_op",
                "ns", s[f"{v}_ns_per_op_reps"], "lower", [s])
    inter = samples.get("interposer", [])
    for v in VARIANTS:
        mine = [s for s in inter if s["variant"] == v]
        if mine:
            reps, rounds = per_round(mine, "ns_per_op")
            add({"part": "interposer-overhead", "variant": v,
                 "backend": mine[0].get("backend", "off")}, "ns_per_op", "ns", reps, "lower",
                mine, rounds)
    tp = samples.get("throughput", [])
    for key in sorted({(s["workload"], int(s["threads"]), s["variant"]) for s in tp},
                      key=lambda k: (WORKLOADS.index(k[0]) if k[0] in WORKLOADS else 9, k[1], k[2])):
        mine = [s for s in tp if (s["workload"], int(s["threads"]), s["variant"]) == key]
        reps, rounds = per_round(mine, "ops_per_sec")
        add({"part": "throughput", "workload": key[0], "variant": key[2], "threads": key[1]},
            "ops_per_sec", "ops/s", reps, "higher", mine, rounds)
    return out


def rtm_statement(rtm: Mapping[str, Any]) -> str:
    """The first thing a reader must know: can this machine elide at all?"""
    backend = rtm.get("default_backend", "?")
    if rtm.get("rtm_usable"):
        return (f"RTM is usable on this machine: elision runs hardware transactions "
                f"(default backend: {backend}).")
    return (f"RTM is NOT usable on this machine (default backend: {backend}): elision is off, "
            f"so the elided-vs-plain speedup targets cannot be measured here; what is measured "
            f"is what the elision layer costs when it cannot run.")


def warnings_for(rows: Sequence[Row], params: Mapping[str, Any]) -> list[str]:
    """Caveats a reader should see next to the figures."""
    out: list[str] = []
    iters = int(params.get("iters") or 0)
    if iters and iters < MIN_BATCH:
        out.append(f"batches of {iters} operations are shorter than {MIN_BATCH}: the timer's "
                   f"~10 ns step is no longer negligible")
    counts = [r.get("reps") or r.get("rounds") or 0 for r in rows]
    few = sorted({c for c in counts if c and c < MIN_ROUNDS})
    if few:
        out.append(f"only {few[0]} repetition(s) behind some figures: medians of fewer than "
                   f"{MIN_ROUNDS} are noisy on a shared machine")
    noisy = [r for r in rows if (r.get("spread") or 0) > NOISY]
    if noisy:
        names = ", ".join(f"{r['mode']}/{r.get('setting') or r.get('lock') or r['workload']}"
                          f"/{r['variant']}" + (f"@{r['threads']}T" if r["mode"] == "throughput" else "")
                          for r in noisy[:5])
        out.append(f"repetitions disagree by more than 50% for {names}" + (" ..." if len(noisy) > 5 else ""))
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


def analyse(extra: Mapping[str, Any], params: Mapping[str, Any]) -> Analysis:
    rows = summarise(extra["samples"])
    return Analysis(rows, measurements(extra["samples"]), warnings_for(rows, params))


# ---- render ---------------------------------------------------------------------------------

def _signed(value: float | None, unit: str = " ns") -> str:
    return "-" if value is None else f"{value:+.2f}{unit}"


def _per(st: Mapping[str, Any], key: str) -> str:
    value = st.get(key)
    return "-" if value is None else f"{value:.2f}"


def render(run: Mapping[str, Any]) -> str:
    """The RTM verdict first, then each figure, then the targets."""
    rows: list[Row] = run["extra"]["rows"]
    params = run.get("params", {})
    out = [f"hpsync bench elide: {text.context_line(schema.first_context(run))}", "",
           rtm_statement(run["extra"].get("rtm", {})), ""]
    ov = [r for r in rows if r["mode"] == "layer-overhead" and r["variant"] == "elided"]
    if ov:
        out.append(f"1. Elision layer cost, uncontended lock+unlock, 1 thread, backend off: "
                   f"hps_elide_lock/unlock vs hps_lock_lock/unlock on the same lock, one process, "
                   f"median of {params.get('reps', '?')} interleaved batches of {params.get('iters', '?')}")
        out.append(text.table(["lock", "plain ns/op", "elided ns/op", "difference", "ratio",
                               "paired median diff"],
                              [[r["lock"], f"{r['plain_ns_per_op']:.2f}", f"{r['ns_per_op']:.2f}",
                                _signed(r.get("diff_ns_vs_plain")), text.ratio(r.get("ratio_vs_plain")),
                                _signed(r.get("paired_diff_ns_median"))] for r in ov],
                              [False, True, True, True, True, True]))
        out.append("")
    ip = [r for r in rows if r["mode"] == "interposer-overhead"]
    if ip:
        out.append(f"2. Through the interposer: pthread_mutex_lock/unlock (adaptive), uncontended, "
                   f"median of {params.get('interposer_rounds', '?')} interleaved processes (best of "
                   f"{params.get('interposer_batches', '?')} batches each)")
        out.append(text.table(
            ["setting", "backend", "ns/op", "difference", "ratio"],
            [[r.get("setting", r["variant"]), r.get("backend", "?") if r["variant"] == "elided" else "-",
              f"{r['ns_per_op']:.2f}", _signed(r.get("diff_ns_vs_plain")),
              text.ratio(r.get("ratio_vs_plain"))] for r in ip],
            [False, False, True, True, True]))
        out.append("")
    pol = [r for r in rows if r["mode"] == "policy"]
    el = [r for r in rows if r["mode"] == "elided-uncontended" and r["variant"] == "elided"]
    if pol or el:
        out.append("3. Policy engine")
        for r in pol:
            mix = ", ".join(f"{k} {v * 100:.0f}%" for k, v in r.get("action_shares", {}).items())
            out.append(f"   hps_elide_decide: {r['ns_per_op']:.2f} ns per call (min {r['ns_per_op_min']:.2f}) "
                       f"over a mix of abort statuses ({mix}); the same loop calling an empty "
                       f"function: {r['loop_ns_per_op']:.2f} ns, so the decision itself is "
                       f"~{max(r['net_ns_per_decision'], 0.0):.2f} ns")
        if el:
            out.append("   Full elided lock+unlock, 1 thread, adaptive (per acquisition: transactions "
                       "begun, commits, aborts, fallbacks to the lock):")
            body = [[r.get("setting") or r["workload"], f"{r['ns_per_op']:.2f}",
                     f"{r['plain_ns_per_op']:.2f}", text.ratio(r.get("ratio_vs_plain")),
                     *(_per(r.get("per_acquisition", {}), k)
                       for k in ("attempts", "commits", "aborts", "fallbacks"))] for r in el]
            out.append(textwrap.indent(text.table(
                ["HPSYNC_ELIDE_BACKEND", "elided ns/op", "plain ns/op", "ratio",
                 "begun", "commits", "aborts", "fallbacks"], body, [False] + [True] * 7), "   "))
            if any(r.get("emulated") for r in el):
                out.append("   (inject: the injected test backend replays abort statuses; a "
                           "'committed' section really takes the lock, so this is the policy's "
                           "and bookkeeping's cost, not a hardware transaction's)")
        out.append("")
    tp = [r for r in rows if r["mode"] == "throughput"]
    if tp:
        out.append(f"4. Throughput, one lock over a table of counters, elided (RTM) vs plain, "
                   f"{params.get('duration_ms', '?')} ms, median of {params.get('tp_rounds', '?')} round(s)")
        body = []
        for r in (r for r in tp if r["variant"] == "elided"):
            plain = find_row(tp, "throughput", r["workload"], "plain", threads=r["threads"])
            body.append([r["workload"], str(r["threads"]), text.si(plain and plain["ops_per_sec"]),
                         text.si(r["ops_per_sec"]), text.ratio(r.get("ratio_vs_plain"))])
        out.append(text.table(["workload", "threads", "plain ops/s", "elided ops/s", "elided/plain"],
                              body, [False, True, True, True, True]))
    else:
        out.append("4. Throughput elided vs plain (low- and high-conflict workloads): not measured, "
                   "RTM is not usable on this machine")
    out.append("")
    out.extend(text.targets_section(run))
    return "\n".join(out)


OPTIONS = (
    Option("--iters", argtypes.positive_int, "N",
           "operations per timed batch (default 1000000; 200000 with --quick)"),
    Option("--reps", argtypes.positive_int, "N", "interleaved repetitions per figure"),
    Option("--threads", argtypes.thread_list, "LIST",
           "throughput thread counts with RTM (default 1, 2, 4, ... up to 2x cores)"),
    Option("--duration-ms", argtypes.positive_int, "N", "per throughput run (RTM only)"),
)

BENCH = Bench("elide", "lock elision: its cost without RTM, its speedup with RTM", OPTIONS,
              make_params, measure, analyse, render)

# SPDX-License-Identifier: MIT
"""Measurement half of `bench workloads`: asks each workload program what
it offers (describe.py), plans one process per (round, workload, allocator,
group of variants that can share an environment), runs them with a
progress bar, checks every document and collects samples.

Rounds are separate processes, and within a round the allocators and the
variants run in the interleaved order (base.interleaved), so a round's
figures pair up.  Within a process a run is cut into slices (--slices S,
default 8): the program runs S repetitions at 1/S of the work (--reps S,
--scale X/S) on the same input, every variant once per repetition, and a
variant's figure pools its slices (all its work over all its time).  On
the 2-vCPU guest the speed of identical work drifts 2-4x within seconds,
so one long run per variant put each variant in a different stretch of
that drift; slices put every variant in all of them.  histogram b1m, one
thread, sgl (tm-dyn runs exactly tm-k1024's chunks there), 10 processes of
the suite's 11 variants each: tm-dyn over tm-k1024 spread 0.83-1.46x (sd
of its log 0.197) in one run each, 0.91-1.13x (0.056) in 8 slices; scatter
large-low, 8 threads, norec, tm-dyn over tm-k16: sd 0.369 -> 0.145.  The
controller's site lives through a row's slices, as through the repeated
calls of a time-stepped program, so its climb is paid once, as in one run.
A program whose --scale changes the input (the graph's) runs whole, and
so do the rows whose input changes partway through a run (histogram's
b1m-b16), in a process of their own: sliced, the change would come 8 times.
Such a row runs WHOLE_RUNS times in its process instead (the program starts
its controller afresh in each, so each is the same experiment), every
variant once per run, and a variant's figure pools them like slices: one
whole run per variant and round spread the controller's ratio to the best
static k over 0.45-1.56x per point (runs 29 and 30), and its conflict
level's per-round mean over 0.89-1.00x, so that level's verdict stayed
inconclusive whatever the controller did.
A wrong result (or any failure) of any process ends the whole run with
the workload and variant named: nothing of it is stored.

Sample (one per row of a document):
  {"workload", "variant", "threads", "round", "allocator" (or null),
   "dims": {row dims}, "metrics": {name: figure}, "tm", "elision",
   "granularity" (the controller's chosen k, when it says), "context"}
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ... import runner, stats
from ...errors import CliError
from ...progress import Progress
from .. import tm as tm_bench
from ..base import Session, interleaved
from ..malloc import analyse as malloc_names
from ..malloc import measure as malloc_measure
from . import describe as D

DEFAULT_THREADS = [1, 2, 8]
DEFAULT_SECONDS = {"default": 5.0, "quick": 1.0}
DEFAULT_SLICES = {"default": 8, "quick": 1}
# Whole runs a process makes of a row that cannot be sliced, when the run
# slices the others (--slices above 1).
WHOLE_RUNS = 3
# The time a run may take, minutes (--budget; 0: none).  The guest this
# suite grew on ran the default suite in 10 min 47 s on one boot and in
# 21 min 36 s on another, for identical work: its speed is the host's.  So
# the runner measures it: once the first BUDGET_PROBE of the plan (by the
# programs' own estimates) has run, it projects the whole run from the time
# that took, and if the projection is over the budget it starts again
# with every scalable run's work cut to fit (never below BUDGET_FLOOR).
# The fit assumes a run's time is its work's, at the probe's speed; each
# process also costs its start, its input and its threads, which do not
# shrink (at half the work the suite took 0.55 of the time here: tree
# 0.93, scatter 0.71, histogram 0.49), and the machine's speed drifts after
# the probe (run 10: the rest took 15 % longer than the probe's speed said,
# and the run 16 min 9 s with a margin of 0.85), hence the margin.
DEFAULT_BUDGET_MIN = {"default": 15.0, "quick": 2.0}
BUDGET_PROBE = 0.04
BUDGET_FLOOR = 0.25
BUDGET_MARGIN = 0.7


@dataclass(frozen=True)
class Params:
    workloads: list[str]          # empty: every workload built
    threads: list[int] | None     # None: each workload's own default
    rounds: int
    allocators: list[str] = field(default_factory=lambda: list(malloc_names.ALLOCATORS))
    quick: bool = False
    scale: float = 1.0            # --scale: times each run's work, where the program takes it
    slices: int = 1               # --slices: a run's work in this many interleaved repetitions
    budget: float | None = None   # --budget minutes (0: none; None: the mode's, unless --scale)


def make_params(args: argparse.Namespace) -> Params:
    """Defaults: 3 rounds and 8 slices, 1 and 1 with --quick; each
    workload's own threads (1,2,8 when it names none) and sizes."""
    quick = bool(args.quick)
    mode = "quick" if quick else "default"
    return Params(workloads=list(dict.fromkeys(args.names or [])),
                  threads=sorted(set(args.threads)) if args.threads else None,
                  rounds=args.reps or (1 if quick else 3),
                  allocators=list(args.allocators) if getattr(args, "allocators", None)
                  else list(malloc_names.ALLOCATORS), quick=quick,
                  scale=float(getattr(args, "scale", None) or 1.0),
                  slices=int(getattr(args, "slices", None) or DEFAULT_SLICES[mode]),
                  budget=getattr(args, "budget", None))


def budget_seconds(params: Params) -> float | None:
    """The run's time budget: --budget, else the mode's unless --scale
    chose the work (a user who asks for longer runs gets them)."""
    if params.budget is not None:
        return params.budget * 60.0 if params.budget > 0 else None
    if params.scale != 1.0:
        return None
    return DEFAULT_BUDGET_MIN["quick" if params.quick else "default"] * 60.0


def fit_scale(steps: Sequence["Step"], budget: float, elapsed: float,
              cost_done: float) -> tuple[float, float]:
    """(factor, projected seconds): the factor on every scalable run's work
    that fits what is left of the budget, at the speed measured so far
    (elapsed over the estimate of the steps it took) applied to the whole
    plan; 1 when the projection fits already."""
    speed = elapsed / cost_done
    fixed = sum(s.cost for s in steps if not s.desc.scale)
    scalable = sum(s.cost for s in steps if s.desc.scale)
    projected = speed * (fixed + scalable)
    if projected <= budget or scalable <= 0:
        return 1.0, projected
    x = (BUDGET_MARGIN * (budget - elapsed) / speed - fixed) / scalable
    return min(1.0, max(BUDGET_FLOOR, x)), projected


@dataclass(frozen=True)
class Step:
    rnd: int
    desc: D.Description
    variants: list[D.Variant]
    threads: list[int]
    allocator: malloc_measure.Allocator | None
    env: dict[str, str]
    cost: float
    slices: int = 1                  # --reps S at 1/S of the work (the program's own rows: all)
    rows: tuple[str, ...] = ()       # --rows (empty: the mode's)
    runs: int = 1                    # whole runs (rows that cannot be sliced): --reps R at all the work

    def label(self) -> str:
        at = f" under {self.allocator.name}" if self.allocator else ""
        rows = f" [{','.join(self.rows)}]" if self.rows else ""
        return (f"round {self.rnd + 1}: {self.desc.workload}{at}{rows}: "
                f"{','.join(v.name for v in self.variants)}")

    def argv(self, path: Path, quick: bool, scale: float = 1.0) -> list[str]:
        mode = "quick" if quick else "default"
        rows = ["--rows", ",".join(self.rows)] if self.rows else []
        return [str(path), *scaled(self.desc, self.desc.args.get(mode, []), scale / self.slices), *rows,
                "--threads", ",".join(map(str, self.threads)), "--variants",
                ",".join(v.program_name for v in self.variants), "--reps", str(self.slices * self.runs)]


def sliced(desc: D.Description, mode: str, slices: int) -> list[tuple[int, int, tuple[str, ...]]]:
    """(slices, runs, rows) of each process a group of variants needs: one
    in slices when the program can be sliced, plus one of WHOLE_RUNS whole
    runs for its rows that cannot (--rows; none given: the mode's rows)."""
    if slices <= 1 or not desc.slices:
        return [(1, 1, ())]
    rows = desc.rows.get(mode) or []
    whole = tuple(r for r in rows if r in desc.whole_rows)
    if not whole:
        return [(slices, 1, ())]
    rest = tuple(r for r in rows if r not in whole)
    return ([(slices, 1, rest)] if rest else []) + [(1, WHOLE_RUNS, whole)]


def scaled(desc: D.Description, args: Sequence[str], scale: float) -> list[str]:
    """The mode's arguments with the run's --scale applied: it multiplies
    the mode's own --scale (--quick's 0.25), for programs that take it."""
    out = list(args)
    if scale == 1.0 or not desc.scale:
        return out
    own = 1.0
    if "--scale" in out:
        i = out.index("--scale")
        own = float(out[i + 1])
        del out[i:i + 2]
    return out + ["--scale", f"{own * scale:g}"]


def env_groups(variants: Sequence[D.Variant]) -> list[list[D.Variant]]:
    """Variants that can share one process: their settings do not conflict
    (mutex and stm can: HPSYNC_TM does not touch a mutex; stm and norec
    cannot) and the program knows them by different names.  Order kept,
    first fit."""
    groups: list[tuple[dict[str, str], list[D.Variant]]] = []
    for v in variants:
        for env, members in groups:
            if all(env.get(k, val) == val for k, val in v.env.items()) and \
                    v.program_name not in {m.program_name for m in members}:
                env.update(v.env)
                members.append(v)
                break
        else:
            groups.append((dict(v.env), [v]))
    return [members for _, members in groups]


def resolve(params: Params) -> dict[str, D.Description]:
    """The requested workloads' descriptions (all built ones by default)."""
    found = D.programs()
    unknown = [n for n in params.workloads if n not in found]
    if unknown:
        have = ", ".join(found) or "none: run make first"
        raise CliError(f"unknown workload {unknown[0]!r} (built here: {have})", 2)
    names = params.workloads or list(found)
    if not names:
        raise CliError("no workload program built (build/bin/hps-workload-*): run make first")
    return {n: D.describe(found[n]) for n in names}


def availability(desc: D.Description, quick: bool, rtm: bool) -> dict[str, dict[str, str]]:
    out = {}
    for v in desc.chosen(quick):
        missing = [n for n in v.needs if n == "rtm" and not rtm]
        out[v.name] = ({"status": "n/a", "note": "needs usable RTM (hps-doctor: rtm_usable false)"}
                       if missing else {"status": "measured", "note": ""})
    return out


def plan(descs: Mapping[str, D.Description], status: Mapping[str, Mapping[str, Mapping[str, str]]],
         allocs: Sequence[malloc_measure.Allocator], params: Params) -> list[Step]:
    mode = "quick" if params.quick else "default"
    steps = []
    for rnd in range(params.rounds):
        for name, desc in descs.items():
            active = [v for v in desc.chosen(params.quick) if status[name][v.name]["status"] == "measured"]
            threads = params.threads or desc.threads.get(mode) or DEFAULT_THREADS
            unit = float(desc.seconds.get(mode, DEFAULT_SECONDS[mode]))
            for a in interleaved(rnd, list(allocs) if desc.allocators else [None]):
                for group in env_groups(interleaved(rnd, active)):
                    env = runner.clean_env()
                    for v in group:
                        env.update(v.env)
                    if a is not None and a.library:
                        env["LD_PRELOAD"] = a.library
                    # + 1: the harness's untimed first run of each row and thread
                    # count (the ART's program has none: its estimate runs long).
                    per = unit * len(threads) * (params.scale if desc.scale else 1.0)
                    nrows = len(desc.rows.get(mode) or []) or 1
                    for n, whole, rows in sliced(desc, mode, params.slices):
                        share = len(rows) / nrows if rows else 1.0
                        cost = per * (len(group) * whole + 1) * share
                        steps.append(Step(rnd, desc, group, list(threads), a, env, cost, n, rows, whole))
    return steps


def _wrong(desc: D.Description, variants: Sequence[D.Variant], why: str) -> CliError:
    """The run's failure, naming the workload and (when its line says which)
    the variant."""
    named = [v.name for v in variants if any(
        p in why + " " for p in (f"{desc.workload}: {v.program_name} ", f"{desc.workload}: {v.program_name}:",
                                 f"variant {v.program_name} "))]
    variant = max(named, key=len) if named else ",".join(v.name for v in variants)
    what = "wrong result" if "wrong result" in why else "failed"
    return CliError(f"workload {desc.workload}, variant {variant}: {what}: {why}; nothing stored")


def _figure(row: Mapping[str, Any], metric: str, better: str = "higher") -> float | None:
    """A variant's figure from its repetitions (the slices of one run, of
    equal work): pooled, all the work over all the time: for a rate
    (higher is better) their harmonic mean, for a time per operation
    (lower) their mean."""
    reps = row.get(f"{metric}_reps", row.get(metric))
    if isinstance(reps, list) and reps:
        xs = [float(x) for x in reps]
        if better == "lower":
            return sum(xs) / len(xs)
        return len(xs) / sum(1.0 / x for x in xs) if all(x > 0 for x in xs) else stats.median(xs)
    val = row.get(metric)
    return float(val) if isinstance(val, (int, float)) and not isinstance(val, bool) else None


def flat_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The document's rows, one per variant: a row holding its variants'
    entries ("variants": [...], the harness's form) becomes one row per
    entry, with the outer row's fields."""
    out = []
    for row in doc.get("rows") or []:
        entries = row.get("variants")
        if isinstance(entries, list):
            outer = {k: v for k, v in row.items() if k != "variants"}
            out += [{**outer, **e} for e in entries if isinstance(e, dict)]
        else:
            out.append(dict(row))
    return out


def granularity(row: Mapping[str, Any]) -> float | None:
    """The coarsening factor a controller settled on: the row's own
    "granularity", else the median of its threads' final k (tm.k_end)."""
    k = row.get("granularity")
    if isinstance(k, (int, float)) and not isinstance(k, bool):
        return float(k)
    ends = (row.get("tm") or {}).get("k_end") if isinstance(row.get("tm"), dict) else None
    if isinstance(ends, list) and ends:
        return stats.median(float(x) for x in ends)
    return None


def samples_of(step: Step, doc: Mapping[str, Any], cid: int | None) -> list[dict[str, Any]]:
    """The document's rows as samples; a document that does not hold
    exactly what was asked is a failure (never a mislabelled figure)."""
    desc = step.desc
    where = f"workload {desc.workload}"
    if doc.get("workload") != desc.workload:
        raise CliError(f"{where}: the program says it is {doc.get('workload')!r}")
    asked = {v.program_name: v.name for v in step.variants}
    out, seen = [], set()
    for row in flat_rows(doc):
        arg, t = row.get("variant"), row.get("threads")
        if arg not in asked or t not in step.threads:
            raise CliError(f"{where}: a row for variant {arg!r} at {t!r} threads, which was not asked for")
        v = asked[arg]
        figs = {m.name: _figure(row, m.name, m.better) for m in desc.metrics}
        if any(f is None for f in figs.values()):
            raise CliError(f"{where}, variant {v}: row without "
                           + ", ".join(k for k, f in figs.items() if f is None))
        s = {"workload": desc.workload, "variant": v, "threads": int(t), "round": step.rnd,
             "allocator": step.allocator.name if step.allocator else None,
             "dims": {d: row.get(d) for d in desc.dims}, "metrics": figs,
             "tm": row.get("tm"), "elision": row.get("elision"), "context": cid}
        k = granularity(row)
        if k is not None:
            s["granularity"] = k
        if isinstance(row.get("layout"), dict):
            s["layout"] = row["layout"]
        out.append(s)
        seen.add((v, int(t)))
    lacking = sorted(f"{v}@{t}" for v in asked.values() for t in step.threads if (v, t) not in seen)
    if lacking:
        raise CliError(f"{where}: no row for {', '.join(lacking)}")
    return out


class _OverBudget(Exception):
    """The plan will not fit the budget: the factor on the work that does,
    and the whole run's projected seconds at full size."""

    def __init__(self, factor: float, projected: float) -> None:
        super().__init__(factor, projected)
        self.factor, self.projected = factor, projected


def _run_steps(steps: Sequence[Step], params: Params, session: Session, bar: Progress,
               budget: float | None,
               started: float) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Run the plan: its samples and each workload's wall seconds.  With a
    budget the plan will not fit, _OverBudget after its first BUDGET_PROBE."""
    samples: list[dict[str, Any]] = []
    spent: dict[str, float] = {}
    total = sum(s.cost for s in steps)
    done = 0.0
    for i, step in enumerate(steps):
        bar.step(step.label())
        t0 = time.monotonic()
        argv = step.argv(runner.build_dir() / "bin" / step.desc.program, params.quick, params.scale)
        window = runner.StealWindow()
        doc, why = runner.run_document(argv, step.env, timeout=max(300.0, 20 * step.cost))
        stolen = window.close()
        if doc is None:
            raise _wrong(step.desc, step.variants, why or "no document")
        if step.allocator is not None:
            try:
                malloc_measure.check_provider(step.allocator, doc)
            except CliError as exc:
                raise CliError(f"workload {step.desc.workload} under {step.allocator.name}: "
                               f"{exc.message}") from exc
        cid = session.context(doc.get("context"), Path(argv[0]).name)
        got = samples_of(step, doc, cid)
        for s in got:
            s["process"] = i
            if stolen is not None:
                s["steal_share"], s["steal_ms"] = stolen["share"], stolen["ms"]
                if "others_share" in stolen:
                    s["others_share"], s["others_ms"] = stolen["others_share"], stolen["others_ms"]
        session.stolen(stolen)
        samples += got
        w = step.desc.workload
        spent[w] = spent.get(w, 0.0) + time.monotonic() - t0
        bar.finish_step()
        done += step.cost
        if budget is not None and i >= 1 and done >= BUDGET_PROBE * total:
            x, projected = fit_scale(steps, budget, time.monotonic() - started, done)
            if x < 1.0:
                raise _OverBudget(x, projected)
            budget = None            # it fits: no second look
    return samples, spent


def measure(params: Params, session: Session, progress: Progress | None = None) -> dict[str, Any]:
    descs = resolve(params)
    rtm = tm_bench.rtm_usable() if any("rtm" in v.needs for d in descs.values()
                                       for v in d.variants) else False
    status = {n: availability(d, params.quick, rtm) for n, d in descs.items()}
    allocs: list[malloc_measure.Allocator] = []
    missing: dict[str, str] = {}
    if any(d.allocators for d in descs.values()):
        allocs, missing = malloc_measure.find_allocators(params.allocators)
        if missing:
            # One line for every peer not installed.
            session.log("not installed: " + "; ".join(f"{a} ({why})" for a, why in missing.items()))
    for name, st in status.items():
        na = [v for v, s in st.items() if s["status"] != "measured"]
        if na:
            session.log(f"{name}: n/a: {', '.join(na)} ({st[na[0]]['note']})")
    fixed = [n for n, d in descs.items() if not d.scale]
    if params.scale != 1.0 and fixed:
        what = "takes no --scale and runs at its" if len(fixed) == 1 else "take no --scale and run at their"
        session.log(f"--scale {params.scale:g}: {', '.join(fixed)} {what} own size")
    steps = plan(descs, status, allocs, params)
    if not steps:
        raise CliError("no variant to measure")
    mode = "quick" if params.quick else "default"
    budget = budget_seconds(params)
    started = time.monotonic()
    fitted: dict[str, Any] | None = None
    while True:
        bar = progress or Progress([s.cost for s in steps])
        try:
            samples, spent = _run_steps(steps, params, session, bar,
                                        budget if fitted is None else None, started)
            break
        except _OverBudget as over:
            x, projected = over.factor, over.projected
            session.steal.clear()    # the run is the plan that follows, not its probe
        finally:
            bar.close()
        # Over budget: the plan again at the work that fits.
        elapsed = time.monotonic() - started
        assert budget is not None
        fitted = {"minutes": budget / 60.0, "scale": round(x, 3), "probe_s": round(elapsed, 1),
                  "projected_s": round(projected)}
        session.log(f"budget {budget / 60.0:g} min (--budget): the plan's first {elapsed:.0f} s say "
                    f"the whole would take {projected / 60.0:.0f} min on this machine now; starting "
                    f"again with every scalable run's work x{x:.2f} (--budget 0: full size)")
        params = replace(params, scale=params.scale * x)
        steps = plan(descs, status, allocs, params)
        progress = None
    return {"samples": samples, "mode": mode, "scale": params.scale, "budget": fitted,
            "workloads": {n: d.as_dict() for n, d in descs.items()},
            "variants": status,
            # Wall seconds each workload's processes took, all rounds.
            "seconds": {w: round(v, 1) for w, v in spent.items()},
            "allocators": {"measured": [a.name for a in allocs], "missing": missing}}

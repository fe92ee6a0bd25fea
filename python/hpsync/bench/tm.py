# SPDX-License-Identifier: MIT
"""`hpsync bench tm`: transactional data structures (bench/tm/) under every
variant of synchronization, in one run: uninstrumented sequential code, one
glibc mutex, GCC's libitm (ml_wt, gl_wt) and each hpsync TM backend.

Each variant is a binary, build/bin/hps-bench-tm-<program>, compiled from
the same sources with its own tx.h mapping, plus the environment that picks
its method or backend.  One process per (round, threads, variant) runs every
row and validates each result (a wrong one fails the run).  Variants run
interleaved within a round (base.interleaved).

measure: samples, one per (variant, threads, round, row):
  {"variant", "row", "threads", "round", "ops_per_sec", "ops_min_thread",
   "ops_max_thread", "tm" (hpsync's section statistics, else null), "context"}
analyse: medians, ratios, the derived figures the targets judge (below);
render: throughput tables, slowdown against seq, the targets.

Derived figures, each per round (the interleaved rounds pair them):
  best-stm-norec/ratio_vs_itm_ml_wt   the better (by median) of hpsync stm and
                                      norec on the row over itm ml_wt, 1 thread
                                      and up; workload "geomean" over the rows
  best-stm-norec/ratio_vs_seq         the same over seq (1 thread)
  best-stm-norec/ratio_vs_itm_best    over the better of itm ml_wt and gl_wt
  slowdown-vs-seq/x                   seq over the variant, 1 thread
  scaling-8-vs-2/ratio                a variant's 8-thread over its 2-thread figure
  auto-vs-best-backend/ratio          hpsync auto over the best other backend
  itm-hpsync-stm-norec/ratio_vs_itm_best  the itm group: the better of
                                      itm-hpsync-stm and -norec over libitm's best
                                      software method, per thread count
  itm-hpsync-auto/ratio_vs_itm_default    itm-hpsync-auto over libitm's default
  itm-overhead/native_over_itm        the better native hpsync stm/norec over the
                                      better itm-hpsync stm/norec (the ABI's cost)
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .. import args as argtypes
from .. import render as text
from .. import runner, schema, stats
from ..errors import CliError
from .base import Analysis, Bench, Option, Row, Session, context_of, interleaved, per_round
from .base import warn_few_and_noisy

PROGRAM = "hps-bench-tm-"
ROWS = ("bank", "hashset-90", "hashset-50", "list", "tree-1k", "tree-64k", "counter")
MIN_ROUNDS = 3
NOISY = 0.5
GEOMEAN = "geomean"
SEQ = "seq"


@dataclass(frozen=True)
class Variant:
    name: str
    program: str                 # build/bin/hps-bench-tm-<program>
    env: Mapping[str, str] = field(default_factory=dict)
    single: bool = False         # the 1-thread baseline only
    needs_rtm: bool = False      # hardware transactions: n/a without usable RTM
    default: bool = True         # in a run without --variants
    itm_preload: bool = False    # the -fgnu-tm program with libhpsync-itm preloaded
    groups: tuple[str, ...] = () # what --group selects it in


def _hpsync(backend: str, needs_rtm: bool = False) -> Variant:
    return Variant(f"hpsync-{backend}", "hpsync", {"HPSYNC_TM": backend}, needs_rtm=needs_rtm)


def _itm(method: str, default: bool = True) -> Variant:
    return Variant(f"itm-{method}", "itm", {"ITM_DEFAULT_METHOD": method}, default=default,
                   groups=(ITM_GROUP,))


def _itm_hpsync(backend: str, needs_rtm: bool = False) -> Variant:
    """The same -fgnu-tm binary as itm-*, its transactions on hpsync's
    backend through libhpsync-itm (LD_PRELOAD)."""
    return Variant(f"itm-hpsync-{backend}", "itm", {"HPSYNC_TM": backend}, needs_rtm=needs_rtm,
                   default=False, itm_preload=True, groups=(ITM_GROUP,))


# --group itm: one -fgnu-tm build on libitm (its methods and its default)
# and on libhpsync-itm with each backend, beside the native hpsync backends
# the overhead is measured against.
ITM_GROUP = "itm"


# A new variant is one line here (and, for a new program, one hps_tm_bench()
# line in bench/tm/CMakeLists.txt with its tx.h mapping).
VARIANTS: tuple[Variant, ...] = (
    Variant(SEQ, "seq", single=True),
    Variant("mutex", "mutex"),
    _itm("ml_wt"), _itm("gl_wt"), _itm("serialirr", default=False),
    Variant("itm-default", "itm", default=False, groups=(ITM_GROUP,)),
    _hpsync("sgl"), _hpsync("norec"), _hpsync("stm"), _hpsync("auto"),
    _hpsync("htm", needs_rtm=True), _hpsync("hybrid", needs_rtm=True),
    _itm_hpsync("sgl"), _itm_hpsync("norec"), _itm_hpsync("stm"), _itm_hpsync("auto"),
    _itm_hpsync("htm", needs_rtm=True), _itm_hpsync("hybrid", needs_rtm=True),
)
BY_NAME = {v.name: v for v in VARIANTS}
SOFTWARE = ("hpsync-stm", "hpsync-norec")          # "the better of stm and norec"
ITM_SOFTWARE = ("itm-ml_wt", "itm-gl_wt")           # "libitm's best software method"
AUTO = "hpsync-auto"
BACKENDS = tuple(v.name for v in VARIANTS if v.program == "hpsync" and v.name != AUTO)
ITM_HPSYNC_SOFTWARE = ("itm-hpsync-stm", "itm-hpsync-norec")
ITM_AUTO, ITM_DEFAULT = "itm-hpsync-auto", "itm-default"
GROUPS = {ITM_GROUP: [v.name for v in VARIANTS if ITM_GROUP in v.groups]
          + ["hpsync-norec", "hpsync-stm", "hpsync-auto"]}


def variant_list(text_: str) -> list[str]:
    return argtypes.name_list(text_, "variant", [v.name for v in VARIANTS])


@dataclass(frozen=True)
class Params:
    threads: list[int]
    duration_ms: int
    rounds: int
    variants: list[str]
    quick: bool = False


def group_name(text_: str) -> str:
    if text_ not in GROUPS:
        raise argparse.ArgumentTypeError(f"unknown group '{text_}' (choose from {', '.join(GROUPS)})")
    return text_


def make_params(args: argparse.Namespace) -> Params:
    """Defaults: threads 1, 2, 4, 8; 200 ms a row and 3 rounds (a full run
    takes about a minute per variant here); --quick 50 ms and 1 round.
    --group adds its variants to --variants (or replaces the default list)."""
    quick = bool(args.quick)
    names = list(args.variants or [])
    group = getattr(args, "group", None)
    if group:
        names += [n for n in GROUPS[group] if n not in names]
    return Params(threads=sorted(set(args.threads or [1, 2, 4, 8])),
                  duration_ms=args.duration_ms or (50 if quick else 200),
                  rounds=args.reps or (1 if quick else 3),
                  variants=names or [v.name for v in VARIANTS if v.default], quick=quick)


# ---- measure ---------------------------------------------------------------------

def env_for(v: Variant) -> dict[str, str]:
    """A clean environment (no preload, no HPSYNC_*, no ITM_*: a user's own
    setting must not change what a variant is) plus the variant's own."""
    env = {k: val for k, val in runner.clean_env().items() if not k.startswith("ITM_")}
    if v.itm_preload:
        env["LD_PRELOAD"] = str(runner.itm_library())
    return {**env, **v.env}


def rtm_usable() -> bool:
    """CPUID through hps-doctor; no RTM when it cannot say, or when
    HPSYNC_ELIDE_BACKEND=off turns hardware transactions off (the variants
    that need them would run their software fallback under their name)."""
    if os.environ.get("HPSYNC_ELIDE_BACKEND", "").strip() == "off":
        return False
    try:
        doc = runner.run_json([str(runner.program("hps-doctor"))])
        return bool(doc.get("tsx", {}).get("rtm_usable"))
    except CliError:
        return False


def availability(names: Sequence[str], rtm: bool) -> dict[str, dict[str, str]]:
    """Each variant's status: measured, missing (its program is not built)
    or n/a (the machine lacks what it needs), with a note."""
    out: dict[str, dict[str, str]] = {}
    for name in names:
        v = BY_NAME[name]
        path = runner.build_dir() / "bin" / (PROGRAM + v.program)
        if not path.is_file():
            why = ("the hpsync TM library (include/hpsync/tm.h) is not in this tree"
                   if v.program == "hpsync" else f"{path.name} is not built")
            out[name] = {"status": "missing", "note": why}
        elif v.itm_preload and not (runner.build_dir() / "lib" / runner.ITM_NAME).is_file():
            out[name] = {"status": "missing", "note": f"{runner.ITM_NAME} is not built"}
        elif v.needs_rtm and not rtm:
            out[name] = {"status": "n/a", "note": "needs usable RTM (hps-doctor: rtm_usable false)"}
        else:
            out[name] = {"status": "measured", "note": ""}
    return out


def check_variant(v: Variant, doc: Mapping[str, Any]) -> None:
    """The program must be the variant's, and hpsync must run the backend
    asked for (auto may pick any): never a mislabelled figure."""
    if doc.get("variant") != v.program:
        raise CliError(f"{v.name}: the program says it is variant {doc.get('variant')!r}")
    want = v.env.get("HPSYNC_TM")
    if v.program == "itm":
        # The -fgnu-tm program names its TM runtime: libhpsync-itm exactly
        # when it was preloaded (a failed preload would measure libitm).
        on_hpsync = "hpsync" in str(doc.get("itm_library") or "")
        if on_hpsync != v.itm_preload:
            raise CliError(f"{v.name}: the transactions ran on {doc.get('itm_library')!r}")
        return
    if want and want != "auto" and doc.get("backend") != want:
        raise CliError(f"{v.name}: HPSYNC_TM={want} ran backend {doc.get('backend')!r}")


def measure(params: Params, session: Session) -> dict[str, Any]:
    status = availability(params.variants, rtm_usable())
    for name, s in status.items():
        if s["status"] != "measured":
            session.log(f"{name}: {s['status']}: {s['note']}")
    active = [BY_NAME[n] for n in params.variants if status[n]["status"] == "measured"]
    if not active:
        raise CliError("no variant to measure: run make first")
    samples: list[dict[str, Any]] = []
    session.log(f"{len(active)} variant(s), threads {','.join(map(str, params.threads))}, "
                f"{params.rounds} round(s), {params.duration_ms} ms a row")
    for rnd in range(params.rounds):
        for threads in params.threads:
            for v in interleaved(rnd, [v for v in active if not v.single or threads == 1]):
                argv = [str(runner.program(PROGRAM + v.program)), "--threads", str(threads),
                        "--duration-ms", str(params.duration_ms)]
                doc, cid = session.run(argv, env_for(v))
                check_variant(v, doc)
                for row in doc.get("rows", []):
                    samples.append({"variant": v.name, "row": row["row"], "threads": threads,
                                    "round": rnd, "ops_per_sec": row["ops_per_sec"],
                                    "ops_min_thread": row["ops_min_thread"],
                                    "ops_max_thread": row["ops_max_thread"],
                                    "tm": row.get("tm"), "context": cid})
        session.log(f"  round {rnd + 1}/{params.rounds} done")
    return {"samples": samples, "variants": status}


# ---- analyse (pure) -------------------------------------------------------------------

Samples = Sequence[Mapping[str, Any]]


def _order(names: Sequence[str], known: Sequence[str]) -> list[str]:
    present = set(names)
    return [n for n in known if n in present] + sorted(present - set(known))


def _pick(samples: Samples, variant: str, row: str, threads: int) -> list[Mapping[str, Any]]:
    return [s for s in samples if s["variant"] == variant and s["row"] == row
            and int(s["threads"]) == threads]


def _rounds(samples: Samples) -> dict[int, float]:
    return {int(s.get("round", 0)): float(s["ops_per_sec"]) for s in samples}


def _better(samples: Samples, names: Sequence[str], row: str, threads: int) -> dict[int, float]:
    """The per-round figures of whichever of names has the higher median
    ops/s on this row and thread count ({} when none was measured)."""
    best: dict[int, float] = {}
    best_med = -1.0
    for n in names:
        figs = _rounds(_pick(samples, n, row, threads))
        med = stats.median(list(figs.values())) if figs else None
        if med is not None and med > best_med:
            best, best_med = figs, med
    return best


def _ratios(num: Mapping[int, float], den: Mapping[int, float]) -> dict[int, float]:
    out = {}
    for r, a in num.items():
        q = stats.ratio(a, den.get(r))
        if q is not None and q > 0:
            out[r] = q
    return out


def _m(dims: Mapping[str, Any], metric: str, unit: str, figs: Mapping[int, float], better: str,
       ctx: int | None) -> schema.Measurement:
    rounds = sorted(figs)
    return schema.measurement(dims, metric, unit, [figs[r] for r in rounds], better, ctx, rounds)


def _compare(samples: Samples, rows: Sequence[str], threads: int, mine: Sequence[str],
             theirs: Sequence[str], metric: str, ctx: int | None,
             part: str = "best-stm-norec") -> list[schema.Measurement]:
    """best(mine) / best(theirs) per row and their geomean, per round."""
    per_row = {}
    for row in rows:
        q = _ratios(_better(samples, mine, row, threads), _better(samples, theirs, row, threads))
        if q:
            per_row[row] = q
    out = [_m({"part": part, "workload": row, "threads": threads}, metric, "x", q,
              "higher", ctx) for row, q in per_row.items()]
    if per_row and len(per_row) == len(rows):
        g = stats.geomean_per_round(per_row)
        if g:
            out.append(_m({"part": part, "workload": GEOMEAN, "threads": threads},
                          metric, "x", g, "higher", ctx))
    return out


def measurements(samples: Samples, context: int | None = None) -> list[schema.Measurement]:
    out: list[schema.Measurement] = []
    variants = _order([s["variant"] for s in samples], [v.name for v in VARIANTS])
    rows = _order([s["row"] for s in samples], ROWS)
    threads = sorted({int(s["threads"]) for s in samples})
    ctx = context_of(samples, context)
    for row in rows:
        for v in variants:
            for t in threads:
                mine = _pick(samples, v, row, t)
                if not mine:
                    continue
                reps, rnds = per_round(mine, "ops_per_sec")
                dims = {"workload": row, "variant": v, "threads": t}
                out.append(schema.measurement(dims, "ops_per_sec", "ops/s", reps, "higher",
                                              context_of(mine, context), rnds))
                abort = {int(s.get("round", 0)): s["tm"]["aborts"] / max(1, s["tm"]["commits"])
                         for s in mine if s.get("tm")}
                if abort:
                    out.append(_m(dims, "aborts_per_commit", "aborts/commit", abort, "lower", ctx))
    seq = {row: _rounds(_pick(samples, SEQ, row, 1)) for row in rows}
    for row in rows:
        for v in variants:
            q = _ratios(seq[row], _rounds(_pick(samples, v, row, 1)))
            if q and v != SEQ:
                out.append(_m({"part": "slowdown-vs-seq", "workload": row, "variant": v, "threads": 1},
                              "x", "x", q, "lower", ctx))
    if 1 in threads:
        out += _compare(samples, rows, 1, SOFTWARE, ["itm-ml_wt"], "ratio_vs_itm_ml_wt", ctx)
        out += _compare(samples, rows, 1, SOFTWARE, [SEQ], "ratio_vs_seq", ctx)
    for t in (t for t in threads if t > 1):
        out += _compare(samples, rows, t, SOFTWARE, ITM_SOFTWARE, "ratio_vs_itm_best", ctx)
    if 2 in threads and 8 in threads:
        for v in variants:
            for row in rows:
                q = _ratios(_rounds(_pick(samples, v, row, 8)), _rounds(_pick(samples, v, row, 2)))
                if q:
                    out.append(_m({"part": "scaling-8-vs-2", "workload": row, "variant": v,
                                   "threads": 8}, "ratio", "x", q, "higher", ctx))
    # The itm group: libhpsync-itm against libitm, and against hpsync's own API.
    for t in threads:
        out += _compare(samples, rows, t, ITM_HPSYNC_SOFTWARE, ITM_SOFTWARE, "ratio_vs_itm_best", ctx,
                        part="itm-hpsync-stm-norec")
        out += _compare(samples, rows, t, [ITM_AUTO], [ITM_DEFAULT], "ratio_vs_itm_default", ctx,
                        part="itm-hpsync-auto")
        out += _compare(samples, rows, t, SOFTWARE, ITM_HPSYNC_SOFTWARE, "native_over_itm", ctx,
                        part="itm-overhead")
    if AUTO in variants:
        for t in threads:
            for row in rows:
                q = _ratios(_rounds(_pick(samples, AUTO, row, t)), _better(samples, BACKENDS, row, t))
                if q:
                    out.append(_m({"part": "auto-vs-best-backend", "workload": row, "threads": t},
                                  "ratio", "x", q, "higher", ctx))
    return out


def summarise(samples: Samples) -> list[Row]:
    """Table rows: per (row, variant, threads) the median ops/s over rounds,
    its spread, the ratio to seq's 1-thread figure of the row, and the
    median aborts per commit where the variant counts them."""
    out: list[Row] = []
    rows = _order([s["row"] for s in samples], ROWS)
    variants = _order([s["variant"] for s in samples], [v.name for v in VARIANTS])
    for row in rows:
        seq = stats.median([float(s["ops_per_sec"]) for s in _pick(samples, SEQ, row, 1)])
        for v in variants:
            for t in sorted({int(s["threads"]) for s in samples}):
                mine = _pick(samples, v, row, t)
                if not mine:
                    continue
                ops = [float(s["ops_per_sec"]) for s in mine]
                med = stats.strict_median(ops)
                tm = [s["tm"] for s in mine if s.get("tm")]
                out.append({"workload": row, "variant": v, "threads": t, "ops_per_sec": med,
                            "ratio_vs_seq": stats.ratio(med, seq), "rounds": len(ops),
                            "spread": stats.spread(ops),
                            "aborts_per_commit": stats.median(
                                [x["aborts"] / max(1, x["commits"]) for x in tm]) if tm else None,
                            "backend": tm[-1].get("backend") if tm else None})
    return out


def not_measured(status: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per reason some variants were not measured."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name, s in status.items():
        if s.get("status") != "measured":
            groups.setdefault((s["status"], s.get("note", "")), []).append(name)
    return [f"not measured: {', '.join(names)}: {st} ({note})" for (st, note), names in groups.items()]


def analyse(extra: Mapping[str, Any], params: Mapping[str, Any]) -> Analysis:
    samples = extra["samples"]
    rows = summarise(samples)
    warnings = warn_few_and_noisy(rows, "rounds", MIN_ROUNDS, NOISY,
                                  lambda r: f"{r['workload']} {r['variant']}@{r['threads']}T")
    warnings += not_measured(extra.get("variants", {}))
    return Analysis(rows, measurements(samples), warnings)


# ---- render -----------------------------------------------------------------------------

def find_row(rows: Sequence[Row], workload: str, variant: str, threads: int) -> Row | None:
    return next((r for r in rows if r["workload"] == workload and r["variant"] == variant
                 and r["threads"] == threads), None)


def render(run: Mapping[str, Any]) -> str:
    rows: list[Row] = run["extra"]["rows"]
    params = run.get("params", {})
    out = [f"hpsync bench tm: {text.context_line(schema.first_context(run))}"]
    out += [f"  {line}" for line in not_measured(run["extra"].get("variants", {}))]
    out.append("")
    workloads = _order([r["workload"] for r in rows], ROWS)
    variants = _order([r["variant"] for r in rows], [v.name for v in VARIANTS])
    for t in sorted({r["threads"] for r in rows}):
        vs = [v for v in variants if any(r["variant"] == v and r["threads"] == t for r in rows)]
        out.append(f"{t} thread(s): ops/s (x seq at 1 thread), median of "
                   f"{params.get('rounds', '?')} round(s) of {params.get('duration_ms', '?')} ms")
        body = []
        for w in workloads:
            cells = [w]
            for v in vs:
                r = find_row(rows, w, v, t)
                cells.append("-" if r is None else
                             f"{text.si(r['ops_per_sec'])} ({text.ratio(r.get('ratio_vs_seq'))})")
            body.append(cells)
        out.append(text.table(["row"] + vs, body, [False] + [True] * len(vs)))
        out.append("")
    aborts = [r for r in rows if r.get("aborts_per_commit") is not None]
    if aborts:
        out.append("hpsync aborts per commit (median over rounds)")
        keys = sorted({(r["variant"], r["threads"]) for r in aborts},
                      key=lambda k: (variants.index(k[0]) if k[0] in variants else 99, k[1]))
        out.append(text.table(
            ["row"] + [f"{v}@{t}" for v, t in keys],
            [[w] + [("-" if (r := find_row(aborts, w, v, t)) is None else f"{r['aborts_per_commit']:.3f}")
                    for v, t in keys] for w in workloads],
            [False] + [True] * len(keys)))
        out.append("")
    out.extend(text.targets_section(run))
    return "\n".join(out)


OPTIONS = (
    Option("--threads", argtypes.thread_list, "LIST", "thread counts (default 1,2,4,8; seq runs at 1)"),
    Option("--variants", variant_list, "LIST",
           "comma-separated subset of " + ",".join(v.name for v in VARIANTS)
           + " (default all but itm-serialirr)"),
    Option("--group", group_name, "NAME",
           "add a group of variants: itm (one -fgnu-tm build on libitm's methods and default and on "
           "libhpsync-itm with every backend, with native hpsync norec, stm, auto)"),
    Option("--duration-ms", argtypes.positive_int, "N", "per row and run (default 200; 50 with --quick)"),
    Option("--reps", argtypes.positive_int, "N", "interleaved rounds (default 3; 1 with --quick)"),
)

BENCH = Bench("tm", "transactional data structures: seq, mutex, libitm, every hpsync TM backend",
              OPTIONS, make_params, measure, analyse, render)

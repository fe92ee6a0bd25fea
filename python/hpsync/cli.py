# SPDX-License-Identifier: MIT
"""hpsync's command line: argparse subcommands, one-line errors, no tracebacks.

  hpsync doctor [--json]
  hpsync run [--lock ALG|glibc] [--malloc cia|rand|none] [--elide] [--stats]
             [--stats-file F] -- prog args...
  hpsync bench locks [--json] [--quick] [--threads LIST] [--duration-ms N]
                     [--reps N] [--iters N] [--db PATH] [--no-store]
  hpsync bench elide [--json] [--quick] [--iters N] [--reps N] [--threads LIST]
                     [--duration-ms N] [--db PATH] [--no-store]
  hpsync bench malloc [--json] [--quick] [--allocators LIST] [--reps N]
                      [--duration-ms N] [--threads LIST] [--db PATH] [--no-store]
  hpsync bench shmem [--json] [--quick] [--variants LIST] [--reps N] [--load N] [--db PATH] [--no-store]
  hpsync runs [--db PATH] [--json] [--limit N]
  hpsync characterize [--quick] [--json] [--db PATH] [--no-store] [--only LIST]
  hpsync report RUN [-o FILE] [--csv] [--db PATH]
  hpsync compare RUN_A RUN_B [--csv] [--db PATH]
  hpsync repeatability RUN RUN... [--db PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Container, NoReturn, Sequence

from . import (__version__, bench_elide, bench_locks, bench_malloc, bench_shmem, characterize, compare, doctor,
               locks, mallocs, render, runner, shmembench, store)
from .errors import CliError


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def positive_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0 or value > 64:
        raise argparse.ArgumentTypeError(f"must be from 0 to 64, got {value}")
    return value


def thread_list(text: str) -> list[int]:
    """'1,2,16' -> [1, 2, 16]; every entry a whole number in 1..4096."""
    out: list[int] = []
    for part in text.split(","):
        try:
            value = int(part.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not a comma-separated list of thread counts") from None
        if not 1 <= value <= 4096:
            raise argparse.ArgumentTypeError(f"thread count {value} is outside 1..4096")
        out.append(value)
    return out


def _name_list(text: str, what: str, known: Sequence[str], aliases: Container[str] = ()) -> list[str]:
    """'a, b' -> ['a', 'b'] (in the order given, blanks dropped): at least one
    name, each in known or aliases; an unknown name's error offers known."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"empty {what} list")
    for n in names:
        if n not in known and n not in aliases:
            raise argparse.ArgumentTypeError(f"unknown {what} '{n}' (choose from {', '.join(known)})")
    return names


def emit_json(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


# ---- doctor ---------------------------------------------------------------

def cmd_doctor(args: argparse.Namespace) -> int:
    doc = doctor.collect()
    if args.json:
        emit_json(doc)
    else:
        print(render.doctor(doc))
    return 0


# ---- run ------------------------------------------------------------------

def run_lock_names() -> list[str]:
    """What `run --lock` accepts: every algorithm, and glibc (no interposer)."""
    return locks.lock_names() + [locks.BASELINE]


def run_malloc_names() -> list[str]:
    return list(runner.MALLOC_LIBRARIES) + [runner.MALLOC_NONE]


def resolve_lock(name: str) -> str:
    if name not in run_lock_names():
        raise CliError(f"unknown lock '{name}' (choose from {', '.join(run_lock_names())})", 2)
    return name


def resolve_malloc(name: str) -> str:
    if name not in run_malloc_names():
        raise CliError(f"unknown allocator '{name}' (choose from {', '.join(run_malloc_names())})", 2)
    return name


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    lock = resolve_lock(args.lock)
    allocator = resolve_malloc(args.malloc)
    glibc_locks = lock == locks.BASELINE
    if glibc_locks:
        # These are the interposer's; without it they would silently do nothing.
        for flag, given in (("--elide", args.elide), ("--stats", args.stats),
                            ("--stats-file", args.stats_file)):
            if given:
                raise CliError(f"{flag} needs an hpsync lock, not --lock {lock}", 2)
    if not command:
        raise CliError("run needs a program: hpsync run [--lock ALG] [--malloc A] -- prog args...", 2)
    prog = shutil.which(command[0])
    if prog is None:
        raise CliError(f"program '{command[0]}' not found", 127)
    # The allocator goes in front of the lock interposer: the interposer's
    # own allocations then come from it too.
    ours = [p for p in (runner.malloc_library(allocator),
                        None if glibc_locks else runner.preload_library()) if p is not None]
    env = dict(os.environ)
    preload = runner.compose_preload(ours, env.get("LD_PRELOAD", ""))
    if preload:
        env["LD_PRELOAD"] = preload
    else:
        env.pop("LD_PRELOAD", None)
    if not glibc_locks:
        env["HPSYNC_LOCK"] = lock
    if args.stats or args.stats_file:
        env["HPSYNC_STATS"] = "1"
    if args.stats_file:
        env["HPSYNC_STATS_FILE"] = args.stats_file
    if args.elide:
        # Elision runs only where RTM is usable; elsewhere the setting is a
        # no-op at run time (see docs/elision.md).
        env["HPSYNC_ELIDE"] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(prog, command, env)
    except OSError as exc:
        raise CliError(f"cannot run '{command[0]}': {exc.strerror}", 126) from exc
    return 0  # not reached


# ---- bench ----------------------------------------------------------------

def store_and_show(args: argparse.Namespace, doc: dict[str, Any], kind: str,
                   show: Callable[[dict[str, Any]], str]) -> int:
    """A benchmark's last step: store doc as a run of kind (unless --no-store,
    adding run_id and db to it), then print it as JSON or as show renders it."""
    if not args.no_store:
        db = _db(args) or store.default_db_path()
        host = str(doc.get("context", {}).get("host", "unknown"))
        run_id = store.save_run(db, kind, host, doc)
        runner.log(f"stored as run {run_id} in {db}")
        doc = {**doc, "run_id": run_id, "db": str(db)}
    if args.json:
        emit_json(doc)
    else:
        print(show(doc))
    return 0


# ---- bench locks ----------------------------------------------------------

def cmd_bench_locks(args: argparse.Namespace) -> int:
    cores = bench_locks.cores_of_machine()
    params = bench_locks.make_params(cores, args.quick, args.threads, args.duration_ms,
                                     args.reps, args.iters)
    doc = bench_locks.analyse(bench_locks.measure(params), cores)
    return store_and_show(args, doc, "bench-locks", render.bench_locks)


# ---- bench elide ----------------------------------------------------------

def cmd_bench_elide(args: argparse.Namespace) -> int:
    cores = bench_locks.cores_of_machine()
    params = bench_elide.make_params(cores, args.quick, args.threads, args.duration_ms,
                                     args.reps, args.iters)
    doc = bench_elide.analyse(bench_elide.measure(params))
    doc = {**doc, "cores": cores}
    return store_and_show(args, doc, bench_elide.KIND, render.bench_elide)


# ---- bench malloc -----------------------------------------------------------

def allocator_list(text: str) -> list[str]:
    """'glibc,cia' -> ['glibc', 'hpsync']; names are checked, aliases resolved."""
    names = _name_list(text, "allocator", mallocs.ALLOCATORS, mallocs.ALIASES)
    return list(dict.fromkeys(mallocs.ALIASES.get(n, n) for n in names))


def cmd_bench_malloc(args: argparse.Namespace) -> int:
    params = bench_malloc.make_params(args.quick, args.allocators, args.reps, args.duration_ms,
                                      args.threads)
    doc = bench_malloc.analyse(bench_malloc.measure(params))
    return store_and_show(args, doc, bench_malloc.KIND, render.bench_malloc)


# ---- bench shmem ------------------------------------------------------------

def variant_list(text: str) -> list[str]:
    return _name_list(text, "variant", shmembench.VARIANTS)


def cmd_bench_shmem(args: argparse.Namespace) -> int:
    params = bench_shmem.make_params(args.quick, args.variants, args.reps, args.load or 0)
    doc = bench_shmem.analyse(bench_shmem.measure(params))
    return store_and_show(args, doc, bench_shmem.KIND, shmembench.render)


# ---- runs -----------------------------------------------------------------

def cmd_runs(args: argparse.Namespace) -> int:
    db = _db(args) or store.default_db_path()
    summaries = store.list_runs(db, args.limit)
    if args.json:
        emit_json([s.__dict__ for s in summaries])
    else:
        print(render.runs(summaries))
    return 0


# ---- characterize, report, compare ---------------------------------------

def probe_list(text: str) -> list[str]:
    """'timer,c2c' -> ['timer', 'c2c']; names are checked against the registry."""
    return _name_list(text, "probe", characterize.probe_names())


def cmd_characterize(args: argparse.Namespace) -> int:
    doc = characterize.characterize(args.quick, args.only)
    from . import report
    return store_and_show(args, doc, characterize.KIND, report.summary)


def _db(args: argparse.Namespace) -> Path | None:
    return Path(args.db) if args.db else None


def cmd_report(args: argparse.Namespace) -> int:
    label, run = characterize.load(args.run, _db(args))
    if args.csv:
        sys.stdout.write(compare.measurements_csv(compare.measurements(run)))
        return 0
    from . import plots, report
    plots.require()
    page = report.html(run, label)
    out = Path(args.output)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror}") from exc
    runner.log(f"report of {label}: {page.count('<img ')} figures, {len(run.get('flags', []))} flags")
    print(out)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    label_a, run_a = characterize.load(args.run_a, _db(args))
    label_b, run_b = characterize.load(args.run_b, _db(args))
    comp = compare.compare_runs(run_a, run_b)
    for w in comp.warnings:
        runner.log(f"warning: {w}")
    if args.csv:
        sys.stdout.write(compare.to_csv(comp))
    else:
        print(compare.render(comp, label_a, label_b, run_a.get("context", {}) or {},
                             run_b.get("context", {}) or {}))
    return 0


def cmd_repeatability(args: argparse.Namespace) -> int:
    if len(args.runs) < 2:
        raise CliError("repeatability needs at least two runs", 2)
    runs = [characterize.load(r, _db(args))[1] for r in args.runs]
    print(compare.render_repeatability(compare.repeatability(runs)))
    return 0


# (option, type, metavar, help) of a benchmark's own options.
BenchOption = tuple[str, Callable[[str], Any], str, str]


def add_bench_parser(bsub: Any, name: str, help_text: str,
                     func: Callable[[argparse.Namespace], int],
                     options: Sequence[BenchOption]) -> None:
    """`hpsync bench NAME`: --json and --quick, the benchmark's own options in
    the order given, then --db and --no-store, as every benchmark takes them."""
    bp = bsub.add_parser(name, help=help_text)
    bp.add_argument("--json", action="store_true", help="one JSON document on stdout")
    bp.add_argument("--quick", action="store_true", help="short run (a few seconds)")
    for flag, kind, metavar, text in options:
        bp.add_argument(flag, type=kind, metavar=metavar, help=text)
    bp.add_argument("--db", metavar="PATH", help="results database (default ~/.local/share/hpsync/results.db)")
    bp.add_argument("--no-store", action="store_true", help="do not store the run")
    bp.set_defaults(func=func)


def build_parser() -> Parser:
    p = Parser(prog="hpsync", description="Fast, measurable synchronization: inspect, run, benchmark.")
    p.add_argument("--version", action="version", version=f"hpsync {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    d = sub.add_parser("doctor", help="what this machine and build offer hpsync")
    d.add_argument("--json", action="store_true", help="one JSON document on stdout")
    d.set_defaults(func=cmd_doctor)

    r = sub.add_parser("run", help="run a program with hpsync's locks (and allocator) preloaded",
                       usage="hpsync run [--lock ALG|glibc] [--malloc cia|rand|none] [--elide] "
                             "[--stats] [--stats-file F] -- prog args...")
    r.add_argument("--lock", default=locks.DEFAULT_LOCK, metavar="ALG",
                   help=f"lock algorithm: {', '.join(locks.lock_names())} (default "
                        f"{locks.DEFAULT_LOCK}), or {locks.BASELINE} for glibc's own locks "
                        f"(no interposer)")
    r.add_argument("--malloc", default=runner.MALLOC_NONE, metavar="A",
                   help="allocator: cia (libhpsync-malloc.so), rand (glibc with random padding, "
                        "libhpsync-malloc-rand.so) or none (glibc's malloc, the default)")
    r.add_argument("--elide", action="store_true",
                   help="elide normal mutexes with Intel RTM where the CPU allows (HPSYNC_ELIDE=1)")
    r.add_argument("--stats", action="store_true", help="print per-lock statistics at exit (stderr)")
    r.add_argument("--stats-file", metavar="F", help="write the statistics to F (implies --stats)")
    r.add_argument("command", nargs=argparse.REMAINDER, help="program and its arguments")
    r.set_defaults(func=cmd_run)

    b = sub.add_parser("bench", help="run a benchmark and store its results")
    bsub = b.add_subparsers(dest="bench", required=True, metavar="BENCHMARK")
    add_bench_parser(bsub, "locks", "glibc vs every hpsync lock: uncontended cost, throughput",
                     cmd_bench_locks, [
                         ("--threads", thread_list, "LIST",
                          "thread counts, e.g. 1,2,8 (default 1, 2, 4x and 8x cores)"),
                         ("--duration-ms", positive_int, "N", "per throughput run"),
                         ("--reps", positive_int, "N", "interleaved rounds per figure"),
                         ("--iters", positive_int, "N", "lock+unlock pairs per uncontended batch"),
                     ])
    add_bench_parser(bsub, "elide", "lock elision: its cost without RTM, its speedup with RTM",
                     cmd_bench_elide, [
                         ("--iters", positive_int, "N",
                          "operations per timed batch (default 1000000; 200000 with --quick)"),
                         ("--reps", positive_int, "N", "interleaved repetitions per figure"),
                         ("--threads", thread_list, "LIST",
                          "throughput thread counts with RTM (default 1, 2, 4, ... up to 2x cores)"),
                         ("--duration-ms", positive_int, "N", "per throughput run (RTM only)"),
                     ])

    add_bench_parser(bsub, "malloc", "hpsync's allocator vs glibc, RAND, jemalloc, tcmalloc, mimalloc",
                     cmd_bench_malloc, [
                         ("--allocators", allocator_list, "LIST",
                          f"comma-separated subset of {','.join(mallocs.ALLOCATORS)} (default all; "
                          "cia is hpsync)"),
                         ("--reps", positive_int, "N",
                          "interleaved rounds per figure (default 5; 3 and 1 with --quick)"),
                         ("--duration-ms", positive_int, "N",
                          "per throughput run (default 400; 100 with --quick)"),
                         ("--threads", thread_list, "LIST",
                          "thread counts of the multithreaded mixes (default 2,4)"),
                     ])

    add_bench_parser(bsub, "shmem", "OpenSHMEM at 2 and 4 PEs: hpsync on-node and over "
                     "libfabric, Open MPI's OSHMEM", cmd_bench_shmem, [
                         ("--variants", variant_list, "LIST",
                          f"comma-separated subset of {','.join(shmembench.VARIANTS)} (default all)"),
                         ("--reps", positive_int, "N",
                          "interleaved rounds per variant (default 3; 1 with --quick)"),
                         ("--load", non_negative_int, "N",
                          "run N busy loops beside the whole measurement (default 0)"),
                     ])

    rs = sub.add_parser("runs", help="list stored runs")
    rs.add_argument("--db", metavar="PATH", help="results database")
    rs.add_argument("--json", action="store_true", help="JSON list on stdout")
    rs.add_argument("--limit", type=positive_int, metavar="N", help="newest N runs only")
    rs.set_defaults(func=cmd_runs)

    ch = sub.add_parser("characterize", help="run the machine probes and store them as one run")
    ch.add_argument("--quick", action="store_true", help="short probes (about half a minute)")
    ch.add_argument("--json", action="store_true", help="one JSON document on stdout")
    ch.add_argument("--db", metavar="PATH", help="results database (default ~/.local/share/hpsync/results.db)")
    ch.add_argument("--no-store", action="store_true", help="do not store the run")
    ch.add_argument("--only", type=probe_list, metavar="LIST",
                    help=f"comma-separated probes ({', '.join(characterize.probe_names())})")
    ch.set_defaults(func=cmd_characterize)

    rp = sub.add_parser("report", help="an HTML page with plots and tables of a characterization")
    rp.add_argument("run", metavar="RUN", help="run id (see `hpsync runs`) or a JSON file")
    rp.add_argument("-o", "--output", default="report.html", metavar="FILE",
                    help="HTML file to write (default report.html)")
    rp.add_argument("--csv", action="store_true", help="print the measurements as CSV instead")
    rp.add_argument("--db", metavar="PATH", help="results database")
    rp.set_defaults(func=cmd_report)

    cp = sub.add_parser("compare", help="B/A ratios between two characterizations")
    cp.add_argument("run_a", metavar="RUN_A", help="run id or JSON file (the baseline)")
    cp.add_argument("run_b", metavar="RUN_B", help="run id or JSON file")
    cp.add_argument("--csv", action="store_true", help="CSV on stdout")
    cp.add_argument("--db", metavar="PATH", help="results database")
    cp.set_defaults(func=cmd_compare)

    rr = sub.add_parser("repeatability",
                        help="CV of every latency median across repeated characterizations")
    rr.add_argument("runs", nargs="+", metavar="RUN", help="run ids or JSON files (two or more)")
    rr.add_argument("--db", metavar="PATH", help="results database")
    rr.set_defaults(func=cmd_repeatability)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except CliError as exc:
        print(f"hpsync: {exc.message}", file=sys.stderr)
        return exc.code
    except SystemExit as exc:       # argparse: --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    except KeyboardInterrupt:
        print("hpsync: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing more to say.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
    except Exception as exc:  # noqa: BLE001 - the promise is: never a traceback
        print(f"hpsync: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1

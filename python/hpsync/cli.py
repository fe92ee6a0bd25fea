# SPDX-License-Identifier: MIT
"""hpsync's command line: argparse subcommands, one-line errors, no tracebacks.

  hpsync doctor [--json]
  hpsync run [--lock ALG|glibc] [--malloc cia|rand|none] [--elide] [--stats]
             [--stats-file F] -- prog args...
  hpsync bench locks|elide|malloc|shmem|tm|workloads [--json] [--quick] [--check] [options]
                                        [--db PATH] [--no-store]
  hpsync runs [--db PATH] [--json] [--limit N]
  hpsync characterize [--quick] [--json] [--db PATH] [--no-store] [--only LIST]
  hpsync report RUN [-o FILE] [--csv] [--db PATH]
  hpsync compare RUN_A RUN_B [--csv] [--db PATH]
  hpsync repeatability RUN RUN... [--db PATH]

The benchmarks and their own options come from hpsync.bench.BENCHES.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

from . import __version__, characterize, compare, doctor, render, runner, runs, schema, store
from .args import name_list, positive_int
from .bench import BENCHES, Bench, base, locks, targets
from .errors import CliError


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


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
    """What `run --lock` accepts: every algorithm the build publishes
    (`hpsync doctor --json`, "locks"), their aliases, and glibc (no interposer)."""
    return locks.lock_names() + [locks.BASELINE]


class LazyHelp(str):
    """A help text made only when help is shown (argparse expands it with
    `%`): listing the lock names asks the build, which parsing must not need."""
    make: Callable[[], str]

    def __new__(cls, make: Callable[[], str]) -> "LazyHelp":
        self = super().__new__(cls, "(see --help)")
        self.make = make
        return self

    def __mod__(self, params: Any) -> str:
        return self.make() % params


def run_lock_help() -> str:
    try:
        names, default = ", ".join(locks.lock_names()), locks.default_lock()
    except CliError as exc:
        return f"lock algorithm ({exc}), or {locks.BASELINE} for glibc's own locks"
    return (f"lock algorithm: {names} (default {default}), or {locks.BASELINE} for "
            f"glibc's own locks (no interposer)")


def run_tm_help() -> str:
    try:
        backends = doctor.tm_backends()
    except CliError as exc:
        return f"transactional sections' backend, HPSYNC_TM ({exc})"
    return (f"transactional sections' backend (HPSYNC_TM): {', '.join(backends)} "
            f"(default {backends[0]})")


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
    # Without --lock the library picks its own default (HPSYNC_LOCK=default),
    # so a plain `hpsync run` needs no list of names.
    lock = resolve_lock(args.lock) if args.lock else "default"
    allocator = resolve_malloc(args.malloc)
    if args.tm is not None and args.tm not in doctor.tm_backends():
        raise CliError(f"unknown TM backend '{args.tm}' "
                       f"(choose from {', '.join(doctor.tm_backends())})", 2)
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
    # With --tm, libhpsync-itm too: a program built with gcc -fgnu-tm then
    # runs its transactions on hpsync's backend (its _ITM_* entries win over
    # libitm's); other programs never call them.
    ours = [p for p in (runner.malloc_library(allocator),
                        None if glibc_locks else runner.preload_library(),
                        runner.itm_library() if args.tm is not None else None) if p is not None]
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
    if args.tm is not None:
        # Transactional sections are libhpsync's (the program links it) or
        # libhpsync-itm's (preloaded above), so the backend is a setting; with
        # --stats the TM summary (backend, and why auto chose it) too.
        env["HPSYNC_TM"] = args.tm
        if args.stats or args.stats_file:
            env["HPSYNC_TM_STATS"] = "1"
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

def _db(args: argparse.Namespace) -> Path | None:
    return Path(args.db) if args.db else None


def store_and_show(args: argparse.Namespace, doc: dict[str, Any],
                   show: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    """A run's last step: store it (unless --no-store, adding run_id and db
    to what is shown), then print it as JSON or as show renders it."""
    if not args.no_store:
        db = _db(args) or store.default_db_path()
        run_id = store.save_run(db, str(doc["kind"]), schema.host_of(doc), doc)
        runner.log(f"stored as run {run_id} in {db}")
        doc = {**doc, "run_id": run_id, "db": str(db)}
    if args.json:
        emit_json(doc)
    else:
        print(show(doc))
    return doc


def cmd_bench(args: argparse.Namespace) -> int:
    """`hpsync bench NAME`: measure, analyse, judge, store, print.  With
    --check the exit status is 1 when a target FAILs (inconclusive and n/a
    are not failures); the verdict count goes to stderr."""
    bench: Bench = BENCHES[args.bench]
    doc = base.run(bench, bench.make_params(args))
    store_and_show(args, doc, bench.render)
    if not args.check:
        return 0
    n = targets.counts(doc["targets"])
    runner.log("check: " + ", ".join(f"{v} {k}" for k, v in n.items()))
    return 1 if n[targets.FAIL] else 0


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
    return name_list(text, "probe", characterize.probe_names())


def cmd_characterize(args: argparse.Namespace) -> int:
    doc = characterize.characterize(args.quick, args.only)
    from . import report
    store_and_show(args, doc, report.summary)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    label, run = runs.load(args.run, _db(args))
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
    runner.log(f"report of {label} ({run['kind']}): {page.count('<img ')} figures, "
               f"{len(run.get('measurements', []))} measurements, {len(run.get('targets', []))} verdicts")
    print(out)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    label_a, run_a = runs.load(args.run_a, _db(args))
    label_b, run_b = runs.load(args.run_b, _db(args))
    comp = compare.compare_runs(run_a, run_b)
    if not comp.rows:
        raise CliError(f"{label_a} ({run_a['kind']}) and {label_b} ({run_b['kind']}) have no "
                       f"measurement in common")
    for w in comp.warnings:
        runner.log(f"warning: {w}")
    if args.csv:
        sys.stdout.write(compare.to_csv(comp))
    else:
        print(compare.render(comp, label_a, label_b, schema.first_context(run_a),
                             schema.first_context(run_b)))
    return 0


def cmd_repeatability(args: argparse.Namespace) -> int:
    if len(args.runs) < 2:
        raise CliError("repeatability needs at least two runs", 2)
    loaded = [runs.load(r, _db(args))[1] for r in args.runs]
    kinds = sorted({r["kind"] for r in loaded})
    if len(kinds) > 1:
        raise CliError(f"repeatability needs runs of one kind, got {', '.join(kinds)}", 2)
    print(compare.render_repeatability(compare.repeatability(loaded)))
    return 0


DB_HELP = "results database (default ~/.local/share/hpsync/results.db)"


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH", help=DB_HELP)


def add_store_options(p: argparse.ArgumentParser) -> None:
    """--db and --no-store, as every command that makes a run takes them."""
    add_db(p)
    p.add_argument("--no-store", action="store_true", help="do not store the run")


def add_bench_parser(bsub: Any, bench: Bench) -> None:
    """`hpsync bench NAME`: --json, --quick and --check, the benchmark's own
    options in the order given, then --db and --no-store, as every
    benchmark takes them."""
    bp = bsub.add_parser(bench.name, help=bench.help)
    bp.add_argument("--json", action="store_true", help="one JSON document on stdout")
    bp.add_argument("--quick", action="store_true", help="short run (a few seconds)")
    bp.add_argument("--check", action="store_true",
                    help="exit status 1 when a target FAILs (inconclusive and n/a do not)")
    for o in bench.options:
        if o.nargs:
            bp.add_argument(o.flag, type=o.type, metavar=o.metavar, help=o.help, nargs=o.nargs)
        else:
            bp.add_argument(o.flag, type=o.type, metavar=o.metavar, help=o.help)
    add_store_options(bp)
    bp.set_defaults(func=cmd_bench)


def build_parser() -> Parser:
    p = Parser(prog="hpsync", description="Fast, measurable synchronization: inspect, run, benchmark.")
    p.add_argument("--version", action="version", version=f"hpsync {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    d = sub.add_parser("doctor", help="what this machine and build offer hpsync")
    d.add_argument("--json", action="store_true", help="one JSON document on stdout")
    d.set_defaults(func=cmd_doctor)

    r = sub.add_parser("run", help="run a program with hpsync's locks (and allocator) preloaded",
                       usage="hpsync run [--lock ALG|glibc] [--malloc cia|rand|none] [--elide] "
                             "[--tm BACKEND] [--stats] [--stats-file F] -- prog args...")
    r.add_argument("--lock", metavar="ALG", help=LazyHelp(run_lock_help))
    r.add_argument("--malloc", default=runner.MALLOC_NONE, metavar="A",
                   help="allocator: cia (libhpsync-malloc.so), rand (glibc with random padding, "
                        "libhpsync-malloc-rand.so) or none (glibc's malloc, the default)")
    r.add_argument("--elide", action="store_true",
                   help="elide normal mutexes with Intel RTM where the CPU allows (HPSYNC_ELIDE=1)")
    r.add_argument("--tm", metavar="BACKEND", help=LazyHelp(run_tm_help))
    r.add_argument("--stats", action="store_true",
                   help="print statistics of mutexes, semaphores and barriers at exit (stderr); "
                        "with --tm, the TM summary too")
    r.add_argument("--stats-file", metavar="F", help="write the statistics to F (implies --stats)")
    r.add_argument("command", nargs=argparse.REMAINDER, help="program and its arguments")
    r.set_defaults(func=cmd_run)

    b = sub.add_parser("bench", help="run a benchmark, judge its targets and store the run")
    bsub = b.add_subparsers(dest="bench", required=True, metavar="BENCHMARK")
    for bench in BENCHES.values():
        add_bench_parser(bsub, bench)

    rs = sub.add_parser("runs", help="list stored runs")
    add_db(rs)
    rs.add_argument("--json", action="store_true", help="JSON list on stdout")
    rs.add_argument("--limit", type=positive_int, metavar="N", help="newest N runs only")
    rs.set_defaults(func=cmd_runs)

    ch = sub.add_parser("characterize", help="run the machine probes and store them as one run")
    ch.add_argument("--quick", action="store_true", help="short probes (about half a minute)")
    ch.add_argument("--json", action="store_true", help="one JSON document on stdout")
    add_store_options(ch)
    ch.add_argument("--only", type=probe_list, metavar="LIST",
                    help=f"comma-separated probes ({', '.join(characterize.probe_names())})")
    ch.set_defaults(func=cmd_characterize)

    rp = sub.add_parser("report", help="an HTML page with plots and tables of any stored run")
    rp.add_argument("run", metavar="RUN", help="run id (see `hpsync runs`) or a JSON file")
    rp.add_argument("-o", "--output", default="report.html", metavar="FILE",
                    help="HTML file to write (default report.html)")
    rp.add_argument("--csv", action="store_true", help="print the measurements as CSV instead")
    add_db(rp)
    rp.set_defaults(func=cmd_report)

    cp = sub.add_parser("compare", help="B/A ratios, spread and significance between two runs")
    cp.add_argument("run_a", metavar="RUN_A", help="run id or JSON file (the baseline)")
    cp.add_argument("run_b", metavar="RUN_B", help="run id or JSON file")
    cp.add_argument("--csv", action="store_true", help="CSV on stdout")
    add_db(cp)
    cp.set_defaults(func=cmd_compare)

    rr = sub.add_parser("repeatability",
                        help="CV of every measurement across repeated runs of one kind")
    rr.add_argument("runs", nargs="+", metavar="RUN", help="run ids or JSON files (two or more)")
    add_db(rr)
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

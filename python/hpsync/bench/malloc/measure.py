# SPDX-License-Identifier: MIT
"""Measurement half of `bench malloc`: finds the allocators, runs
build/bin/hps-bench-malloc once per allocator and part (LD_PRELOAD selects
the allocator; rounds interleave the allocators), runs the ring under
cachegrind, and collects samples (see analyse.py for their shape)."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ... import doctor, runner
from ...errors import CliError
from ..base import Session, interleaved
from . import analyse as A

PROGRAM = "hps-bench-malloc"
# Our allocators' names for `hpsync run --malloc`; --allocators takes them too.
RUN_NAMES: dict[str, str] = {"hpsync": "cia", "rand": "rand"}
ALIASES: dict[str, str] = {"cia": "hpsync"}
# Where each allocator comes from: our build tree (the libraries `hpsync run
# --malloc cia|rand` preloads), or a Debian package (scripts/install-deps
# installs them).  glibc needs no preload.
BUILD_LIBRARIES: dict[str, str] = {name: runner.MALLOC_LIBRARIES[run_name]
                                   for name, run_name in RUN_NAMES.items()}
SYSTEM_LIBRARIES: dict[str, tuple[str, str]] = {
    "jemalloc": ("libjemalloc.so.2", "libjemalloc2"),
    "tcmalloc": ("libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
    "mimalloc": ("libmimalloc.so.2", "libmimalloc2.0"),
}
# Instruction-cache geometry handed to cachegrind.  It only affects I1
# figures, which are not read; fixing it keeps valgrind from probing CPUID
# caches it may not understand.
I1_SPEC = "32768,8,64"


@dataclass(frozen=True)
class Allocator:
    name: str
    library: str | None          # None: glibc, no preload


@dataclass(frozen=True)
class Params:
    allocators: list[str]
    rounds: int                  # interleaved spread and ring processes per allocator
    laps: int                    # ring laps per timed batch
    batches: int                 # timed batches per ring process (best is kept)
    sim_laps: list[int]          # the two simulated lap counts
    threads: list[int]           # multithreaded scenarios' thread counts
    duration_ms: int             # per mix process
    mix_rounds: int              # interleaved mix processes per scenario and allocator
    window: int                  # slots per thread in the mix
    warmup: int                  # mixed operations before the "warm" spread
    patterns: list[tuple[str, int]] = field(default_factory=list)  # (pattern, threads)
    quick: bool = False


def pattern_scenarios(threads: Sequence[int]) -> list[tuple[str, int]]:
    """The patterns of existing benchmarks: large blocks on one thread, the
    stress on the most threads asked for, the server and the pipeline on
    two (a producer/consumer pair), as the issue measured them."""
    return [("large", 1), ("stress", max(threads)), ("server", 2), ("pipeline", 2)]


def scenarios(threads: Sequence[int]) -> list[tuple[str, int]]:
    """Single thread, then every thread count on private windows, then every
    even count as producer/consumer pairs."""
    multi = [t for t in threads if t > 1]
    return ([("local", 1)] + [("local", t) for t in multi]
            + [("prodcons", t) for t in multi if t % 2 == 0])


def make_params(args: argparse.Namespace) -> Params:
    """Defaults: --quick takes about 15 s here with six allocators, a full run about 2.5 min."""
    quick, reps = bool(args.quick), args.reps
    threads = sorted(set(args.threads)) if args.threads else [2, 4]
    return Params(
        allocators=list(args.allocators) if args.allocators else list(A.ALLOCATORS),
        rounds=reps or (3 if quick else 5), laps=1000 if quick else 4000,
        batches=3 if quick else 7, sim_laps=[20, 60] if quick else [50, 150],
        threads=threads, duration_ms=args.duration_ms or (100 if quick else 400),
        # Five full rounds: the oversubscribed mixes (4 threads on this 2-CPU
        # guest) swing by 2x between rounds with the scheduler's pairing.
        mix_rounds=reps or (1 if quick else 5), window=16384, warmup=20000,
        patterns=pattern_scenarios(threads), quick=quick)


def find_allocators(names: Sequence[str]) -> tuple[list[Allocator], dict[str, str]]:
    """The requested allocators that exist here, and why each other one is missing."""
    present: list[Allocator] = []
    missing: dict[str, str] = {}
    dirs = doctor.library_dirs()
    for name in A.ordered(names):
        if name == A.GLIBC:
            present.append(Allocator(name, None))
        elif name in BUILD_LIBRARIES:
            path = runner.build_dir() / "lib" / BUILD_LIBRARIES[name]
            if path.is_file():
                present.append(Allocator(name, str(path)))
            else:
                missing[name] = f"{path} not built"
        else:
            soname, package = SYSTEM_LIBRARIES[name]
            found = doctor.find_shared_objects([soname], dirs)
            if found:
                present.append(Allocator(name, found[0]))
            else:
                missing[name] = f"{soname} not found (Debian package {package}; scripts/install-deps)"
    return present, missing


def check_provider(a: Allocator, doc: Mapping[str, Any]) -> None:
    """Fail if the preload did not (or did) take: a glibc figure labelled
    jemalloc would be worse than no figure."""
    provider = str(doc.get("malloc_provider", ""))
    if a.library is None:
        ok = Path(provider).name.startswith("libc.so")
    else:
        ok = os.path.realpath(provider) == os.path.realpath(a.library)
    if not ok:
        raise CliError(f"malloc came from {provider!r}, expected {a.library or 'libc'}")


def valgrind_ll(llc: Mapping[str, Any]) -> str:
    """--LL for cachegrind from the machine's last-level cache, with the set
    count rounded down to a power of two (cachegrind accepts nothing else)."""
    size, ways, line = int(llc["size"]), int(llc["ways"]), int(llc["line"])
    sets = max(1, size // (ways * line))
    sets = 1 << (sets.bit_length() - 1)
    return f"{sets * ways * line},{ways},{line}"


def d1_geometries(l1d: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The D1 geometries to simulate: this machine's L1 and the 32 KiB 8-way
    reference, merged when they are the same; and notes on any skipped."""
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    machine = (int(l1d["size"]), int(l1d["ways"]), int(l1d["line"]))
    for label, (size, ways, line) in (("this machine", machine), ("reference", A.REFERENCE_D1)):
        sets = size // (ways * line) if ways and line else 0
        if sets < 1 or sets & (sets - 1) or sets * ways * line != size:
            notes.append(f"{label} L1 {size},{ways},{line} has no power-of-two set count; "
                         f"cachegrind cannot simulate it")
            continue
        spec = f"{size},{ways},{line}"
        same = next((g for g in out if g["d1"] == spec), None)
        if same:
            same["labels"].append(label)
        else:
            out.append({"d1": spec, "line": line, "sets": sets, "labels": [label]})
    return out, notes


class _Runner:
    """Runs the program for one allocator at a time.  An allocator whose run
    fails (crash, broken heap, preload not taken) is dropped from the rest of
    the benchmark with one line, so the others' figures survive; a failure
    under valgrind (fatal=False) only costs that allocator its simulation."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.failed: dict[str, str] = {}
        self.notes: list[str] = []

    def __call__(self, a: Allocator, argv: list[str],
                 fatal: bool = True) -> tuple[dict[str, Any], int | None] | None:
        if a.name in self.failed:
            return None
        env = runner.clean_env()
        if a.library:
            env["LD_PRELOAD"] = a.library
        try:
            doc, cid = self.session.run(argv, env, program=PROGRAM)
            check_provider(a, doc)
            return doc, cid
        except CliError as exc:
            if fatal:
                self.failed[a.name] = exc.message
                self.session.log(f"{a.name}: dropped from this run: {exc.message}")
            else:
                self.notes.append(f"{a.name}: not simulated: {exc.message}")
                self.session.log(self.notes[-1])
            return None


def _layout(row: Mapping[str, Any], doc: Mapping[str, Any]) -> list[int]:
    """The L1 set of each of a row's blocks, in the document's own L1."""
    return A.set_indices(row["addresses"], int(doc["l1d"]["line"]), int(doc["l1d"]["sets"]))


def _spread_of(row: Mapping[str, Any], doc: Mapping[str, Any]) -> dict[str, int]:
    used, most = A.set_spread(row["addresses"], int(doc["l1d"]["line"]), int(doc["l1d"]["sets"]))
    return {"sets_used": used, "max_per_set": most}


def _pages_of(row: Mapping[str, Any]) -> dict[str, int]:
    return {"pages": A.page_span(row["addresses"], os.sysconf("SC_PAGE_SIZE"))}


def measure(params: Params, session: Session) -> dict[str, Any]:
    """Run every part for every allocator."""
    prog = str(runner.program(PROGRAM))
    present, missing = find_allocators(params.allocators)
    for name, why in missing.items():
        session.log(f"{name}: not measured, {why}")
    if not present:
        raise CliError("no allocator to measure")
    run = _Runner(session)
    by_name = {a.name: a for a in present}
    names = [a.name for a in present]
    samples: dict[str, list[dict[str, Any]]] = {"spread": [], "ring": [], "cachegrind": [],
                                                "mix": [], "patterns": []}
    first: dict[str, Any] = {}
    timed_layout: dict[tuple[str, int], list[int]] = {}

    session.log(f"spread and ring: {params.rounds} interleaved round(s) x {len(names)} allocators "
                f"({', '.join(names)}); ring: best of {params.batches} batches of {params.laps} laps")
    for rnd in range(params.rounds):
        for name in interleaved(rnd, names):
            a = by_name[name]
            got = run(a, [prog, "--mode", "spread", "--warmup", str(params.warmup)])
            if got:
                doc, cid = got
                first = first or doc
                samples["spread"] += [{"allocator": name, "round": rnd, "state": row["state"],
                                       "size": row["size"], **_spread_of(row, doc), "context": cid}
                                      for row in doc["rows"]]
            got = run(a, [prog, "--mode", "ring", "--laps", str(params.laps), "--reps", str(params.batches)])
            if got:
                doc, cid = got
                first = first or doc
                for row in doc["rows"]:
                    timed_layout.setdefault((name, int(row["size"])), _layout(row, doc))
                    samples["ring"].append({"allocator": name, "round": rnd, "size": row["size"],
                                            "ns_per_node": row["ns_per_node_min"],
                                            "batches": row["ns_per_node_reps"],
                                            **_spread_of(row, doc), **_pages_of(row), "context": cid})
    if not first:
        raise CliError(f"{PROGRAM} failed for every allocator")

    cg = _cachegrind(params, prog, [by_name[n] for n in names], first, timed_layout, run, session.log)
    samples["cachegrind"] = cg.pop("samples")

    mix = [("mix", p, t) for p, t in scenarios(params.threads)]
    mix += [("patterns", p, t) for p, t in params.patterns]
    session.log(f"throughput: {', '.join(f'{p} {t}T' for _, p, t in mix)}, {params.duration_ms} ms "
                f"each, {params.mix_rounds} round(s)")
    for rnd in range(params.mix_rounds):
        for part, pattern, threads in mix:
            window = ["--window", str(params.window)] if part == "mix" else []
            for name in interleaved(rnd, names):
                got = run(by_name[name], [prog, "--mode", "mix", "--pattern", pattern, "--threads",
                                          str(threads), "--duration-ms", str(params.duration_ms),
                                          *window])
                if got:
                    row = got[0]["rows"][0]
                    samples[part].append({"allocator": name, "round": rnd, "pattern": pattern,
                                          "threads": threads, "ops_per_sec": row["ops_per_sec"],
                                          "rss_peak_kib": row["rss_peak_kib"],
                                          "rss_start_kib": row["rss_start_kib"], "context": got[1]})
        session.log(f"  round {rnd + 1}/{params.mix_rounds} done")

    allocators: dict[str, dict[str, Any]] = {}
    for name in A.ordered(params.allocators):
        found = by_name.get(name)
        status = "missing" if found is None else "failed" if name in run.failed else "measured"
        allocators[name] = {"status": status, "library": found.library if found else None,
                            "note": missing.get(name) or run.failed.get(name)}
    return {"l1d": first["l1d"], "llc": first["llc"], "allocators": allocators, "cachegrind": cg,
            "samples": samples}


def _cachegrind(params: Params, prog: str, present: Sequence[Allocator], first: Mapping[str, Any],
                timed_layout: dict[tuple[str, int], list[int]], run: _Runner,
                log: Callable[[str], None]) -> dict[str, Any]:
    """The ring under cachegrind: two runs (lap counts) per allocator and geometry.

    The program walks each size's ring in its own function, so the misses
    of one size are the D1 misses cachegrind attributes to that function in
    its out-file (read in cachegrind's documented format, never its printed
    summary); analyse.misses_per_lap turns the two runs into misses per lap.
    The ring's set indices in each run are compared with each other and with
    the timed run's, so the report can say when they describe different
    layouts."""
    valgrind = shutil.which("valgrind")
    geoms, notes = d1_geometries(first["l1d"])
    out: dict[str, Any] = {"valgrind": valgrind, "geometries": geoms, "laps": params.sim_laps,
                           "ll": valgrind_ll(first["llc"]), "notes": notes, "samples": []}
    if valgrind is None:
        out["notes"].append("valgrind is not installed (scripts/install-deps --test): "
                            "the simulated L1 misses were not measured")
        log(out["notes"][-1])
        return out
    log(f"cachegrind: D1 {' and '.join(g['d1'] for g in geoms)}, {params.sim_laps} laps, "
        f"{len(present)} allocators")
    with tempfile.TemporaryDirectory(prefix="hpsync-cg-") as tmp:
        for g in geoms:
            for a in present:
                runs = []
                for laps in params.sim_laps:
                    cg_out = Path(tmp) / f"{a.name}.{laps}.out"
                    got = run(a, [valgrind, "--tool=cachegrind", "--cache-sim=yes",
                                  f"--D1={g['d1']}", f"--I1={I1_SPEC}", f"--LL={out['ll']}",
                                  f"--cachegrind-out-file={cg_out}",
                                  prog, "--mode", "ring", "--sim", "--laps", str(laps)], fatal=False)
                    if got is None:
                        break
                    try:
                        runs.append((got[0], *A.parse_cachegrind(cg_out.read_text())))
                    except (OSError, ValueError) as exc:
                        raise CliError(f"cannot read cachegrind's output {cg_out}: {exc}") from exc
                if len(runs) == 2:
                    try:
                        out["samples"] += _cachegrind_samples(a.name, g, params.sim_laps, runs,
                                                              timed_layout)
                    except ValueError as exc:
                        raise CliError(f"cachegrind output unusable: {exc}") from exc
    out["notes"] += run.notes
    return out


def _cachegrind_samples(name: str, g: Mapping[str, Any], laps: list[int], runs: list[Any],
                        timed_layout: dict[tuple[str, int], list[int]]) -> list[dict[str, Any]]:
    (doc_a, ev_a, tot_a), (doc_b, ev_b, tot_b) = runs
    out = []
    for row_a, row_b in zip(doc_a["rows"], doc_b["rows"]):
        fn = row_a["walk_function"]
        lay_a, lay_b = _layout(row_a, doc_a), _layout(row_b, doc_b)
        timed = timed_layout.get((name, int(row_a["size"])))
        out.append({"allocator": name, "d1": g["d1"], "labels": g["labels"], "size": row_a["size"],
                    "laps": laps, "misses": [A.d1_misses(ev_a, tot_a, fn), A.d1_misses(ev_b, tot_b, fn)],
                    "same_layout": lay_a == lay_b,
                    "same_layout_as_timed": None if timed is None else timed == lay_a})
    return out

# SPDX-License-Identifier: MIT
"""Measurement half of `bench shmem`: runs build/bin/hps-bench-shmem (and
the same source built with Open MPI's oshcc) under each launcher,
hps-bench-ofi-raw for the bare libfabric baseline, hps-shmem-icount under
callgrind, and times launches.

hps-bench-shmem writes JSON Lines to the file --out names (a header object,
in hpsync's build a context object, one object per result, an end object),
flushing each line: a run ended at its time limit keeps every row it
finished, and whatever a launcher prints on stdout (Open MPI's warnings)
is never read.  A test past its time limit is a "did not finish" row and
the run goes on with the next test."""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ... import runner, stats
from ...errors import CliError
from ..base import Session, interleaved
from . import analyse as A

PROGRAM = "hps-bench-shmem"
ICOUNT = "hps-shmem-icount"
RAW = "hps-bench-ofi-raw"
OMPI_OSHRUN = "/usr/bin/oshrun"
OMPI_OSHCC = "/usr/bin/oshcc"
# Open MPI as root on 2 cores, loopback only.
OMPI_ARGS = ["--allow-run-as-root", "--oversubscribe"]
OMPI_ENV = {"OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo",
            "UCX_TLS": "self,sm"}
VARIANT_ENV: dict[str, dict[str, str]] = {
    "hpsync-node": {},
    "hpsync-ofi-shm": {"HPSYNC_SHMEM_TRANSPORT": "ofi", "HPSYNC_SHMEM_PROVIDER": "shm"},
    "hpsync-ofi-tcp": {"HPSYNC_SHMEM_TRANSPORT": "ofi", "HPSYNC_SHMEM_PROVIDER": "tcp;ofi_rxm",
                       "FI_TCP_IFACE": "lo"},
    "hpsync-ofi-sockets": {"HPSYNC_SHMEM_TRANSPORT": "ofi", "HPSYNC_SHMEM_PROVIDER": "sockets"},
}
# The busy loops of --load: plain shell loops at normal priority.
LOAD_ARGV = ["/bin/sh", "-c", "while :; do :; done"]


@dataclass(frozen=True)
class Params:
    variants: list[str]
    rounds: int
    time_ms: int
    reps: int
    max_size: int
    icount_n: int
    launches: int
    quick: bool = False
    npes: list[int] = field(default_factory=lambda: list(A.NPES))
    limit_s: float = 30.0
    load: int = 0


def make_params(args: argparse.Namespace) -> Params:
    """--quick: about a minute here; full: several minutes."""
    quick = bool(args.quick)
    return Params(variants=list(args.variants) if args.variants else list(A.VARIANTS),
                  rounds=args.reps or (1 if quick else 3), time_ms=10 if quick else 40,
                  reps=3 if quick else 5, max_size=(1 << 16) if quick else (1 << 20),
                  icount_n=1000, launches=5 if quick else 10, quick=quick,
                  limit_s=20.0 if quick else 30.0, load=args.load or 0)


def _run(argv: list[str], env: Mapping[str, str], timeout: float) -> tuple[int, str]:
    """(exit status, why it failed) of a program whose output goes to files."""
    p = runner.run_capture(argv, env, timeout)
    if p.not_run:
        return -1, p.not_run
    if p.timed_out:
        return -1, f"timed out after {timeout:.0f} s"
    return p.returncode, runner.last_line(p.stderr)


def build_oshmem(tmp: Path) -> tuple[str | None, str | None]:
    """Compile the benchmark with Open MPI's oshcc: (program, None) or (None, why)."""
    if not (os.access(OMPI_OSHCC, os.X_OK) and os.access(OMPI_OSHRUN, os.X_OK)):
        return None, f"{OMPI_OSHRUN} / {OMPI_OSHCC} not installed (Debian openmpi-bin, libopenmpi-dev)"
    src = runner.REPO_ROOT / "bench" / "shmem" / "shmem_bench.c"
    if not src.is_file():
        return None, f"{src} not found (an installed hpsync has no benchmark sources)"
    out = tmp / "hps-bench-shmem-oshmem"
    rc, err = _run([OMPI_OSHCC, "-O2", "-o", str(out), str(src)], runner.clean_env(), 120)
    if rc != 0:
        return None, f"oshcc failed: {err}"
    return str(out), None


def launch_argv(variant: str, npes: int, prog: str | None) -> tuple[list[str], dict[str, str]]:
    """How a variant starts npes PEs of prog (hpsync's benchmark by default)."""
    env = runner.clean_env()
    if variant == A.OSHMEM:
        env.update(OMPI_ENV)
        return [OMPI_OSHRUN, *OMPI_ARGS, "-np", str(npes), str(prog)], env
    env.update(VARIANT_ENV[variant])
    return [str(runner.program("oshrun")), "-np", str(npes), str(prog or runner.program(PROGRAM))], env


@dataclass
class VariantRun:
    """What the runs of one variant at one PE count gave."""
    header: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None


def run_variant(variant: str, npes: int, params: Params, oshmem_prog: str | None,
                tests: list[tuple[str, int]] | None = None) -> VariantRun:
    """The tests (default: the plan for npes) of one variant.  A test past
    its time limit is a row with "dnf"; the run then starts again with the
    next test, so one hang costs one row."""
    got = VariantRun()
    if variant == A.OSHMEM and oshmem_prog is None:
        got.note = "not built"
        return got
    todo = list(tests if tests is not None else A.plan(npes, params.max_size))
    notes = []
    with tempfile.TemporaryDirectory(prefix="hpsync-shmem-out-") as tmp:
        attempt = 0
        while todo:
            attempt += 1
            out = Path(tmp) / f"run{attempt}.jsonl"
            argv, env = launch_argv(variant, npes, oshmem_prog if variant == A.OSHMEM else None)
            argv += ["--out", str(out), "--time-ms", str(params.time_ms), "--reps", str(params.reps),
                     "--max-size", str(params.max_size), "--limit-s", f"{params.limit_s:g}",
                     "--tests", ",".join(f"{t}:{sz}" for t, sz in todo)]
            # The per-test watchdog ends a hang; this only catches a launcher
            # that does not end when a PE does.
            rc, err = _run(argv, env, params.limit_s * (len(todo) + 2) + 60)
            try:
                lines = runner.read_json_lines(out)
            except ValueError as exc:
                got.note = str(exc)
                return got
            got.header = got.header or next((x for x in lines if x.get("type") == "header"), None)
            got.context = got.context or next((x["context"] for x in lines if x.get("type") == "context"), None)
            rows = [x for x in lines if x.get("type") == "result"]
            got.results += rows
            done = {(r["test"], int(r["size"])) for r in rows}
            left = [t for t in todo if t not in done]
            if not left:
                if rc != 0:
                    # Open MPI 4.1 + UCX here crashes in shmem_finalize after the
                    # results are written; they are complete, and kept.
                    notes.append(f"exit status {rc} after writing complete results ({err[:100]})")
                break
            if rc == 0:
                notes.append(f"{len(left)} tests missing from a run that ended normally")
                break
            if not rows or not rows[-1].get("dnf"):
                # Ended without the watchdog's row: the next test is the culprit.
                t, sz = left[0]
                got.results.append({"type": "result", "test": t, "size": sz, "npes": npes, "dnf": True,
                                    "why": f"exit status {rc}: {err[:100] or 'no output'}"})
                left = left[1:]
            if not done and got.header is None and len(got.results) == 1:
                # Nothing ran at all: the variant cannot start here.
                return VariantRun(note=f"exit status {rc}: {err or 'no output'}")
            todo = [t for t in todo if t in left]
    got.note = "; ".join(notes) or None
    return got


def run_icount(n: int, tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """shmem_int_p (to a global and to a heap object) and idle shmem_quiet
    under callgrind on PE 0 and PE 1 (PE 0's out-file is read), N and 2N
    calls, on-node and over libfabric shm."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {"note": "valgrind is not installed: instruction counts not measured"}
    out: dict[str, Any] = {}
    for label, extra in (("node", {}), ("ofi", VARIANT_ENV["hpsync-ofi-shm"])):
        out[label] = {}
        for fn, func, mode in (("int_p", "shmem_int_p", []), ("int_p_heap", "shmem_int_p", ["heap"]),
                               ("quiet", "shmem_quiet", ["quiet"])):
            metrics = []
            for calls in (n, 2 * n):
                f = tmp / f"cg.{label}.{fn}.{calls}"
                rc, err = _run([str(runner.program("oshrun")), "-np", "2", valgrind, "-q",
                                "--tool=callgrind", f"--toggle-collect={func}", "--dump-instr=yes",
                                "--compress-pos=no", "--compress-strings=no",
                                f"--callgrind-out-file={f}.%q{{HPSYNC_SHMEM_RANK}}",
                                str(runner.program(ICOUNT)), str(calls), *mode],
                               {**runner.clean_env(), **extra}, 300)
                pe0 = Path(f"{f}.0")
                if rc != 0 or not pe0.is_file():
                    out[label][fn] = {"note": f"callgrind run failed: {err}"}
                    break
                metrics.append(A.callgrind_metrics(A.parse_callgrind(pe0.read_text())))
            if len(metrics) == 2:
                out[label][fn] = A.per_call(metrics[0], metrics[1], n)
            log(f"icount {label} {fn}: {out[label][fn]}")
    return out


def run_raw(params: Params, session: Session) -> dict[str, Any]:
    """Bare libfabric baselines from hps-bench-ofi-raw, if built: every op
    (about a minute; --quick a quarter of the iterations), per provider,
    "op@bytes" -> median us, and every repetition."""
    try:
        prog = runner.program(RAW)
    except CliError:
        return {"ofi_raw": None, "ofi_raw_note": f"{RAW} not built (libfabric headers missing?)"}
    try:
        doc, cid = session.run([str(prog), "--provider", "shm", "--provider", "tcp;ofi_rxm",
                                "--provider", "sockets", "--ops", "all",
                                "--iters", "500" if params.quick else "2000",
                                "--reps", "3" if params.quick else "5"], runner.clean_env(), 600)
    except CliError as exc:
        return {"ofi_raw": None, "ofi_raw_note": exc.message}
    med: dict[str, dict[str, float]] = {}
    reps: dict[str, dict[str, list[float]]] = {}
    for row in doc.get("rows", []):
        if row.get("available") and row.get("median_us") is not None:
            name = f"{row['op']}@{row.get('bytes', 8)}"
            med.setdefault(row["provider"], {})[name] = float(row["median_us"])
            reps.setdefault(row["provider"], {})[name] = [float(x) for x in row.get("reps_us", [])]
    session.log(f"{RAW}: {sum(len(v) for v in med.values())} figures over {', '.join(med) or 'no provider'}")
    return {"ofi_raw": med, "ofi_raw_reps": reps, "ofi_raw_note": None, "ofi_raw_context": cid}


def launch_times(n: int, oshmem_prog: str | None) -> dict[str, Any]:
    """Wall time of n 2-PE launches of a trivial OpenSHMEM program (init and
    finalize: hps-bench-shmem --init-only), ours and Open MPI's, and of
    /bin/true under our oshrun (the launcher alone)."""
    out: dict[str, Any] = {}
    cmds = {"hpsync": launch_argv(A.SUBJECT, 2, None),
            "hpsync_oshrun_only": ([str(runner.program("oshrun")), "-np", "2", "/bin/true"],
                                   runner.clean_env())}
    if oshmem_prog:
        cmds["oshmem"] = launch_argv(A.OSHMEM, 2, oshmem_prog)
    for name, (argv, env) in cmds.items():
        if not name.endswith("oshrun_only"):
            argv = [*argv, "--init-only"]
        times = []
        for _ in range(n):
            t0 = time.monotonic()
            rc, err = _run(argv, env, 60)
            if rc != 0 and name != A.OSHMEM:
                out[name] = {"note": f"exit status {rc}: {err}"}
                break
            times.append(time.monotonic() - t0)
        else:
            out[name] = {"median_s": round(stats.median(times) or 0, 5),
                         "runs_s": [round(t, 5) for t in times]}
    return out


class busy_loops:
    """--load: n busy loops at normal priority for the whole measurement."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> "busy_loops":
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(LOAD_ARGV, stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def oshmem_context(header: Mapping[str, Any] | None) -> dict[str, Any]:
    """Open MPI's build prints no context block of hpsync's: what is known of it."""
    h = header or {}
    return {"host": platform.node(), "build": f"{OMPI_OSHCC} -O2 bench/shmem/shmem_bench.c",
            "library": h.get("library"), "spec_version": h.get("spec_version")}


def measure(params: Params, session: Session) -> dict[str, Any]:
    samples: list[dict[str, Any]] = []
    variants: dict[str, dict[str, Any]] = {}
    context_ids: dict[str, int | None] = {}
    with tempfile.TemporaryDirectory(prefix="hpsync-shmem-") as tmpname, busy_loops(params.load):
        tmp = Path(tmpname)
        oshmem_prog = None
        if A.OSHMEM in params.variants:
            oshmem_prog, why = build_oshmem(tmp)
            if why:
                variants[A.OSHMEM] = {"status": "missing", "note": why}
                session.log(f"oshmem: not measured, {why}")
        active = [v for v in A.VARIANTS if v in params.variants and v not in variants]
        runs = [(v, n) for v in active for n in params.npes]
        for rnd in range(params.rounds):
            for v, npes in interleaved(rnd, runs):
                if variants.get(v, {}).get("status") == "failed":
                    continue
                t0 = time.monotonic()
                got = run_variant(v, npes, params, oshmem_prog)
                if got.header is None and not got.results:
                    variants[v] = {"status": "failed", "note": got.note}
                    session.log(f"{v}: dropped: {got.note}")
                    continue
                cid = session.context(got.context or (oshmem_context(got.header) if v == A.OSHMEM else None),
                                      PROGRAM if v != A.OSHMEM else f"{PROGRAM} (oshcc)")
                context_ids.setdefault(v, cid)
                head = got.header or {}
                info = variants.setdefault(v, {"status": "measured", "note": None,
                                               **{k: head.get(k) for k in
                                                  ("library", "spec_version", "transport", "provider")}})
                if got.note:
                    info["note"] = got.note
                for r in got.results:
                    sample = {"variant": v, "npes": npes, "round": rnd, "test": r["test"],
                              "size": int(r["size"]), "context": cid}
                    if r.get("dnf"):
                        sample.update(dnf=True, why=r.get("why", f"over {params.limit_s:g} s"))
                        session.log(f"{v} {npes} PEs: {r['test']} {r['size']} B did not finish")
                    else:
                        sample.update({"iters": r["iters"], "ns_reps": r.get("ns", []),
                                       "ns_min": r["ns_min"], "ns_median": r["ns_median"]})
                    samples.append(sample)
                session.log(f"round {rnd + 1}/{params.rounds}: {v} at {npes} PEs in "
                            f"{time.monotonic() - t0:.1f} s" + (f" ({got.note})" if got.note else ""))
        raw = run_raw(params, session)
        context_ids["ofi-raw"] = raw.pop("ofi_raw_context", None)
        icount = run_icount(params.icount_n, tmp, session.log)
        launch = launch_times(params.launches, oshmem_prog)
        session.log("launch: " + ", ".join(f"{k} {v.get('median_s', v.get('note'))}" for k, v in launch.items()))
    return {"variants": variants, "samples": samples, **raw, "icount": icount, "launch": launch,
            "context_ids": context_ids}

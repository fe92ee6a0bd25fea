# SPDX-License-Identifier: MIT
"""`hpsync bench shmem`: OpenSHMEM at 2 and 4 PEs, hpsync on-node, hpsync
over libfabric (shm, tcp;ofi_rxm, sockets) and Open MPI's OSHMEM when
installed, plus callgrind instruction counts and launch times.

Measurement only: runs build/bin/hps-bench-shmem (and the same source built
with Open MPI's oshcc) under each launcher, hps-bench-ofi-raw for the bare
libfabric baseline, hps-shmem-icount under callgrind.  Every test has a
time limit: one that hangs becomes a "did not finish" row and the run goes
on with the next.  hpsync.shmembench turns the samples into rows, verdicts
and text.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import runner, shmembench, stats
from .errors import CliError

KIND = "bench-shmem"
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
    npes: list[int] = field(default_factory=lambda: list(shmembench.NPES))
    limit_s: float = 30.0
    load: int = 0


def make_params(quick: bool, variants: list[str] | None = None, rounds: int | None = None,
                load: int = 0) -> Params:
    """--quick: about a minute here; full: several minutes."""
    return Params(variants=list(variants) if variants else list(shmembench.VARIANTS),
                  rounds=rounds or (1 if quick else 3), time_ms=10 if quick else 40,
                  reps=3 if quick else 5, max_size=(1 << 16) if quick else (1 << 20),
                  icount_n=1000, launches=5 if quick else 10, quick=quick,
                  limit_s=20.0 if quick else 30.0, load=load)


def _run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str]:
    p = runner.run_capture(argv, env, timeout)
    if p.not_run:
        return -1, "", p.not_run
    if p.timed_out:
        return -1, p.stdout, f"timed out after {timeout:.0f} s"
    return p.returncode, p.stdout, p.stderr


def _last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("---")]
    return lines[-1].strip() if lines else ""


def build_oshmem(tmp: Path) -> tuple[str | None, str | None]:
    """Compile the benchmark with Open MPI's oshcc: (program, None) or (None, why)."""
    if not (os.access(OMPI_OSHCC, os.X_OK) and os.access(OMPI_OSHRUN, os.X_OK)):
        return None, f"{OMPI_OSHRUN} / {OMPI_OSHCC} not installed (Debian openmpi-bin, libopenmpi-dev)"
    src = runner.REPO_ROOT / "bench" / "shmem" / "shmem_bench.c"
    out = tmp / "hps-bench-shmem-oshmem"
    rc, _o, err = _run([OMPI_OSHCC, "-O2", "-o", str(out), str(src)], runner.clean_env(), 120)
    if rc != 0:
        return None, f"oshcc failed: {_last_line(err)}"
    return str(out), None


def launch_argv(variant: str, npes: int, prog: str | None) -> tuple[list[str], dict[str, str]]:
    """How a variant starts npes PEs of prog (hpsync's benchmark by default)."""
    env = runner.clean_env()
    if variant == shmembench.OSHMEM:
        env.update(OMPI_ENV)
        return [OMPI_OSHRUN, *OMPI_ARGS, "-np", str(npes), str(prog)], env
    env.update(VARIANT_ENV[variant])
    return [str(runner.program("oshrun")), "-np", str(npes),
            str(prog or runner.program(PROGRAM))], env


def run_variant(variant: str, npes: int, params: Params, oshmem_prog: str | None,
                tests: list[tuple[str, int]] | None = None
                ) -> tuple[dict[str, Any] | None, list[dict[str, Any]], str | None]:
    """The tests (default: the plan for npes) of one variant: (header,
    results, note).  A test past its time limit is a row with "dnf"; the
    run then starts again with the next test, so one hang costs one row."""
    if variant == shmembench.OSHMEM and oshmem_prog is None:
        return None, [], "not built"
    todo = list(tests if tests is not None else shmembench.plan(npes, params.max_size))
    head: dict[str, Any] | None = None
    results: list[dict[str, Any]] = []
    notes = []
    while todo:
        argv, env = launch_argv(variant, npes, oshmem_prog if variant == shmembench.OSHMEM
                                else None)
        argv += ["--time-ms", str(params.time_ms), "--reps", str(params.reps),
                 "--max-size", str(params.max_size), "--limit-s", f"{params.limit_s:g}",
                 "--tests", ",".join(f"{t}:{sz}" for t, sz in todo)]
        # The per-test watchdog ends a hang; this only catches a launcher
        # that does not end when a PE does.
        rc, out, err = _run(argv, env, params.limit_s * (len(todo) + 2) + 60)
        h, rows = shmembench.parse_output(out)
        head = head or (h or None)
        results += rows
        got = {(r["test"], int(r["size"])) for r in rows}
        left = [t for t in todo if t not in got]
        if not left:
            if rc != 0:
                # Open MPI 4.1 + UCX here crashes in shmem_finalize after the
                # results are printed; they are complete, and kept.
                notes.append(f"exit status {rc} after printing complete results "
                             f"({_last_line(err)[:100]})")
            break
        if rc == 0:
            notes.append(f"{len(left)} tests missing from a run that ended normally")
            break
        if not rows or not rows[-1].get("dnf"):
            # Ended without the watchdog's row: the next test is the culprit.
            t, sz = left[0]
            results.append({"test": t, "size": sz, "npes": npes, "dnf": True,
                            "why": f"exit status {rc}: {_last_line(err)[:100] or 'no output'}"})
            left = left[1:]
        if not got and head is None and not results[:-1]:
            # Nothing ran at all: the variant cannot start here.
            return None, [], f"exit status {rc}: {_last_line(err) or 'no output'}"
        todo = [t for t in todo if t in left]
    return head, results, "; ".join(notes) or None


def run_icount(n: int, tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """shmem_int_p (to a global and to a heap object) and idle shmem_quiet
    under callgrind on PE 0 and PE 1 (PE 0's file is read), N and 2N calls,
    on-node and over libfabric shm."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {"note": "valgrind is not installed: instruction counts not measured"}
    out: dict[str, Any] = {"valgrind": valgrind, "n": n}
    for label, extra in (("node", {}), ("ofi", VARIANT_ENV["hpsync-ofi-shm"])):
        out[label] = {}
        for fn, func, mode in (("int_p", "shmem_int_p", []), ("int_p_heap", "shmem_int_p", ["heap"]),
                               ("quiet", "shmem_quiet", ["quiet"])):
            metrics = []
            for calls in (n, 2 * n):
                f = tmp / f"cg.{label}.{fn}.{calls}"
                env = {**runner.clean_env(), **extra}
                rc, _o, err = _run([str(runner.program("oshrun")), "-np", "2", valgrind, "-q",
                                    "--tool=callgrind", f"--toggle-collect={func}",
                                    "--dump-instr=yes", "--compress-pos=no",
                                    "--compress-strings=no",
                                    f"--callgrind-out-file={f}.%q{{HPSYNC_SHMEM_RANK}}",
                                    str(runner.program(ICOUNT)), str(calls), *mode], env, 300)
                pe0 = Path(f"{f}.0")
                if rc != 0 or not pe0.is_file():
                    out[label][fn] = {"note": f"callgrind run failed: {_last_line(err)}"}
                    break
                metrics.append(shmembench.callgrind_metrics(
                    shmembench.parse_callgrind(pe0.read_text())))
            if len(metrics) == 2:
                out[label][fn] = shmembench.per_call(metrics[0], metrics[1], n)
            log(f"icount {label} {fn}: {out[label][fn]}")
    return out


def run_raw(params: Params,
            log: Callable[[str], None]) -> tuple[dict[str, dict[str, float]] | None, str | None]:
    """Bare libfabric baselines from hps-bench-ofi-raw, if built: every op
    (about a minute; --quick a quarter of the iterations), per provider,
    "op@bytes" -> median us."""
    try:
        prog = runner.program(RAW)
    except CliError:
        return None, f"{RAW} not built (libfabric headers missing?)"
    try:
        doc = runner.run_json([str(prog), "--provider", "shm", "--provider", "tcp;ofi_rxm",
                               "--provider", "sockets", "--ops", "all",
                               "--iters", "500" if params.quick else "2000",
                               "--reps", "3" if params.quick else "5"],
                              env=runner.clean_env(), timeout=600)
    except CliError as exc:
        return None, exc.message
    out: dict[str, dict[str, float]] = {}
    for row in doc.get("rows", []):
        if row.get("available") and row.get("median_us") is not None:
            out.setdefault(row["provider"], {})[f"{row['op']}@{row.get('bytes', 8)}"] = \
                float(row["median_us"])
    log(f"{RAW}: {out}")
    return out, None


def launch_times(n: int, oshmem_prog: str | None) -> dict[str, Any]:
    """Wall time of n 2-PE launches of a trivial OpenSHMEM program (init and
    finalize: hps-bench-shmem --init-only), ours and Open MPI's, and of
    /bin/true under our oshrun (the launcher alone)."""
    out: dict[str, Any] = {}
    cmds = {"hpsync": launch_argv(shmembench.SUBJECT, 2, None),
            "hpsync_oshrun_only": ([str(runner.program("oshrun")), "-np", "2", "/bin/true"],
                                   runner.clean_env())}
    if oshmem_prog:
        cmds["oshmem"] = launch_argv(shmembench.OSHMEM, 2, oshmem_prog)
    for name, (argv, env) in cmds.items():
        if not name.endswith("oshrun_only"):
            argv = [*argv, "--init-only"]
        times = []
        for _ in range(n):
            t0 = time.monotonic()
            rc, _o, err = _run(argv, env, 60)
            if rc != 0 and name != shmembench.OSHMEM:
                out[name] = {"note": f"exit status {rc}: {_last_line(err)}"}
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
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def measure(params: Params, log: Callable[[str], None] = runner.log) -> dict[str, Any]:
    started = time.monotonic()
    samples: list[dict[str, Any]] = []
    variants: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="hpsync-shmem-") as tmpname, \
            busy_loops(params.load):
        tmp = Path(tmpname)
        oshmem_prog = None
        if shmembench.OSHMEM in params.variants:
            oshmem_prog, why = build_oshmem(tmp)
            if why:
                variants[shmembench.OSHMEM] = {"status": "missing", "note": why}
                log(f"oshmem: not measured, {why}")
        active = [v for v in shmembench.VARIANTS if v in params.variants and v not in variants]
        runs = [(v, n) for v in active for n in params.npes]
        first: dict[str, Any] = {}
        for rnd in range(params.rounds):
            # Rounds interleave the variants, starting each with another.
            order = runs[rnd % len(runs):] + runs[:rnd % len(runs)] if runs else []
            for v, npes in order:
                if variants.get(v, {}).get("status") == "failed":
                    continue
                t0 = time.monotonic()
                head, results, note = run_variant(v, npes, params, oshmem_prog)
                if head is None and not results:
                    variants[v] = {"status": "failed", "note": note}
                    log(f"{v}: dropped: {note}")
                    continue
                first.setdefault(v, {k: (head or {}).get(k) for k in
                                     ("library", "spec_version", "transport", "provider")})
                info = variants.setdefault(v, {"status": "measured", "note": None, **first[v]})
                if note:
                    info["note"] = note
                for r in results:
                    sample = {"variant": v, "npes": npes, "round": rnd, "test": r["test"],
                              "size": int(r["size"])}
                    if r.get("dnf"):
                        sample.update(dnf=True, why=r.get("why", f"over {params.limit_s:g} s"))
                        log(f"{v} {npes} PEs: {r['test']} {r['size']} B did not finish")
                    else:
                        sample.update({k: r[k] for k in ("iters", "ns_min", "ns_median")})
                    samples.append(sample)
                log(f"round {rnd + 1}/{params.rounds}: {v} at {npes} PEs in "
                    f"{time.monotonic() - t0:.1f} s" + (f" ({note})" if note else ""))
        raw, raw_note = run_raw(params, log)
        icount = run_icount(params.icount_n, tmp, log)
        launch = launch_times(params.launches, oshmem_prog)
        log(f"launch: {launch}")
    return {
        **runner.doc_header(KIND, started, params),
        "context": {"host": platform.node(), "cpus": os.cpu_count(),
                    "machine": platform.machine()},
        "variants": variants,
        "samples": samples,
        "ofi_raw": raw,
        "ofi_raw_note": raw_note,
        "icount": icount,
        "launch": launch,
    }


def analyse(doc: dict[str, Any]) -> dict[str, Any]:
    rows = shmembench.summarise(doc["samples"])
    notes = [f"{v}: {i['status']}: {i['note']}" for v, i in doc.get("variants", {}).items()
             if i.get("note")]
    if doc.get("ofi_raw_note"):
        notes.append(f"bare libfabric baseline: {doc['ofi_raw_note']}")
    if doc.get("icount", {}).get("note"):
        notes.append(doc["icount"]["note"])
    notes.append("put_quiet targets a buffer the other PE does not read (issue cost); "
                 "pingpong is a real round trip / 2 (shmem_long_p + wait_until); collectives "
                 "are back to back (1.4 active-set forms, two pSync arrays), one closing barrier "
                 "per batch")
    if doc.get("params", {}).get("rounds", 0) < shmembench.MIN_ROUNDS:
        notes.append(f"fewer than {shmembench.MIN_ROUNDS} rounds: timing verdicts are "
                     "inconclusive")
    return {**doc, "rows": rows,
            "targets": shmembench.evaluate_targets(rows, doc.get("ofi_raw"),
                                                   doc.get("icount", {}), doc.get("launch", {})),
            "warnings": notes}

# SPDX-License-Identifier: MIT
"""The CLI end to end: ./hpsync as a subprocess from the repository root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from hpsync import doctor, runner
from hpsync.bench import locks

Run = Callable[..., subprocess.CompletedProcess[str]]


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_doctor_json(hpsync: Run) -> None:
    proc = hpsync("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for key in ("schema_version", "context", "cpu", "hypervisor", "tsx", "tsc", "clock",
                "topology", "os", "settings", "peers"):
        assert key in doc, key
    topo = doc["topology"]
    assert topo["pus"] >= topo["cores"] >= topo["packages"] >= 1
    assert topo["numa_nodes"] >= 1
    l1d = topo["l1d"]
    assert l1d["line"] in (32, 64, 128, 256) and l1d["size"] >= 4096
    if l1d["ways"] > 0:
        assert l1d["sets"] == l1d["size"] // (l1d["ways"] * l1d["line"])
    tsx = doc["tsx"]
    assert tsx["rtm_usable"] == (tsx["rtm"] and not tsx["rtm_always_abort"])
    if doc["tsc"]["present"]:
        assert 0.1 < doc["tsc"]["ghz"] < 10.0
        assert doc["tsc"]["step_ticks"] >= 1
    assert 0 < doc["clock"]["clock_gettime_ns"] < 10_000
    assert doc["cpu"]["vendor"] and doc["cpu"]["model_name"]
    assert doc["os"]["glibc"][0].isdigit()
    names = {s["name"] for s in doc["settings"]}
    assert {"HPSYNC_LOCK", "HPSYNC_STATS", "HPSYNC_STATS_FILE"} <= names
    # Every library's table: the allocator's and the OpenSHMEM library's too.
    assert {"HPSYNC_MALLOC_STATS", "HPSYNC_SHMEM_TRANSPORT", "HPSYNC_SHMEM_POLL_MS"} <= names
    for lib in ("jemalloc", "mimalloc", "tcmalloc", "libfabric"):
        assert lib in doc["peers"]["libraries"]
    # The build requires libfabric, whose shm provider carries OpenSHMEM here:
    # fi_getinfo's answer comes as JSON from hps-fabric-info.
    fabric = doc["peers"]["fabric"]
    assert fabric["available"] and fabric["program"] == "hps-fabric-info"
    for p in fabric["providers"]:
        assert p["ep_type"] in ("msg", "rdm", "dgram", "other") and p["inject_size"] >= 0
    assert "shm" in doc["peers"]["fabric_providers"]
    # The lock algorithms, which the CLI reads (doctor.lock_algorithms()).
    published = doctor.parse_locks(doc["locks"])
    assert published.names == locks.algorithms() and published.aliases == {"clh": "hemlock"}
    setting = next(s for s in doc["settings"] if s["name"] == "HPSYNC_LOCK")
    assert setting["default"] == published.default


def test_published_locks_are_the_documented_ones(repo: Path) -> None:
    """The one place lock names are written out in the tests: what the build
    publishes must be what docs/locks.md and docs/cli.md promise."""
    promised = ["ttas", "ticket", "mcs", "hemlock", "adaptive"]
    assert list(locks.algorithms()) == promised and locks.default_lock() == "adaptive"
    assert locks.lock_names() == promised + ["clh"]
    for doc in ("locks.md", "cli.md"):
        text = (repo / "docs" / doc).read_text()
        assert all(f"`{n}`" in text for n in promised + ["clh"]), doc


def test_run_help_lists_the_published_locks(hpsync: Run) -> None:
    proc = hpsync("run", "--help")
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert f"lock algorithm: {', '.join(locks.lock_names())} (default {locks.default_lock()})" in flat


def test_run_default_lock_is_the_librarys(hpsync: Run) -> None:
    """Without --lock the library's own default runs (HPSYNC_LOCK=default)."""
    proc = hpsync("run", "--stats", "--", sys.executable, "-c",
                  "import os; print(os.environ['HPSYNC_LOCK'])")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["default"]
    assert f", lock {locks.default_lock()}, " in proc.stderr


def test_doctor_human(hpsync: Run) -> None:
    proc = hpsync("doctor")
    assert proc.returncode == 0, proc.stderr
    for word in ("CPU", "RTM usable", "TSC", "L1d", "Settings", "HPSYNC_LOCK"):
        assert word in proc.stdout


def test_run_bad_lock(hpsync: Run) -> None:
    proc = hpsync("run", "--lock", "x", "--", "true")
    assert proc.returncode == 2
    names = ", ".join(locks.lock_names() + [locks.BASELINE])
    assert one_line_error(proc) == f"hpsync: unknown lock 'x' (choose from {names})"


def test_run_missing_program(hpsync: Run) -> None:
    proc = hpsync("run", "--", "hpsync-no-such-program-here")
    assert proc.returncode != 0
    assert "not found" in one_line_error(proc)


def test_run_mcs_true(hpsync: Run) -> None:
    proc = hpsync("run", "--lock", "mcs", "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_run_exit_status_passes_through(hpsync: Run) -> None:
    proc = hpsync("run", "--lock", "clh", "--", "sh", "-c", "exit 7")
    assert proc.returncode == 7


def test_run_sets_environment(hpsync: Run, tmp_path: Path) -> None:
    proc = hpsync("run", "--lock", "ticket", "--stats-file", str(tmp_path / "s.txt"), "--",
                  "sh", "-c", 'echo "$HPSYNC_LOCK $HPSYNC_STATS $LD_PRELOAD"')
    assert proc.returncode == 0, proc.stderr
    lock, stats, preload = proc.stdout.split()
    assert (lock, stats) == ("ticket", "1")
    assert preload.split(":")[0].endswith("libhpsync-preload.so")


def test_run_stats_shows_semaphores_and_barriers(hpsync: Run, repo: Path) -> None:
    """`run --stats` lists a program's semaphores and barriers, named, with their counts."""
    prog = Path(os.environ.get("HPSYNC_BUILD", repo / "build")) / "bin" / "stats_global"
    proc = hpsync("run", "--stats", "--", str(prog))
    assert proc.returncode == 0, proc.stderr
    tables: dict[str, list[str]] = {}
    current = ""
    for line in proc.stderr.splitlines():
        if line.startswith("hpsync "):
            current = line.split(":")[0]
            tables[current] = []
        elif current:
            tables[current].append(line)
    sem_row = next(r for r in tables["hpsync semaphores"] if "hps_stats_global_sem" in r)
    bar_row = next(r for r in tables["hpsync barriers"] if "hps_stats_global_barrier" in r)
    assert sem_row.split()[1] == "3000"          # waits
    assert bar_row.split()[1:3] == ["300", "100"]  # waits, rounds
    assert any("hps_stats_global_mutex" in r for r in tables["hpsync stats"])


@pytest.mark.parametrize("args", [
    ["frobnicate"],
    ["bench", "locks", "--threads", "0"],
    ["bench", "locks", "--threads", "abc"],
    ["bench", "locks", "--duration-ms", "abc"],
    ["bench", "locks", "--reps", "0"],
    ["bench", "nosuch"],
    ["run"],
    [],
])
def test_bad_input_is_one_line(hpsync: Run, args: list[str]) -> None:
    proc = hpsync(*args)
    assert proc.returncode != 0
    one_line_error(proc)
    assert proc.stdout == ""


def test_missing_build_says_make(tmp_path: Path) -> None:
    proc = subprocess.run(["./hpsync", "doctor"], cwd=Path(__file__).resolve().parents[2],
                          env={"PATH": "/usr/bin:/bin", "HPSYNC_BUILD": str(tmp_path / "nobuild")},
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert "run make first" in one_line_error(proc)


def test_bench_locks_human_no_store(hpsync: Run, tmp_path: Path) -> None:
    """(--json, storing, --check: test_pipeline.py's end-to-end test.)"""
    proc = hpsync("bench", "locks", "--quick", "--threads", "2", "--duration-ms", "10",
                  "--reps", "1", "--iters", "2000", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert "Targets" in proc.stdout and "adaptive" in proc.stdout
    assert not (tmp_path / "data" / "hpsync" / "results.db").exists()


def test_run_elide_sets_the_setting(hpsync: Run) -> None:
    """--elide reaches the program as HPSYNC_ELIDE=1 (a no-op here without RTM)."""
    r = hpsync("run", "--elide", "--", "sh", "-c", 'echo "$HPSYNC_ELIDE"')
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"


def test_run_tm_sets_the_backend(hpsync: Run) -> None:
    """--tm reaches the program as HPSYNC_TM; --stats adds the TM summary."""
    r = hpsync("run", "--tm", "stm", "--", "sh", "-c", 'echo "$HPSYNC_TM ${HPSYNC_TM_STATS:-off}"')
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["stm", "off"]
    r = hpsync("run", "--tm", "norec", "--stats", "--", "sh", "-c", 'echo "$HPSYNC_TM $HPSYNC_TM_STATS"')
    assert r.stdout.split() == ["norec", "1"]


def test_run_tm_bad_backend(hpsync: Run) -> None:
    proc = hpsync("run", "--tm", "tl2", "--", "true")
    assert proc.returncode == 2
    assert one_line_error(proc) == ("hpsync: unknown TM backend 'tl2' "
                                    "(choose from auto, sgl, norec, stm, htm, hybrid)")


def test_published_tm_backends_are_the_librarys(repo: Path) -> None:
    """The names `run --tm` takes come from the library (hps-doctor), and the
    library takes every one of them without a bad-value line."""
    from hpsync import doctor
    backends = doctor.tm_backends()
    assert backends[0] == "auto" and {"sgl", "norec", "stm", "htm", "hybrid"} <= set(backends)
    prog = Path(os.environ.get("HPSYNC_BUILD", repo / "build")) / "bin" / "tm_test"
    if not prog.is_file():
        pytest.skip("tm_test is not built")
    for b in backends:
        r = subprocess.run([str(prog), "counter"], env=dict(os.environ, HPSYNC_TM=b),
                           capture_output=True, text=True, timeout=120, check=False)
        assert r.returncode == 0 and "is not a TM backend" not in r.stderr, (b, r.stderr)


def test_run_tm_stats_names_the_backend_that_ran(hpsync: Run, repo: Path) -> None:
    """A TM program under `run --tm B --stats` says at exit which backend ran."""
    prog = Path(os.environ.get("HPSYNC_BUILD", repo / "build")) / "bin" / "tm_test"
    if not prog.is_file():
        pytest.skip("tm_test is not built")
    for backend in ("sgl", "norec", "stm"):
        proc = hpsync("run", "--tm", backend, "--stats", "--", str(prog), "counter")
        assert proc.returncode == 0, proc.stderr
        assert f"hpsync tm: backend {backend}" in proc.stderr, proc.stderr


# ---- run --malloc, run --lock glibc ----------------------------------------

def preload_of(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The program's LD_PRELOAD (it echoes it, or 'unset'), as file names."""
    assert proc.returncode == 0, proc.stderr
    value = proc.stdout.strip()
    return [] if value == "unset" else [Path(p).name for p in value.split(":")]


ECHO_PRELOAD = ["sh", "-c", 'echo "${LD_PRELOAD-unset}"']


@pytest.mark.parametrize("lock, allocator, want", [
    ("mcs", "rand", ["libhpsync-malloc-rand.so", "libhpsync-preload.so"]),
    ("mcs", "none", ["libhpsync-preload.so"]),
    ("glibc", "rand", ["libhpsync-malloc-rand.so"]),
    ("glibc", "none", []),
])
def test_run_malloc_and_lock_choose_the_preloads(hpsync: Run, lock: str, allocator: str,
                                                 want: list[str]) -> None:
    """The allocator goes first, then the lock interposer; glibc means none."""
    proc = hpsync("run", "--lock", lock, "--malloc", allocator, "--", *ECHO_PRELOAD)
    assert preload_of(proc) == want


def test_run_malloc_library_is_mapped(hpsync: Run) -> None:
    """Not just the variable: the program really has both libraries loaded."""
    proc = hpsync("run", "--malloc", "rand", "--", "grep", "-o", r"libhpsync[-a-z]*\.so",
                  "/proc/self/maps")
    assert proc.returncode == 0, proc.stderr
    assert set(proc.stdout.split()) == {"libhpsync-malloc-rand.so", "libhpsync-preload.so"}


def test_run_malloc_cia(hpsync: Run) -> None:
    if not (runner.build_dir() / "lib" / "libhpsync-malloc.so").is_file():
        pytest.skip("libhpsync-malloc.so not built")
    prog = ["python3", "-c", "import threading; print(sum(len(str(i)) for i in range(10**5)))"]
    base = hpsync("run", "--lock", "glibc", "--", *prog)
    proc = hpsync("run", "--malloc", "cia", "--", *prog)
    assert base.returncode == proc.returncode == 0, proc.stderr
    assert proc.stdout == base.stdout and proc.stderr == ""


def test_compose_preload_keeps_other_preloads() -> None:
    ours = [Path("/b/lib/libhpsync-malloc.so"), Path("/b/lib/libhpsync-preload.so")]
    inherited = "/x/libother.so /old/libhpsync-preload.so:/old/libhpsync-malloc-rand.so::/y/libz.so"
    assert runner.compose_preload(ours, inherited).split(":") == [
        "/b/lib/libhpsync-malloc.so", "/b/lib/libhpsync-preload.so", "/x/libother.so", "/y/libz.so"]
    assert runner.compose_preload([], "/old/libhpsync-preload.so") == ""


@pytest.mark.parametrize("args, message", [
    (["--malloc", "x"], "hpsync: unknown allocator 'x' (choose from cia, rand, none)"),
    (["--lock", "glibc", "--stats"], "hpsync: --stats needs an hpsync lock, not --lock glibc"),
    (["--lock", "glibc", "--elide"], "hpsync: --elide needs an hpsync lock, not --lock glibc"),
    (["--lock", "glibc", "--stats-file", "f"],
     "hpsync: --stats-file needs an hpsync lock, not --lock glibc"),
])
def test_run_bad_malloc_or_lock_options(hpsync: Run, args: list[str], message: str) -> None:
    proc = hpsync("run", *args, "--", "true")
    assert proc.returncode == 2
    assert one_line_error(proc) == message


def test_run_malloc_missing_library_says_make(repo: Path, tmp_path: Path) -> None:
    """A build without the allocator: one line naming the file, exit 2."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libhpsync-preload.so").symlink_to(runner.preload_library())
    proc = subprocess.run(["./hpsync", "run", "--malloc", "cia", "--", "true"], cwd=repo,
                          env={"PATH": "/usr/bin:/bin", "HPSYNC_BUILD": str(tmp_path)},
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert one_line_error(proc) == f"hpsync: {tmp_path}/lib/libhpsync-malloc.so not found; run make first"

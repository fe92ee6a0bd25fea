# SPDX-License-Identifier: MIT
"""Finding the build tree and running hpsync's C programs: the one way to
run a program and read its JSON.

A program either prints exactly one JSON document on stdout (run_json,
run_document), or writes JSON Lines, one complete object a line, to a file
it is told to (read_json_lines): hps-bench-shmem does, so the rows a run
finished before it was cut off survive and whatever a launcher prints on
stdout around them does not matter.  Nothing else a program prints is read.
Its stderr is kept and shown only when the program fails (its last line in
the one-line error), so a successful run stays quiet.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .errors import CliError

REPO_ROOT = Path(__file__).resolve().parents[2]
PRELOAD_NAME = "libhpsync-preload.so"
ITM_NAME = "libhpsync-itm.so"
# `hpsync run --malloc NAME`: the allocator library each name preloads;
# MALLOC_NONE keeps glibc's malloc.
MALLOC_LIBRARIES: dict[str, str] = {"cia": "libhpsync-malloc.so", "rand": "libhpsync-malloc-rand.so"}
MALLOC_NONE = "none"


def build_dir() -> Path:
    """$HPSYNC_BUILD if set, else the repository's build/ directory."""
    env = os.environ.get("HPSYNC_BUILD")
    return Path(env) if env else REPO_ROOT / "build"


def _require(path: Path) -> Path:
    if not path.is_file():
        raise CliError(f"{path} not found; run make first", 2)
    return path


def program(name: str) -> Path:
    """Path of build/bin/<name>, or a CliError telling the user to build."""
    return _require(build_dir() / "bin" / name)


def preload_library() -> Path:
    """Path of the interposer, or a CliError telling the user to build."""
    return _require(build_dir() / "lib" / PRELOAD_NAME)


def itm_library() -> Path:
    """Path of libhpsync-itm (the GCC TM ABI on hpsync), or a CliError
    telling the user to build."""
    return _require(build_dir() / "lib" / ITM_NAME)


def malloc_library(name: str) -> Path | None:
    """Path of the allocator library for `--malloc name` (None for "none"),
    or a CliError telling the user to build."""
    if name == MALLOC_NONE:
        return None
    return _require(build_dir() / "lib" / MALLOC_LIBRARIES[name])


def compose_preload(ours: Sequence[Path], inherited: str) -> str:
    """LD_PRELOAD with our libraries first, in the order given, then the
    inherited entries (blank- or colon-separated) that are not ours.

    Ours go first so they win symbol resolution over any other preload (an
    allocator must be the malloc every later object binds to).  Any hpsync
    library already in the inherited list is dropped, whether or not it is
    chosen now: `hpsync run` alone decides which of ours are loaded.
    """
    mine = {PRELOAD_NAME, *MALLOC_LIBRARIES.values()}
    others = [p for p in inherited.replace(" ", ":").split(":") if p and Path(p).name not in mine]
    return ":".join([str(p) for p in ours] + others)


def log(message: str) -> None:
    """Progress for humans: always stderr, so stdout stays pure data."""
    print(f"hpsync: {message}", file=sys.stderr, flush=True)


def clean_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without any preload or hpsync setting.

    Benchmarks start from this so a user's own LD_PRELOAD or HPSYNC_STATS
    cannot leak into (and silently distort) a measurement.
    """
    env = dict(os.environ if base is None else base)
    for key in list(env):
        if key == "LD_PRELOAD" or key.startswith("HPSYNC_"):
            del env[key]
    return env


def preload_env(lock: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """clean_env() plus the interposer with HPSYNC_LOCK=lock."""
    env = clean_env(base)
    env["LD_PRELOAD"] = str(preload_library())
    env["HPSYNC_LOCK"] = lock
    return env


# After a time-out a program gets SIGTERM and this long to clean up before
# SIGKILL: oshrun passes SIGTERM on to its PEs and removes the job's
# /dev/shm files, which nobody removes after a SIGKILL of oshrun.
KILL_GRACE_S = 3.0


@dataclass(frozen=True)
class Completed:
    returncode: int            # negative: killed by that signal; meaningless if not_run
    stdout: str
    stderr: str
    timed_out: bool = False
    not_run: str | None = None  # why it could not be started


def run_capture(argv: Sequence[str], env: Mapping[str, str] | None = None,
                timeout: float = 600.0) -> Completed:
    """Run a program to its end or its time limit, capturing both streams.
    On a time-out (or Ctrl-C) it is asked to stop with SIGTERM, given
    KILL_GRACE_S, and then everything left of its process group is killed,
    so no grandchild keeps the pipes open; what it printed is kept.  It runs
    in a process group of its own for that, so Ctrl-C reaches it only
    through this function."""
    try:
        proc = subprocess.Popen(list(argv), env=None if env is None else dict(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except OSError as exc:
        return Completed(-1, "", "", not_run=exc.strerror or str(exc))
    try:
        out, err = proc.communicate(timeout=timeout)
        return Completed(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        out, err = _stop(proc)
        return Completed(-1, out, err, timed_out=True)
    except KeyboardInterrupt:
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.terminate()
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    out, err = proc.communicate()
    return out or "", err or ""


def last_line(text: str) -> str:
    """The last line of a program's stderr that says something, for a
    one-line error: blank lines and rules (Open MPI frames its messages in
    lines of dashes) are passed over."""
    lines = [ln.strip() for ln in text.splitlines() if any(c.isalnum() for c in ln)]
    return lines[-1] if lines else ""


PROC_STAT = Path("/proc/stat")


def _cpu_line(path: Path) -> tuple[list[str], int] | None:
    """/proc/stat's first line (the sums over every CPU) and the clock ticks
    per second its columns count in; None where either cannot be read."""
    try:
        with path.open() as f:
            fields = f.readline().split()
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None
    if len(fields) < 9 or fields[0] != "cpu" or not all(x.isdigit() for x in fields[1:9]) or ticks <= 0:
        return None
    return fields, ticks


def steal_ms(path: Path = PROC_STAT) -> float | None:
    """CPU time the hypervisor has stolen from this machine since boot, in
    ms summed over its CPUs (/proc/stat's steal column), or None where the
    file or the column is missing.  Read around a program, it says how much
    of the machine was not ours while it ran (a KVM guest's host runs other
    guests on the same cores: 1-2 % of the CPU time of a busy 2-vCPU guest
    here, more in bursts).  The C probes read the same column
    (bench/common/dist.c)."""
    line = _cpu_line(path)
    if line is None:
        return None
    fields, ticks = line
    return int(fields[8]) * 1000.0 / ticks


def busy_ms(path: Path = PROC_STAT) -> float | None:
    """CPU time this machine's CPUs have spent running anything since boot
    (user, nice, system, irq and softirq; not idle, iowait or steal), in ms
    summed over its CPUs, or None where /proc/stat cannot be read."""
    line = _cpu_line(path)
    if line is None:
        return None
    fields, ticks = line
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
    return (user + nice + system + irq + softirq) * 1000.0 / ticks


def own_cpu_ms() -> float:
    """CPU time of this process and of its children that have been waited
    for, in ms (user and system)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime) * 1000.0


def steal_share(before: float | None, after: float | None, wall_s: float) -> float | None:
    """The share of the machine's CPU time the hypervisor stole while a
    program ran, from steal_ms() read before and after it (steal over wall
    time times CPUs: /proc/stat sums every CPU's), rounded to 0.1 %; None
    where it cannot be read."""
    cpus = os.cpu_count() or 1
    if before is None or after is None or wall_s <= 0 or after < before:
        return None
    return round((after - before) / (wall_s * 1000.0 * cpus), 3)


class StealWindow:
    """The steal time over a stretch of wall time: opened just before a
    program starts, closed when it has ended (and waited for).  It also
    measures the CPU time other processes took meanwhile: the machine's
    busy time less this process's and its children's.  A benchmark beside
    a build or another job measures a shared machine, and says so."""

    def __init__(self) -> None:
        self.t0, self.before = time.monotonic(), steal_ms()
        self.busy0, self.own0 = busy_ms(), own_cpu_ms()

    def close(self) -> dict[str, float] | None:
        """{"share": of the machine, "ms": stolen, "others_share",
        "others_ms": taken by other processes} over the stretch, or None
        where steal cannot be read.  /proc/stat counts in clock ticks (10
        ms here), so over a short stretch others_* may be off by a few
        ticks; it is never below 0."""
        after, busy, own = steal_ms(), busy_ms(), own_cpu_ms()
        wall = time.monotonic() - self.t0
        share = steal_share(self.before, after, wall)
        if share is None:
            return None
        assert self.before is not None and after is not None    # steal_share had both
        out = {"share": share, "ms": round(after - self.before)}
        if busy is not None and self.busy0 is not None:
            others = max(0.0, busy - self.busy0 - (own - self.own0))
            out["others_share"] = round(others / (wall * 1000.0 * (os.cpu_count() or 1)), 3)
            out["others_ms"] = round(others)
        return out


def run_document(argv: Sequence[str], env: Mapping[str, str] | None = None,
                 timeout: float = 600.0) -> tuple[dict[str, Any] | None, str | None]:
    """Run one of our programs: (its JSON document, None), or (None, why not)
    when it cannot start, times out, fails or prints anything but one JSON
    object.  Never raises for the program's own failures."""
    proc = run_capture(argv, env, timeout)
    if proc.not_run:
        return None, f"cannot run {argv[0]}: {proc.not_run}"
    if proc.timed_out:
        return None, f"did not finish within {timeout:.0f} s"
    if proc.returncode != 0:
        why = last_line(proc.stderr)
        return None, f"exit status {proc.returncode}" + (f": {why}" if why else "")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        return None, f"malformed JSON ({exc.msg} at line {exc.lineno})"
    if not isinstance(doc, dict):
        return None, "printed JSON that is not an object"
    return doc, None


def run_json(argv: Sequence[str], env: Mapping[str, str] | None = None,
             timeout: float = 600.0) -> dict[str, Any]:
    """run_document(), with a failure as a CliError naming the program."""
    doc, why = run_document(argv, env, timeout)
    if doc is None:
        raise CliError(f"{Path(argv[0]).name} {' '.join(argv[1:])}: {why}")
    return doc


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """The objects of a JSON Lines file, one a line.  A program that was
    killed may leave its last line unfinished: that line alone is dropped.
    A missing file is no objects; any other malformed line is a ValueError."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    lines = [ln for ln in text.split("\n") if ln.strip()]
    out: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1 and not text.endswith("\n"):
                break
            raise ValueError(f"{path}: line {i + 1} is not JSON") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{path}: line {i + 1} is not a JSON object")
        out.append(obj)
    return out

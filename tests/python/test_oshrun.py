# SPDX-License-Identifier: MIT
"""build/bin/oshrun from outside the job: usage errors, exit statuses, teardown
when a PE dies, signals, stdin, launch time, and no /dev/shm leftovers.

The PEs are build/bin/rt_test (tests/c/shmem/runtime/rt_test.c), a program on the
OpenSHMEM runtime alone.  oshrun names its jobs "o<its pid>x<random>", so a
job's shared-memory files are /dev/shm/hpsync-shmem-o<pid>x*; rt_test adds
one of its own there (as the library adds its heap), which oshrun must
remove however the job ends.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))
OSHRUN = BUILD / "bin" / "oshrun"
RT_TEST = BUILD / "bin" / "rt_test"
# Far above a normal teardown (milliseconds) and below the 1 s SIGKILL grace
# plus the PEs' 30 s watchdog: a hang shows up as a failure, not a timeout.
QUICK_S = 5.0


@pytest.fixture(autouse=True)
def built() -> None:
    for exe in (OSHRUN, RT_TEST):
        assert exe.is_file(), f"{exe} missing: run make first"


def clean_env() -> dict[str, str]:
    """No inherited job: these runs must not think they are PEs already."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("HPSYNC_", "PMIX_", "OMPI_")) and k != "LD_PRELOAD"}


def signals_default() -> None:
    """The job's signals as a terminal would leave them (a Popen preexec_fn).
    A test runner started in the background of a script without job control
    (`make test &`, `nohup`) ignores SIGINT, its children inherit that, and
    oshrun keeps a signal it was started ignoring (by design: nohup), so the
    tests that send SIGINT waited out their timeout."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def oshrun(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(OSHRUN), *args], input=stdin, capture_output=True, text=True,
                          env=clean_env(), timeout=60, check=False)


def leftovers(pid: int) -> list[str]:
    return sorted(p.name for p in Path("/dev/shm").glob(f"hpsync-shmem-o{pid}x*"))


def gone(pid: int) -> bool:
    """Exited (a zombie counts: whoever adopted it may not reap at once)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + QUICK_S
    while time.monotonic() < deadline:
        if all(gone(p) for p in pids):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("args", [
    [], ["-np"], ["-np", "0", "true"], ["-np", "x", "true"], ["-n", "5000", "true"],
    ["--np=", "true"], ["--bogus", "true"], ["-np", "2"], ["-np", "2", "--"],
    ["--bind-to", "socket", "true"], ["--bind-to=", "true"], ["-np", "2", "--bind-to"],
])
def test_bad_usage_is_one_line_and_status_2(args: list[str]) -> None:
    r = oshrun(*args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("oshrun: "), r.stderr


@pytest.mark.parametrize("prog,status", [
    ("hpsync-no-such-program", 127), ("/nonexistent/prog", 127), ("/etc/passwd", 126),
])
def test_missing_program(prog: str, status: int) -> None:
    r = oshrun("-np", "2", prog)
    assert r.returncode == status
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"oshrun: {prog}: "), r.stderr


def test_help_and_option_forms() -> None:
    r = oshrun("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: oshrun") and r.stderr == ""
    for args in (["-n", "3"], ["-np=3"], ["--np", "3"], ["-np", "3", "--"]):
        r = oshrun(*args, str(RT_TEST), "basic", "local", "3")
        assert r.returncode == 0, (args, r.stderr)
        assert sorted(r.stdout.splitlines())[2].startswith("rt_test: PE 2 of 3 job o")


def cpu_sets(*args: str) -> dict[int, set[int]]:
    """Each PE's CPU set, as the PE sees it (/proc/self/status)."""
    r = oshrun(*args, "/bin/sh", "-c",
               'echo "$HPSYNC_SHMEM_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"')
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        rank, spec = line.split()
        cpus: set[int] = set()
        for part in spec.split(","):
            a, _, b = part.partition("-")
            cpus.update(range(int(a), int(b or a) + 1))
        out[int(rank)] = cpus
    return out


def cores(cpus: set[int]) -> int:
    """Distinct cores among cpus (by their thread siblings)."""
    seen: set[str] = set()
    for c in cpus:
        f = Path(f"/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list")
        seen.add(f.read_text().strip() if f.is_file() else str(c))
    return len(seen)


def test_binding() -> None:
    """--bind-to core (the default) gives each PE a core of its own when
    there are enough; none, or more PEs than cores, leaves them unbound."""
    mine = os.sched_getaffinity(0)
    n = min(cores(mine), 4)
    if n >= 2:
        sets = cpu_sets("-np", str(n))
        assert sorted(sets) == list(range(n))
        assert all(s and s <= mine for s in sets.values()), sets
        assert all(not (sets[a] & sets[b]) for a in sets for b in sets if a < b), sets
        assert cpu_sets("-np", str(n), "--bind-to=core") == sets
    assert all(s == mine for s in cpu_sets("-np", "2", "--bind-to", "none").values())
    over = cpu_sets("-np", str(cores(mine) + 1))
    assert all(s == mine for s in over.values()), over
    assert cpu_sets("-np", "1")[0] == mine


def test_launch_is_fast() -> None:
    """A 2-PE launch of a trivial program (the issue's target: 0.3 s)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        r = oshrun("-np", "2", str(RT_TEST), "barriers", "1", "1000")
        best = min(best, time.perf_counter() - t)
        assert r.returncode == 0, r.stderr
    assert best <= 0.3, f"2-PE launch took {best:.3f} s"


def test_stdin_goes_to_pe0_only() -> None:
    r = oshrun("-np", "3", str(RT_TEST), "stdin", stdin="hello")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "rt_test: PE 0 read 'hello'\n"


def run_job(*args: str) -> tuple[subprocess.CompletedProcess[str], float, list[str]]:
    """Run a job to its end: result, seconds, the job's /dev/shm leftovers."""
    t = time.monotonic()
    p = subprocess.Popen([str(OSHRUN), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True, env=clean_env())
    out, err = p.communicate(timeout=60)
    return (subprocess.CompletedProcess(p.args, p.returncode, out, err),
            time.monotonic() - t, leftovers(p.pid))


@pytest.mark.parametrize("np", [1, 4])
def test_normal_exit_leaves_nothing(np: int) -> None:
    r, _, left = run_job("-np", str(np), str(RT_TEST), "basic", "local", str(np))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == np
    assert left == []


@pytest.mark.parametrize("args,status,message", [
    (["exit", "3", "1"], 3, None),
    (["kill", "2"], 137, "oshrun: PE 2 (pid "),
    (["abort", "7", "3"], 7, None),
    (["abort", "0", "0"], 0, None),
    (["nofinalize", "1"], 1, "oshrun: PE 1 exited without shmem_finalize"),
])
def test_failing_pe_ends_the_job(args: list[str], status: int, message: str | None) -> None:
    """One PE fails (or ends the job); the other three, waiting for it in a
    barrier, are ended by oshrun; the job's status is the PE's."""
    r, secs, left = run_job("-np", "4", str(RT_TEST), *args)
    assert r.returncode == status, r.stderr
    assert "not ended" not in r.stdout
    assert secs < QUICK_S
    assert left == []
    lines = r.stderr.splitlines()
    if message:
        assert len(lines) == 1 and lines[0].startswith(message), r.stderr
    else:
        assert lines == []


def start_hanging_job(np: int) -> tuple[subprocess.Popen[str], list[int]]:
    """A job whose PEs all joined and sleep; returns it and the PEs' pids."""
    p = subprocess.Popen([str(OSHRUN), "-np", str(np), str(RT_TEST), "hang"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True, env=clean_env(),
                         preexec_fn=signals_default)
    assert p.stdout is not None
    pids = [int(p.stdout.readline().split()[4]) for _ in range(np)]
    # The job's files exist while it runs, so their absence later means something.
    assert len(leftovers(p.pid)) == 2, leftovers(p.pid)
    return p, pids


def test_sigkill_of_a_pe_tears_down() -> None:
    p, pids = start_hanging_job(4)
    os.kill(pids[2], signal.SIGKILL)
    _, err = p.communicate(timeout=QUICK_S)
    assert p.returncode == 137
    assert err.startswith("oshrun: PE ") and "signal 9" in err and len(err.splitlines()) == 1
    assert wait_gone(pids)
    assert leftovers(p.pid) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_reach_the_pes(sig: signal.Signals) -> None:
    p, pids = start_hanging_job(2)
    p.send_signal(sig)
    p.communicate(timeout=QUICK_S)
    assert p.returncode == 128 + sig
    assert wait_gone(pids)
    assert leftovers(p.pid) == []


def test_pes_ignoring_signals_are_killed_after_the_grace() -> None:
    """PEs that ignore SIGINT and SIGTERM still end: SIGKILL after 1 s."""
    p = subprocess.Popen([str(OSHRUN), "-np", "2", "sh", "-c",
                          "trap '' INT TERM; echo up; exec sleep 30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, text=True, env=clean_env(),
                         preexec_fn=signals_default)
    assert p.stdout is not None
    assert [p.stdout.readline() for _ in range(2)] == ["up\n", "up\n"]
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=QUICK_S)
    assert p.returncode == 128 + signal.SIGKILL
    assert 0.9 <= time.monotonic() - t < QUICK_S
    assert leftovers(p.pid) == []


def test_pes_die_with_a_killed_oshrun() -> None:
    """SIGKILL of oshrun itself: the PEs must not live on (PR_SET_PDEATHSIG);
    its files stay (nobody is left to remove them), so the test does."""
    p, pids = start_hanging_job(2)
    p.kill()
    p.communicate(timeout=QUICK_S)
    assert wait_gone(pids)
    for name in leftovers(p.pid):
        (Path("/dev/shm") / name).unlink()


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed")
def test_pmix_abort_under_mpirun() -> None:
    """hps_rt_abort through PMIx_Abort: mpirun ends the job with the status."""
    t = time.monotonic()
    r = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                        str(RT_TEST), "abort", "7", "1"],
                       capture_output=True, text=True, env=clean_env(), timeout=60, check=False)
    assert r.returncode == 7, r.stderr
    assert "PE 1 ends the job with 7" in r.stdout
    assert time.monotonic() - t < QUICK_S + 5


KILL_SELF = r"""
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
    shmem_init();
    static long x;
    shmem_long_p(&x, 1, (shmem_my_pe() + 1) % shmem_n_pes());
    shmem_barrier_all();
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    shmem_barrier_all();
    if (shmem_my_pe() == 1)
        kill(getpid(), SIGKILL);
    sleep(30);
    return 0;
}
"""


def test_sigkill_over_libfabric_shm_leaves_no_provider_files(tmp_path: Path) -> None:
    """libfabric's shm provider keeps "<pid>:<endpoint>" files in /dev/shm that a
    PE killed with SIGKILL cannot remove; oshrun removes those of its PEs."""
    oshcc = BUILD / "bin" / "oshcc"
    fi_info = shutil.which("fi_info")
    if not oshcc.is_file() or not fi_info:
        pytest.skip("no oshcc or no fi_info")
    if subprocess.run([fi_info, "-p", "shm"], capture_output=True, check=False).returncode != 0:
        pytest.skip("libfabric has no shm provider here")
    src, exe = tmp_path / "kill_self.c", tmp_path / "kill_self"
    src.write_text(KILL_SELF)
    subprocess.run([str(oshcc), str(src), "-o", str(exe)], check=True)
    before = {p.name for p in Path("/dev/shm").iterdir()}
    env = dict(clean_env(), HPSYNC_SHMEM_TRANSPORT="ofi", HPSYNC_SHMEM_PROVIDER="shm")
    job = subprocess.Popen([str(OSHRUN), "-np", "2", str(exe)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env)
    out, err = job.communicate(timeout=60)
    assert job.returncode == 137, err
    # Only this job's files count: other programs on the machine (tests run
    # in parallel, other users) may create and remove their own meanwhile.
    # libfabric's shm files start with a PE's pid, hpsync's name the job id
    # (o<oshrun's pid>x...).
    pids = [line.split()[1] for line in out.splitlines() if line.startswith("pid ")]
    assert len(pids) == 2, out
    ours = [*(f"{pid}:" for pid in pids), *(f"{pid}_" for pid in pids), f"o{job.pid}x"]
    left = {p.name for p in Path("/dev/shm").iterdir()} - before
    left = {name for name in left if any(mark in name for mark in ours)}
    assert not left, f"left behind: {sorted(left)}"

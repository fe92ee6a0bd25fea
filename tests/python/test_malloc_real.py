# SPDX-License-Identifier: MIT
"""Real programs on hpsync's allocators: the same output as on glibc's malloc.

Each program runs twice, bare and with the allocator library in LD_PRELOAD
(inherited by every process it starts: git's helpers, gcc's cc1, as and
ld), and must exit the same way and print the same bytes, without a single
"hpsync-malloc:" complaint.  The allocators: cia (libhpsync-malloc.so) and
rand (libhpsync-malloc-rand.so); a library that is not built is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))
LIBRARIES = {"cia": "libhpsync-malloc.so", "rand": "libhpsync-malloc-rand.so"}

# Runs a command with the given LD_PRELOAD (None: bare) in a directory.
Runner = Callable[[list[str], "str | None", Path], subprocess.CompletedProcess[bytes]]


@pytest.fixture(params=sorted(LIBRARIES))
def library(request: pytest.FixtureRequest) -> Path:
    lib = BUILD / "lib" / LIBRARIES[request.param]
    if not lib.is_file():
        pytest.skip(f"{lib.name} not built")
    return lib


@pytest.fixture
def run() -> Runner:
    """Fixed names, dates and locale, no inherited preload or hpsync setting."""
    base = {k: v for k, v in os.environ.items()
            if k != "LD_PRELOAD" and not k.startswith(("HPSYNC_", "GIT_"))}
    base.update(LC_ALL="C", TZ="UTC", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
                GIT_AUTHOR_NAME="A U Thor", GIT_AUTHOR_EMAIL="author@example.com",
                GIT_COMMITTER_NAME="C O Mitter", GIT_COMMITTER_EMAIL="committer@example.com",
                GIT_AUTHOR_DATE="2024-01-02T03:04:05Z", GIT_COMMITTER_DATE="2024-01-02T03:04:05Z")

    def go(argv: list[str], preload: str | None, cwd: Path) -> subprocess.CompletedProcess[bytes]:
        env = dict(base, LD_PRELOAD=preload) if preload else base
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=120, check=False)
    return go


def same_with_and_without(run: Runner, library: Path, tmp_path: Path,
                          scenario: Callable[[Callable[[list[str]], bytes]], bytes]) -> None:
    """Play `scenario` bare and preloaded, each in a fresh directory; its
    outputs must agree.  The scenario calls its argument to run a step,
    which returns the step's stdout (and fails the test if the step fails
    or the allocator complains)."""
    outputs = []
    for preload in (None, str(library)):
        where = tmp_path / ("preloaded" if preload else "bare")
        where.mkdir()

        def step(argv: list[str], preload: str | None = preload, where: Path = where) -> bytes:
            proc = run(argv, preload, where)
            label = f"{argv[0]} ({'with ' + library.name if preload else 'bare'})"
            assert proc.returncode == 0, f"{label}: exit {proc.returncode}: {proc.stderr[-2000:]!r}"
            assert b"hpsync-malloc:" not in proc.stderr, f"{label}: {proc.stderr[-2000:]!r}"
            return proc.stdout
        outputs.append(scenario(step))
    assert outputs[0] == outputs[1], f"output differs under {library.name}"


def test_preload_takes(run: Runner, library: Path, tmp_path: Path) -> None:
    """The library really is loaded into the process (else nothing is tested)."""
    maps = run(["cat", "/proc/self/maps"], str(library), tmp_path)
    assert maps.returncode == 0 and library.name.encode() in maps.stdout


def test_python_threads(run: Runner, library: Path, tmp_path: Path) -> None:
    prog = REPO / "tests" / "python" / "progs" / "alloc_workload.py"
    same_with_and_without(run, library, tmp_path, lambda step: step(["python3", str(prog)]))


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git(run: Runner, library: Path, tmp_path: Path) -> None:
    """Commits (one with a 2 MB file), log, diff, a repack on two threads
    and fsck: everything printed is fixed by content, names and dates."""
    def scenario(step: Callable[[list[str]], bytes]) -> bytes:
        git = ["git", "-c", "gc.auto=0", "-c", "core.autocrlf=false", "-c", "pack.threads=2"]
        out = [step(git + ["init", "-q", "-b", "main", "."])]
        for rev in range(3):
            for i in range(12):
                if rev == 0 or i % 3 == rev:
                    body = "".join(f"line {j} of file {i}: {j * i % 97}\n" for j in range(200 * i + 1))
                    body += f"revision {rev}\n" * rev
                    step(["sh", "-c", 'printf "%s" "$1" > "$2"', "--", body, f"f{i}.txt"])
            step(["sh", "-c", "head -c 2000000 /dev/zero | tr '\\0' 'x' > big.bin"])
            step(git + ["add", "-A"])
            out.append(step(git + ["commit", "-q", "-m", f"revision {rev}"]))
        out.append(step(git + ["log", "--stat", "-p", "--format=%H %an %ad %s"]))
        out.append(step(git + ["diff", "HEAD~2", "HEAD"]))
        step(git + ["repack", "-a", "-d", "-f", "-q"])
        out.append(step(git + ["cat-file", "--batch-all-objects", "--batch-check"]))
        step(git + ["fsck", "--full", "--no-progress"])
        return b"".join(out)
    same_with_and_without(run, library, tmp_path, scenario)


C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return *(const unsigned *)a < *(const unsigned *)b ? -1 : *(const unsigned *)a > *(const unsigned *)b; }
int main(void)
{
    unsigned n = 200000, *v = malloc(n * sizeof *v), x = 12345;
    for (unsigned i = 0; i < n; i++) v[i] = x = x * 1103515245u + 12345u;
    qsort(v, n, sizeof *v, cmp);
    unsigned long long sum = 0;
    for (unsigned i = 0; i < n; i += 1000) sum = sum * 31 + v[i];
    char *s = strdup("hpsync");
    printf("%s %llu %u %u\n", s, sum, v[0], v[n - 1]);
    free(s);
    free(v);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_gcc(run: Runner, library: Path, tmp_path: Path) -> None:
    """gcc -O2 under the allocator emits the same object, which then runs alike."""
    def scenario(step: Callable[[list[str]], bytes]) -> bytes:
        step(["sh", "-c", 'printf "%s" "$1" > prog.c', "--", C_PROGRAM])
        step(["gcc", "-O2", "-c", "prog.c", "-o", "prog.o"])
        obj = step(["cat", "prog.o"])
        step(["gcc", "prog.o", "-o", "prog"])
        return obj + step(["./prog"])
    same_with_and_without(run, library, tmp_path, scenario)

# SPDX-License-Identifier: MIT
"""hps-bench-locks itself: argument checking and its mutual-exclusion check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = Path(os.environ.get("HPSYNC_BUILD", REPO / "build")) / "bin" / "hps-bench-locks"

# A "mutex" that excludes nobody: the benchmark must notice lost updates.
BROKEN_LOCK = r"""
#include <pthread.h>
int pthread_mutex_lock(pthread_mutex_t *m) { (void)m; return 0; }
int pthread_mutex_unlock(pthread_mutex_t *m) { (void)m; return 0; }
"""


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BENCH), *args], capture_output=True, text=True, timeout=60,
                          env=env, check=False)


def test_rejects_bad_arguments(built: None) -> None:
    for args in (["--mode", "nope"], ["--mode", "throughput", "--threads", "0"],
                 ["--mode", "uncontended", "--iters", "x"], ["--bogus"]):
        proc = run(args)
        assert proc.returncode == 2, args
        assert proc.stdout == ""


def test_uncontended_document(built: None) -> None:
    proc = run(["--mode", "uncontended", "--iters", "1000", "--reps", "2"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema_version"] == 1 and doc["context"]["cores"] >= 1
    phases = [r["phase"] for r in doc["rows"]]
    assert phases == ["single_threaded_process", "multi_threaded_process"]
    assert "libc" in doc["mutex_provider"]
    for key in ("host", "cpu_model", "l1d", "timer", "compiler", "compile_flags",
                "git_commit", "kernel", "glibc"):
        assert key in doc["context"], key


def test_detects_broken_mutual_exclusion(built: None, tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed to build the project anyway"
    src = tmp_path / "broken.c"
    src.write_text(BROKEN_LOCK)
    lib = tmp_path / "libbroken.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(lib), str(src)], check=True)
    env = dict(os.environ, LD_PRELOAD=str(lib))
    proc = run(["--mode", "throughput", "--threads", "4", "--duration-ms", "100"], env=env)
    assert proc.returncode == 1
    assert "mutual exclusion violated" in proc.stderr
    assert proc.stdout == ""


def test_context_names_the_checked_out_commit(built: None) -> None:
    """Every context block carries the commit the build was made from,
    stamped at build time (here or in a linked worktree, whose .git is a
    file), with "-dirty" when tracked files differ from it: `make` after
    `git commit` never reports the old one, nor a clean one for edits."""
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout.strip()
    doc = json.loads(run(["--mode", "uncontended", "--iters", "100", "--reps", "1"]).stdout)
    assert doc["context"]["git_commit"] == head.stdout.strip() + ("-dirty" if changed else "")

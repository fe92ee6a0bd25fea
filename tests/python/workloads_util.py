# SPDX-License-Identifier: MIT
"""What the `bench workloads` test modules share: where the tree and the
test double are, and the CLI run against a private build tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from hpsync import schema

REPO = Path(__file__).resolve().parents[2]
FAKE = REPO / "tests" / "python" / "progs" / "fake_workload.py"
BUILD = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))


def run_cli(build: Path, tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    e.update(HPSYNC_BUILD=str(build), XDG_DATA_HOME=str(tmp / "data"), **env)
    return subprocess.run(["./hpsync", *args], cwd=REPO, env=e, capture_output=True, text=True,
                          timeout=120, check=False)


def by_key(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {schema.key(m): m for m in run["measurements"]}

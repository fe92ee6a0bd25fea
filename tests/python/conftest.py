# SPDX-License-Identifier: MIT
"""Shared fixtures: the repository root, canned data and a `./hpsync` runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "python"))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def canned() -> Callable[[str], Any]:
    def load(name: str) -> Any:
        return json.loads((DATA / name).read_text())
    return load


@pytest.fixture(scope="session")
def built() -> None:
    """The C programs must exist: these tests run the real CLI on the real build."""
    build = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))
    for rel in ("bin/hps-doctor", "bin/hps-bench-locks", "lib/libhpsync-preload.so"):
        assert (build / rel).is_file(), f"{build / rel} missing: run make first"


@pytest.fixture
def hpsync(built: None, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ./hpsync from the repository root with a private data directory."""
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env.pop("LD_PRELOAD", None)

    def run(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["./hpsync", *args], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=timeout, check=False)
    return run

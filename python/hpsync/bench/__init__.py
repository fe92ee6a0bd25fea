# SPDX-License-Identifier: MIT
"""The benchmarks of `hpsync bench NAME`, one home each on one shared base.

  base.py        the shared driver: Bench, Session (runs programs, keeps
                 contexts), the round order, samples -> stored run
  targets.py     the targets table's loader and its one evaluator
  targets.toml   every benchmark's targets, as data
  locks.py, elide.py, malloc/, shmem/, tm.py, workloads/
                 one benchmark each: measure (runs programs), analyse
                 (pure: rows, measurements), render (its text report)

A new benchmark is a module (or a package, when large) with those three
parts and a BENCH, listed in BENCHES below, with its targets in targets.toml.
"""

from __future__ import annotations

from . import elide, locks, malloc, shmem, tm, workloads
from .base import Bench

BENCHES: dict[str, Bench] = {b.name: b for b in (locks.BENCH, elide.BENCH, malloc.BENCH, shmem.BENCH,
                                                  tm.BENCH, workloads.BENCH)}


def by_kind(kind: str) -> Bench | None:
    return next((b for b in BENCHES.values() if b.kind == kind), None)

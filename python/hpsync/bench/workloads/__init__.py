# SPDX-License-Identifier: MIT
"""`hpsync bench workloads [NAME...]`: the suite of workload programs
(bench/workloads/, build/bin/hps-workload-*), each validating its own
result, on every synchronization variant it offers.  The runner learns
from each program what it offers (describe.py), so a new workload or
variant needs no change here; measure.py runs them, analyse.py is pure,
render.py prints and plans the report's figures."""

from __future__ import annotations

import argparse

from ... import args as argtypes
from ..base import Bench, Option
from ..malloc import allocator_list
from . import analyse, describe, measure, render


def workload_name(text: str) -> str:
    """A workload's name as given; whether it is built is checked when the
    run starts (listing the programs is the build's business, not the parser's)."""
    if not text or not all(c.isalnum() or c in "-_" for c in text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a workload name")
    return text


OPTIONS = (
    Option("names", workload_name, "NAME",
           "workloads to run (default every one built: " + ", ".join(describe.ORDER) + ")", nargs="*"),
    Option("--threads", argtypes.thread_list, "LIST", "thread counts (default each workload's, else 1,2,8)"),
    Option("--reps", argtypes.positive_int, "N", "interleaved rounds, one process each (default 3; 1 with --quick)"),
    Option("--slices", argtypes.slice_count, "S",
           "each process runs a variant's work in S interleaved slices and pools them (default 8; "
           "1 with --quick; workloads on the shared harness but the graph)"),
    Option("--scale", argtypes.work_scale, "X",
           "each run does X times its work (0 < X <= 64; longer runs for what a run pays once, "
           "like the granularity controller's climb; workloads on the shared harness)"),
    Option("--budget", argtypes.minutes, "MIN",
           "the run's time budget in minutes (default 15; 2 with --quick; none with --scale): when "
           "its first 4 %% says it will not fit, it starts again with every scalable run's work cut "
           "to fit (at most 4x less); 0: always full size"),
    Option("--allocators", allocator_list, "LIST",
           "allocators for the workloads that run under each (default all installed; cia is hpsync)"),
)

BENCH = Bench("workloads", "the workload suite (scatter, histogram, ring, ART, ...) on every variant",
              OPTIONS, measure.make_params, measure.measure, analyse.analyse, render.render,
              figures=render.figures)

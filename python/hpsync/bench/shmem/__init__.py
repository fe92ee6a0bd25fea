# SPDX-License-Identifier: MIT
"""`hpsync bench shmem`: OpenSHMEM at 2 and 4 PEs, hpsync on-node, hpsync
over libfabric (shm, tcp;ofi_rxm, sockets) and Open MPI's OSHMEM when
installed, plus callgrind instruction counts and launch times: measure.py
runs the programs, analyse.py is pure, render.py prints."""

from __future__ import annotations

from ... import args as argtypes
from ..base import Bench, Option
from . import analyse, measure, render
from .analyse import VARIANTS


def variant_list(text: str) -> list[str]:
    return argtypes.name_list(text, "variant", VARIANTS)


OPTIONS = (
    Option("--variants", variant_list, "LIST", f"comma-separated subset of {','.join(VARIANTS)} (default all)"),
    Option("--reps", argtypes.positive_int, "N", "interleaved rounds per variant (default 3; 1 with --quick)"),
    Option("--load", argtypes.small_count, "N", "run N busy loops beside the whole measurement (default 0)"),
)

BENCH = Bench("shmem", "OpenSHMEM at 2 and 4 PEs: hpsync on-node and over libfabric, Open MPI's OSHMEM",
              OPTIONS, measure.make_params, measure.measure, analyse.analyse, render.render)

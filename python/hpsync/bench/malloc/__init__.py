# SPDX-License-Identifier: MIT
"""`hpsync bench malloc`: hpsync's allocator against glibc, RAND and the
installed jemalloc, tcmalloc and mimalloc, in one run: measure.py runs the
program, analyse.py is pure, render.py prints."""

from __future__ import annotations

from ... import args as argtypes
from ..base import Bench, Option
from . import analyse, measure, render
from .analyse import ALLOCATORS
from .measure import ALIASES


def allocator_list(text: str) -> list[str]:
    """'glibc,cia' -> ['glibc', 'hpsync']; names are checked, aliases resolved."""
    names = argtypes.name_list(text, "allocator", ALLOCATORS, ALIASES)
    return list(dict.fromkeys(ALIASES.get(n, n) for n in names))


OPTIONS = (
    Option("--allocators", allocator_list, "LIST",
           f"comma-separated subset of {','.join(ALLOCATORS)} (default all; cia is hpsync)"),
    Option("--reps", argtypes.positive_int, "N",
           "interleaved rounds per figure (default 5; 3 and 1 with --quick)"),
    Option("--duration-ms", argtypes.positive_int, "N", "per throughput run (default 400; 100 with --quick)"),
    Option("--threads", argtypes.thread_list, "LIST", "thread counts of the multithreaded mixes (default 2,4)"),
)

BENCH = Bench("malloc", "hpsync's allocator vs glibc, RAND, jemalloc, tcmalloc, mimalloc", OPTIONS,
              measure.make_params, measure.measure, analyse.analyse, render.render)

# SPDX-License-Identifier: MIT
"""Medians, ratios and spreads of repeated measurements, shared by the pure
computations of the benchmarks (locks, bench_elide, mallocs, shmembench) and
of compare."""

from __future__ import annotations

import statistics
from typing import Iterable


def median(values: Iterable[float]) -> float | None:
    """The median as a float, or None when there are no values."""
    xs = [float(v) for v in values]
    return float(statistics.median(xs)) if xs else None


def strict_median(values: Iterable[float]) -> float:
    """median() of a figure that always has values: none raises
    statistics.StatisticsError, as statistics.median does."""
    return float(statistics.median([float(v) for v in values]))


def ratio(num: float | None, den: float | None) -> float | None:
    """num / den, or None when either is missing or den is 0."""
    if num is None or den is None or den == 0:
        return None
    return float(num) / float(den)


def spread(values: Iterable[float]) -> float | None:
    """(max - min) / median of repetitions; None without values or when the
    median is not positive."""
    xs = list(values)
    med = median(xs)
    return (max(xs) - min(xs)) / med if med is not None and med > 0 else None

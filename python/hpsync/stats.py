# SPDX-License-Identifier: MIT
"""Statistics of repeated measurements, shared by every pure computation:
medians, ratios, spreads, coefficients of variation and the Mann-Whitney U
test that `compare` marks significance with."""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Mapping, Sequence


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


def geomean_per_round(per_item: Mapping[Any, Mapping[int, float]]) -> dict[int, float]:
    """Per round, the geometric mean over items (rows, points) of their
    figures for that round; only rounds in which every item has one (a
    round short of an item would be a mean of other things)."""
    if not per_item:
        return {}
    rounds = set.intersection(*(set(f) for f in per_item.values()))
    return {r: math.exp(sum(math.log(f[r]) for f in per_item.values()) / len(per_item))
            for r in sorted(rounds)}


def spread(values: Iterable[float]) -> float | None:
    """(max - min) / median of repetitions; None without values or when the
    median is not positive."""
    xs = list(values)
    med = median(xs)
    return (max(xs) - min(xs)) / med if med is not None and med > 0 else None


def coefficient_of_variation(xs: Sequence[float]) -> float:
    """Sample standard deviation over the mean (0 for constant input, NaN if n < 2)."""
    n = len(xs)
    if n < 2:
        return float("nan")
    mean = sum(xs) / n
    if mean == 0:
        return 0.0
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return (var ** 0.5) / abs(mean)


# ---- Mann-Whitney U ------------------------------------------------------------

def _ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _exact_p(u: float, n1: int, n2: int) -> float:
    """Two-sided exact p of U (no ties): counts of rank arrangements by U."""
    # ways[n][m][u]: arrangements of n and m items with statistic u.
    maxu = n1 * n2
    prev = [[[0] * (maxu + 1) for _ in range(n2 + 1)] for _ in range(n1 + 1)]
    for i in range(n1 + 1):
        for j in range(n2 + 1):
            if i == 0 or j == 0:
                prev[i][j][0] = 1
                continue
            # Largest element from sample 1 adds j to U; from sample 2 adds nothing.
            cur = prev[i][j]
            for uu in range(maxu + 1):
                a = prev[i - 1][j][uu - j] if uu - j >= 0 else 0
                b = prev[i][j - 1][uu]
                cur[uu] = a + b
    counts = prev[n1][n2]
    total = sum(counts)
    lo = min(u, maxu - u)
    tail = sum(c for k, c in enumerate(counts) if k <= lo + 1e-9)
    return min(1.0, 2 * tail / total)


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p value of the Mann-Whitney U test: exact for small samples
    without ties, else the normal approximation with tie and continuity correction."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("both samples need values")
    ranks = _ranks(list(a) + list(b))
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    ties = len(set(list(a) + list(b))) < n1 + n2
    if not ties and n1 * n2 <= 400:
        return _exact_p(u1, n1, n2)
    n = n1 + n2
    counts: dict[float, int] = {}
    for x in list(a) + list(b):
        counts[x] = counts.get(x, 0) + 1
    tie_term = sum(t ** 3 - t for t in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return 1.0
    mu = n1 * n2 / 2
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    return min(1.0, max(0.0, math.erfc(max(z, 0.0) / math.sqrt(2))))

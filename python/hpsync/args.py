# SPDX-License-Identifier: MIT
"""argparse types shared by the subcommands: each turns one option's text
into a value or raises ArgumentTypeError with the one line argparse prints."""

from __future__ import annotations

import argparse
from typing import Container, Sequence


def _whole(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None


def _number(text: str, noun: str = "a number") -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not {noun}") from None


def _whole_in(text: str, lo: int, hi: int) -> int:
    value = _whole(text)
    if value < lo or value > hi:
        raise argparse.ArgumentTypeError(f"must be from {lo} to {hi}, got {value}")
    return value


def positive_int(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def small_count(text: str) -> int:
    """A whole number from 0 to 64 (busy loops, say)."""
    return _whole_in(text, 0, 64)


def slice_count(text: str) -> int:
    """Slices of a run: 1 to 32 (the harness keeps 32 repetitions' k)."""
    return _whole_in(text, 1, 32)


def work_scale(text: str) -> float:
    """A factor on a run's work: a number in (0, 64]."""
    value = _number(text)
    if not 0 < value <= 64:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 64, got {text}")
    return value


def minutes(text: str) -> float:
    """A time budget in minutes: a number in [0, 1440] (0: none)."""
    value = _number(text, "a number of minutes")
    if not 0 <= value <= 1440:
        raise argparse.ArgumentTypeError(f"must be 0 (no budget) to 1440 minutes, got {text}")
    return value


def thread_list(text: str) -> list[int]:
    """'1,2,16' -> [1, 2, 16]; every entry a whole number in 1..4096."""
    out: list[int] = []
    for part in text.split(","):
        try:
            value = int(part.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not a comma-separated list of thread counts") from None
        if not 1 <= value <= 4096:
            raise argparse.ArgumentTypeError(f"thread count {value} is outside 1..4096")
        out.append(value)
    return out


def name_list(text: str, what: str, known: Sequence[str], aliases: Container[str] = ()) -> list[str]:
    """'a, b' -> ['a', 'b'] (in the order given, blanks dropped): at least one
    name, each in known or aliases; an unknown name's error offers known."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"empty {what} list")
    for n in names:
        if n not in known and n not in aliases:
            raise argparse.ArgumentTypeError(f"unknown {what} '{n}' (choose from {', '.join(known)})")
    return names

# SPDX-License-Identifier: MIT
"""Progress of a long run on stderr, with an estimate of the time left.

On a terminal one line redraws itself (a bar, steps done, what runs now,
the ETA); elsewhere (a log file, a pipe, CI) each step is one plain line,
so nothing unreadable lands in a log.  The estimate starts from the cost
the caller guesses for each step and is corrected, as steps finish, by how
long the guessed cost actually took: elapsed / cost done * cost left.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

WIDTH = 24


def clock(seconds: float) -> str:
    """'42s', '3m05s', '1h02m'."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    def __init__(self, costs: list[float], stream: TextIO | None = None,
                 now: Callable[[], float] = time.monotonic, tty: bool | None = None) -> None:
        self.costs = [max(c, 1e-3) for c in costs]
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.now = now
        self.started = now()
        self.done = 0
        self._drawn = False

    @property
    def total(self) -> int:
        return len(self.costs)

    def eta(self) -> float:
        """Seconds left: the guessed costs until real time corrects them."""
        spent = sum(self.costs[:self.done])
        left = sum(self.costs[self.done:])
        elapsed = self.now() - self.started
        if self.done == 0 or elapsed <= 0:
            return left
        return elapsed / spent * left

    def line(self, what: str) -> str:
        n = self.total
        filled = WIDTH * self.done // n if n else WIDTH
        return (f"[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{n} {what}  "
                f"ETA {clock(self.eta())}")

    def step(self, what: str) -> None:
        """Step self.done + 1 starts: say what it is."""
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line(what))
            self._drawn = True
        else:
            self.stream.write(f"hpsync: {self.line(what)}\n")
        self.stream.flush()

    def finish_step(self) -> None:
        self.done = min(self.done + 1, self.total)

    def say(self, message: str) -> None:
        """A message between steps: on a terminal it goes above the bar."""
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False
        self.stream.write(f"hpsync: {message}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._drawn:
            self.stream.write(f"\r\x1b[Kdone: {self.total} step(s) in "
                              f"{clock(self.now() - self.started)}\n")
            self.stream.flush()
            self._drawn = False

# SPDX-License-Identifier: MIT
"""What every benchmark shares: its description (Bench), the session that
runs its C programs and collects their context blocks, the one order rounds
interleave in, and the path from raw samples to a stored run.

A benchmark module (bench/locks.py, bench/malloc/, ...) supplies three parts:

  measure(params, session) -> extra   runs programs; returns its samples
                                      and whatever else its report needs
  analyse(extra, params) -> Analysis  pure: rows for its own tables, the
                                      schema's measurements, warnings
  render(run) -> str                  its text report of a finished run

run() strings them together; analyse_run() is the pure half (it also
upgrades stored schema-1 documents, whose samples it re-analyses), and the
targets table judges the measurements.  The session reads the hypervisor's
steal time around every program it runs (extra["steal"]), and the CPU time
other processes took meanwhile; the run's warnings say how much of the
machine its processes lost, and beside how much load they ran.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import runner, schema, stats
from . import targets

Row = dict[str, Any]


@dataclass(frozen=True)
class Option:
    """One of a benchmark's own command-line options (beyond --json,
    --quick, --check, --db, --no-store, which every benchmark takes)."""
    flag: str
    type: Callable[[str], Any]
    metavar: str
    help: str
    nargs: str | None = None     # positional arguments (flag without dashes): "*"


@dataclass(frozen=True)
class Analysis:
    rows: list[Row]
    measurements: list[schema.Measurement]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Bench:
    name: str                                   # `hpsync bench NAME`, targets' bench
    help: str
    options: Sequence[Option]
    make_params: Callable[[argparse.Namespace], Any]
    measure: Callable[[Any, "Session"], dict[str, Any]]
    analyse: Callable[[Mapping[str, Any], Mapping[str, Any]], Analysis]
    render: Callable[[Mapping[str, Any]], str]
    # Its own figures for `hpsync report` ((kind, title, draw -> PNG)),
    # instead of one per group of measurements.
    figures: Callable[[Mapping[str, Any]], list[tuple[str, str, Callable[[], bytes]]]] | None = None

    @property
    def kind(self) -> str:
        return f"bench-{self.name}"


def interleaved(round_no: int, items: Sequence[Any]) -> list[Any]:
    """The order of one round: forward on even rounds, reversed on odd ones.

    Alternating the order (A B C, C B A, ...) puts every configuration at the
    same mean position in time, so a slow drift of the shared machine (another
    guest waking up, thermal state) biases none of them.  Every benchmark
    interleaves its rounds this one way.
    """
    return list(items) if round_no % 2 == 0 else list(reversed(items))


# A process that lost this share of the machine's CPU time to the
# hypervisor (1-2 % is usual for a busy 2-vCPU guest here, with bursts), and
# at least STEAL_MIN_MS of it: the kernel counts steal in ticks (10 ms), and
# a tick or two in a process of a fraction of a second is not a burst.
STEAL_FLAG = 0.05
STEAL_MIN_MS = 30.0


def _over(share: float | None, ms: float | None, limit: float, min_ms: float) -> bool:
    """A share of the machine of at least limit, over at least min_ms."""
    return (share or 0.0) >= limit and (ms or 0.0) >= min_ms


def steal_burst(share: float | None, ms: float | None) -> bool:
    return _over(share, ms, STEAL_FLAG, STEAL_MIN_MS)


def _share_note(label: str, pairs: Sequence[tuple[float, float]], verbs: tuple[str, str], limit: float,
                min_ms: float, flag: str, caution: str, flagged: bool) -> list[str]:
    """One line on a share of the machine each of a run's processes met
    ((share, ms) a process): median, max and how many met `limit` or more
    (and min_ms), which the benchmark flags `flag` if flagged."""
    if not pairs:
        return []
    xs = sorted(share for share, _ in pairs)
    over = sum(_over(share, ms, limit, min_ms) for share, ms in pairs)
    return [f"{label}: {len(xs)} processes {verbs[0]} a median {100 * stats.median(xs):.1f} % "
            f"of the machine's CPU time (max {100 * xs[-1]:.1f} %); {over} {verbs[1]} {100 * limit:g} % "
            f"or more (and {min_ms:g} ms)"
            + (f": the measurements of their rounds are flagged '{flag}'" if over and flagged else
               f": {caution}" if over else "")]


def steal_note(stolen: Sequence[Mapping[str, float]] | None, flagged: bool = False) -> list[str]:
    """One line on the hypervisor's steal over a run's processes (extra's
    "steal": {"share", "ms"} a process), if it was read; flagged: the
    benchmark flags the measurements of those processes' rounds."""
    pairs = [(float(p["share"]), float(p.get("ms") or 0.0)) for p in stolen or ()]
    return _share_note("hypervisor steal", pairs, ("lost", "lost"), STEAL_FLAG, STEAL_MIN_MS, "steal",
                       "read figures measured then with care", flagged)


# A process that other processes ran beside for this share of the machine's
# CPU time (and this long: /proc/stat counts 10 ms ticks) measured a shared
# machine: its figures are what a program gets beside such a load, and its
# ratios are noisier (docs/cli.md).
LOAD_NOTE = 0.10
LOAD_MIN_MS = 200.0


def load_burst(share: float | None, ms: float | None) -> bool:
    return _over(share, ms, LOAD_NOTE, LOAD_MIN_MS)


def load_note(windows: Sequence[Mapping[str, float]] | None, flagged: bool = False) -> list[str]:
    """One line on the CPU time other processes took while the run's
    processes ran (extra's "steal" entries' others_share and others_ms,
    runner.StealWindow), if it was read; flagged: the benchmark flags the
    measurements of those processes' rounds."""
    pairs = [(float(w["others_share"]), float(w.get("others_ms") or 0.0))
             for w in windows or () if w.get("others_share") is not None]
    return _share_note("other processes", pairs, ("ran beside others taking", "ran beside"), LOAD_NOTE,
                       LOAD_MIN_MS, "load", "their figures describe a shared machine, read their verdicts so",
                       flagged)


class Session:
    """The programs of one benchmark run: runs them, keeps every distinct
    context block they print and the steal time each program ran under,
    and logs progress on stderr."""

    def __init__(self, log: Callable[[str], None] = runner.log) -> None:
        self.log = log
        self.contexts = schema.Contexts()
        self.steal: list[dict[str, float]] = []

    def context(self, ctx: Mapping[str, Any] | None, program: str) -> int | None:
        return self.contexts.add(ctx, program)

    def stolen(self, window: Mapping[str, float] | None) -> None:
        """A program's share of the machine the hypervisor took, and its ms
        (a closed runner.StealWindow; None where steal cannot be read)."""
        if window is not None:
            self.steal.append(dict(window))

    def run(self, argv: Sequence[str], env: Mapping[str, str] | None = None,
            timeout: float = 600.0, program: str | None = None) -> tuple[dict[str, Any], int | None]:
        """(the program's JSON document, the id of its context block);
        a failure is a CliError.  program names it when argv[0] is a
        wrapper (valgrind)."""
        window = runner.StealWindow()
        doc = runner.run_json(argv, env, timeout)
        self.stolen(window.close())
        return doc, self.context(doc.get("context"), program or Path(argv[0]).name)


def params_dict(params: Any) -> dict[str, Any]:
    return asdict(params) if is_dataclass(params) else dict(params)


def analyse_run(bench: Bench, doc: Mapping[str, Any],
                table: Sequence[targets.Target] | None = None) -> dict[str, Any]:
    """A run with its measurements, rows (in extra), warnings and verdicts
    computed from its samples: pure."""
    a = bench.analyse(doc["extra"], doc["params"])
    flagged = {f for m in a.measurements for f in m.get("flags", ())}
    warnings = (a.warnings + steal_note(doc["extra"].get("steal"), "steal" in flagged)
                + load_note(doc["extra"].get("steal"), "load" in flagged))
    return {**doc, "measurements": a.measurements, "warnings": warnings,
            "extra": {**doc["extra"], "rows": a.rows},
            "targets": targets.evaluate(targets.for_bench(bench.name, table), a.measurements)}


def run(bench: Bench, params: Any, log: Callable[[str], None] = runner.log) -> dict[str, Any]:
    """Measure, then analyse: the finished run document."""
    started = time.monotonic()
    session = Session(log)
    extra = bench.measure(params, session)
    if session.steal:
        extra = {**extra, "steal": session.steal}
    doc = schema.envelope(bench.kind, params_dict(params), session.contexts.blocks, extra, started)
    return analyse_run(bench, doc)


# ---- what the benchmarks' analyses share -------------------------------------------

def per_round(samples: Sequence[Mapping[str, Any]], key: str) -> tuple[list[float], list[int]]:
    """The figure key of each sample and its round, in round order."""
    ss = sorted(samples, key=lambda s: s.get("round", 0))
    return [float(s[key]) for s in ss], [int(s.get("round", 0)) for s in ss]


def context_of(samples: Sequence[Mapping[str, Any]], default: int | None) -> int | None:
    """The context id the samples were measured in (their first one's)."""
    for s in samples:
        if "context" in s:
            return s["context"]  # type: ignore[no-any-return]
    return default


def round_ratios(mine: Sequence[Mapping[str, Any]], ref: Sequence[Mapping[str, Any]],
                 key: str) -> tuple[list[float], list[int]]:
    """Each round's figure over the reference's in the same round, and the
    rounds.  Configurations run interleaved within a round, so a round the
    shared machine slowed down as a whole cancels out of its own ratio."""
    by_round = {s.get("round", 0): float(s[key]) for s in ref}
    out, rounds = [], []
    for s in sorted(mine, key=lambda s: s.get("round", 0)):
        r = stats.ratio(float(s[key]), by_round.get(s.get("round", 0)))
        if r is not None:
            out.append(r)
            rounds.append(int(s.get("round", 0)))
    return out, rounds


def warn_few_and_noisy(rows: Sequence[Row], count_key: str, min_rounds: int, noisy: float,
                       name: Callable[[Row], str], what: str = "round(s) per figure") -> list[str]:
    """The two caveats every benchmark prints: figures from fewer than
    min_rounds repetitions, and figures whose repetitions disagree by more
    than noisy (spread = (max - min) / median)."""
    out: list[str] = []
    few = sorted({int(r[count_key]) for r in rows if r.get(count_key) and r[count_key] < min_rounds})
    if few:
        out.append(f"only {few[0]} {what}: medians of fewer than {min_rounds} runs on a shared "
                   f"machine are noisy")
    loud = [r for r in rows if (r.get("spread") or 0) > noisy]
    if loud:
        out.append(f"rounds disagree by more than {noisy:.0%} for "
                   + ", ".join(name(r) for r in loud[:6]) + (" ..." if len(loud) > 6 else ""))
    return out

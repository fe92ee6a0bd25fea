# SPDX-License-Identifier: MIT
"""Pure computations for `hpsync bench locks`: samples -> rows -> ratios -> targets.

Nothing here runs a program or prints; every function takes plain data (as
stored in the JSON document) and returns plain data, so the tests feed them
canned JSON from tests/data/.

Samples are what the measurement loop collects, one per program run:
  uncontended: {"lock", "round", "ns_per_op", "ns_per_op_single_threaded"}
  throughput:  {"lock", "threads", "round", "ops_per_sec", "ops_min_thread", "ops_max_thread"}
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from . import stats

# The interposer's algorithms, in the order tables show them.  "clh" is an
# alias the library accepts for hemlock; it is not a separate configuration.
ALGORITHMS: tuple[str, ...] = ("ttas", "ticket", "mcs", "hemlock", "adaptive")
ALIASES: dict[str, str] = {"clh": "hemlock"}
DEFAULT_LOCK = "adaptive"
BASELINE = "glibc"
CONFIGS: tuple[str, ...] = (BASELINE,) + ALGORITHMS

# The targets.
UNCONTENDED_MAX_RATIO = 0.9       # default lock's ns/op <= 0.9 x glibc's
OVERSUB_FACTOR = 8                # "8 x cores" threads
OVERSUB_MIN_RATIO = 0.5           # every algorithm >= 0.5 x glibc there
MIN_ROUNDS_FOR_CONFIDENCE = 3

Row = dict[str, Any]


def lock_names() -> list[str]:
    """Every name `--lock` accepts."""
    return list(ALGORITHMS) + list(ALIASES)


def interleaved_order(round_no: int, configs: Sequence[str] = CONFIGS) -> list[str]:
    """Configurations in forward order on even rounds, reversed on odd ones.

    Alternating the order (A B C, C B A, ...) puts every configuration at the
    same mean position in time, so a slow drift of the shared machine (another
    guest waking up, thermal state) biases none of them.
    """
    return list(configs) if round_no % 2 == 0 else list(reversed(configs))


def thread_counts(cores: int, explicit: Sequence[int] | None = None) -> list[int]:
    """1, 2, 4 x cores and 8 x cores (deduplicated, ascending), unless given."""
    if explicit:
        return sorted(set(explicit))
    return sorted({1, 2, 4 * cores, OVERSUB_FACTOR * cores})


def summarise(samples: dict[str, list[dict[str, Any]]]) -> list[Row]:
    """Per-configuration medians over rounds, as table rows.

    Uncontended rows carry ns_per_op (and ops_per_sec = 1e9 / ns_per_op);
    throughput rows carry ops_per_sec (and ns_per_op = 1e9 / ops_per_sec, the
    mean time between two critical sections of the whole process).
    """
    rows: list[Row] = []
    unc = samples.get("uncontended", [])
    for lock in _ordered_locks(s["lock"] for s in unc):
        mine = [s for s in unc if s["lock"] == lock]
        ns = [float(s["ns_per_op"]) for s in mine]
        single = [float(s["ns_per_op_single_threaded"]) for s in mine]
        med = stats.strict_median(ns)
        rows.append({
            "mode": "uncontended", "lock": lock, "threads": 1,
            "ns_per_op": med,
            "ops_per_sec": 1e9 / med if med > 0 else None,
            "ns_per_op_single_threaded": stats.strict_median(single),
            "rounds": len(ns), "ns_per_op_rounds": ns,
            "spread": stats.spread(ns),
        })
    tp = samples.get("throughput", [])
    for threads in sorted({int(s["threads"]) for s in tp}):
        at = [s for s in tp if int(s["threads"]) == threads]
        for lock in _ordered_locks(s["lock"] for s in at):
            mine = [s for s in at if s["lock"] == lock]
            ops = [float(s["ops_per_sec"]) for s in mine]
            med = stats.strict_median(ops)
            fair = [s["ops_min_thread"] / s["ops_max_thread"]
                    for s in mine if s.get("ops_max_thread")]
            rows.append({
                "mode": "throughput", "lock": lock, "threads": threads,
                "ops_per_sec": med,
                "ns_per_op": 1e9 / med if med > 0 else None,
                "fairness": stats.median(fair),
                "rounds": len(ops), "ops_per_sec_rounds": ops,
                "spread": stats.spread(ops),
            })
    return rows


def _ordered_locks(names: Iterable[str]) -> list[str]:
    present = set(names)
    known = [c for c in CONFIGS if c in present]
    return known + sorted(present - set(known))


def add_ratios(rows: list[Row]) -> list[Row]:
    """New rows with ratios against glibc's row of the same mode and threads.

    ns_ratio_vs_glibc (uncontended): this lock's ns/op over glibc's; lower is
    better.  ops_ratio_vs_glibc (throughput): ops/s over glibc's; higher is
    better.  None where glibc was not measured.
    """
    base = {(r["mode"], r["threads"]): r for r in rows if r["lock"] == BASELINE}
    out: list[Row] = []
    for r in rows:
        r = dict(r)
        b = base.get((r["mode"], r["threads"]))
        if r["mode"] == "uncontended":
            r["ns_ratio_vs_glibc"] = stats.ratio(r.get("ns_per_op"), b and b.get("ns_per_op"))
        else:
            r["ops_ratio_vs_glibc"] = stats.ratio(r.get("ops_per_sec"), b and b.get("ops_per_sec"))
        out.append(r)
    return out


def find_row(rows: Sequence[Row], mode: str, lock: str, threads: int | None = None) -> Row | None:
    for r in rows:
        if r["mode"] == mode and r["lock"] == lock and (threads is None or r["threads"] == threads):
            return r
    return None


def evaluate_targets(rows: Sequence[Row], cores: int) -> list[dict[str, Any]]:
    """The issue's three targets over rows that already carry ratios.

    Each result: {id, description, passed: True | False | None (not measured),
    detail}.  A target is judged only on what was measured.
    """
    return [_target_uncontended(rows), _target_adaptive_throughput(rows),
            _target_oversubscribed(rows, cores)]


def _target_uncontended(rows: Sequence[Row]) -> dict[str, Any]:
    t: dict[str, Any] = {
        "id": "uncontended",
        "description": f"default lock ({DEFAULT_LOCK}) uncontended lock+unlock "
                       f"<= {UNCONTENDED_MAX_RATIO:g}x glibc's time",
    }
    r = find_row(rows, "uncontended", DEFAULT_LOCK)
    ratio = r.get("ns_ratio_vs_glibc") if r else None
    if ratio is None:
        return {**t, "passed": None, "detail": "not measured"}
    return {**t, "passed": ratio <= UNCONTENDED_MAX_RATIO,
            "detail": f"{ratio:.2f}x ({r['ns_per_op']:.2f} ns vs glibc "
                      f"{r['ns_per_op'] / ratio:.2f} ns)"}


def _target_adaptive_throughput(rows: Sequence[Row]) -> dict[str, Any]:
    t: dict[str, Any] = {
        "id": "adaptive-throughput",
        "description": f"{DEFAULT_LOCK} throughput >= glibc at every thread count",
    }
    mine = [r for r in rows if r["mode"] == "throughput" and r["lock"] == DEFAULT_LOCK
            and r.get("ops_ratio_vs_glibc") is not None]
    if not mine:
        return {**t, "passed": None, "detail": "not measured"}
    parts = [f"{r['threads']}T {r['ops_ratio_vs_glibc']:.2f}x" for r in mine]
    return {**t, "passed": all(r["ops_ratio_vs_glibc"] >= 1.0 for r in mine),
            "detail": ", ".join(parts)}


def _target_oversubscribed(rows: Sequence[Row], cores: int) -> dict[str, Any]:
    threads = OVERSUB_FACTOR * cores
    t: dict[str, Any] = {
        "id": "oversubscribed",
        "description": f"every algorithm >= {OVERSUB_MIN_RATIO:g}x glibc throughput "
                       f"at {OVERSUB_FACTOR}x cores ({threads} threads)",
    }
    mine = [r for r in rows if r["mode"] == "throughput" and r["threads"] == threads
            and r["lock"] != BASELINE and r.get("ops_ratio_vs_glibc") is not None]
    if not mine:
        return {**t, "passed": None, "detail": "not measured"}
    failing = [r for r in mine if r["ops_ratio_vs_glibc"] < OVERSUB_MIN_RATIO]
    parts = [f"{r['lock']} {r['ops_ratio_vs_glibc']:.2f}x" for r in mine]
    missing = [a for a in ALGORITHMS if a not in {r["lock"] for r in mine}]
    detail = ", ".join(parts) + (f"; not measured: {', '.join(missing)}" if missing else "")
    return {**t, "passed": not failing and not missing, "detail": detail}


def warnings_for(rows: Sequence[Row]) -> list[str]:
    """Caveats a reader should see next to the figures."""
    out: list[str] = []
    few = sorted({r["rounds"] for r in rows if r.get("rounds", 0) < MIN_ROUNDS_FOR_CONFIDENCE})
    if few:
        out.append(f"only {few[0]} round(s) per figure: medians of fewer than "
                   f"{MIN_ROUNDS_FOR_CONFIDENCE} runs on a shared machine are noisy")
    noisy = [r for r in rows if (r.get("spread") or 0) > 0.5]
    if noisy:
        names = ", ".join(f"{r['lock']}@{r['threads']}T" for r in noisy[:6])
        out.append(f"rounds disagree by more than 50% for {names}"
                   + (" ..." if len(noisy) > 6 else ""))
    return out

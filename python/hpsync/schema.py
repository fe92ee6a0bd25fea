# SPDX-License-Identifier: MIT
"""The one schema of a stored run, benchmark or characterization alike.

    {"schema_version": 2, "kind": "bench-locks" | ... | "characterize",
     "created": UTC ISO 8601, "elapsed_s": seconds, "params": {...},
     "contexts": [{"id": 0, "programs": [...], "processes": N, <context block>}, ...],
     "measurements": [{"dims": {...}, "metric", "unit", "better", "reps": [...],
                       "rounds"?: [...], "value", "context", "flags"?: [...]}, ...],
     "targets": [verdicts], "warnings": [...], "extra": {kind-specific data}}

A context block is what a C program prints about the machine and the build
(bench/common/context.c); every distinct one of a run is kept, with the
programs that printed it.  A measurement is one figure: its dims name it
(which part, lock, allocator, size, threads, ...), `reps` are its raw
repetitions (one a round, or one a batch when a program repeats in-process),
`value` their median, `context` the id of the context it was measured in.
`compare`, `report` and `repeatability` need nothing else, so they work on
every kind; `extra` holds what a kind's own text report shows beyond that
(its rows, the samples they came from, notes).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

from . import stats

SCHEMA_VERSION = 2
BETTER = ("lower", "higher")
# Timer figures each process measures anew: not what makes two contexts differ.
_VOLATILE_TIMER_KEYS = ("clock_gettime_ns", "clock_step_ns")

Measurement = dict[str, Any]


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def measurement(dims: Mapping[str, Any], metric: str, unit: str, reps: Iterable[float],
                better: str | None = None, context: int | None = None,
                rounds: Sequence[int] | None = None, flags: Sequence[str] = (),
                value: float | None = None) -> Measurement:
    """One measurement; its value is the median of reps unless given."""
    xs = [float(r) for r in reps]
    m: Measurement = {"dims": dict(dims), "metric": metric, "unit": unit, "better": better,
                      "reps": xs, "value": value if value is not None else stats.median(xs),
                      "context": context}
    if rounds is not None:
        m["rounds"] = [int(r) for r in rounds]
    if flags:
        m["flags"] = sorted(set(flags))
    return m


# The order dims are named in, whatever order a stored document keeps them
# in (JSON objects have none): what a measurement is part of first, then
# who or what ran, then how, then sizes; names not listed follow, sorted.
DIM_ORDER = ("probe", "part", "test", "workload", "setting", "lock", "allocator", "variant",
             "launcher", "transport", "function", "op", "provider", "pattern", "state", "mapping",
             "pool", "column", "summary", "backend", "d1", "npes", "size", "pages", "levels", "copy")


def ordered_dims(dims: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A measurement's dims (but threads, and empty ones) in DIM_ORDER."""
    rank = {k: i for i, k in enumerate(DIM_ORDER)}
    items = [(k, v) for k, v in dims.items() if v is not None and v != "" and k != "threads"]
    return sorted(items, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _dim_text(name: str, value: Any) -> str:
    return str(value) if isinstance(value, str) else f"{name}={value}"


def key(m: Mapping[str, Any]) -> str:
    """What pairs a measurement with its counterpart in another run: the
    first dim, the metric, the other dims (numbers as name=value), and
    threads last as " T=n", e.g. "throughput/ops_per_sec/adaptive T=4" or
    "compute/int_ops_per_sec/compact T=2"."""
    dims = ordered_dims(m["dims"])
    parts = [_dim_text(*dims[0])] if dims else []
    parts.append(str(m["metric"]))
    parts += [_dim_text(k, v) for k, v in dims[1:]]
    threads = m["dims"].get("threads")
    return "/".join(parts) + (f" T={threads}" if threads is not None else "")


class Contexts:
    """The distinct context blocks of one run, in the order first seen."""

    def __init__(self, blocks: Sequence[Mapping[str, Any]] = ()) -> None:
        self.blocks: list[dict[str, Any]] = []
        self._ids: dict[str, int] = {}
        for b in blocks:
            self.add({k: v for k, v in b.items() if k not in ("id", "programs", "processes")},
                     *b.get("programs", []))

    @staticmethod
    def _identity(ctx: Mapping[str, Any]) -> str:
        timer = {k: v for k, v in (ctx.get("timer") or {}).items() if k not in _VOLATILE_TIMER_KEYS}
        return repr(sorted({**ctx, "timer": timer}.items(), key=lambda kv: kv[0]))

    def add(self, ctx: Mapping[str, Any] | None, *programs: str) -> int | None:
        """The id of ctx (added when new), noting which program printed it;
        None for a program that printed no context."""
        if not ctx:
            return None
        ident = self._identity(ctx)
        cid = self._ids.get(ident)
        if cid is None:
            cid = len(self.blocks)
            self._ids[ident] = cid
            self.blocks.append({"id": cid, "programs": [], "processes": 0, **ctx})
        block = self.blocks[cid]
        block["processes"] += 1
        for p in programs:
            if p not in block["programs"]:
                block["programs"].append(p)
        return cid


def envelope(kind: str, params: Mapping[str, Any], contexts: Sequence[Mapping[str, Any]],
             extra: Mapping[str, Any], started: float | None = None,
             created: str | None = None) -> dict[str, Any]:
    """A run document without measurements, targets and warnings yet;
    started is a time.monotonic() value."""
    return {"schema_version": SCHEMA_VERSION, "kind": kind, "created": created or now_utc(),
            "elapsed_s": round(time.monotonic() - started, 3) if started is not None else None,
            "params": dict(params), "contexts": list(contexts), "measurements": [],
            "targets": [], "warnings": [], "extra": dict(extra)}


def host_of(doc: Mapping[str, Any]) -> str:
    ctx = (doc.get("contexts") or [{}])[0]
    return str(ctx.get("host", "unknown"))


def first_context(doc: Mapping[str, Any]) -> dict[str, Any]:
    ctxs = doc.get("contexts") or []
    return dict(ctxs[0]) if ctxs else {}


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def validate(doc: Any) -> list[str]:
    """Why doc is not a schema-2 run document (empty when it is)."""
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    out: list[str] = []
    if doc.get("schema_version") != SCHEMA_VERSION:
        out.append(f"schema_version {doc.get('schema_version')!r}, expected {SCHEMA_VERSION}")
    if not isinstance(doc.get("kind"), str) or not doc["kind"]:
        out.append("no kind")
    for k, t in (("params", dict), ("contexts", list), ("measurements", list),
                 ("targets", list), ("warnings", list), ("extra", dict)):
        if not isinstance(doc.get(k), t):
            out.append(f"{k} is not a {t.__name__}")
    if out:
        return out
    ids = [c.get("id") for c in doc["contexts"] if isinstance(c, dict)]
    if len(ids) != len(doc["contexts"]) or len(set(ids)) != len(ids):
        out.append("contexts need unique ids")
    seen: set[str] = set()
    for i, m in enumerate(doc["measurements"]):
        where = f"measurement {i}"
        if not isinstance(m, dict) or not isinstance(m.get("dims"), dict) or not m["dims"]:
            out.append(f"{where} has no dims")
            continue
        if not all(v is None or isinstance(v, (str, int, float)) for v in m["dims"].values()):
            out.append(f"{where}: dims must be strings or numbers")
        if not isinstance(m.get("metric"), str) or not isinstance(m.get("unit"), str):
            out.append(f"{where} needs a metric and a unit")
            continue
        if m.get("better") not in (*BETTER, None):
            out.append(f"{where}: better is {m.get('better')!r}")
        reps = m.get("reps")
        if not isinstance(reps, list) or not all(_is_num(r) for r in reps):
            out.append(f"{where}: reps must be a list of numbers")
        if m.get("value") is not None and not _is_num(m["value"]):
            out.append(f"{where}: value is not a number")
        if m.get("context") is not None and m["context"] not in ids:
            out.append(f"{where}: context {m['context']!r} is not a context id")
        rounds = m.get("rounds")
        if rounds is not None and (not isinstance(rounds, list) or len(rounds) != len(reps or [])):
            out.append(f"{where}: rounds must match reps")
        k = key(m)
        if k in seen:
            out.append(f"{where}: key {k!r} occurs twice")
        seen.add(k)
    return out

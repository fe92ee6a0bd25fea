# SPDX-License-Identifier: MIT
"""`hpsync characterize`: run every machine probe and keep their documents as one run.

Each probe (build/bin/hps-probe-*, and hps-bench-locks --probe for the lock
cost) prints one JSON document:
  {"schema_version": 1, "probe": NAME, "context": {...}, "params": {...},
   "steal_ms": S, "results": [rows]}
This module only runs programs and assembles their documents into a run of
the one schema (hpsync/schema.py): every probe's context block, a
measurement for every figure (measurements_of), and in extra the probes'
own documents unchanged, the flags and the timer facts.  All of that is a
pure function of the documents (assemble()); rendering lives in report.py
and plots.py, ratios between runs in compare.py.

A probe that is missing or fails costs one line on stderr and is recorded in
the run with its status; the other probes still run.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TextIO

from . import runner, schema, stats
from .errors import CliError

KIND = "characterize"
PROBE_SCHEMA_VERSION = 1
ROW_KINDS = ("curve", "latency", "pairs", "matrix", "scalar", "pool", "sweep")


@dataclass(frozen=True)
class Probe:
    """One entry of the registry: how to run a probe and how long it takes."""
    name: str
    program: str                 # file name under build/bin, or an absolute path
    quick_args: tuple[str, ...]
    full_args: tuple[str, ...]
    quick_s: float               # expected seconds, for the progress estimate
    full_s: float

    def args(self, quick: bool) -> list[str]:
        return list(self.quick_args if quick else self.full_args)

    def expected_s(self, quick: bool) -> float:
        return self.quick_s if quick else self.full_s


def _probe(name: str, quick_s: float, full_s: float) -> Probe:
    return Probe(name, f"hps-probe-{name}", ("--quick",), (), quick_s, full_s)


# The lock cost is measured once, by hps-bench-locks (also `bench locks`'s
# program): --probe makes it print this probe document.
MUTEX = Probe("mutex", "hps-bench-locks", ("--probe", "--quick"), ("--probe",), 2, 10)


# Order matters: the timer first (every later figure rests on it), then the
# cheap probes, the long ones last.
REGISTRY: tuple[Probe, ...] = (
    _probe("timer", 1, 3),
    _probe("compute", 3, 20),
    _probe("membw", 3, 20),
    _probe("tlb", 1, 4),
    _probe("create", 1, 5),
    MUTEX,
    _probe("handoff", 2, 10),
    _probe("condvar", 2, 10),
    _probe("cas", 2, 10),
    _probe("c2c", 3, 30),
    _probe("pools", 4, 30),
)


def probe_names(registry: Sequence[Probe] = REGISTRY) -> list[str]:
    return [p.name for p in registry]


def select(registry: Sequence[Probe], only: Sequence[str] | None) -> list[Probe]:
    """The probes named in only (in registry order), or all; unknown names are a usage error."""
    if not only:
        return list(registry)
    known = probe_names(registry)
    bad = [n for n in only if n not in known]
    if bad:
        raise CliError(f"unknown probe '{bad[0]}' (choose from {', '.join(known)})", 2)
    return [p for p in registry if p.name in only]


def program_path(probe: Probe, bin_dir: Path | None = None) -> Path:
    path = Path(probe.program)
    if path.is_absolute():
        return path
    return (bin_dir or runner.build_dir() / "bin") / probe.program


# ---- validation (pure) ------------------------------------------------------

def validate(doc: Any, name: str) -> str | None:
    """Why doc is not a usable probe document, or None if it is."""
    if not isinstance(doc, dict):
        return "printed JSON that is not an object"
    if doc.get("schema_version") != PROBE_SCHEMA_VERSION:
        return f"schema_version {doc.get('schema_version')!r}, expected {PROBE_SCHEMA_VERSION}"
    if doc.get("probe") != name:
        return f"document names probe {doc.get('probe')!r}, expected {name!r}"
    results = doc.get("results")
    if not isinstance(results, list):
        return "no results list"
    for i, row in enumerate(results):
        if not isinstance(row, dict) or row.get("kind") not in ROW_KINDS:
            kind = row.get("kind") if isinstance(row, dict) else None
            return f"result {i} has unknown kind {kind!r}"
        if "metric" not in row:
            return f"result {i} has no metric"
    return None


# ---- running ------------------------------------------------------------------

@dataclass
class Outcome:
    """What running one probe gave: a document, or a status and a reason."""
    name: str
    program: str
    args: list[str]
    status: str                  # "ok", "missing" or "failed"
    seconds: float
    document: dict[str, Any] | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "program": self.program, "args": self.args,
                               "status": self.status, "seconds": round(self.seconds, 3)}
        if self.error is not None:
            out["error"] = self.error
        if self.document is not None:
            out["document"] = self.document
        return out


def run_probe(probe: Probe, quick: bool, bin_dir: Path | None = None,
              timeout_factor: float = 20.0) -> Outcome:
    """Run one probe in a clean environment; never raises for the probe's own failures."""
    path = program_path(probe, bin_dir)
    args = probe.args(quick)
    if not path.is_file():
        return Outcome(probe.name, str(path), args, "missing", 0.0,
                       error=f"{path} not found (not built yet?)")
    timeout = max(60.0, probe.expected_s(quick) * timeout_factor)
    start = time.monotonic()
    doc, error = runner.run_document([str(path), *args], runner.clean_env(), timeout)
    elapsed = time.monotonic() - start
    if doc is None:
        return Outcome(probe.name, str(path), args, "failed", elapsed, error=error)
    why = validate(doc, probe.name)
    if why is not None:
        return Outcome(probe.name, str(path), args, "failed", elapsed, error=why)
    return Outcome(probe.name, str(path), args, "ok", elapsed, document=doc)


class Progress:
    """A bar with a time estimate when stderr is a terminal; else one line a probe."""

    def __init__(self, probes: Sequence[Probe], quick: bool, stream: TextIO | None = None,
                 tty: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.expected = [p.expected_s(quick) for p in probes]
        self.total = len(probes)
        self.done = 0
        self.start = time.monotonic()

    def remaining_s(self) -> float:
        """Expected seconds left, scaled by how fast the machine has been so far."""
        done_expected = sum(self.expected[:self.done])
        left = sum(self.expected[self.done:])
        elapsed = time.monotonic() - self.start
        scale = elapsed / done_expected if done_expected > 0 and elapsed > 0 else 1.0
        return left * min(max(scale, 0.25), 10.0)

    def _bar(self, label: str) -> None:
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        text = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{label:<10} ~{self.remaining_s():.0f} s left ")
        self.stream.write(text)
        self.stream.flush()

    def starting(self, probe: Probe) -> None:
        if self.tty:
            self._bar(probe.name)

    def finished(self, outcome: Outcome) -> None:
        self.done += 1
        line = (f"characterize: {outcome.name} ok ({outcome.seconds:.1f} s)"
                if outcome.status == "ok"
                else f"characterize: {outcome.name} {outcome.status}: {outcome.error}")
        if self.tty:
            if outcome.status != "ok":
                # Clear the bar, say what went wrong on its own line, redraw.
                self.stream.write("\r\033[K")
                print(f"hpsync: {line}", file=self.stream, flush=True)
            self._bar("done" if self.done == self.total else "")
            if self.done == self.total:
                self.stream.write("\n")
                self.stream.flush()
        else:
            print(f"hpsync: {line}", file=self.stream, flush=True)


def run_all(probes: Sequence[Probe], quick: bool, bin_dir: Path | None = None,
            progress: Progress | None = None) -> list[Outcome]:
    outcomes = []
    for probe in probes:
        if progress:
            progress.starting(probe)
        outcome = run_probe(probe, quick, bin_dir)
        outcomes.append(outcome)
        if progress:
            progress.finished(outcome)
    return outcomes


# ---- assembling (pure) ----------------------------------------------------------

def dists_of(doc: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(row, dist) for every distribution in a probe document (latency and pool rows)."""
    return [(r, r["dist"]) for r in doc.get("results", [])
            if r.get("kind") in ("latency", "pool") and isinstance(r.get("dist"), dict)]


def row_label(row: dict[str, Any]) -> str:
    """'metric', 'metric/variant' or 'metric/pool T=4' for messages and tables."""
    parts = [str(row.get("metric", "?"))]
    for key in ("variant", "pool", "mapping"):
        if key in row:
            parts.append(str(row[key]))
    label = "/".join(parts)
    if "threads" in row:
        label += f" T={row['threads']}"
    return label


def flags_of(name: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Steal time during the probe, and every bimodal distribution."""
    out: list[dict[str, Any]] = []
    steal = doc.get("steal_ms")
    if isinstance(steal, (int, float)) and steal > 0:
        out.append({"probe": name, "flag": "steal",
                    "detail": f"{steal:g} ms of CPU time stolen by the hypervisor during the probe; "
                              f"its figures may be inflated"})
    for row, dist in dists_of(doc):
        if dist.get("bimodal"):
            out.append({"probe": name, "flag": "bimodal", "measurement": row_label(row),
                        "detail": f"{row_label(row)} falls into two levels; read its histogram, "
                                  f"not its median"})
    return out


def timer_facts(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The context's timer block and the timer probe's scalars and latency medians."""
    facts: dict[str, Any] = {}
    for o in outcomes:
        if o.document and isinstance(o.document.get("context", {}).get("timer"), dict):
            facts["context"] = o.document["context"]["timer"]
            break
    timer = next((o for o in outcomes if o.name == "timer" and o.document), None)
    if timer and timer.document:
        measured: dict[str, Any] = {}
        for row in timer.document.get("results", []):
            if row.get("kind") == "scalar":
                measured[row["metric"]] = {"value": row.get("value"), "unit": row.get("unit", "")}
            elif row.get("kind") == "latency":
                d = row.get("dist", {})
                measured[row_label(row) + " median"] = {"value": d.get("median"),
                                                        "unit": d.get("unit", "")}
        facts["measured"] = measured
    return facts


def _better(unit: str) -> str | None:
    """Times are better lower, rates higher; anything else is not said."""
    if unit in ("ns", "us", "ms", "s"):
        return "lower"
    if unit.endswith("/s"):
        return "higher"
    return None


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _floats(xs: Any) -> list[float]:
    return [float(x) for x in xs if _num(x) is not None] if isinstance(xs, list) else []


def _probe_measurements(name: str, doc: Mapping[str, Any], cid: int | None) -> list[schema.Measurement]:
    """Every figure of one probe document: a curve's or scalar's value (a
    curve's reps), a latency's or pool's median (its samples), the median
    of each pairs column, the median off-diagonal cell of a matrix, each
    point of a sweep (its x a dim)."""
    out: list[schema.Measurement] = []
    steal = _num(doc.get("steal_ms"))
    base_flags = ["steal"] if steal is not None and steal > 0 else []

    def add(dims: dict[str, Any], row: Mapping[str, Any], unit: str, reps: list[float],
            value: float | None, flags: list[str] = base_flags) -> None:
        threads = row.get("threads") if isinstance(row.get("threads"), int) else None
        dims = {"probe": name, **{k: v for k, v in dims.items() if v not in (None, "")}}
        if threads is not None:
            dims["threads"] = threads
        out.append(schema.measurement(dims, str(row.get("metric", "?")), unit, reps, _better(unit),
                                      cid, flags=flags, value=value))
    for row in doc.get("results", []):
        kind = row.get("kind")
        if kind == "curve":
            add({"mapping": row.get("mapping")}, row, str(row.get("unit", "")), _floats(row.get("reps")),
                _num(row.get("value")))
        elif kind == "sweep":
            x = str(row.get("x") or "x")
            add({"variant": row.get("variant"), x: row.get(x)}, row, str(row.get("unit", "")),
                _floats(row.get("reps")), _num(row.get("value")))
        elif kind == "scalar":
            v = _num(row.get("value"))
            add({}, row, str(row.get("unit", "")), [] if v is None else [v], v)
        elif kind in ("latency", "pool"):
            d = row.get("dist", {}) or {}
            detail = {"variant": row.get("variant")} if kind == "latency" else {
                "pool": row.get("pool"), "levels": row.get("levels")}
            add(detail, row, str(d.get("unit", "")), _floats(d.get("samples")), _num(d.get("median")),
                base_flags + (["bimodal"] if d.get("bimodal") else []))
        elif kind == "pairs":
            pairs = [p for p in row.get("pairs", []) if isinstance(p, list) and len(p) == 2]
            for i, col in enumerate((str(row.get("x", "x")), str(row.get("y", "y")))):
                vals = _floats([p[i] for p in pairs])
                add({"variant": row.get("variant"), "column": col}, {**row, "threads": None},
                    str(row.get("unit", "")), vals, stats.median(vals))
        elif kind == "matrix":
            cells = [float(v) for i, r in enumerate(row.get("median", [])) for j, v in enumerate(r)
                     if i != j and _num(v) is not None]
            add({"summary": "off-diagonal median"}, row, str(row.get("unit", "ns")), cells,
                stats.median(cells))
    return out


def measurements_of(probes: Sequence[Mapping[str, Any]],
                    contexts: schema.Contexts) -> list[schema.Measurement]:
    """The measurements of every probe that succeeded, in run order; a
    figure whose key repeats one before it (a probe printing two rows of the
    same name) is numbered so no two measurements share a key."""
    out: list[schema.Measurement] = []
    seen: dict[str, int] = {}
    for p in probes:
        doc = p.get("document")
        if p.get("status") != "ok" or not isinstance(doc, dict):
            continue
        cid = contexts.add(doc.get("context"), p.get("program", p["name"]))
        for m in _probe_measurements(p["name"], doc, cid):
            k = schema.key(m)
            seen[k] = seen.get(k, 0) + 1
            if seen[k] > 1:
                m["dims"]["copy"] = seen[k]
            out.append(m)
    return out


def build_run(probes: Sequence[Mapping[str, Any]], params: Mapping[str, Any],
              created: str | None = None, elapsed_s: float | None = None) -> dict[str, Any]:
    """The run document from every probe's outcome ({name, program, args,
    status, seconds, error?, document?}): measurements, every context,
    warnings for the probes that failed, and in extra the outcomes with
    their documents, the flags and the timer facts."""
    flags: list[dict[str, Any]] = []
    warnings: list[str] = []
    for p in probes:
        if isinstance(p.get("document"), dict):
            flags.extend(flags_of(p["name"], p["document"]))
        else:
            warnings.append(f"{p['name']}: {p.get('status')}: {p.get('error')}")
    contexts = schema.Contexts()
    ms = measurements_of(probes, contexts)
    outcomes = [Outcome(p["name"], p.get("program", ""), list(p.get("args", [])), p.get("status", "ok"),
                        float(p.get("seconds", 0.0)), p.get("document"), p.get("error")) for p in probes]
    doc = schema.envelope(KIND, params, contexts.blocks,
                          {"probes": [dict(p) for p in probes], "timer": timer_facts(outcomes),
                           "flags": flags}, created=created)
    doc["elapsed_s"] = elapsed_s
    doc["measurements"] = ms
    doc["warnings"] = warnings
    return doc


def assemble(outcomes: Sequence[Outcome], quick: bool, only: Sequence[str] | None = None,
             created: str | None = None) -> dict[str, Any]:
    """The run document of these outcomes."""
    return build_run([o.as_json() for o in outcomes],
                     {"quick": quick, "only": list(only) if only else None}, created,
                     round(sum(o.seconds for o in outcomes), 3))


def from_probe_document(doc: dict[str, Any]) -> dict[str, Any]:
    """A run document around one probe's document (for `report file.json`)."""
    name = str(doc.get("probe", "?"))
    why = validate(doc, name)
    if why is not None:
        raise CliError(f"not a probe document: {why}")
    o = Outcome(name, name, [], "ok", 0.0, document=doc)
    return assemble([o], quick=bool(doc.get("params", {}).get("quick", False)),
                    created=str(doc.get("created", "")) or None)


def documents(run: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(probe name, document) of every probe that succeeded, in run order."""
    return [(p["name"], p["document"]) for p in run.get("extra", {}).get("probes", [])
            if p.get("status") == "ok" and isinstance(p.get("document"), dict)]


def characterize(quick: bool, only: Sequence[str] | None,
                 registry: Sequence[Probe] = REGISTRY, bin_dir: Path | None = None,
                 progress_factory: Callable[[Sequence[Probe], bool], Progress] = Progress,
                 ) -> dict[str, Any]:
    probes = select(registry, only)
    est = sum(p.expected_s(quick) for p in probes)
    runner.log(f"characterize: {len(probes)} probes, about {est:.0f} s")
    outcomes = run_all(probes, quick, bin_dir, progress_factory(probes, quick))
    if not any(o.status == "ok" for o in outcomes):
        runner.log("characterize: no probe succeeded")
    return assemble(outcomes, quick, only)

# SPDX-License-Identifier: MIT
"""`hpsync characterize`: run every machine probe and keep their documents as one run.

Each probe (build/bin/hps-probe-*) prints one JSON document:
  {"schema_version": 1, "probe": NAME, "context": {...}, "params": {...},
   "steal_ms": S, "results": [rows]}
This module only runs programs and assembles their documents; flags and timer
facts are pure functions of those documents (assemble()), rendering lives in
report.py and plots.py, ratios between runs in compare.py.

A probe that is missing or fails costs one line on stderr and is recorded in
the run with its status; the other probes still run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from . import runner, store
from .errors import CliError

KIND = "characterize"
SCHEMA_VERSION = 1
PROBE_SCHEMA_VERSION = 1
ROW_KINDS = ("curve", "latency", "pairs", "matrix", "scalar", "pool")


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


# Order matters: the timer first (every later figure rests on it), then the
# cheap probes, the long ones last.
REGISTRY: tuple[Probe, ...] = (
    _probe("timer", 1, 3),
    _probe("compute", 3, 20),
    _probe("membw", 3, 20),
    _probe("create", 1, 5),
    _probe("mutex", 2, 10),
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
    try:
        proc = subprocess.run([str(path), *args], env=runner.clean_env(), capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(probe.name, str(path), args, "failed", time.monotonic() - start,
                       error=f"did not finish within {timeout:.0f} s")
    except OSError as exc:
        return Outcome(probe.name, str(path), args, "failed", time.monotonic() - start,
                       error=f"cannot run: {exc.strerror}")
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        why = lines[-1].strip() if lines else ""
        return Outcome(probe.name, str(path), args, "failed", elapsed,
                       error=f"exit status {proc.returncode}" + (f": {why}" if why else ""))
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        return Outcome(probe.name, str(path), args, "failed", elapsed,
                       error=f"malformed JSON ({exc.msg} at line {exc.lineno})")
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


def assemble(outcomes: Sequence[Outcome], quick: bool, only: Sequence[str] | None = None,
             created: str | None = None) -> dict[str, Any]:
    """The run document: every probe's outcome (with its document), flags, timer facts."""
    flags: list[dict[str, Any]] = []
    warnings: list[str] = []
    for o in outcomes:
        if o.document is not None:
            flags.extend(flags_of(o.name, o.document))
        else:
            warnings.append(f"{o.name}: {o.status}: {o.error}")
    context = next((o.document["context"] for o in outcomes
                    if o.document and isinstance(o.document.get("context"), dict)), {})
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "created": created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "params": {"quick": quick, "only": list(only) if only else None},
        "context": context,
        "probes": [o.as_json() for o in outcomes],
        "timer": timer_facts(outcomes),
        "flags": flags,
        "warnings": warnings,
    }


def from_probe_document(doc: dict[str, Any]) -> dict[str, Any]:
    """A run document around one probe's document (for `report file.json`)."""
    name = str(doc.get("probe", "?"))
    why = validate(doc, name)
    if why is not None:
        raise CliError(f"not a probe document: {why}")
    o = Outcome(name, name, [], "ok", 0.0, document=doc)
    return assemble([o], quick=bool(doc.get("params", {}).get("quick", False)),
                    created=str(doc.get("created", "")) or None)


def load(spec: str, db: Path | None) -> tuple[str, dict[str, Any]]:
    """RUN as the user gives it: a stored run id or a path to a JSON document.
    Returns a label ('run 3' or the path) and a characterize run document."""
    path = Path(spec)
    if not spec.isdigit() or path.is_file():
        if not path.is_file():
            raise CliError(f"'{spec}' is neither a run id nor a file")
        try:
            doc = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read {path}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise CliError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from exc
        label = str(path)
    else:
        db_path = db or store.default_db_path()
        doc = store.load_run(db_path, int(spec))
        label = f"run {spec}"
    if not isinstance(doc, dict):
        raise CliError(f"{label} is not a JSON object")
    if doc.get("kind") == KIND:
        return label, doc
    if "probe" in doc:
        return label, from_probe_document(doc)
    raise CliError(f"{label} is a '{doc.get('kind', '?')}' document, not a characterization "
                   f"(run `hpsync characterize` first)")


def documents(run: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(probe name, document) of every probe that succeeded, in run order."""
    return [(p["name"], p["document"]) for p in run.get("probes", [])
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

# SPDX-License-Identifier: MIT
"""What a workload program offers, as it says itself (`--describe`).

Every workload is one program, build/bin/hps-workload-NAME.  The runner
finds them by that name and asks each one, with `--describe`, for one JSON
document (docs/workloads.md, "The workload program's contract"):

  workload      its name (NAME)
  title         one line: what it models
  variants      [{name, kind, arg?, group?, baseline?, default?, quick?, env?,
                  needs?, restarts?, granularity?, controller?, serial?}]
                  arg       the name the program takes in --variants and
                            prints in its rows (default: name); several
                            variants may share one with different env
                            (tm-k4 on HPSYNC_TM=norec and on stm)
                  group     lines of the restarts and granularity figures
                            (the TM backend of a k sweep)
                  kind      lock | elide | tm | other ("tm": a transactional
                            variant, compared with the baseline's mutex)
                  baseline  the variant speed-ups are measured against
                  default / quick   in the default / the --quick suite
                            (default true)
                  env       settings the variant's process needs
                  needs     what the machine must offer: "rtm"
                  restarts  elision restarts (the restarts figure's x)
                  granularity / controller  a static coarsening factor k /
                            the dynamic controller (the granularity figure)
                  serial    static chunks run serialized (hps_tm_for_serial):
                            the controller is compared with it as with
                            the static k
  metrics       [{name, unit, better, speedup?}]: each row gives NAME_reps;
                  speedup (default true) for throughput-like figures
  dims          row fields that name a row beyond variant and threads
  allocators    true: run once per allocator (LD_PRELOAD), as bench malloc
  scale         true: the program takes --scale X (X times each run's work,
                  0 < X <= 64; the shared harness's programs)
  slices        true: a run at --scale X equals S runs at X / S on the same
                  input (--reps S), so the runner may slice it (measure.py);
                  false where --scale changes the input (the graph)
  rows          {"default": [..], "quick": [..]}: each mode's rows (--rows)
  whole_rows    rows whose input changes partway through a run (histogram's
                  b1m-b16): sliced, they would repeat the change; run whole
  conflict      {row: level}: the rows' conflict levels ("low", "high",
                  "changing"), for the controller's per-level target
                  (optional; analyse.dyn_by_level)
  threads       {"default": [..], "quick": [..]}   (optional)
  args          {"default": [..], "quick": [..]}   extra arguments
  seconds       {"default": s, "quick": s}: one variant at one thread count
                  for one round, for the ETA
  figures       [{shape, metric, x?, series?}]  the report's shapes beyond
                  speed-up vs threads and abort causes (which every
                  workload gets): "curve" (metric against the numeric dim x,
                  a line per series: variant or allocator), "restarts",
                  "granularity"

A run is `PROGRAM [args] --threads LIST --variants LIST --reps 1`: one JSON
document, {"workload", "context", "rows": [{variant, threads, <dims>,
<metric>_reps, tm, elision}]}.  A row may instead hold its variants' entries
in "variants": [{variant, ...}] (the shared harness's form), each then read
as a row with the outer row's fields; a metric may be NAME_reps, a list
NAME, or a number NAME.  tm.k_end (the controller's final k per thread) or
a row's "granularity" gives the controller's point.  A wrong result is exit status 1, no JSON,
and a stderr line "NAME: VARIANT ...: wrong result: WHY".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ... import runner
from ...errors import CliError

PREFIX = "hps-workload-"
# The suite's order (the numbering); a workload not listed follows,
# by name.  The one line a new workload may add.
ORDER = ("scatter", "histogram", "physics", "graph", "ring", "tree", "art", "pipeline")
KINDS = ("lock", "elide", "tm", "other")
NEEDS = ("rtm",)
SHAPES = ("curve", "restarts", "granularity")
BETTER = ("higher", "lower")


@dataclass(frozen=True)
class Variant:
    name: str
    kind: str
    arg: str = ""
    group: str = ""
    baseline: bool = False
    default: bool = True
    quick: bool = True
    env: Mapping[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    restarts: int | None = None
    granularity: float | None = None
    controller: bool = False
    serial: bool = False

    @property
    def program_name(self) -> str:
        return self.arg or self.name


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    better: str
    speedup: bool = True


@dataclass(frozen=True)
class Description:
    workload: str
    title: str
    program: str
    variants: tuple[Variant, ...]
    metrics: tuple[Metric, ...]
    dims: tuple[str, ...] = ()
    allocators: bool = False
    scale: bool = False
    slices: bool = False
    rows: Mapping[str, list[str]] = field(default_factory=dict)
    whole_rows: tuple[str, ...] = ()
    conflict: Mapping[str, str] = field(default_factory=dict)
    threads: Mapping[str, list[int]] = field(default_factory=dict)
    args: Mapping[str, list[str]] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)
    figures: tuple[Mapping[str, Any], ...] = ()

    @property
    def baseline(self) -> str | None:
        return next((v.name for v in self.variants if v.baseline), None)

    def variant(self, name: str) -> Variant | None:
        return next((v for v in self.variants if v.name == name), None)

    def chosen(self, quick: bool) -> list[Variant]:
        return [v for v in self.variants if (v.quick if quick else v.default)]

    def as_dict(self) -> dict[str, Any]:
        """Stored with the run: the report and compare need no program."""
        return {"workload": self.workload, "title": self.title,
                "variants": [{"name": v.name, "kind": v.kind, "group": v.group, "baseline": v.baseline,
                              "restarts": v.restarts, "granularity": v.granularity,
                              "controller": v.controller, "serial": v.serial} for v in self.variants],
                "metrics": [{"name": m.name, "unit": m.unit, "better": m.better,
                             "speedup": m.speedup} for m in self.metrics],
                "dims": list(self.dims), "allocators": self.allocators, "slices": self.slices,
                "conflict": dict(self.conflict),
                "figures": [dict(f) for f in self.figures]}


def _bad(program: str, why: str) -> CliError:
    return CliError(f"{program} --describe: {why}")


def _str_list(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(s, str) for s in x)


def _modes(doc: Mapping[str, Any], key: str, ok: Any, program: str) -> dict[str, Any]:
    val = doc.get(key, {})
    if not isinstance(val, dict) or not all(k in ("default", "quick") and ok(v) for k, v in val.items()):
        raise _bad(program, f"'{key}' must be {{\"default\": ..., \"quick\": ...}}")
    return dict(val)


def parse(doc: Any, program: str) -> Description:
    """A Description from a --describe document; any mistake is a CliError
    naming the program and the field (a workload's author sees it first)."""
    if not isinstance(doc, dict):
        raise _bad(program, "not a JSON object")
    name = doc.get("workload")
    if not isinstance(name, str) or not name:
        raise _bad(program, "no workload name")
    variants = []
    for v in doc.get("variants") or []:
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            raise _bad(program, "a variant without a name")
        if v.get("kind") not in KINDS:
            raise _bad(program, f"variant {v['name']}: kind must be one of {', '.join(KINDS)}")
        needs = v.get("needs", [])
        if not _str_list(needs) or set(needs) - set(NEEDS):
            raise _bad(program, f"variant {v['name']}: needs takes {', '.join(NEEDS)}")
        env = v.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(x, str) for x in env.values()):
            raise _bad(program, f"variant {v['name']}: env must map names to strings")
        variants.append(Variant(v["name"], v["kind"], str(v.get("arg", "")), str(v.get("group", "")),
                                bool(v.get("baseline", False)),
                                bool(v.get("default", True)), bool(v.get("quick", True)), dict(env),
                                tuple(needs), v.get("restarts"), v.get("granularity"),
                                bool(v.get("controller", False)), bool(v.get("serial", False))))
    if not variants:
        raise _bad(program, "no variants")
    if len({v.name for v in variants}) != len(variants):
        raise _bad(program, "a variant named twice")
    if sum(v.baseline for v in variants) > 1:
        raise _bad(program, "more than one baseline variant")
    metrics = []
    for m in doc.get("metrics") or []:
        if not isinstance(m, dict) or not isinstance(m.get("name"), str) or m.get("better") not in BETTER:
            raise _bad(program, "a metric needs a name and better (higher or lower)")
        metrics.append(Metric(m["name"], str(m.get("unit", "")), m["better"], bool(m.get("speedup", True))))
    if not metrics:
        raise _bad(program, "no metrics")
    dims = doc.get("dims", [])
    if not _str_list(dims) or set(dims) & {"variant", "threads", "workload", "allocator", "round"}:
        raise _bad(program, "dims must be a list of row fields other than variant and threads")
    figures = doc.get("figures", [])
    if not isinstance(figures, list) or not all(isinstance(f, dict) and f.get("shape") in SHAPES
                                                for f in figures):
        raise _bad(program, f"figures: each needs a shape of {', '.join(SHAPES)}")
    whole = doc.get("whole_rows", [])
    if not _str_list(whole):
        raise _bad(program, "whole_rows must be a list of row names")
    conflict = doc.get("conflict", {})
    if not isinstance(conflict, dict) or not all(isinstance(v, str) and v for v in conflict.values()):
        raise _bad(program, "conflict must map row names to level names")
    threads = _modes(doc, "threads", lambda v: isinstance(v, list) and v and all(
        isinstance(t, int) and t > 0 for t in v), program)
    return Description(
        workload=name, title=str(doc.get("title", name)), program=program,
        variants=tuple(variants), metrics=tuple(metrics), dims=tuple(dims),
        allocators=bool(doc.get("allocators", False)), scale=doc.get("scale") is True,
        slices=doc.get("scale") is True and doc.get("slices") is True,
        rows=_modes(doc, "rows", _str_list, program), whole_rows=tuple(whole), conflict=dict(conflict),
        threads=threads,
        args=_modes(doc, "args", _str_list, program),
        seconds=_modes(doc, "seconds", lambda v: isinstance(v, (int, float)) and v >= 0, program),
        figures=tuple(figures))


def programs() -> dict[str, Path]:
    """The workload programs built here, by workload name, in suite order."""
    bindir = runner.build_dir() / "bin"
    found = {p.name[len(PREFIX):]: p for p in sorted(bindir.glob(PREFIX + "*"))
             if p.is_file() and p.stat().st_mode & 0o111}
    return {n: found[n] for n in ordered(found)}


def ordered(names: Sequence[str]) -> list[str]:
    present = set(names)
    return [n for n in ORDER if n in present] + sorted(present - set(ORDER))


def describe(path: Path) -> Description:
    """Ask the program; a program that cannot describe itself is a CliError."""
    doc, why = runner.run_document([str(path), "--describe"], timeout=30.0)
    if doc is None:
        raise _bad(path.name, why or "no document")
    desc = parse(doc, path.name)
    if PREFIX + desc.workload != path.name:
        raise _bad(path.name, f"says it is workload {desc.workload!r}")
    return desc

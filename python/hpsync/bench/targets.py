# SPDX-License-Identifier: MIT
"""The targets table (targets.toml beside this file) and its one evaluator.

A target names measurements by their dims, optionally a reference for each
(the same dims with some replaced: a peer library, another variant, glibc),
a relation (the figure itself, its ratio to the reference, or its
difference from it), a comparison and a limit.  Each judged measurement
contributes its per-round figures (paired with the reference's round by
round: rounds are interleaved, so a round's two figures were measured under
the same conditions).  A measurement's verdict:

  inconclusive  fewer than min_rounds figures, or figures on both sides of
                the limit (the spread crosses the target: one noisy round
                never makes a FAIL, nor a PASS);
  PASS / FAIL   every figure on the good / the bad side of the limit.

A target's verdict is FAIL if any of its measurements fails, else
inconclusive if any is, else PASS; n/a when nothing it names was measured.
Everything here is a pure function of plain data.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import schema, stats
from ..errors import CliError

TABLE = Path(__file__).with_name("targets.toml")
DEFAULT_MIN_ROUNDS = 3
OPS = ("<=", ">=")
RELATIONS = ("value", "ratio", "difference")
# Figures exactly on the limit pass: ratios of equal-looking figures are not
# exact in binary.
EPS = 1e-9
# Measurements listed by name in a verdict's detail; beyond, the worst and the failing.
DETAIL_MAX = 6

PASS, FAIL, INCONCLUSIVE, NA = "PASS", "FAIL", "inconclusive", "n/a"


@dataclass(frozen=True)
class Target:
    id: str
    bench: str
    description: str
    select: dict[str, Any]
    op: str
    limit: float
    against: dict[str, Any] = field(default_factory=dict)
    relation: str = "value"
    min_rounds: int = DEFAULT_MIN_ROUNDS
    per: tuple[str, ...] = ()
    absent: str = ""
    # Where to look when the target is not met (FAIL or inconclusive): a
    # cause outside the code under test that the run's own tables show.
    unmet: str = ""


_FIELDS = {"id", "bench", "description", "select", "op", "limit", "against", "relation",
           "min_rounds", "per", "absent", "unmet"}


def parse(doc: Mapping[str, Any], source: str = "targets") -> list[Target]:
    """Targets from a parsed TOML document ({"target": [tables]}); any
    mistake in the table is a ValueError naming the target."""
    out: list[Target] = []
    ids: set[str] = set()
    for i, t in enumerate(doc.get("target", [])):
        name = f"{source}: target {t.get('id', i + 1)!r}"
        unknown = set(t) - _FIELDS
        if unknown:
            raise ValueError(f"{name}: unknown field {sorted(unknown)[0]!r}")
        for req in ("id", "bench", "description", "select", "op", "limit"):
            if req not in t:
                raise ValueError(f"{name}: no {req}")
        if t["op"] not in OPS:
            raise ValueError(f"{name}: op must be one of {', '.join(OPS)}")
        relation = t.get("relation", "ratio" if t.get("against") else "value")
        if relation not in RELATIONS or (relation == "value") != (not t.get("against")):
            raise ValueError(f"{name}: relation {relation!r} does not fit "
                             f"{'an' if t.get('against') else 'no'} 'against'")
        if not isinstance(t["select"], dict) or not t["select"]:
            raise ValueError(f"{name}: select must name dims")
        if t["id"] in ids:
            raise ValueError(f"{name}: id used twice")
        ids.add(t["id"])
        out.append(Target(id=t["id"], bench=t["bench"], description=t["description"],
                          select=dict(t["select"]), op=t["op"], limit=float(t["limit"]),
                          against=dict(t.get("against", {})), relation=relation,
                          min_rounds=int(t.get("min_rounds", DEFAULT_MIN_ROUNDS)),
                          per=tuple(t.get("per", ())), absent=str(t.get("absent", "")),
                          unmet=str(t.get("unmet", ""))))
    return out


@cache
def table(path: Path = TABLE) -> tuple[Target, ...]:
    """The shipped table, read once."""
    try:
        with path.open("rb") as f:
            return tuple(parse(tomllib.load(f), path.name))
    except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
        raise CliError(f"cannot read the targets table {path}: {exc}") from exc


def for_bench(name: str, targets: Sequence[Target] | None = None) -> list[Target]:
    return [t for t in (table() if targets is None else targets) if t.bench == name]


# ---- matching -------------------------------------------------------------------

def _matches_value(want: Any, got: Any) -> bool:
    if isinstance(want, list):
        return got in want
    if isinstance(want, dict):
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            return False
        return want.get("min", got) <= got <= want.get("max", got)
    return bool(want == got)


def matches(selector: Mapping[str, Any], m: Mapping[str, Any]) -> bool:
    """A measurement matches when its metric and every named dim match:
    a value equals, a list contains, a {min, max} table bounds a number."""
    for k, want in selector.items():
        got = m["metric"] if k == "metric" else m["dims"].get(k, _MISSING)
        if got is _MISSING or not _matches_value(want, got):
            return False
    return True


_MISSING = object()


def reference(m: Mapping[str, Any], against: Mapping[str, Any],
              by_key: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The measurement with m's dims (and metric) but for against's values."""
    dims = dict(m["dims"])
    dims.update({k: v for k, v in against.items() if k != "metric"})
    return by_key.get(schema.key({"dims": dims, "metric": against.get("metric", m["metric"])}))


def _by_round(m: Mapping[str, Any]) -> dict[int, float]:
    return dict(zip(m.get("rounds") or range(len(m["reps"])), m["reps"]))


def figures(m: Mapping[str, Any], ref: Mapping[str, Any] | None, relation: str) -> list[float]:
    """The per-round figures a target judges: m's own reps, or each round's
    ratio or difference to the reference's same round (a reference with a
    single figure stands for every round)."""
    if relation == "value":
        return list(m["reps"])
    assert ref is not None
    mine, theirs = _by_round(m), _by_round(ref)
    if len(theirs) == 1:
        base = next(iter(theirs.values()))
        pairs = [(v, base) for v in mine.values()]
    else:
        pairs = [(v, theirs[r]) for r, v in mine.items() if r in theirs]
    if relation == "difference":
        return [a - b for a, b in pairs]
    return [r for r in (stats.ratio(a, b) for a, b in pairs) if r is not None]


# ---- verdicts ---------------------------------------------------------------------

def judge(values: Sequence[float], op: str, limit: float, min_rounds: int) -> tuple[str, str]:
    """(verdict, why) of one measurement's figures."""
    if len(values) < min_rounds:
        return INCONCLUSIVE, f"{len(values)} round(s), fewer than {min_rounds}"
    tol = EPS * max(1.0, abs(limit))
    ok = [v <= limit + tol if op == "<=" else v >= limit - tol for v in values]
    if all(ok):
        return PASS, ""
    if not any(ok):
        return FAIL, ""
    return INCONCLUSIVE, f"rounds on both sides of {limit:g}"


def combine(verdicts: Sequence[str]) -> str:
    if not verdicts:
        return NA
    if FAIL in verdicts:
        return FAIL
    return INCONCLUSIVE if INCONCLUSIVE in verdicts else PASS


@dataclass(frozen=True)
class Judged:
    m: Mapping[str, Any]
    values: list[float]
    verdict: str
    why: str


def _fmt(value: float, relation: str, unit: str) -> str:
    if relation == "ratio" or unit == "x":
        return f"{value:.2f}x"
    if relation == "difference":
        return f"{value:+.2f} {unit}".rstrip()
    return f"{value:.4g} {unit}".rstrip()


def _labels(group: Sequence[Judged], per: Sequence[str]) -> list[str]:
    """Short names of a group's measurements: the dims that vary among them."""
    names = [k for k, _ in schema.ordered_dims(group[0].m["dims"]) if k not in per]
    names += ["threads"] if "threads" in group[0].m["dims"] else []
    vary = [k for k in names if len({str(j.m["dims"].get(k)) for j in group}) > 1]

    def one(k: str, v: Any) -> str:
        return f"{v}T" if k == "threads" else f"{v} B" if k == "size" else str(v)
    return [" ".join(one(k, j.m["dims"].get(k)) for k in vary) for j in group]


def _detail(t: Target, group: Sequence[Judged]) -> str:
    unit = group[0].m["unit"]
    labels = _labels(group, t.per)

    def part(label: str, j: Judged) -> str:
        med = stats.median(j.values)
        text = f"{label} " if label else ""
        if med is None:
            return text + "no figures"
        text += _fmt(med, t.relation, unit)
        lo, hi = (_fmt(f(j.values), t.relation, unit) for f in (min, max))
        if lo != hi:
            text += f" ({lo} to {hi} over {len(j.values)} rounds)"
        elif len(j.values) > 1:
            text += f" (all {len(j.values)} rounds)"
        if j.why:
            text += f" [inconclusive: {j.why}]"
        if "steal" in j.m.get("flags", ()):
            # Not a reason to judge otherwise, but one to read it so.
            text += " [a round ran under hypervisor steal]"
        if "load" in j.m.get("flags", ()):
            text += " [a round ran beside other processes' load]"
        return text

    items = list(zip(labels, group))
    if len(items) <= DETAIL_MAX:
        return "; ".join(part(lb, j) for lb, j in items)
    sign = 1 if t.op == "<=" else -1
    worst = max(items, key=lambda it: sign * (stats.median(it[1].values) or 0.0))
    failing = [lb for lb, j in items if j.verdict == FAIL]
    # The points that made it inconclusive, when the worst is not one of them
    # (a point with a good median can have a round past the limit).
    unsure = [part(*it) for it in items if it[1].verdict == INCONCLUSIVE and it is not worst]
    return (f"{len(items)} measured; worst {part(*worst)}"
            + (f"; failing: {', '.join(failing[:DETAIL_MAX])}" if failing else "")
            + (f"; inconclusive: {'; '.join(unsure[:DETAIL_MAX])}" if unsure and not failing else ""))


class _Each(dict[str, Any]):
    """A description's field no group names (a target none of whose
    groups was measured): "(each variant)", not a raw "{variant}"."""
    def __missing__(self, key: str) -> str:
        return f"(each {key})"


def _description(t: Target, dims: Mapping[str, Any]) -> str:
    try:
        return t.description.format_map(_Each(dims))
    except (IndexError, ValueError):
        return t.description


def evaluate_target(t: Target, measurements: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One verdict (or one per value of t.per) over the measurements."""
    by_key = {schema.key(m): m for m in measurements}
    judged: list[Judged] = []
    for m in measurements:
        if not matches(t.select, m):
            continue
        ref = reference(m, t.against, by_key) if t.relation != "value" else None
        if t.relation != "value" and ref is None:
            continue
        vals = figures(m, ref, t.relation)
        if not vals:
            continue
        judged.append(Judged(m, vals, *judge(vals, t.op, t.limit, t.min_rounds)))
    groups: dict[tuple[Any, ...], list[Judged]] = {}
    for j in judged:
        groups.setdefault(tuple(j.m["dims"].get(k) for k in t.per), []).append(j)
    absent = "not measured" + (f" ({t.absent})" if t.absent else "")
    if t.per and all(isinstance(t.select.get(k), list) for k in t.per):
        # Every group the selector names gets a verdict, measured or not.
        wanted = [()]
        for k in t.per:
            wanted = [w + (v,) for w in wanted for v in t.select[k]]
        groups = {w: groups.get(w, []) for w in wanted}
    if not groups:
        return [_verdict(t, t.id, _description(t, {}), NA, absent, [])]
    out = []
    for values, group in groups.items():
        dims = dict(zip(t.per, values))
        tid = "_".join([t.id, *(str(v) for v in values)])
        if not group:
            out.append(_verdict(t, tid, _description(t, dims), NA, absent, []))
            continue
        verdict = combine([j.verdict for j in group])
        detail = _detail(t, group)
        if t.unmet and verdict in (FAIL, INCONCLUSIVE):
            detail += f" (not met: {t.unmet})"
        out.append(_verdict(t, tid, _description(t, dims), verdict, detail,
                            [schema.key(j.m) for j in group]))
    return out


def _verdict(t: Target, tid: str, description: str, verdict: str, detail: str,
             judged: list[str]) -> dict[str, Any]:
    return {"id": tid, "bench": t.bench, "description": description, "verdict": verdict,
            "passed": {PASS: True, FAIL: False}.get(verdict), "detail": detail,
            "judged": judged}


def evaluate(targets: Sequence[Target], measurements: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every target's verdicts, in table order."""
    return [v for t in targets for v in evaluate_target(t, measurements)]


def counts(verdicts: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    out = {PASS: 0, FAIL: 0, INCONCLUSIVE: 0, NA: 0}
    for v in verdicts:
        out[v["verdict"]] = out.get(v["verdict"], 0) + 1
    return out

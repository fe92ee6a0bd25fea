# SPDX-License-Identifier: MIT
"""The one run schema: validation, keys, contexts, and the upgrade of
schema-1 documents (canned in tests/data/) as `report`, `compare` and
`repeatability` read them from an old database."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from hpsync import characterize, runs, schema, store
from hpsync.errors import CliError

DATA = Path(__file__).resolve().parents[1] / "data"
CANNED_V1 = {"bench-locks": "bench_locks_pass.json", "bench-elide": "bench_elide_rtm.json",
             "bench-malloc": "bench_malloc_samples.json", "bench-shmem": "bench_shmem_samples.json"}


def minimal() -> dict[str, Any]:
    doc = schema.envelope("bench-x", {"quick": True}, [{"id": 0, "host": "h"}], {})
    doc["measurements"] = [schema.measurement({"part": "a", "threads": 2}, "ns_per_op", "ns",
                                              [3.0, 1.0, 2.0], "lower", 0, rounds=[0, 1, 2])]
    return doc


def test_measurement_value_is_the_median_of_its_reps() -> None:
    m = minimal()["measurements"][0]
    assert m["value"] == 2.0 and m["reps"] == [3.0, 1.0, 2.0]
    assert schema.key(m) == "a/ns_per_op T=2"


def test_valid_document_passes() -> None:
    assert schema.validate(minimal()) == []


@pytest.mark.parametrize("breakage, message", [
    (lambda d: d.update(schema_version=1), "schema_version 1"),
    (lambda d: d.pop("kind"), "no kind"),
    (lambda d: d.update(measurements={}), "measurements is not a list"),
    (lambda d: d["measurements"][0].update(reps=[1, "x"]), "reps must be a list of numbers"),
    (lambda d: d["measurements"][0].update(better="faster"), "better is 'faster'"),
    (lambda d: d["measurements"][0].update(context=7), "context 7 is not a context id"),
    (lambda d: d["measurements"][0].update(rounds=[0]), "rounds must match reps"),
    (lambda d: d["measurements"][0].update(dims={}), "has no dims"),
    (lambda d: d["measurements"].append(copy.deepcopy(d["measurements"][0])), "occurs twice"),
    (lambda d: d["contexts"].append({"id": 0}), "unique ids"),
])
def test_validation_finds_each_problem(breakage: Callable[[dict[str, Any]], Any], message: str) -> None:
    doc = minimal()
    breakage(doc)
    problems = schema.validate(doc)
    assert any(message in p for p in problems), problems


def test_key_does_not_depend_on_the_order_dims_were_stored_in() -> None:
    a = schema.measurement({"test": "put_quiet", "variant": "v", "npes": 2, "size": 8}, "us", "us", [1.0])
    b = schema.measurement({"size": 8, "npes": 2, "variant": "v", "test": "put_quiet"}, "us", "us", [1.0])
    assert schema.key(a) == schema.key(b) == "put_quiet/us/v/npes=2/size=8"
    # Round trip through JSON with sorted keys (as a store might write it).
    assert schema.key(json.loads(json.dumps(a, sort_keys=True))) == schema.key(a)


def test_contexts_keep_every_distinct_block() -> None:
    c = schema.Contexts()
    base = {"host": "h", "compiler": "gcc 12", "timer": {"clock_gettime_ns": 23.1, "clocksource": "tsc"}}
    assert c.add(base, "p1") == 0
    # Another process of the same build measures its clock anew: the same context.
    assert c.add({**base, "timer": {"clock_gettime_ns": 25.7, "clocksource": "tsc"}}, "p2") == 0
    assert c.add({**base, "compiler": "oshcc"}, "p3") == 1
    assert c.add(None, "p4") is None
    assert [b["programs"] for b in c.blocks] == [["p1", "p2"], ["p3"]]
    assert [b["processes"] for b in c.blocks] == [2, 1]


@pytest.mark.parametrize("kind", sorted(CANNED_V1))
def test_schema_1_benchmark_runs_are_upgraded(canned: Callable[[str], Any], kind: str) -> None:
    old = canned(CANNED_V1[kind])
    assert old["schema_version"] == 1 and old["kind"] == kind
    run = runs.upgrade(old, "old run")
    assert schema.validate(run) == [] and run["kind"] == kind
    assert run["measurements"] and run["targets"] and run["extra"]["rows"]
    # The one context of a schema-1 run (if it had one), every sample measured in it.
    assert len(run["contexts"]) == (1 if old.get("context") else 0)
    assert {m["context"] for m in run["measurements"]} <= {0, None}
    assert run["created"] == old.get("created", run["created"])
    # Upgrading is idempotent: a current document passes through.
    assert runs.upgrade(run, "again") == run


def test_schema_1_characterization_is_upgraded() -> None:
    probes = [{"name": p.stem, "program": f"hps-probe-{p.stem}", "args": ["--quick"], "status": "ok",
               "seconds": 1.0, "document": json.loads(p.read_text())}
              for p in sorted((DATA / "characterize" / "probes_a").glob("*.json"))]
    old = {"schema_version": 1, "kind": "characterize", "created": "2026-01-01T00:00:00+00:00",
           "params": {"quick": True, "only": None}, "context": probes[0]["document"]["context"],
           "probes": probes, "timer": {}, "flags": [], "warnings": []}
    run = runs.upgrade(old, "old")
    assert schema.validate(run) == [] and run["created"] == old["created"]
    assert {n for n, _ in characterize.documents(run)} == {p["name"] for p in probes}
    assert any(schema.key(m) == "compute/flops/compact T=1" for m in run["measurements"])


@pytest.mark.parametrize("doc, message", [
    ({"schema_version": 1, "kind": "bench-locks", "rows": []},
     "run 3 is a schema-1 'bench-locks' run without its samples; it cannot be converted: "
     "run `hpsync bench locks` again"),
    ({"schema_version": 1, "kind": "characterize", "rows": []},
     "run 3 is a schema-1 characterization without its probes' documents"),
    ({"schema_version": 1, "kind": "bench-nonesuch", "samples": {"x": []}},
     "run 3 is a 'bench-nonesuch' document, which hpsync cannot read"),
    ({"schema_version": 9, "kind": "bench-locks"}, "newer than this hpsync reads"),
    ({"schema_version": 1, "kind": "bench-locks", "samples": {"uncontended": [{"lock": "glibc"}]}},
     "whose samples cannot be read"),
])
def test_what_cannot_be_upgraded_gets_one_message(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(CliError) as err:
        runs.upgrade(doc, "run 3")
    assert message in err.value.message and "\n" not in err.value.message


def test_an_old_database_is_read_through_the_upgrade(canned: Callable[[str], Any], tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    rid = store.save_run(db, "bench-locks", "h", canned("bench_locks_pass.json"))
    label, run = runs.load(str(rid), db)
    assert label == f"run {rid}" and run["schema_version"] == schema.SCHEMA_VERSION
    assert store.load_run(db, rid)["schema_version"] == 1      # read, not rewritten

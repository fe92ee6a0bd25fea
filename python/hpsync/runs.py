# SPDX-License-Identifier: MIT
"""Loading a run as `report`, `compare` and `repeatability` take it: a
stored run id or a JSON file, of any kind, upgraded to the current schema.

Schema-1 documents (stored before the one-schema store) are upgraded on
read, not rewritten: a characterization is re-assembled from its probes'
documents, a benchmark run re-analysed from its samples (with today's
analysis and targets table).  What cannot be upgraded gets one message
naming the run and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from . import characterize, schema, store
from .bench import BENCHES, by_kind
from .bench.base import analyse_run
from .errors import CliError

# The keys a schema-1 benchmark document kept around its samples and
# kind-specific data, or that analysis recomputes.
_V1_DERIVED = {"schema_version", "kind", "created", "elapsed_s", "params", "context", "rows",
               "targets", "warnings", "run_id", "db", "cores", "rtm_statement"}


def _with_context(samples: Any, cid: int) -> Any:
    """Samples of a one-context run: each measured in that context."""
    if isinstance(samples, list):
        return [{"context": cid, **s} if isinstance(s, dict) else s for s in samples]
    if isinstance(samples, dict):
        return {k: _with_context(v, cid) for k, v in samples.items()}
    return samples


def upgrade(doc: Mapping[str, Any], label: str) -> dict[str, Any]:
    """doc in the current schema, or a CliError saying why it cannot be."""
    if "probe" in doc and "kind" not in doc:
        return characterize.from_probe_document(dict(doc))
    version, kind = doc.get("schema_version"), doc.get("kind")
    if version == schema.SCHEMA_VERSION:
        problems = schema.validate(doc)
        if problems:
            raise CliError(f"{label} is not a valid run: {problems[0]}")
        return dict(doc)
    if version not in (None, 1):
        raise CliError(f"{label} has schema_version {version!r}, newer than this hpsync "
                       f"reads ({schema.SCHEMA_VERSION}): update hpsync")
    if kind == characterize.KIND:
        probes = doc.get("probes")
        if not isinstance(probes, list):
            raise CliError(f"{label} is a schema-1 characterization without its probes' "
                           f"documents; it cannot be converted: run `hpsync characterize` again")
        return characterize.build_run(probes, doc.get("params", {}), doc.get("created"),
                                      doc.get("elapsed_s"))
    bench = by_kind(str(kind))
    if bench is None:
        raise CliError(f"{label} is a '{kind or '?'}' document, which hpsync cannot read "
                       f"(kinds: characterize, {', '.join(b.kind for b in BENCHES.values())})")
    if not doc.get("samples"):
        raise CliError(f"{label} is a schema-1 '{kind}' run without its samples; it cannot be "
                       f"converted: run `hpsync bench {bench.name}` again")
    contexts = schema.Contexts()
    cid = contexts.add(doc.get("context"), f"{kind} (schema 1)")
    extra = {k: v for k, v in doc.items() if k not in _V1_DERIVED}
    if cid is not None:
        extra["samples"] = _with_context(extra["samples"], cid)
    params = dict(doc.get("params", {}))
    if "cores" in doc and "cores" not in params:
        params["cores"] = doc["cores"]
    run = schema.envelope(str(kind), params, contexts.blocks, extra,
                          created=str(doc.get("created") or "") or None)
    run["elapsed_s"] = doc.get("elapsed_s")
    try:
        return analyse_run(bench, run)
    except (KeyError, TypeError, ValueError) as exc:
        raise CliError(f"{label} is a schema-1 '{kind}' run whose samples cannot be read "
                       f"({type(exc).__name__}: {exc}): run `hpsync bench {bench.name}` again") from exc


def read(spec: str, db: Path | None) -> tuple[str, dict[str, Any]]:
    """RUN as the user gives it, as stored: (label, raw document)."""
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
        doc = store.load_run(db or store.default_db_path(), int(spec))
        label = f"run {spec}"
    if not isinstance(doc, dict):
        raise CliError(f"{label} is not a JSON object")
    return label, doc


def load(spec: str, db: Path | None) -> tuple[str, dict[str, Any]]:
    """(label, run in the current schema) of RUN."""
    label, doc = read(spec, db)
    return label, upgrade(doc, label)

# SPDX-License-Identifier: MIT
"""Results store: one SQLite table of runs, each a JSON document.

Schema: runs(id INTEGER PRIMARY KEY, kind TEXT, created TEXT (UTC ISO 8601),
host TEXT, json TEXT).  Keeping whole documents (not columns per figure)
lets every benchmark evolve its JSON without a table migration; the
schema_version inside each document says how to read it, and hpsync.runs
upgrades older documents when it reads them.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import CliError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    kind    TEXT NOT NULL,
    created TEXT NOT NULL,
    host    TEXT NOT NULL,
    json    TEXT NOT NULL
)
"""


def default_db_path() -> Path:
    """~/.local/share/hpsync/results.db, honouring $XDG_DATA_HOME."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hpsync" / "results.db"


@dataclass(frozen=True)
class RunSummary:
    id: int
    kind: str
    created: str
    host: str


def _connect(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path))
        conn.execute(SCHEMA)
        return conn
    except (OSError, sqlite3.Error) as exc:
        raise CliError(f"cannot open results database {path}: {exc}") from exc


def save_run(path: Path, kind: str, host: str, doc: dict[str, Any],
             created: str | None = None) -> int:
    """Store one run; returns its id."""
    stamp = created or datetime.now(timezone.utc).isoformat(timespec="seconds")
    conn = _connect(path)
    try:
        with conn:
            cur = conn.execute("INSERT INTO runs(kind, created, host, json) VALUES (?, ?, ?, ?)",
                               (kind, stamp, host, json.dumps(doc)))
        return int(cur.lastrowid or 0)
    except sqlite3.Error as exc:
        raise CliError(f"cannot store the run in {path}: {exc}") from exc
    finally:
        conn.close()


def list_runs(path: Path, limit: int | None = None) -> list[RunSummary]:
    """Runs, newest first; an absent database is simply empty."""
    if not path.exists():
        return []
    conn = _connect(path)
    try:
        sql = "SELECT id, kind, created, host FROM runs ORDER BY id DESC"
        params: tuple[int, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (limit,)
        return [RunSummary(int(r[0]), str(r[1]), str(r[2]), str(r[3]))
                for r in conn.execute(sql, params)]
    except sqlite3.Error as exc:
        raise CliError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()


def load_run(path: Path, run_id: int) -> dict[str, Any]:
    """The stored document of one run."""
    conn = _connect(path)
    try:
        row = conn.execute("SELECT json FROM runs WHERE id = ?", (run_id,)).fetchone()
    finally:
        conn.close()
    if row is None:
        raise CliError(f"no run {run_id} in {path}")
    doc: dict[str, Any] = json.loads(row[0])
    return doc

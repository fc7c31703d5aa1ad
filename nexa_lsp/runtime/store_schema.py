"""The run store's SQLite schema and its migrations (``PRAGMA user_version``).

Each schema version has one migration that takes a store from the version before it;
``upgrade`` applies the missing ones inside the caller's transaction. A store written by
a newer schema is refused (``too_new``), never written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from nexa_lsp.runtime.errors import StoreSchemaTooNewError

SCHEMA_VERSION = 3


def _schema_v1(connection: sqlite3.Connection) -> None:
    connection.execute(
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            agent TEXT NOT NULL,
            session_id TEXT NOT NULL,
            parent_run_id TEXT,
            status TEXT NOT NULL,
            started_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            state TEXT NOT NULL
        )"""
    )
    connection.execute("CREATE INDEX runs_by_session ON runs(session_id, started_at)")
    connection.execute("CREATE INDEX runs_by_agent ON runs(agent, started_at)")
    connection.execute("CREATE INDEX runs_by_status ON runs(status, started_at)")


def _schema_v2(connection: sqlite3.Connection) -> None:
    """Version 2: the ``.nx`` source and working directory of each run, for listing by file."""
    connection.execute("ALTER TABLE runs ADD COLUMN source TEXT")
    connection.execute("ALTER TABLE runs ADD COLUMN working_directory TEXT")
    connection.execute(
        "UPDATE runs SET source = json_extract(state, '$.metadata.source'), "
        "working_directory = json_extract(state, '$.config.working_directory')"
    )
    connection.execute("CREATE INDEX runs_by_source ON runs(source, started_at)")


def _schema_v3(connection: sqlite3.Connection) -> None:
    """Version 3: each run's revision, for compare-and-swap saves (existing runs start at 1).
    A store without it must not be written by an older nexa-lsp, hence a new version."""
    connection.execute("ALTER TABLE runs ADD COLUMN revision INTEGER NOT NULL DEFAULT 1")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _schema_v1, 2: _schema_v2, 3: _schema_v3}


def too_new(path: Path, version: int) -> StoreSchemaTooNewError:
    """The refusal of a store written by a newer schema."""
    return StoreSchemaTooNewError(
        f"{path} was written by a newer nexa-lsp (store schema {version}; "
        f"this version reads up to {SCHEMA_VERSION}); "
        "upgrade nexa-lsp, or use another store (--store PATH)"
    )


def has_owner_column(connection: sqlite3.Connection) -> bool:
    return any(row[1] == "owner" for row in connection.execute("PRAGMA table_info(runs)").fetchall())


def is_current(version: int, connection: sqlite3.Connection) -> bool:
    """True when a store at ``version`` needs no migration."""
    return version == SCHEMA_VERSION and has_owner_column(connection)


def upgrade(connection: sqlite3.Connection, path: Path) -> None:
    """Bring the store to ``SCHEMA_VERSION``, inside the caller's write transaction."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
    if version > SCHEMA_VERSION:
        raise StoreSchemaTooNewError(f"{path} was upgraded by a newer nexa-lsp meanwhile")
    for target in range(version + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[target](connection)
    if not has_owner_column(connection):
        # additive (older versions ignore it), so the schema version stays
        connection.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

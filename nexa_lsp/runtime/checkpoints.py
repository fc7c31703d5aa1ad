"""``SQLiteCheckpointStore``: runs saved in one SQLite file, safe across threads and processes.

* WAL journal, a busy timeout, and one ``BEGIN IMMEDIATE`` transaction per ``save``;
* one connection per thread (any number of threads may share a store object);
* ``PRAGMA user_version`` holds the schema version; older stores are migrated when
  opened, a store written by a newer schema is refused with ``StoreSchemaTooNewError``;
* a ``RunState`` holds no credentials (API keys stay in settings), so none are stored.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from nexa_lsp.runtime.errors import CheckpointError, RunNotFoundError, StoreSchemaTooNewError
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.runtime.summary import RunSummary

DEFAULT_STORE = Path(".nexa") / "runs.sqlite3"
SCHEMA_VERSION = 2
DEFAULT_BUSY_TIMEOUT = 10.0


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


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _schema_v1, 2: _schema_v2}


class SQLiteCheckpointStore:
    """Saves and loads ``RunState`` values. ``save`` fits the ``save=`` parameter of the entries."""

    def __init__(self, path: str | Path = DEFAULT_STORE, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._migrate(self._connection())

    def __repr__(self) -> str:
        return f"SQLiteCheckpointStore({str(self.path)!r})"

    # --- connections ---------------------------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            try:
                connection = sqlite3.connect(
                    self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
                )
                connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = NORMAL")
            except sqlite3.DatabaseError as exc:
                raise CheckpointError(f"{self.path} is not a usable run store: {exc}") from exc
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self._connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise CheckpointError(
                f"{self.path} stayed locked by another writer for more than {self.busy_timeout:g}s ({exc}); "
                "retry, or raise the busy timeout"
            ) from exc
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this store opened (from any thread)."""
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> SQLiteCheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- schema ------------------------------------------------------------------------------------
    def schema_version(self) -> int:
        version: int = self._connection().execute("PRAGMA user_version").fetchone()[0]
        return version

    def _migrate(self, connection: sqlite3.Connection) -> None:
        try:
            version = self.schema_version()
            if version > SCHEMA_VERSION:
                raise StoreSchemaTooNewError(
                    f"{self.path} was written by a newer nexa-lsp (store schema {version}; "
                    f"this version reads up to {SCHEMA_VERSION}); "
                    "upgrade nexa-lsp, or use another store (--store PATH)"
                )
            if version == SCHEMA_VERSION:
                return
            with self._transaction():
                version = connection.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
                if version > SCHEMA_VERSION:
                    raise StoreSchemaTooNewError(f"{self.path} was upgraded by a newer nexa-lsp meanwhile")
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    MIGRATIONS[target](connection)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise CheckpointError(f"{self.path} is not a usable run store: {exc}") from exc

    # --- runs ----------------------------------------------------------------------------------------
    def save(self, state: RunState) -> None:
        """Insert or replace the run, in one transaction."""
        row = (
            state.run_id,
            state.agent,
            state.session_id,
            state.parent_run_id,
            state.status.value,
            state.started_at,
            state.updated_at or state.started_at,
            state.to_json(),
            state.metadata.source,
            state.config.working_directory,
        )
        with self._transaction() as connection:
            connection.execute(
                """INSERT INTO runs (run_id, agent, session_id, parent_run_id, status, started_at, updated_at,
                                     state, source, working_directory)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(run_id) DO UPDATE SET
                     agent = excluded.agent, session_id = excluded.session_id,
                     parent_run_id = excluded.parent_run_id, status = excluded.status,
                     started_at = excluded.started_at, updated_at = excluded.updated_at,
                     state = excluded.state, source = excluded.source,
                     working_directory = excluded.working_directory""",
                row,
            )

    def get(self, run_id: str) -> RunState | None:
        row = self._connection().execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else RunState.from_json(row[0])

    def load(self, run_id: str) -> RunState:
        """The saved run; ``RunNotFoundError`` names the store when it is missing."""
        state = self.get(run_id)
        if state is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.path}; list runs with `nexa-lsp runs list`")
        return state

    def list_states(
        self,
        *,
        agent: str | None = None,
        session_id: str | None = None,
        status: RunStatus | str | None = None,
        source: str | None = None,
        limit: int | None = None,
    ) -> list[RunState]:
        """Runs matching every given filter, oldest first (``limit`` keeps the newest ones)."""
        clauses: list[str] = []
        values: list[object] = []
        for column, value in (("agent", agent), ("session_id", session_id), ("source", source)):
            if value is not None:
                clauses.append(f"{column} = ?")
                values.append(value)
        if status is not None:
            clauses.append("status = ?")
            values.append(status.value if isinstance(status, RunStatus) else RunStatus(status).value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        query = f"SELECT state FROM runs {where} ORDER BY started_at DESC, rowid DESC"
        if limit is not None:
            query += " LIMIT ?"
            values.append(limit)
        rows = self._connection().execute(query, values).fetchall()
        return [RunState.from_json(row[0]) for row in reversed(rows)]

    def list_runs(
        self,
        *,
        agent: str | None = None,
        session_id: str | None = None,
        status: RunStatus | str | None = None,
        source: str | None = None,
        limit: int | None = None,
    ) -> list[RunSummary]:
        """Summaries (with valid actions) of the matching runs, oldest first."""
        states = self.list_states(agent=agent, session_id=session_id, status=status, source=source, limit=limit)
        return [RunSummary.of(state) for state in states]

    def session(self, session_id: str) -> list[RunState]:
        """Every turn of a conversation, in order."""
        return self.list_states(session_id=session_id)

    def latest(self, agent: str) -> RunState | None:
        """The most recently started run of ``agent``."""
        states = self.list_states(agent=agent, limit=1)
        return states[0] if states else None

    def latest_per_agent(self) -> dict[str, RunState]:
        """The most recently started run of every agent in the store."""
        rows = (
            self._connection()
            .execute(
                """SELECT state FROM runs AS r WHERE r.rowid = (
                   SELECT rowid FROM runs WHERE agent = r.agent ORDER BY started_at DESC, rowid DESC LIMIT 1)
               ORDER BY agent"""
            )
            .fetchall()
        )
        states = [RunState.from_json(row[0]) for row in rows]
        return {state.agent: state for state in states}

    def count(self) -> int:
        count: int = self._connection().execute("SELECT count(*) FROM runs").fetchone()[0]
        return count

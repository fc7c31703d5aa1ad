"""``SQLiteCheckpointStore``: runs saved in one SQLite file, safe across threads and processes.

* WAL journal, a busy timeout, and one ``BEGIN IMMEDIATE`` transaction per ``save``;
* one connection per thread (any number of threads may share a store object);
* ``PRAGMA user_version`` holds the schema version; older stores are migrated when
  opened, a store written by a newer schema is refused with ``StoreSchemaTooNewError``;
* a ``RunState`` holds no credentials (API keys stay in settings), so none are stored;
* a damaged file (truncated, overwritten, not SQLite) is detected when opened (header and
  ``PRAGMA quick_check``) or when a read hits a damaged page: it is moved aside unchanged
  to ``<name>.damaged-<UTC time>`` (with its ``-wal``) and ``StoreCorruptError`` names both
  files and what to do; the next use starts a new store. Nothing is ever written to it;
* every save is a compare-and-swap on the run's revision, in one transaction: a state
  carries the revision it was based on (``RunState.revision``, set by ``load`` and returned
  by ``save``); the save is accepted when the stored run is still at that revision, and
  makes it one revision newer. A save based on an older revision would lose what another
  process saved meanwhile: it is refused (``RunChangedError``, NXR027) and writes nothing.
  Two exceptions keep callers that reuse the object they saved working: repeating the
  save that made the stored revision is accepted (nothing to write), and so is resuming
  such a state (the stored run is exactly it, waiting or interrupted, and only the status
  changes to running; a run settled meanwhile is never taken back);
* every ``running`` run records its owner process. Taking a run to run it (the first save
  of a resume, status ``running``) is a *claim*: only one process wins it, and while the
  owner lives every other process's save of that run is refused (``RunInUseError``), so
  two processes never drive one run (and never run its tools twice). A claim whose owner
  died is free again: ``is_interrupted`` tells such a run from one in progress.

The schema and its migrations are in ``store_schema``, damaged files in ``store_damage``,
the compare-and-swap and claim rules in ``store_claims``; this module holds the store.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn, TypedDict, Unpack

from nexa_lsp.fileio import make_folders
from nexa_lsp.runtime.errors import (
    CheckpointError,
    RunNotFoundError,
    RunUnreadableError,
    StoreCorruptError,
)
from nexa_lsp.runtime.owner import Owner, current_owner, owner_text_alive
from nexa_lsp.runtime.run_state import RunState, RunStateFormatError, RunStatus
from nexa_lsp.runtime.store_claims import (
    INSERT,
    STORED,
    UPDATE,
    changed,
    driven_elsewhere,
    in_use,
    revision_after,
    row_values,
)
from nexa_lsp.runtime.store_damage import damage_message, file_identity, is_corruption, looks_like_sqlite, move_aside
from nexa_lsp.runtime.store_schema import SCHEMA_VERSION, is_current, too_new, upgrade
from nexa_lsp.runtime.summary import RunSummary

DEFAULT_STORE = Path(".nexa") / "runs.sqlite3"
DEFAULT_BUSY_TIMEOUT = 10.0

__all__ = ["DEFAULT_BUSY_TIMEOUT", "DEFAULT_STORE", "SCHEMA_VERSION", "SQLiteCheckpointStore", "is_corruption"]


class RunFilters(TypedDict, total=False):
    """The filters of ``list_states`` / ``list_runs``."""

    agent: str | None
    session_id: str | None
    status: RunStatus | str | None
    source: str | None
    limit: int | None


class SQLiteCheckpointStore:
    """Saves and loads ``RunState`` values. ``save`` fits the ``save=`` parameter of the entries."""

    def __init__(self, path: str | Path = DEFAULT_STORE, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        try:
            make_folders(self.path.parent)
        except OSError as exc:
            raise CheckpointError(
                f"cannot create the folder of the run store {self.path}: {exc}; choose another store (--store PATH)"
            ) from exc
        if self.path.exists() and not self.path.is_file():
            raise CheckpointError(
                f"{self.path} is not a file, so it cannot be a run store; choose another store (--store PATH)"
            )
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._identity = file_identity(self.path)
        self._moved_aside = False
        self.unreadable: dict[str, str] = {}
        """Runs skipped by listings because they cannot be read back: run id -> reason."""
        self._inspect()
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
            except sqlite3.DatabaseError as exc:
                raise self._cannot_open(exc) from exc
            try:
                connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = NORMAL")
            except sqlite3.DatabaseError as exc:
                connection.close()
                if is_corruption(exc):
                    self._damaged(exc)
                raise CheckpointError(f"{self.path} is not a usable run store: {exc}") from exc
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
                starting_over, self._moved_aside = self._moved_aside, False
            if starting_over:  # the damaged file was moved aside: set up the new one
                self._identity = file_identity(self.path)
                self._inspect()
                self._migrate(connection)
        return connection

    def _cannot_open(self, exc: sqlite3.DatabaseError) -> CheckpointError:
        return CheckpointError(
            f"cannot open the run store {self.path}: {exc}; check that the folder is writable, "
            "or choose another store (--store PATH)"
        )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self._connection()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_corruption(exc):
                self._damaged(exc)
            raise CheckpointError(
                f"{self.path} stayed locked by another writer for more than {self.busy_timeout:g}s ({exc}); "
                "retry, or raise the busy timeout"
            ) from exc
        try:
            yield connection
        except BaseException as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if is_corruption(exc):
                self._damaged(exc)
            raise
        try:
            connection.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if is_corruption(exc):
                self._damaged(exc)
            raise CheckpointError(f"could not save to the run store {self.path}: {exc}") from exc

    def _read(self, query: str, values: tuple[object, ...] | list[object] = ()) -> list[tuple[object, ...]]:
        """Rows of a read-only query; a damaged file is reported (and moved aside) like on open."""
        try:
            rows: list[tuple[object, ...]] = self._connection().execute(query, values).fetchall()
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                self._damaged(exc)
            raise CheckpointError(f"could not read the run store {self.path}: {exc}") from exc
        return rows

    # --- damaged files ------------------------------------------------------------------------
    def _damaged(self, cause: BaseException | str) -> NoReturn:
        """Close every connection, keep the damaged file, raise ``StoreCorruptError``.

        A damaged SQLite file, or any damaged file at the default store name, is moved aside
        unchanged (with its -wal/-shm) so the next use starts a new store. A file of another
        kind at a path the user chose is left alone: it may be something else entirely.
        """
        self.close()
        kept: Path | None = None
        identity = file_identity(self.path)
        same_file = identity is not None and (self._identity is None or identity == self._identity)
        if same_file and (looks_like_sqlite(self.path) or self.path.name == DEFAULT_STORE.name):
            kept = move_aside(self.path)
            if kept is not None:
                self._moved_aside = True
        message = damage_message(self.path, cause, kept, same_file)
        raise StoreCorruptError(message, str(self.path), None if kept is None else str(kept))

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
        version = self._read("PRAGMA user_version")[0][0]
        assert isinstance(version, int)
        return version

    def check(self) -> None:
        """Raise ``StoreCorruptError`` (moving the file aside) when SQLite finds damage in it."""
        try:
            problems = [str(row[0]) for row in self._connection().execute("PRAGMA quick_check(5)").fetchall()]
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                self._damaged(exc)
            raise CheckpointError(f"could not check the run store {self.path}: {exc}") from exc
        if problems != ["ok"]:
            self._damaged(" ".join("; ".join(problems).split())[:300])

    def _inspect(self) -> None:
        """Read-only checks before anything is written (even the WAL setting, which changes the
        file's header): damage, another program's database, a newer schema."""
        try:
            raw = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise self._cannot_open(exc) from exc
        try:
            raw.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            # one read transaction: another process creating the schema meanwhile must not be
            # seen half (its tables without its version: "not a nexa-lsp run store")
            raw.execute("BEGIN")
            version = raw.execute("PRAGMA user_version").fetchone()[0]
            problems = [str(row[0]) for row in raw.execute("PRAGMA quick_check(5)").fetchall()]
            tables = raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            raw.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raw.close()
            if is_corruption(exc):
                self._damaged(exc)
            raise CheckpointError(f"{self.path} is not a usable run store: {exc}") from exc
        raw.close()
        if problems != ["ok"]:
            self._damaged(" ".join("; ".join(problems).split())[:300])
        if version == 0 and tables:
            raise CheckpointError(
                f"{self.path} is an SQLite database but not a nexa-lsp run store (it has other tables); "
                "nothing was changed in it. Choose another store (--store PATH)"
            )
        if version > SCHEMA_VERSION:
            raise too_new(self.path, version)

    def _migrate(self, connection: sqlite3.Connection) -> None:
        try:
            version = self.schema_version()
            if version > SCHEMA_VERSION:
                raise too_new(self.path, version)
            if is_current(version, connection):
                return
            with self._transaction():
                upgrade(connection, self.path)
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                self._damaged(exc)
            raise CheckpointError(f"{self.path} is not a usable run store: {exc}") from exc

    # --- runs ----------------------------------------------------------------------------------------
    def save(self, state: RunState) -> RunState:
        """Save the run in one transaction and return it as saved (at its new revision).

        Refused, writing nothing, with ``RunChangedError`` (NXR027) when the run was saved
        after ``state.revision`` (see the module docstring), and with ``RunInUseError``
        (NXR024) when another live process drives the run. A ``running`` state records this
        process as the run's owner.
        """
        me = str(current_owner())
        text = state.to_json()
        values = row_values(state, text, me if state.status is RunStatus.RUNNING else None)
        with self._transaction() as connection:
            stored = connection.execute(STORED, (state.run_id,)).fetchone()
            if stored is None:
                revision = state.revision + 1
                connection.execute(INSERT, (state.run_id, *values, revision))
                return state.at_revision(revision)
            revision, writes = revision_after(stored, state, text, me)
            if writes:
                connection.execute(UPDATE, (*values, revision, state.run_id))
        return state.at_revision(revision)

    def _state_of(self, run_id: str, text: object, revision: object) -> RunState:
        try:
            return RunState.from_json(str(text)).at_revision(int(str(revision)))
        except RunStateFormatError as exc:
            raise RunUnreadableError(f"run {run_id} in {self.path} cannot be read: {exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise RunUnreadableError(
                f"run {run_id} in {self.path} cannot be read ({type(exc).__name__}: {str(exc)[:200]}); "
                "it was edited by hand or written by a newer nexa-lsp. Upgrade nexa-lsp, or delete the run"
            ) from exc

    def get(self, run_id: str) -> RunState | None:
        rows = self._read("SELECT state, revision FROM runs WHERE run_id = ?", (run_id,))
        return None if not rows else self._state_of(run_id, rows[0][0], rows[0][1])

    def owner(self, run_id: str) -> Owner | None:
        """The process recorded as driving ``run_id`` (set only while the run is ``running``)."""
        rows = self._read("SELECT owner FROM runs WHERE run_id = ?", (run_id,))
        if not rows or not rows[0][0]:
            return None
        return Owner.parse(str(rows[0][0]))

    def check_current(self, state: RunState) -> None:
        """Raise ``RunInUseError`` (NXR024) when another live process drives the run now, and
        ``RunChangedError`` (NXR027) when it was saved after ``state`` was read.

        Call it after loading a run and before deciding on it, so a refusal names what
        happened (another process has it) rather than a step that process was in the
        middle of when the run was read (an unknown outcome, a pending approval).
        """
        rows = self._read("SELECT status, owner FROM runs WHERE run_id = ?", (state.run_id,))
        if rows and driven_elsewhere(rows[0][0], rows[0][1], str(current_owner())):
            raise in_use(state.run_id, str(rows[0][1]))
        # read again after the liveness check: a driver that finished meanwhile saved first
        rows = self._read("SELECT status, revision FROM runs WHERE run_id = ?", (state.run_id,))
        if rows and rows[0][1] != state.revision:
            raise changed(state, rows[0][1], rows[0][0])

    def is_interrupted(self, run_id: str) -> bool:
        """True when the stored run is ``running`` but no live process drives it (its process died)."""
        rows = self._read("SELECT status, owner FROM runs WHERE run_id = ?", (run_id,))
        if not rows or rows[0][0] != RunStatus.RUNNING.value:
            return False
        owner = rows[0][1]
        return not owner_text_alive(None if owner is None else str(owner))

    def interrupted_runs(self) -> list[str]:
        """Ids of every ``running`` run whose process is gone, oldest first."""
        rows = self._read("SELECT run_id, owner FROM runs WHERE status = 'running' ORDER BY started_at, rowid")
        return [str(run_id) for run_id, owner in rows if not owner_text_alive(None if owner is None else str(owner))]

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
        query = f"SELECT run_id, state, revision FROM runs {where} ORDER BY started_at DESC, rowid DESC"
        if limit is not None:
            query += " LIMIT ?"
            values.append(limit)
        rows = self._read(query, values)
        return self._readable(reversed(rows))

    def _readable(self, rows: Iterator[tuple[object, ...]] | list[tuple[object, ...]]) -> list[RunState]:
        """States of ``(run_id, state, revision)`` rows; unreadable ones are skipped and noted in ``unreadable``."""
        states: list[RunState] = []
        for run_id, text, revision in rows:
            try:
                states.append(self._state_of(str(run_id), text, revision))
            except RunUnreadableError as exc:
                self.unreadable[str(run_id)] = exc.message
        return states

    def list_runs(self, **filters: Unpack[RunFilters]) -> list[RunSummary]:
        """Summaries (with valid actions) of the runs matching ``filters`` (as ``list_states``), oldest first."""
        return [RunSummary.of(state) for state in self.list_states(**filters)]

    def session(self, session_id: str) -> list[RunState]:
        """Every turn of a conversation, in order."""
        return self.list_states(session_id=session_id)

    def latest(self, agent: str) -> RunState | None:
        """The most recently started run of ``agent``."""
        states = self.list_states(agent=agent, limit=1)
        return states[0] if states else None

    def latest_per_agent(self) -> dict[str, RunState]:
        """The most recently started run of every agent in the store."""
        rows = self._read(
            """SELECT run_id, state, revision FROM runs AS r WHERE r.rowid = (
               SELECT rowid FROM runs WHERE agent = r.agent ORDER BY started_at DESC, rowid DESC LIMIT 1)
               ORDER BY agent"""
        )
        return {state.agent: state for state in self._readable(rows)}

    def count(self) -> int:
        count = self._read("SELECT count(*) FROM runs")[0][0]
        assert isinstance(count, int)
        return count

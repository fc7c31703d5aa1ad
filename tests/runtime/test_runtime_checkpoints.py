"""SQLiteCheckpointStore: durability settings, schema versions, listings, concurrency, secrets."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from runtime_helpers import call, counting_tool, scripted, subprocess_env

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SCHEMA_VERSION, SQLiteCheckpointStore
from nexa_lsp.runtime.errors import CheckpointError, RunChangedError, RunNotFoundError, StoreSchemaTooNewError
from nexa_lsp.runtime.run_state import RunStatus


def test_store_creates_parent_folders_and_defaults_to_dot_nexa(isolated_environment: Path) -> None:
    with SQLiteCheckpointStore() as store:
        assert store.path == Path(".nexa") / "runs.sqlite3"
    assert (isolated_environment / ".nexa" / "runs.sqlite3").is_file()
    deep = isolated_environment / "a" / "b" / "c" / "runs.sqlite3"
    with SQLiteCheckpointStore(deep):
        pass
    assert deep.is_file()


def test_save_and_load_round_trip(store: SQLiteCheckpointStore) -> None:
    send, _ = counting_tool(approval_required=True)
    agent = NexaAgent("Mailer", prompt="写信", tools=[send], provider=scripted({"tool_calls": [call("send_mail")]}))
    state = agent.execute("给李四写信", save=store.save)
    assert store.load(state.run_id) == state
    with pytest.raises(RunNotFoundError) as caught:
        store.load("run_missing")
    assert caught.value.code == "NXR021" and "runs list" in str(caught.value)


def test_store_uses_wal_and_a_busy_timeout(store: SQLiteCheckpointStore) -> None:
    raw = sqlite3.connect(store.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_each_save_is_one_transaction(store: SQLiteCheckpointStore) -> None:
    state = NexaAgent("A").execute("go")
    statements: list[str] = []
    connection = store._connection()
    connection.set_trace_callback(statements.append)
    store.save(state)
    connection.set_trace_callback(None)
    assert statements[0] == "BEGIN IMMEDIATE" and statements[-1] == "COMMIT"
    # the compare-and-swap reads the stored revision and writes inside that one transaction
    assert [s.split()[0] for s in statements] == ["BEGIN", "SELECT", "INSERT", "COMMIT"]


def hold_write_lock(path: Path, seconds: float, ready: threading.Event) -> None:
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    raw.execute("COMMIT")
    raw.close()


def test_save_waits_for_another_writer_within_the_busy_timeout(store: SQLiteCheckpointStore) -> None:
    state = NexaAgent("A").execute("go")
    ready = threading.Event()
    holder = threading.Thread(target=hold_write_lock, args=(store.path, 0.3, ready))
    holder.start()
    ready.wait(2)
    began = time.monotonic()
    store.save(state)
    assert time.monotonic() - began >= 0.2
    holder.join()
    assert store.load(state.run_id) == state


def test_save_gives_a_clear_error_when_locked_past_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite3"
    impatient = SQLiteCheckpointStore(path, busy_timeout=0.05)
    ready = threading.Event()
    holder = threading.Thread(target=hold_write_lock, args=(path, 0.5, ready))
    holder.start()
    ready.wait(2)
    with pytest.raises(CheckpointError, match="locked"):
        impatient.save(NexaAgent("A").execute("go"))
    holder.join()
    impatient.close()


def test_new_store_has_the_current_schema_version(store: SQLiteCheckpointStore) -> None:
    assert store.schema_version() == SCHEMA_VERSION == 3


def test_version_1_store_is_migrated_when_opened(tmp_path: Path) -> None:
    state = NexaAgent("Old", source="/w/old.nx").execute("go")
    path = tmp_path / "v1.sqlite3"
    raw = sqlite3.connect(path)
    raw.executescript(
        """CREATE TABLE runs (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, session_id TEXT NOT NULL,
               parent_run_id TEXT, status TEXT NOT NULL, started_at REAL NOT NULL, updated_at REAL NOT NULL,
               state TEXT NOT NULL);
           PRAGMA user_version = 1;"""
    )
    raw.execute(
        "INSERT INTO runs VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
        (
            state.run_id,
            "Old",
            state.session_id,
            "completed",
            state.started_at,
            state.updated_at,
            state.to_json(),
        ),
    )
    raw.commit()
    raw.close()
    with SQLiteCheckpointStore(path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.load(state.run_id) == state
        assert [s.run_id for s in store.list_runs(source="/w/old.nx")] == [state.run_id]


def test_store_written_by_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    with SQLiteCheckpointStore(path):
        pass
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.commit()
    raw.close()
    with pytest.raises(StoreSchemaTooNewError) as caught:
        SQLiteCheckpointStore(path)
    assert caught.value.code == "NXR022"
    assert "newer" in str(caught.value) and "upgrade" in str(caught.value) and "99" in str(caught.value)


def test_a_file_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_text("just some notes, not sqlite " * 100)
    with pytest.raises(CheckpointError, match="not a usable run store"):
        SQLiteCheckpointStore(path)


def test_listing_by_session_agent_status_and_latest_per_agent(store: SQLiteCheckpointStore) -> None:
    analyst = NexaAgent("Analyst", provider=scripted({"text": "a"}, {"text": "b"}))
    writer = NexaAgent("Writer", provider=scripted({"error": "down"}))
    first = analyst.execute("one", save=store.save)
    second = analyst.continue_run(first, "two", save=store.save)
    other = analyst.execute("three", save=store.save)
    failed = writer.execute("four", save=store.save)
    assert [s.run_id for s in store.session(first.session_id)] == [first.run_id, second.run_id]
    assert [s.run_id for s in store.list_runs(agent="Analyst")] == [first.run_id, second.run_id, other.run_id]
    assert [s.run_id for s in store.list_runs(status=RunStatus.FAILED)] == [failed.run_id]
    assert [s.run_id for s in store.list_runs(status="completed", agent="Analyst", limit=1)] == [other.run_id]
    latest = store.latest_per_agent()
    assert {k: v.run_id for k, v in latest.items()} == {"Analyst": other.run_id, "Writer": failed.run_id}
    assert store.latest("Analyst") == other
    assert store.latest("Nobody") is None
    summary = store.list_runs(agent="Analyst")[1]
    assert summary.parent_run_id == first.run_id and summary.actions == ("continue", "show")


def test_store_is_safe_from_many_threads(store: SQLiteCheckpointStore) -> None:
    agent = NexaAgent("T")
    base = store.save(agent.execute("go"))
    errors: list[BaseException] = []
    refusals: list[int] = []

    def worker(index: int) -> None:
        try:
            for step in range(20):
                run = base.evolve(run_id=f"run_t{index}_{step}", output=f"{index}-{step}")
                store.save(run)
                assert store.load(run.run_id).output == f"{index}-{step}"
                while True:  # read, change, save; a save based on a stale read is refused
                    current = store.load(base.run_id)
                    try:
                        store.save(current.evolve(output=f"shared {index} {step}"))
                        break
                    except RunChangedError:
                        refusals.append(index)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.count() == 6 * 20 + 1
    shared = store.load(base.run_id)
    assert shared.output.startswith("shared")
    assert shared.revision == base.revision + 6 * 20, "every accepted save counted once, none lost"


WRITER = textwrap.dedent(
    """
    import sys
    from nexa_lsp.runtime.agent import NexaAgent
    from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
    store = SQLiteCheckpointStore(sys.argv[1])
    agent = NexaAgent("P" + sys.argv[2])
    for step in range(25):
        agent.execute(f"task {step}", save=store.save)
    """
)


def test_store_is_safe_from_several_processes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(i)], env=subprocess_env(), cwd=tmp_path)
        for i in range(3)
    ]
    assert [p.wait(timeout=60) for p in processes] == [0, 0, 0]
    with SQLiteCheckpointStore(path) as store:
        assert store.count() == 75
        assert {s.agent for s in store.list_runs()} == {"P0", "P1", "P2"}
        assert all(s.status == "completed" for s in store.list_runs())


def test_no_secret_reaches_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-never-store-this-0123456789"
    monkeypatch.setenv("SCRIPTED_API_KEY", secret)
    (Path.cwd() / "keys.nxs").write_text(f'API_KEY = "{secret}"\nPROVIDER_TOKEN = "{secret}"\n')
    path = tmp_path / "s.sqlite3"
    with SQLiteCheckpointStore(path) as store:
        state = NexaAgent("A").execute("go", save=store.save)
        assert secret not in store.load(state.run_id).to_json()
    for file in tmp_path.glob("s.sqlite3*"):
        assert secret.encode() not in file.read_bytes()

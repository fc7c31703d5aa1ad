"""A truncated or corrupt run store: a clear error naming the file and what to do; the
damaged file is kept aside byte for byte (never overwritten); the next use starts a new
store; files that are not stores are never touched; the checker keeps working."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.errors import CheckpointError, RunUnreadableError, StoreCorruptError
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from tests.robustness.helpers import subprocess_env


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def healthy_store(path: Path, runs: int = 120) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    agent = NexaAgent("Keeper", provider=ScriptedProvider({"fallback": "kept " * 200}))
    with SQLiteCheckpointStore(path) as store:
        for index in range(runs):
            store.save(agent.execute(f"task {index}"))
        store._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def truncate(size: Callable[[int], int]) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        with open(path, "r+b") as handle:
            handle.truncate(size(path.stat().st_size))

    return damage


def overwrite(offset: Callable[[int], int], length: int) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        with open(path, "r+b") as handle:
            handle.seek(offset(path.stat().st_size))
            handle.write(bytes((index * 37 + 11) % 256 for index in range(length)))

    return damage


DAMAGE = {
    "truncated_to_half": truncate(lambda size: size // 2),
    "truncated_to_one_page": truncate(lambda size: 4096),
    "truncated_inside_the_header": truncate(lambda size: 60),
    "header_overwritten": overwrite(lambda size: 0, 100),
    "first_page_overwritten": overwrite(lambda size: 100, 3000),
    "page_in_the_middle_overwritten": overwrite(lambda size: size // 2 // 4096 * 4096, 4096),
    "last_page_overwritten": overwrite(lambda size: size - 4096, 4096),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_store_is_kept_aside_unchanged_with_a_clear_error(tmp_path: Path, kind: str) -> None:
    path = healthy_store(tmp_path / ".nexa" / "runs.sqlite3")
    DAMAGE[kind](path)
    damaged = sha(path)
    with pytest.raises(StoreCorruptError) as caught:
        SQLiteCheckpointStore(path)
    error = caught.value
    message = str(error)
    assert error.code == "NXR023" and isinstance(error, CheckpointError)
    assert str(path) in message and "damaged" in message
    assert error.kept_at is not None and error.kept_at in message
    assert ".recover" in message and "new, empty store" in message
    kept = Path(error.kept_at)
    assert sha(kept) == damaged, "the damaged file must be kept byte for byte"
    assert not path.exists()
    # the next use starts a new store and works; the kept file is still untouched
    with SQLiteCheckpointStore(path) as fresh:
        state = NexaAgent("After").execute("again", save=fresh.save)
        assert fresh.load(state.run_id) == state and fresh.count() == 1
    assert sha(kept) == damaged


def test_damage_found_after_opening_is_reported_and_kept_aside(tmp_path: Path) -> None:
    """A store open in a long-lived process (the language server) whose file gets damaged."""
    path = healthy_store(tmp_path / "runs.sqlite3", runs=300)
    store = SQLiteCheckpointStore(path)
    assert store.count() == 300
    size = path.stat().st_size
    overwrite(lambda _: size // 2 // 4096 * 4096, 4096 * 4)(path)
    damaged = sha(path)
    with pytest.raises(StoreCorruptError) as caught:
        store.list_states()
    assert caught.value.kept_at is not None and sha(Path(caught.value.kept_at)) == damaged
    # the same store object carries on with a new file, from any thread
    results: list[int] = []
    worker = threading.Thread(target=lambda: results.append(store.count()))
    worker.start()
    worker.join()
    assert results == [0]
    state = NexaAgent("After").execute("again", save=store.save)
    assert store.load(state.run_id) == state
    store.close()
    assert sha(Path(caught.value.kept_at)) == damaged


def test_a_file_of_another_kind_is_refused_and_left_untouched(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("my notes, not a database\n" * 50, encoding="utf-8")
    before = sha(notes)
    with pytest.raises(StoreCorruptError) as caught:
        SQLiteCheckpointStore(notes)
    assert "nothing was changed" in str(caught.value) and str(notes) in str(caught.value)
    assert caught.value.kept_at is None
    assert sha(notes) == before and sorted(p.name for p in tmp_path.iterdir() if p.name != "work") == ["notes.db"]


def test_another_programs_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    other = tmp_path / "inventory.sqlite3"
    raw = sqlite3.connect(other)
    raw.execute("CREATE TABLE items (name TEXT)")
    raw.execute("INSERT INTO items VALUES ('chair')")
    raw.commit()
    raw.close()
    before = sha(other)
    with pytest.raises(CheckpointError, match="not a nexa-lsp run store"):
        SQLiteCheckpointStore(other)
    assert sha(other) == before
    raw = sqlite3.connect(other)
    assert [r[0] for r in raw.execute("SELECT name FROM sqlite_master")] == ["items"]
    raw.close()


def test_a_directory_in_place_of_the_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "runs.sqlite3").mkdir()
    with pytest.raises(CheckpointError, match="not a file"):
        SQLiteCheckpointStore(tmp_path / "runs.sqlite3")


def test_an_unreadable_row_does_not_hide_the_other_runs(tmp_path: Path) -> None:
    path = healthy_store(tmp_path / "runs.sqlite3", runs=3)
    raw = sqlite3.connect(path)
    (victim,) = raw.execute("SELECT run_id FROM runs ORDER BY rowid LIMIT 1").fetchone()
    raw.execute("UPDATE runs SET state = '{\"run_id\": 1' WHERE run_id = ?", (victim,))
    raw.commit()
    raw.close()
    with SQLiteCheckpointStore(path) as store:
        assert len(store.list_runs()) == 2
        assert victim in store.unreadable and str(path) in store.unreadable[victim]
        with pytest.raises(RunUnreadableError) as caught:
            store.load(victim)
        assert caught.value.code == "NXR025" and victim in str(caught.value)


def test_cli_reports_a_damaged_store_without_a_traceback_and_check_still_works(
    tmp_path: Path, isolated_environment: Path
) -> None:
    path = healthy_store(isolated_environment / ".nexa" / "runs.sqlite3", runs=5)
    overwrite(lambda _: 0, 100)(path)
    listing = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "runs", "list"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listing.returncode == 2, listing.stderr
    assert "Traceback" not in listing.stderr
    assert "NXR023" in listing.stderr and "runs.sqlite3" in listing.stderr
    kept = [p for p in path.parent.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1
    source = isolated_environment / "broken.nx"
    source.write_text('agent Writer {\n  prompt: "Write"\n  model: \n}\n', encoding="utf-8")
    check = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", str(source)],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 1 and "broken.nx" in check.stdout + check.stderr, check.stderr
    assert os.path.exists(kept[0])


def test_the_language_server_keeps_working_over_a_damaged_store(tmp_path: Path) -> None:
    """Diagnostics, hover, lenses and the runs list all answer; the damaged file is kept aside."""
    from tests.robustness.lsp_wire import WireClient

    root = tmp_path / "project"
    path = healthy_store(root / ".nexa" / "runs.sqlite3", runs=5)
    overwrite(lambda _: 0, 100)(path)
    damaged = sha(path)
    text = 'agent Writer {\n  prompt: "Write clearly"\n  model: \n}\n\nflow main {\n  x = Writer.run("hi")\n}\n'
    (root / "draft.nx").write_text(text, encoding="utf-8")
    uri = (root / "draft.nx").as_uri()
    client = WireClient(root)
    try:
        client.initialize(root)
        client.open(uri, text)
        published = client.wait_notification("textDocument/publishDiagnostics", lambda m: m["params"]["uri"] == uri)
        assert "NX001" in {d["code"] for d in published["params"]["diagnostics"]}
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 8}}
        )
        assert "Writer" in str(hover["result"])
        assert "result" in client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        listing = client.request("workspace/executeCommand", {"command": "nexa.listRuns", "arguments": [{}]})
        assert "result" in listing or listing["error"]["code"] != -32603, listing
        said = " ".join(
            str(n["params"].get("message", ""))
            for n in client.notifications
            if n["method"] in ("window/logMessage", "window/showMessage")
        )
        assert "NXR023" in said and "moved aside" in said
    finally:
        client.close()
    kept = [p for p in (root / ".nexa").iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1 and sha(kept[0]) == damaged

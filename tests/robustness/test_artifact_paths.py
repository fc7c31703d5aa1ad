"""Artifact references cannot escape the artifact directory.

References come from stored runs (which anyone with the file can edit) and call ids from
the model (which a hostile provider controls). Reading resolves only inside the run's
artifact directory; writing never follows a link out of it and never lands outside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.artifacts import read_artifact, write_artifact
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.errors import ArtifactPathError
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunConfig, RunState
from nexa_lsp.runtime.tools import tool

SECRET = "contents of a file outside the artifact directory"


def big_result_run(tmp_path: Path, call_id: str = "call_1") -> RunState:
    def dump() -> str:
        return "row\n" * 10_000

    agent = NexaAgent(
        "A",
        tools=[tool(dump)],
        provider=ScriptedProvider({"replies": [{"tool_calls": [{"id": call_id, "name": "dump"}]}, {"text": "ok"}]}),
    )
    return agent.execute("go", config=RunConfig(artifact_directory=str(tmp_path / "artifacts")))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside.txt"
    target.write_text(SECRET, encoding="utf-8")
    return target


@pytest.mark.parametrize(
    "reference",
    [
        "../outside.txt",
        "../../outside.txt",
        "run/../../outside.txt",
        "{outside}",
        "/etc/passwd",
        "//etc/passwd",
        "..\\outside.txt",
        "C:\\Windows\\win.ini",
        "C:outside.txt",
        "run/\x00.txt",
        "",
    ],
)
def test_stored_references_that_leave_the_directory_are_refused(tmp_path: Path, outside: Path, reference: str) -> None:
    state = big_result_run(tmp_path)
    reference = reference.format(outside=outside)
    with pytest.raises((ArtifactPathError, ValueError)) as caught:
        read_artifact(state, reference)
    assert SECRET not in str(caught.value)


def test_a_tampered_reference_in_the_store_is_refused(tmp_path: Path, outside: Path) -> None:
    state = big_result_run(tmp_path)
    (message,) = [m for m in state.history if m.artifact]
    assert read_artifact(state, message).startswith("row")
    tampered = state.evolve(
        history=tuple(
            m if m is not message else type(m)(**{**m.__dict__, "artifact": "../outside.txt"}) for m in state.history
        )
    )
    with SQLiteCheckpointStore(tmp_path / "runs.sqlite3") as store:
        store.save(tampered)
        loaded = store.load(state.run_id)
    (bad,) = [m for m in loaded.history if m.artifact]
    with pytest.raises(ArtifactPathError) as caught:
        read_artifact(loaded, bad)
    assert caught.value.code == "NXR026"


def test_a_symbolic_link_inside_the_directory_pointing_out_is_refused(tmp_path: Path, outside: Path) -> None:
    state = big_result_run(tmp_path)
    root = Path(str(state.config.artifact_directory))
    (root / "link.txt").symlink_to(outside)
    (root / "linked-dir").symlink_to(tmp_path)
    for reference in ("link.txt", "linked-dir/outside.txt"):
        with pytest.raises(ArtifactPathError):
            read_artifact(state, reference)


@pytest.mark.parametrize(
    "call_id", ["..", ".", "../../../../escape", "/abs/path", "a/../../b", "~root", "\x00", "x" * 500]
)
def test_hostile_call_ids_write_inside_the_directory(tmp_path: Path, call_id: str) -> None:
    state = big_result_run(tmp_path, call_id)
    root = Path(str(state.config.artifact_directory)).resolve()
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".txt"]
    assert files and all(root in p.resolve().parents for p in files), files
    (message,) = [m for m in state.history if m.artifact]
    assert read_artifact(state, message) == "row\n" * 10_000


@pytest.mark.parametrize("run_id", ["..", "../..", "/tmp", "."])
def test_hostile_run_ids_write_inside_the_directory(tmp_path: Path, run_id: str) -> None:
    root = tmp_path / "artifacts"
    relative = write_artifact(str(root), run_id, "call", "text")
    written = (root / relative).resolve()
    assert root.resolve() in written.parents and written.read_text() == "text"


def test_a_linked_run_folder_is_not_followed_out(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "run_1").symlink_to(elsewhere)
    with pytest.raises(ArtifactPathError):
        write_artifact(str(root), "run_1", "call", "text")
    assert list(elsewhere.iterdir()) == []


def test_a_planted_link_at_the_file_name_is_replaced_not_written_through(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "artifacts"
    (root / "run_1").mkdir(parents=True)
    (root / "run_1" / "call.txt").symlink_to(outside)
    relative = write_artifact(str(root), "run_1", "call", "new text")
    assert outside.read_text(encoding="utf-8") == SECRET, "the link's target is untouched"
    assert not (root / relative).is_symlink() and (root / relative).read_text() == "new text"


def test_artifact_files_are_written_whole(tmp_path: Path) -> None:
    """A reader never sees half a file: the text goes to a temporary file renamed into place."""
    root = tmp_path / "artifacts"
    write_artifact(str(root), "run_1", "call", "a" * 1_000_000)
    leftovers = [p.name for p in (root / "run_1").iterdir() if p.name != "call.txt"]
    assert leftovers == []
    assert os.path.getsize(root / "run_1" / "call.txt") == 1_000_000

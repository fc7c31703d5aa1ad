"""``nexa_lsp.fileio``: whole-file writes, and `.nexa/` folders that keep themselves out of git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_helpers import subprocess_env

from nexa_lsp.fileio import IGNORE_EVERYTHING, make_folders, write_atomically
from nexa_lsp.runtime.artifacts import write_artifact
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore


def test_a_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    tmp_path = tmp_path / "files"
    tmp_path.mkdir()
    target = tmp_path / "笔记.nx"
    target.write_text("old\n", encoding="utf-8")
    os.chmod(target, 0o600)
    write_atomically(target, "新的\r\nline\r")
    assert target.read_bytes() == "新的\r\nline\r".encode()
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["笔记.nx"], "no temporary file is left behind"


def test_parents_are_made_on_request_and_surrogates_can_be_kept(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.txt"
    with pytest.raises(FileNotFoundError):
        write_atomically(target, "x")
    write_atomically(target, "lone \udc80", errors="surrogatepass", make_parents=True)
    assert target.read_bytes() == "lone \udc80".encode("utf-8", "surrogatepass")
    assert (target.stat().st_mode & 0o777) == 0o644


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(outside)
    write_atomically(link, "new")
    assert outside.read_text(encoding="utf-8") == "keep"
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "new"


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    tmp_path = tmp_path / "files"
    tmp_path.mkdir()
    target = tmp_path / "t.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(target, "bad \udc80")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout


def test_a_new_default_store_keeps_itself_out_of_git(tmp_path: Path) -> None:
    """The CLI's default store, artifacts and all: `git status` stays clean."""
    project = tmp_path / "项目"
    project.mkdir()
    git(project, "init", "-q")
    (project / "a.nx").write_text('agent Writer { prompt: "写" }\n', encoding="utf-8")
    git(project, "add", "a.nx")
    script = project / "reply.json"
    script.write_text(json.dumps({"replies": [{"text": "长" * 400}]}), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "agent", "a.nx", "Writer", "写", "--script", str(script)],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    script.unlink()
    assert (project / ".nexa" / "runs.sqlite3").is_file()
    assert "*" in (project / ".nexa" / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert git(project, "status", "--porcelain", "--untracked-files=all") == "A  a.nx\n", "nothing under .nexa/"


def test_artifacts_in_a_new_nexa_folder_get_the_ignore_file(tmp_path: Path) -> None:
    root = tmp_path / "w" / ".nexa" / "artifacts"
    write_artifact(str(root), "run_1", "call_1", "大" * 100)
    assert (tmp_path / "w" / ".nexa" / ".gitignore").read_text(encoding="utf-8") == IGNORE_EVERYTHING


def test_folders_that_already_existed_and_stores_elsewhere_get_none(tmp_path: Path) -> None:
    mine = tmp_path / "mine" / ".nexa"
    mine.mkdir(parents=True)
    SQLiteCheckpointStore(mine / "runs.sqlite3").close()
    assert not (mine / ".gitignore").exists(), "the user's own .nexa folder is left as it is"
    elsewhere = tmp_path / "stores" / "team"
    SQLiteCheckpointStore(elsewhere / "runs.sqlite3").close()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["runs.sqlite3"]
    assert not (tmp_path / "stores" / ".gitignore").exists()


def test_make_folders_marks_only_the_nexa_folder_it_creates(tmp_path: Path) -> None:
    make_folders(tmp_path / "a" / ".nexa" / "transcripts" / "x")
    assert (tmp_path / "a" / ".nexa" / ".gitignore").is_file()
    assert not (tmp_path / "a" / ".gitignore").exists()
    assert not (tmp_path / "a" / ".nexa" / "transcripts" / ".gitignore").exists()
    make_folders(tmp_path / "a" / ".nexa" / "transcripts" / "y")  # again: nothing more
    assert sorted(p.name for p in (tmp_path / "a" / ".nexa").iterdir()) == [".gitignore", "transcripts"]

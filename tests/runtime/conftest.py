"""Fixtures of the runtime tests: an isolated working directory, a store, a loopback server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import runtime_helpers  # noqa: F401  (puts the project root on sys.path)
from loopback import LoopbackServer

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test runs in its own empty directory with no provider settings from the machine."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    for key in list(os.environ):
        if key.endswith(("_API_KEY", "_BASE_URL")) or key in (
            "API_KEY",
            "BASE_URL",
            "NEXA_PROVIDER",
            "NEXA_SCRIPT",
        ):
            monkeypatch.delenv(key, raising=False)
    yield workdir


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteCheckpointStore]:
    with SQLiteCheckpointStore(tmp_path / "store" / "runs.sqlite3") as opened:
        yield opened


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server

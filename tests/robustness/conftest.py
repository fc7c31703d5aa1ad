"""Fixtures of the robustness suites: an isolated working directory without provider settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

PROVIDER_VARIABLES = ("API_KEY", "BASE_URL", "NEXA_PROVIDER", "NEXA_SCRIPT")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test runs in its own empty directory with no provider settings from the machine."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    for key in list(os.environ):
        if key.endswith(("_API_KEY", "_BASE_URL")) or key in PROVIDER_VARIABLES:
            monkeypatch.delenv(key, raising=False)
    yield workdir

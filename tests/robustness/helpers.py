"""Helpers shared by the robustness suites."""

from __future__ import annotations

import os
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python: the project importable, no provider keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env["PYTHONPATH"] = str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def wait_for_file(path: Path, timeout: float = 30.0, what: str = "") -> str:
    """Wait until ``path`` exists and is not empty; return its text."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if text:
                return text
        time.sleep(0.01)
    raise AssertionError(f"{what or path} did not appear within {timeout:g}s")


def budget(ci: int, long: int) -> int:
    """An iteration count: ``ci`` by default, ``long`` with HYPOTHESIS_PROFILE=long (runs by hand)."""
    return long if os.environ.get("HYPOTHESIS_PROFILE") == "long" else ci

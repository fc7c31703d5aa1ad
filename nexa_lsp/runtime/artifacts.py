"""Large tool results live in files under the run's artifact directory; history keeps a reference.

The artifact directory defaults to ``<working directory>/.nexa/artifacts``. A file is
``<artifact directory>/<run id>/<call id>.txt`` and history stores the part after the
artifact directory, so a continued run that keeps the original directory (see
``continuation``) can always read its earlier results.
"""

from __future__ import annotations

import re
from pathlib import Path

from nexa_lsp.runtime.run_state import Message, RunState

PREVIEW_CHARS = 2000


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:120] or "result"


def write_artifact(artifact_directory: str, run_id: str, call_id: str, text: str) -> str:
    """Write ``text`` and return its path relative to ``artifact_directory``."""
    relative = f"{_safe(run_id)}/{_safe(call_id)}.txt"
    path = Path(artifact_directory) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return relative


def artifact_reference(relative: str, text: str) -> str:
    """What history (and so the model) sees instead of a large result."""
    size = len(text.encode("utf-8"))
    return f"{text[:PREVIEW_CHARS]}\n[... result truncated: {size} bytes in total; full text in artifact {relative}]"


def read_artifact(state: RunState, reference: Message | str) -> str:
    """The full text of an artifact referenced from ``state``'s history."""
    relative = reference.artifact if isinstance(reference, Message) else reference
    if not relative:
        raise ValueError("this message references no artifact")
    if state.config.artifact_directory is None:
        raise ValueError("the run has no artifact directory")
    return (Path(state.config.artifact_directory) / relative).read_text(encoding="utf-8")


def references_artifacts(state: RunState) -> bool:
    return any(m.artifact for m in state.history) or any(e.artifact for e in state.journal)

"""Markdown transcripts of runs, under ``transcripts/`` next to the run store.

``nexa.showRun`` writes a run's transcript and follows it: while the run goes on, the file
is rewritten (with a ``## Now`` section holding the text streaming from the model).
The file is replaced whole (``nexa_lsp.fileio.write_atomically``): an editor showing it
never reads half a transcript.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nexa_lsp.fileio import write_atomically
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.redaction import scrub
from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.runtime.transcript import render_transcript

if TYPE_CHECKING:
    from nexa_lsp.server.runs.live import LiveRun


def transcript_path(store: SQLiteCheckpointStore, run_id: str) -> Path:
    safe = "".join(c for c in run_id if c.isalnum() or c in "_-") or "run"
    return store.path.parent / "transcripts" / f"{safe}.md"


def display_path(path: Path, folder: Path) -> str:
    """``path`` relative to ``folder`` when inside it, else absolute."""
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def transcript_text(state: RunState, live: LiveRun | None) -> str:
    """The run's transcript; a run still executing here gets its streamed text too."""
    text = render_transcript(state)
    if live is not None and live.finished is not None and not live.done:
        text += "\n## Now\n\n"
        streamed = scrub("".join(live.streamed), live.secrets)
        if streamed:
            text += f"**assistant** (streaming):\n\n{streamed}\n\n"
        if live.activity:
            text += f"- {live.activity}\n"
        if not streamed and not live.activity:
            text += "- waiting for the model\n"
    return text


def write_transcript(path: Path, state: RunState, live: LiveRun | None) -> None:
    write_atomically(path, transcript_text(state, live), make_parents=True)


class Transcripts:
    """The transcripts this server keeps current (by run id)."""

    def __init__(self) -> None:
        self.followed: dict[str, Path] = {}

    def follow(self, store: SQLiteCheckpointStore, state: RunState, live: LiveRun | None) -> Path:
        """Write the transcript of ``state`` now and keep it current; its path."""
        path = transcript_path(store, state.run_id)
        self.followed[state.run_id] = path
        write_transcript(path, state, live)
        return path

    def is_followed(self, run_id: str | None) -> bool:
        return run_id is not None and run_id in self.followed

    def update(self, state: RunState, live: LiveRun | None) -> None:
        """Rewrite the transcript of ``state`` when it is followed."""
        path = self.followed.get(state.run_id)
        if path is not None:
            write_transcript(path, state, live)

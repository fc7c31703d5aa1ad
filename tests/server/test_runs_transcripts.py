"""Transcripts are reachable in clients without ``window/showDocument`` (Neovim 0.7, eglot):
the server says where the file is, and a lens shows its path."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.server.conftest import wait_until
from tests.server.test_runs_support import (
    command,
    lenses,
    make_workspace,
    open_workspace_document,
    session,
    wait_status,
)


@pytest.mark.parametrize("profile", ["neovim@v0.7.0", "emacs@v29.1"])
async def test_show_run_says_where_the_transcript_is(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [{"text": "Hello, 你好!"}])
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello"))["run_id"]
        await wait_status(client, run_id, "completed")
        before = [lens.command.title for lens in await lenses(client, ws) if lens.command]
        assert not [t for t in before if t.startswith("Transcript:")]  # nothing written yet

        shown = await command(client, "nexa.showRun", run_id=run_id)
        path = ws.folder / ".nexa" / "transcripts" / f"{run_id}.md"
        assert shown["uri"] == path.as_uri()
        said = await wait_until(
            lambda: [m for m in client.messages if m.type == lsp.MessageType.Info and str(path) in m.message]
        )
        assert said[0].message == f"Nexa: the transcript of run {run_id} is {path} (rewritten while the run goes on)"
        assert not client.shown_documents
        assert "Hello, 你好!" in path.read_text(encoding="utf-8")

        found = [lens for lens in await lenses(client, ws) if lens.command]
        (link,) = [lens for lens in found if lens.command and lens.command.title.startswith("Transcript:")]
        assert link.command is not None
        assert link.command.title == f"Transcript: .nexa/transcripts/{run_id}.md"
        assert link.command.command == "nexa.showRun" and list(link.command.arguments or []) == [{"run_id": run_id}]

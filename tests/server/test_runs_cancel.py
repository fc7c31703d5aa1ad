"""Cancelling a run from the editor's progress UI (``window/workDoneProgress/cancel``):
the run is settled as ``cancelled`` and the store stays consistent."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.run_state import RunState
from tests.server.conftest import wait_until
from tests.server.test_runs_support import (
    AGENTS,
    NEOVIM,
    VSCODE,
    command,
    diagnostic_with,
    make_workspace,
    offered_actions,
    offers,
    open_workspace_document,
    session,
    wait_status,
)

SLOW_AGENT = AGENTS.replace(
    "agent Greeter {",
    'tool slow {\n    python: "ws_tools.slow"\n}\n\nagent Worker uses slow {\n'
    '    prompt: "Work slowly.",\n    model: "scripted/demo"\n}\n\nagent Greeter {',
)
SCRIPT = [
    {"text": "Working on it.", "tool_calls": [{"id": "call_slow", "name": "slow", "arguments": {}}]},
    {"text": "Done with the slow work."},
]


@pytest.mark.parametrize("profile", [VSCODE, NEOVIM])
async def test_cancelling_the_progress_during_a_tool_cancels_the_run_consistently(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, SCRIPT, text=SLOW_AGENT)
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Worker", task="Go"))["run_id"]

        def tool_running() -> object:
            for token, values in client.progress_reports.items():
                begin = values[0] if values else None
                if not (isinstance(begin, lsp.WorkDoneProgressBegin) and begin.cancellable):
                    continue
                if any("tool slow (call_slow) running" in (getattr(v, "message", "") or "") for v in values):
                    return token
            return None

        token = await wait_until(tool_running)
        client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))  # type: ignore[arg-type]
        await wait_status(client, run_id, "cancelled")

        end = client.progress_reports[token][-1]  # type: ignore[index]
        assert isinstance(end, lsp.WorkDoneProgressEnd) and "cancelled" in (end.message or "")
        stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == run_id))
        assert stored.status.value == "cancelled" and stored.error is not None
        assert "cancelled from the editor" in stored.error.message
        # the running tool finished first and its outcome is recorded: nothing unknown, nothing replayed
        assert ws.tool_call_names() == ["slow"]
        assert [(e.call_id, e.status, e.result) for e in stored.journal] == [("call_slow", "completed", "slow result")]
        assert not stored.unknown_outcomes
        assert "Done with the slow work." not in stored.output  # the model was not asked again
        with SQLiteCheckpointStore(ws.store) as store:
            assert store.owner(run_id) is None and not store.is_interrupted(run_id)
        await diagnostic_with(client, ws.uri, "NX202", present=False)
        (listed,) = (await command(client, "nexa.listRuns", agent="Worker"))["runs"]
        assert listed["status"] == "cancelled" and listed["actions"] == ["continue", "show"]
        assert "nexa.cancel" not in offered_actions(await offers(client, profile, ws, "agent Worker"), run_id)

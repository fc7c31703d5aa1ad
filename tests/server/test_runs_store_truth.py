"""The store is the truth: a run the server saw waiting, then moved on by another process,
is never driven again from the server's stale copy (its tool never runs twice)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nexa_lsp.runtime.run_state import RunState
from tests.server.test_runs_flow import APPROVAL_SCRIPT
from tests.server.test_runs_support import (
    NEOVIM,
    VSCODE,
    clean_environment,
    command,
    make_workspace,
    offered_actions,
    offers,
    open_workspace_document,
    refusal,
    session,
    waiting_run,
)


def cli_approve(folder: Path, store: Path, run_id: str) -> subprocess.CompletedProcess[str]:
    """``nexa-lsp agent --resume RUN --approve`` in the workspace folder, as a terminal user would."""
    return subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "agent", "--resume", run_id, "--approve", "--store", str(store)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_environment(),
    )


@pytest.mark.parametrize("profile", [VSCODE, NEOVIM])
async def test_a_run_approved_by_another_process_is_not_approved_again(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, APPROVAL_SCRIPT)
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = await waiting_run(client, ws)
        assert offered_actions(await offers(client, profile, ws, "agent Analyst"), run_id) >= {"nexa.approve"}

        done = cli_approve(ws.folder, ws.store, run_id)
        assert done.returncode == 0, done.stderr
        assert ws.status(run_id) == "completed"
        assert ws.tool_call_names() == ["lookup", "publish"]
        completed = ws.rows()

        message = await refusal(client, "nexa.approve", run_id=run_id, call_id="call_publish")
        assert message.startswith("NXR010: ") and "completed now, not waiting for approval" in message
        message = await refusal(client, "nexa.deny", run_id=run_id, call_id="call_publish")
        assert "completed now" in message
        message = await refusal(client, "nexa.resume", run_id=run_id)
        assert run_id in message
        assert ws.tool_call_names() == ["lookup", "publish"]  # publish ran once, in the CLI
        assert ws.rows() == completed  # the stored run was not overwritten
        stored = RunState.from_json(completed[0][3])
        assert stored.approvals[0].decided_by == "cli"

        # the editor now offers what the stored run allows: no approval any more (Neovim cannot
        # ask for a continuation input and the file passes Analyst none, so it has no Continue)
        (listed,) = (await command(client, "nexa.listRuns", agent="Analyst"))["runs"]
        assert listed["actions"] == ["continue", "show"]
        expected = {"nexa.continue", "nexa.showRun"} if profile == VSCODE else {"nexa.showRun"}
        assert offered_actions(await offers(client, profile, ws, "agent Analyst"), run_id) == expected

"""Lenses work in every client: where the client cannot prompt for a task or input, each
lens carries a literal written in the file, and clicking it runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.runtime.run_state import RunState
from tests.server.test_runs_support import (
    VSCODE,
    Workspace,
    eventually,
    lenses,
    make_workspace,
    open_workspace_document,
    session,
    wait_status,
)

NEOVIM_WITH_LENSES = "neovim@v0.11.0"


async def click(client: LanguageClient, lens: lsp.CodeLens) -> dict[str, object]:
    """What an editor does when the lens is clicked: send its command as it is."""
    assert lens.command is not None
    answer = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    assert isinstance(answer, dict), answer
    return answer


async def greeter_lenses(client: LanguageClient, ws: Workspace) -> list[lsp.CodeLens]:
    line = ws.text.count("\n", 0, ws.text.index("agent Greeter"))
    return [lens for lens in await lenses(client, ws) if lens.range.start.line == line]


@pytest.mark.parametrize("profile", [NEOVIM_WITH_LENSES, VSCODE])
async def test_lenses_of_a_client_that_cannot_prompt_run_the_files_literals(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [{"text": "Hello!"}, {"text": "Goodbye, and take care."}])
    async with session(profile, ws.folder, prompts=False) as client:
        await open_workspace_document(client, ws)
        found = await lenses(client, ws)
        arguments = [lens.command.arguments[0] for lens in found if lens.command and lens.command.arguments]
        assert all("task" in a for a in arguments if "agent" in a)  # never an Execute without its task
        (execute,) = await greeter_lenses(client, ws)
        assert execute.command is not None and execute.command.title == '▶ Execute "Say hello"'

        run_id = str((await click(client, execute))["run_id"])
        await wait_status(client, run_id, "completed")

        # the lenses follow the run once its end reached the server
        after = await eventually(
            lambda: greeter_lenses(client, ws),
            lambda found: any(x.command is not None and x.command.command == "nexa.continue" for x in found),
        )
        lens = next(x for x in after if x.command is not None and x.command.command == "nexa.continue")
        assert lens.command is not None and lens.command.title == 'Continue "Now say goodbye"'
        second = str((await click(client, lens))["run_id"])
        await wait_status(client, second, "completed")
        stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == second))
        assert stored.input == "Now say goodbye" and stored.parent_run_id == run_id
        assert stored.output == "Goodbye, and take care."

"""The shipped demo ``examples/runs`` runs from its lenses exactly as shipped, offline:
its tools name their functions with ``python:`` and ``demo.nxs`` names the scripted
provider's replies. Copied unchanged into a workspace, it executes, asks for approval,
is approved, completes, and continues, in the VS Code and the Neovim profile."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.runtime.run_state import RunState
from tests.server.test_runs_lenses import NEOVIM_WITH_LENSES, click
from tests.server.test_runs_support import (
    VSCODE,
    Workspace,
    command,
    eventually,
    lenses,
    make_workspace,
    open_workspace_document,
    session,
    wait_status,
)

DEMO = Path(__file__).resolve().parents[2] / "examples" / "runs"
TASK = "Analyze the evidence"
FOLLOW_UP = "Summarize the conclusion"


def shipped_demo(root: Path) -> Workspace:
    """``examples/runs`` copied as it is into a fresh workspace folder."""
    folder = root / "ws"
    shutil.copytree(DEMO, folder)
    doc = folder / "analyst.nx"
    return Workspace(folder, doc, doc.read_text(encoding="utf-8"))


async def analyst_lens(client: LanguageClient, ws: Workspace, command: str) -> lsp.CodeLens:
    """The first lens on ``agent Analyst`` that sends ``command`` (waiting until it shows)."""
    line = ws.text.count("\n", 0, ws.text.index("agent Analyst"))

    def ours(found: list[lsp.CodeLens]) -> list[lsp.CodeLens]:
        return [x for x in found if x.range.start.line == line and x.command and x.command.command == command]

    found = await eventually(lambda: lenses(client, ws), lambda answer: bool(ours(answer)))
    return ours(found)[0]


async def click_as_the_user(client: LanguageClient, lens: lsp.CodeLens, field: str, text: str) -> str:
    """Click ``lens``; a lens without the ``field`` it needs is one the VS Code extension
    prompts for: the user types ``text`` and the extension sends it along."""
    assert lens.command is not None and lens.command.arguments
    argument = dict(lens.command.arguments[0])
    if field not in argument:
        argument[field] = text
        lens = lsp.CodeLens(
            range=lens.range,
            command=lsp.Command(title=lens.command.title, command=lens.command.command, arguments=[argument]),
        )
    assert argument[field] == text
    return str((await click(client, lens))["run_id"])


@pytest.mark.parametrize("profile", [VSCODE, NEOVIM_WITH_LENSES])
async def test_the_shipped_demo_executes_is_approved_and_continues_from_its_lenses(
    profile: str, tmp_path: Path
) -> None:
    ws = shipped_demo(tmp_path)
    assert not (ws.folder / ".nexa").exists()
    async with session(profile, ws.folder) as client:
        client.message_answers.append("Approve")  # type: ignore[attr-defined]
        await open_workspace_document(client, ws)

        execute = await analyst_lens(client, ws, "nexa.execute")
        assert execute.command is not None
        expected = "▶ Execute…" if profile == VSCODE else f'▶ Execute "{TASK}"'
        assert execute.command.title == expected
        first = await click_as_the_user(client, execute, "task", TASK)
        await wait_status(client, first, "completed")

        asked = list(client.message_requests)  # type: ignore[attr-defined]
        assert len(asked) == 1, asked
        assert [a.title for a in asked[0].actions or []] == ["Approve", "Deny", "Show"]
        assert f"Analyst run {first[:12]}" in asked[0].message and "publish_report(" in asked[0].message

        proceed = await analyst_lens(client, ws, "nexa.continue")
        second = await click_as_the_user(client, proceed, "input", FOLLOW_UP)
        await wait_status(client, second, "completed")

    runs = {row[0]: (row[1], RunState.from_json(row[3])) for row in ws.rows()}
    assert set(runs) == {first, second}
    status, state = runs[first]
    assert status == "completed" and state.input == TASK
    assert state.output.startswith("Finding: badge 4411")
    # both tools ran as shipped: their results come from evidence_tools.py, not the script
    results = {entry.tool: entry for entry in state.journal}
    assert results["lookup_evidence"].status == "completed"
    assert "Badge 4411 used at 02:13" in (results["lookup_evidence"].result or "")
    assert results["publish_report"].status == "completed"
    assert (results["publish_report"].result or "").startswith("published 'Case 7'")
    (approval,) = state.approvals
    assert approval.tool == "publish_report" and approval.status == "approved"
    status, follow_up = runs[second]
    assert status == "completed" and follow_up.input == FOLLOW_UP and follow_up.parent_run_id == first
    assert follow_up.session_id == state.session_id
    assert follow_up.output.startswith("Conclusion: the holder of badge 4411")


UNPINNED = """nexa 3.0;

// 工具没有 python: 属性 (the editor setting names its module)
tool lookup { description: "查找证据", parameters: {"case": "string"} }

agent Analyst uses lookup {
    prompt: "Work from evidence.",
    model: "scripted/demo"
}
"""
LOOKUP_ONCE = [
    {"text": "查一下。", "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"case": "七"}}]},
    {"text": "Done."},
]


@pytest.mark.parametrize("profile", [VSCODE, NEOVIM_WITH_LENSES])
async def test_the_tool_modules_setting_is_where_the_editor_finds_tools(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, LOOKUP_ONCE, text=UNPINNED)
    (ws.folder / "lib").mkdir()
    (ws.folder / "ws_tools.py").rename(ws.folder / "lib" / "ws_tools.py")
    options = {"runs": {"toolModules": ["lib/ws_tools.py"]}}
    async with session(profile, ws.folder, options=options) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="查"))["run_id"]
        await wait_status(client, run_id, "completed")
    calls = (ws.folder / "lib" / "tool_calls.log").read_text(encoding="utf-8").splitlines()
    assert calls == ["lookup [('case', '七')]"]


async def test_without_the_setting_nxr041_names_the_places_looked_at(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, LOOKUP_ONCE, text=UNPINNED)
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="查"))["run_id"]
        await wait_status(client, run_id, "failed")
    state = RunState.from_json(next(row[3] for row in ws.rows() if row[0] == run_id))
    assert state.error is not None and "NXR041" in state.error.message
    assert f"setting nexa.runs.toolModules (workspace folder {ws.folder}): none named" in state.error.message
    assert "TOOL_MODULES in .nxs files of" in state.error.message
    assert ws.tool_call_names() == []

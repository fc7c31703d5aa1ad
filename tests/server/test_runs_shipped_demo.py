"""The shipped demo ``examples/runs`` runs from its lenses exactly as shipped, offline:
its tools name their functions with ``python:`` and ``demo.nxs`` names the scripted
provider's replies. Copied unchanged into a workspace, it executes, asks for approval,
is approved, completes, and continues, in the VS Code and the Neovim profile."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.server.settings import ServerSettings
from tests.runtime.loopback import LoopbackServer, json_answer
from tests.server.conftest import TIMEOUT, position_of, wait_until
from tests.server.test_runs_lenses import NEOVIM_WITH_LENSES, click
from tests.server.test_runs_safety import LOOP_AGENT
from tests.server.test_runs_support import (
    NEOVIM,
    VSCODE,
    Workspace,
    clean_environment,
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
        asked = await wait_until(lambda: [r for r in client.message_requests if run_id[:12] in r.message])  # type: ignore[attr-defined]
        assert "NXR041" in asked[0].message and "nexa.runs.toolModules" in asked[0].message  # the notification says it
    state = RunState.from_json(next(row[3] for row in ws.rows() if row[0] == run_id))
    assert state.error is not None and "NXR041" in state.error.message
    assert f"setting nexa.runs.toolModules (workspace folder {ws.folder}): none named" in state.error.message
    assert "TOOL_MODULES in .nxs files of" in state.error.message
    assert ws.tool_call_names() == []


@pytest.mark.parametrize("profile", [VSCODE, NEOVIM])
async def test_a_provider_answering_500_fails_the_run_with_its_code_shown(profile: str, tmp_path: Path) -> None:
    with LoopbackServer() as provider:
        provider.answers.append(json_answer({"error": {"message": "服务器内部错误"}}, status=500))
        ws = make_workspace(
            tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\nLOOP_MAX_RETRIES = 0\n"
        )
        async with session(profile, ws.folder, env=clean_environment(LOOP_API_KEY="sk-500-test")) as client:
            await open_workspace_document(client, ws)
            run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Hi"))["run_id"]
            await wait_status(client, run_id, "failed")
            state = RunState.from_json(next(row[3] for row in ws.rows() if row[0] == run_id))
            assert state.error is not None and state.error.code == "NXR034"  # ProviderUnavailableError
            expected = f"Greeter run {run_id[:12]} failed: {state.error.code} "
            if profile == VSCODE:  # a notification (with Show transcript)
                asked = await wait_until(lambda: [r for r in client.message_requests if run_id[:12] in r.message])  # type: ignore[attr-defined]
                assert asked[0].type == lsp.MessageType.Error and expected in asked[0].message
            else:  # window/showMessage, saying where the transcript is
                errors = await wait_until(
                    lambda: [m for m in client.messages if m.type == lsp.MessageType.Error and run_id[:12] in m.message]
                )
                assert expected in errors[0].message and "transcript: " in errors[0].message
        assert len(provider.requests) == 1  # one request, no retries


async def test_lenses_read_the_nxs_settings_off_the_event_loop(tmp_path: Path) -> None:
    """A ``.nxs`` file that cannot be read yet (a named pipe nobody writes: a stalled network
    drive) holds up the lenses, not hover."""
    ws = make_workspace(tmp_path, LOOKUP_ONCE, text=UNPINNED)
    stalled = ws.folder / "stalled.nxs"
    os.mkfifo(stalled)

    def unblock() -> None:
        with open(stalled, "w", encoding="utf-8") as pipe:  # waits for the server to open it
            pipe.write('MODEL = "模型"\n')

    writer = threading.Thread(target=unblock, daemon=True)
    async with session(VSCODE, ws.folder) as client:
        try:
            await open_workspace_document(client, ws)
            lens_request = asyncio.ensure_future(lenses(client, ws))
            await asyncio.sleep(0.5)
            question = lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=ws.uri), position=position_of(ws.text, "agent Analyst", 7)
            )
            hover = await asyncio.wait_for(client.text_document_hover_async(question), 5.0)
            assert hover is not None and "Analyst" in str(hover.contents)
            assert not lens_request.done()  # still waiting for the settings file
        finally:
            writer.start()
        found = await asyncio.wait_for(lens_request, TIMEOUT)
        assert any(x.command is not None and x.command.command == "nexa.execute" for x in found)
    writer.join(TIMEOUT)


def test_the_tool_modules_setting_takes_a_list_of_paths() -> None:
    base = ServerSettings()
    assert base.runs_tool_modules == ()
    listed, problems = base.updated({"runs": {"toolModules": ["工具/a.py", " b.py ", ""]}})
    assert listed.runs_tool_modules == ("工具/a.py", "b.py") and problems == []
    joined, problems = base.updated({"runs": {"toolModules": "a.py, b.py"}})
    assert joined.runs_tool_modules == ("a.py", "b.py") and problems == []
    kept, problems = listed.updated({"runs": {"toolModules": {"a": 1}}})
    assert kept.runs_tool_modules == ("工具/a.py", "b.py")
    assert problems == ["setting nexa.runs.toolModules should be a list of paths, got {'a': 1}; ignored"]

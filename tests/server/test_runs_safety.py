"""Runs in the editor - safety: nothing runs unless a user invokes a command, runs can be
switched off, provider keys never reach the store, transcripts, logs or diagnostics; and
recovery of an unknown tool outcome."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from nexa_lsp.runtime.run_state import RunState
from tests.runtime.loopback import Answer, LoopbackServer, chat_text, json_answer, sse
from tests.server.conftest import diagnostics, wait_until
from tests.server.test_runs_support import (
    AGENTS,
    NEOVIM,
    RUN_KIND,
    VSCODE,
    clean_environment,
    command,
    crashed_run,
    diagnostic_with,
    eventually,
    lenses,
    make_workspace,
    offered_actions,
    offers,
    open_workspace_document,
    refusal,
    run_actions,
    session,
    wait_status,
)

PROFILES = [VSCODE, NEOVIM]

LOOKUP_THEN_ANSWER = [
    {"text": "Looking it up.", "tool_calls": [{"id": "call_lookup", "name": "lookup", "arguments": {}}]},
    {"text": "Badge 4411 opened the door."},
]


@pytest.mark.parametrize("profile", PROFILES)
async def test_opening_a_workspace_runs_nothing(profile: str, tmp_path: Path) -> None:
    fresh = make_workspace(tmp_path / "fresh", LOOKUP_THEN_ANSWER)
    async with session(profile, fresh.folder) as client:
        await open_workspace_document(client, fresh)
        await diagnostics(client, fresh.uri)
        if profile == VSCODE:
            assert [lens.command.title for lens in await lenses(client, fresh) if lens.command] == [
                "▶ Execute…",
                "▶ Execute…",
            ]
        # Greeter: its flow passes a task literal, so every client has an action that can run
        assert await run_actions(client, fresh, "agent Greeter")
        await asyncio.sleep(0.3)
        assert not (fresh.folder / ".nexa").exists()  # no store created just by looking
        assert not (fresh.folder / "tools_imported.log").exists()  # no user code imported
        assert not client.runs_changed  # type: ignore[attr-defined]
        assert not client.progress_reports

    # a run interrupted right before its tool: opening the workspace must not resume it
    ws = make_workspace(tmp_path / "interrupted", LOOKUP_THEN_ANSWER)
    state = crashed_run(ws, "Analyst", "Analyze", LOOKUP_THEN_ANSWER, "asked")
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        interrupted = await diagnostic_with(client, ws.uri, "NX202")
        assert interrupted is not None and "interrupted" in interrupted.message
        assert offered_actions(await offers(client, profile, ws, "agent Analyst"), state.run_id) == {
            "nexa.resume",
            "nexa.cancel",
            "nexa.showRun",
        }
        await asyncio.sleep(0.3)
        assert ws.status(state.run_id) == "running"
        assert ws.tool_call_names() == []
        assert not (ws.folder / "tools_imported.log").exists()

        await command(client, "nexa.resume", run_id=state.run_id)  # only the user's command runs it
        await wait_status(client, state.run_id, "completed")
        assert ws.tool_call_names() == ["lookup"]


async def test_runs_disabled_no_lenses_no_actions_commands_refused(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, LOOKUP_THEN_ANSWER)
    state = crashed_run(ws, "Analyst", "Analyze", LOOKUP_THEN_ANSWER, "asked")
    before = ws.rows()
    configuration = {"nexa": {"runs": {"enabled": False}}}
    async with session(VSCODE, ws.folder, configuration=configuration) as client:
        await open_workspace_document(client, ws)
        # the setting reaches the server by workspace/configuration, just after initialization
        assert await eventually(lambda: lenses(client, ws), lambda found: found == []) == []
        assert await run_actions(client, ws, "agent Analyst") == []
        await diagnostic_with(client, ws.uri, "NX202", present=False)
        for name, argument in (
            ("nexa.execute", {"uri": ws.uri, "agent": "Analyst", "task": "Analyze"}),
            ("nexa.resume", {"run_id": state.run_id}),
            ("nexa.listRuns", {}),
        ):
            message = await refusal(client, name, **argument)
            assert "nexa.runs.enabled" in message
        assert ws.rows() == before
        assert ws.tool_call_names() == []


async def test_runs_disabled_by_initialization_options_for_neovim(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, LOOKUP_THEN_ANSWER)
    options = {"runs": {"enabled": False}}
    async with session(NEOVIM, ws.folder, options=options) as client:
        await open_workspace_document(client, ws)
        assert await run_actions(client, ws, "agent Analyst") == []
        message = await refusal(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="Analyze")
        assert "nexa.runs.enabled" in message
        assert not (ws.folder / ".nexa").exists()


KEY = "sk-test-4f1c9a7e2b6d8e0f3a5c"

LOOP_AGENT = AGENTS.replace('model: "scripted/demo"\n}\n\nflow', 'model: "loop/m1"\n}\n\nflow')


@pytest.mark.parametrize("source", ["environment", "client settings"])
async def test_provider_keys_never_leak(source: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with LoopbackServer() as provider:
        provider.answers.extend(
            [
                chat_text("Hello ", "from the ", "loopback."),
                chat_text("Goodbye."),
                # a provider that echoes the key in its error must not get it into the run either
                json_answer({"error": {"message": f"Incorrect API key provided: {KEY}"}}, status=401),
            ]
        )
        ws = make_workspace(
            tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\nLOOP_MAX_RETRIES = 0\n"
        )
        if source == "environment":
            env = clean_environment(LOOP_API_KEY=KEY)
            configuration: dict[str, object] = {}
        else:
            env = clean_environment()
            configuration = {"nexa": {"runs": {"providerSettings": {"LOOP_API_KEY": KEY}}}}
        results: list[object] = []
        async with session(VSCODE, ws.folder, env=env, configuration=configuration) as client:
            await open_workspace_document(client, ws)
            first = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello")
            results.append(first)
            results.append(await command(client, "nexa.showRun", run_id=first["run_id"]))
            await wait_status(client, first["run_id"], "completed")
            second = await command(client, "nexa.continue", run_id=first["run_id"], input="Bye")
            results.append(second)
            await wait_status(client, second["run_id"], "completed")
            third = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Again")
            results.append(third)
            await wait_status(client, third["run_id"], "failed")
            results.append(await command(client, "nexa.showRun", run_id=third["run_id"]))
            results.append(await command(client, "nexa.listRuns"))
            items = await diagnostics(client, ws.uri)
            seen = [
                repr(client.log_messages),
                repr(client.messages),
                repr(client.progress_reports),
                repr(client.published),  # type: ignore[attr-defined]
                repr(client.runs_changed),  # type: ignore[attr-defined]
                repr(items),
                repr(await lenses(client, ws)),
                json.dumps(results),
            ]
        # the key did reach the provider, as a bearer token
        assert [r.headers.get("authorization") for r in provider.requests] == [f"Bearer {KEY}"] * 3

    failed = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == third["run_id"]))
    assert failed.error is not None and failed.error.code == "NXR032" and "[redacted]" in failed.error.message
    assert RunState.from_json(next(r[3] for r in ws.rows() if r[0] == second["run_id"])).output == "Goodbye."
    transcripts = list((ws.folder / ".nexa" / "transcripts").glob("*.md"))
    assert len(transcripts) == 2
    files = [p for p in ws.folder.rglob("*") if p.is_file() and p.suffix != ".nxs"]
    assert ws.store in files
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    for text in seen:
        assert KEY not in text
    captured = capfd.readouterr()
    assert KEY not in captured.out and KEY not in captured.err


LEAKY_AGENT = (
    LOOP_AGENT
    + """
tool env_echo {
    python: "ws_tools.env_echo"
}

agent Leaky uses env_echo {
    prompt: "Report the environment.",
    model: "loop/m1"
}
"""
)


def chat_tool_call(call_id: str, name: str) -> Answer:
    first = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
    return Answer(
        chunks=sse(
            {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            done=True,
        )
    )


async def test_a_tool_that_prints_the_key_does_not_get_it_into_the_store(tmp_path: Path) -> None:
    with LoopbackServer() as provider:
        provider.answers.extend([chat_tool_call("call_env", "env_echo"), chat_text("Reported.")])
        ws = make_workspace(tmp_path, [], text=LEAKY_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\n")
        async with session(VSCODE, ws.folder, env=clean_environment(LOOP_API_KEY=KEY)) as client:
            await open_workspace_document(client, ws)
            run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Leaky", task="Report"))["run_id"]
            await command(client, "nexa.showRun", run_id=run_id)
            await wait_status(client, run_id, "completed")
            seen = repr(client.progress_reports) + repr(client.log_messages)
        # the tool really returned the key, and the model got it back as the tool's result
        assert ws.tool_call_names() == ["env_echo"]
        assert KEY in json.dumps(provider.bodies()[1])
    stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == run_id))
    assert [m.content for m in stored.history if m.role == "tool"] == ["LOOP_API_KEY=[redacted]"]
    for path in ws.folder.rglob("*"):
        if path.is_file() and path.suffix != ".nxs":
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in seen


UNKNOWN_SCRIPT = [*LOOKUP_THEN_ANSWER]


@pytest.mark.parametrize("profile", PROFILES)
async def test_unknown_tool_outcome_is_recovered_from_the_editor(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, UNKNOWN_SCRIPT)
    state = crashed_run(ws, "Analyst", "Analyze", UNKNOWN_SCRIPT, "started")
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        unknown = await diagnostic_with(client, ws.uri, "NX204")
        assert unknown is not None
        assert unknown.severity == lsp.DiagnosticSeverity.Warning
        assert state.run_id in unknown.message and "lookup (call_lookup)" in unknown.message

        # the actions for this diagnostic: recover it (completed / not executed), or cancel - never resume
        actions = await run_actions(client, ws, "agent Analyst", diagnostics=[unknown])
        for_run = [a for a in actions if a.command and a.command.arguments[0].get("run_id") == state.run_id]
        assert {a.command.command for a in for_run if a.command} == {"nexa.recover", "nexa.cancel", "nexa.showRun"}
        recovers = [a for a in for_run if a.command and a.command.command == "nexa.recover"]
        assert sorted(a.command.arguments[0]["outcome"] for a in recovers if a.command) == [
            "completed",
            "not_executed",
        ]
        assert all(a.kind == RUN_KIND and a.diagnostics and a.diagnostics[0].code == "NX204" for a in recovers)

        message = await refusal(client, "nexa.resume", run_id=state.run_id)
        assert message.startswith("NXR002: ")

        answer = await command(
            client, "nexa.recover", run_id=state.run_id, call_id="call_lookup", outcome="completed", result="badge 4411"
        )
        assert answer == {"run_id": state.run_id, "status": "running"}
        await diagnostic_with(client, ws.uri, "NX204", present=False)
        assert offered_actions(await offers(client, profile, ws, "agent Analyst"), state.run_id) == {
            "nexa.resume",
            "nexa.cancel",
            "nexa.showRun",
        }
        await command(client, "nexa.resume", run_id=state.run_id)
        await wait_status(client, state.run_id, "completed")
        assert ws.tool_call_names() == []  # recovery never runs the tool; its recorded result answered the call
        final = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == state.run_id))
        assert final.journal[0].recovered_by and final.journal[0].result == "badge 4411"
        assert final.output == "Badge 4411 opened the door."


async def test_show_run_opens_a_transcript_kept_current(tmp_path: Path) -> None:
    slow = {"text": " ".join(f"part{i}" for i in range(60)), "chunk_delay": 0.02}
    ws = make_workspace(tmp_path, [slow])
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Talk"))["run_id"]
        shown = await command(client, "nexa.showRun", run_id=run_id)
        path = ws.folder / ".nexa" / "transcripts" / f"{run_id}.md"
        assert shown["uri"] == path.as_uri()
        await wait_until(lambda: client.shown_documents)
        assert client.shown_documents[-1].uri == shown["uri"] and client.shown_documents[-1].take_focus
        streaming = await wait_until(lambda: "part5 " in path.read_text(encoding="utf-8") and path.read_text())
        assert f"# Run {run_id}" in streaming and "## Now" in streaming and "- status: running" in streaming
        await wait_status(client, run_id, "completed")
        final = await wait_until(lambda: "- status: completed" in path.read_text() and path.read_text())
        assert "part59" in final and "## Now" not in final
        assert "- session: ses_" in final and "- parent run: -" in final


async def test_two_quick_resumes_drive_the_run_once(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, LOOKUP_THEN_ANSWER)
    state = crashed_run(ws, "Analyst", "Analyze", LOOKUP_THEN_ANSWER, "asked")
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        params = lsp.ExecuteCommandParams(command="nexa.resume", arguments=[{"run_id": state.run_id}])
        answers = await asyncio.gather(
            client.workspace_execute_command_async(params),
            client.workspace_execute_command_async(params),
            return_exceptions=True,
        )
        accepted = [a for a in answers if isinstance(a, dict)]
        refused = [a for a in answers if isinstance(a, Exception)]
        assert len(accepted) == 1 and len(refused) == 1, answers
        assert state.run_id in str(refused[0])
        await wait_status(client, state.run_id, "completed")
        assert ws.tool_call_names() == ["lookup"]  # the tool ran once

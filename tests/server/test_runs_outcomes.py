"""Outcomes of editor runs are never silent: approval requests acted on, failures named by
their NXR code with the way to the transcript, completions per ``nexa.runs.notify``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.runtime.loopback import LoopbackServer, chat_text, json_answer
from tests.server.conftest import wait_until
from tests.server.test_runs_flow import APPROVAL_SCRIPT
from tests.server.test_runs_safety import LOOP_AGENT
from tests.server.test_runs_support import (
    NEOVIM,
    VSCODE,
    Workspace,
    clean_environment,
    command,
    make_workspace,
    open_workspace_document,
    session,
    wait_status,
    waiting_run,
)

PROFILES = [VSCODE, NEOVIM]
KEY = "sk-outcome-test-7d2e9b41"


def requests_of(client: object) -> list[lsp.ShowMessageRequestParams]:
    return list(client.message_requests)  # type: ignore[attr-defined]


def shown(client: object, kind: lsp.MessageType) -> list[str]:
    return [m.message for m in client.messages if m.type == kind]  # type: ignore[attr-defined]


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_run_waiting_for_approval_asks_and_the_answer_is_acted_on(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, APPROVAL_SCRIPT)
    async with session(profile, ws.folder) as client:
        # VS Code approves at once; Neovim first looks at the transcript, then denies
        client.message_answers.extend(["Approve"] if profile == VSCODE else ["Show", "Deny"])  # type: ignore[attr-defined]
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="Analyze"))["run_id"]
        await wait_status(client, run_id, "completed")

        asked = requests_of(client)
        assert asked, "no approval request"
        assert [a.title for a in asked[0].actions or []] == ["Approve", "Deny", "Show"]
        assert asked[0].type == lsp.MessageType.Warning
        assert "Analyst run run_" in asked[0].message and "publish(" in asked[0].message
        assert "call_publish" in asked[0].message and '"title": "t"' in asked[0].message
        if profile == VSCODE:
            assert ws.tool_call_names() == ["lookup", "publish"]  # approved: ran once
            assert len(asked) == 1
        else:
            transcript = ws.folder / ".nexa" / "transcripts" / f"{run_id}.md"
            assert client.shown_documents[-1].uri == transcript.as_uri()  # "Show" opened it
            assert len(asked) == 2  # asked again after Show
            assert ws.tool_call_names() == ["lookup"]  # denied: never ran
        # the completion message follows nexa/runsChanged
        await wait_until(lambda: [m for m in shown(client, lsp.MessageType.Info) if f"{run_id[:12]} completed" in m])


async def test_a_dismissed_approval_request_leaves_the_run_waiting(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, APPROVAL_SCRIPT)
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = await waiting_run(client, ws)
        await wait_until(lambda: requests_of(client))
        await asyncio.sleep(0.3)
        assert ws.status(run_id) == "waiting_approval"
        assert ws.tool_call_names() == ["lookup"]
        assert len(requests_of(client)) == 1  # dismissed once: not asked again


def failing_workspace(tmp_path: Path, provider: LoopbackServer) -> Workspace:
    provider.answers.append(json_answer({"error": {"message": "Incorrect API key provided"}}, status=401))
    return make_workspace(
        tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\nLOOP_MAX_RETRIES = 0\n"
    )


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_provider_error_is_named_by_its_code_with_the_transcript(profile: str, tmp_path: Path) -> None:
    with LoopbackServer() as provider:
        ws = failing_workspace(tmp_path, provider)
        async with session(profile, ws.folder, env=clean_environment(LOOP_API_KEY=KEY)) as client:
            client.message_answers.append("Show transcript")  # type: ignore[attr-defined]
            await open_workspace_document(client, ws)
            run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Hi"))["run_id"]
            await wait_status(client, run_id, "failed")
            transcript = ws.folder / ".nexa" / "transcripts" / f"{run_id}.md"
            if profile == VSCODE:  # a notification with a button
                asked = await wait_until(lambda: requests_of(client))
                assert asked[0].type == lsp.MessageType.Error
                assert [a.title for a in asked[0].actions or []] == ["Show transcript"]
                assert f"Greeter run {run_id[:12]} failed: NXR032 " in asked[0].message
                await wait_until(lambda: client.shown_documents)
                assert client.shown_documents[-1].uri == transcript.as_uri()
            else:  # a message saying where the transcript is
                errors = await wait_until(lambda: [m for m in shown(client, lsp.MessageType.Error) if run_id[:12] in m])
                assert "failed: NXR032 " in errors[0] and errors[0].endswith(f"transcript: {transcript}")
                assert not requests_of(client)
            assert "- status: failed" in transcript.read_text(encoding="utf-8")
            seen = repr(client.messages) + repr(requests_of(client))
    assert KEY not in seen


@pytest.mark.parametrize("level", ["failures", "none"])
async def test_the_notify_setting_quiets_outcomes(level: str, tmp_path: Path) -> None:
    with LoopbackServer() as provider:
        ws = failing_workspace(tmp_path, provider)
        provider.answers.insert(0, chat_text("Hello."))
        configuration = {"nexa": {"runs": {"notify": level}}}
        env = clean_environment(LOOP_API_KEY=KEY)
        async with session(VSCODE, ws.folder, env=env, configuration=configuration) as client:
            await open_workspace_document(client, ws)
            first = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Hi"))["run_id"]
            await wait_status(client, first, "completed")
            second = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Again"))["run_id"]
            await wait_status(client, second, "failed")
            if level == "failures":
                await wait_until(lambda: [r for r in requests_of(client) if second[:12] in r.message])
            await asyncio.sleep(0.3)
            assert not [m for m in shown(client, lsp.MessageType.Info) if first[:12] in m]  # no completion message
            failures = [r for r in requests_of(client) if second[:12] in r.message]
            assert len(failures) == (1 if level == "failures" else 0)

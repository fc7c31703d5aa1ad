"""Provider keys from the client's secret storage: the server asks ``nexa/providerSecret``
while a run starts (only a client declaring ``experimental.nexa.providerSecrets``), the key
reaches a loopback provider as its bearer token, and it is written nowhere: not in the
workspace, the store, the transcripts, the messages and logs sent to the client, nor the
server's own output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient, client_capabilities

from tests.runtime.loopback import LoopbackServer, chat_text
from tests.server.test_runs_support import (
    AGENTS,
    VSCODE,
    as_plain,
    clean_environment,
    command,
    lenses,
    make_workspace,
    open_workspace_document,
    session,
    wait_status,
)

KEY = "sk-keychain-7d3e91b0c4a2f65e18"
LOOP_AGENT = AGENTS.replace('model: "scripted/demo"\n}\n\nflow', 'model: "loop/m1"\n}\n\nflow')


def keeping_secrets() -> Any:
    capabilities = client_capabilities(VSCODE)
    capabilities.experimental = {"nexa": {"runPrompts": True, "providerSecrets": True}}
    return capabilities


def answer_secrets(client: LanguageClient, stored: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    """Answer ``nexa/providerSecret`` from ``stored`` (as the extension's SecretStorage does);
    returns the list of requests seen."""
    asked: list[dict[str, Any]] = []

    @client.feature("nexa/providerSecret")
    def provider_secret(params: Any) -> dict[str, str] | None:
        request = as_plain(params)
        asked.append(request)
        value = stored.get((request.get("provider"), request.get("name")))
        return {"value": value} if value is not None else None

    return asked


async def test_a_key_from_the_client_secret_storage_reaches_the_provider_only(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with LoopbackServer() as provider:
        provider.answers.extend([chat_text("Hello ", "from the keychain."), chat_text("Goodbye.")])
        ws = make_workspace(
            tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\nLOOP_MAX_RETRIES = 0\n"
        )
        results: list[object] = []
        async with session(VSCODE, ws.folder, env=clean_environment(), capabilities=keeping_secrets()) as client:
            asked = answer_secrets(client, {("loop", "LOOP_API_KEY"): KEY})
            await open_workspace_document(client, ws)
            first = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello")
            results.append(first)
            await wait_status(client, first["run_id"], "completed")
            second = await command(client, "nexa.continue", run_id=first["run_id"], input="Bye")
            results.append(second)
            await wait_status(client, second["run_id"], "completed")
            results.append(await command(client, "nexa.showRun", run_id=second["run_id"]))
            results.append(await command(client, "nexa.listRuns"))
            seen = [
                repr(client.log_messages),
                repr(client.messages),
                repr(client.progress_reports),
                repr(client.published),  # type: ignore[attr-defined]
                repr(client.runs_changed),  # type: ignore[attr-defined]
                repr(client.run_updates),  # type: ignore[attr-defined]
                repr(await lenses(client, ws)),
                json.dumps(results),
            ]
        assert asked == [{"provider": "loop", "name": "LOOP_API_KEY"}] * 2  # once per run, by name only
        assert [r.headers.get("authorization") for r in provider.requests] == [f"Bearer {KEY}"] * 2

    transcripts = list((ws.folder / ".nexa" / "transcripts").glob("*.md"))
    assert transcripts
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert ws.store in files
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    for text in seen:
        assert KEY not in text
    captured = capfd.readouterr()
    assert KEY not in captured.out and KEY not in captured.err


async def test_a_key_stored_as_api_key_for_the_provider_is_used(tmp_path: Path) -> None:
    with LoopbackServer() as provider:
        provider.answers.append(chat_text("Hello."))
        ws = make_workspace(tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\n")
        async with session(VSCODE, ws.folder, env=clean_environment(), capabilities=keeping_secrets()) as client:
            asked = answer_secrets(client, {("loop", "API_KEY"): KEY})
            await open_workspace_document(client, ws)
            run = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello")
            await wait_status(client, run["run_id"], "completed")
        assert asked == [{"provider": "loop", "name": "LOOP_API_KEY"}, {"provider": "loop", "name": "API_KEY"}]
        assert [r.headers.get("authorization") for r in provider.requests] == [f"Bearer {KEY}"]


@pytest.mark.parametrize("declared", [False, True])
async def test_no_key_without_the_capability_or_an_answer(declared: bool, tmp_path: Path) -> None:
    """A client that does not declare the capability is never asked; one that answers null
    (nothing stored, or an untrusted workspace) gets a run without a key."""
    with LoopbackServer() as provider:
        provider.answers.append(chat_text("Hello."))
        ws = make_workspace(tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\n")
        capabilities = keeping_secrets() if declared else None
        async with session(VSCODE, ws.folder, env=clean_environment(), capabilities=capabilities) as client:
            asked = answer_secrets(client, {("other", "OTHER_API_KEY"): KEY})
            await open_workspace_document(client, ws)
            run = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello")
            await wait_status(client, run["run_id"], "completed")
        assert len(asked) == (2 if declared else 0)
        assert [r.headers.get("authorization") for r in provider.requests] == [None]


@pytest.mark.parametrize(
    ("options", "header"),
    [
        ({"runs": {"providerSettings": {"LOOP_API_KEY": KEY}}}, f"Bearer {KEY}"),
        # settings arrive in one shape only (the ``nexa`` section's content): these are not it
        ({"nexa": {"runs": {"providerSettings": {"LOOP_API_KEY": KEY}}}}, None),
        ({"runs.providerSettings": {"LOOP_API_KEY": KEY}}, None),
    ],
)
async def test_provider_settings_in_initialization_options_have_one_shape(
    options: dict[str, Any], header: str | None, tmp_path: Path
) -> None:
    with LoopbackServer() as provider:
        provider.answers.append(chat_text("Hello."))
        ws = make_workspace(tmp_path, [], text=LOOP_AGENT, nxs=f"LOOP_BASE_URL = {provider.url}/v1\n")
        capabilities = client_capabilities(VSCODE)
        assert capabilities.workspace is not None
        capabilities.workspace.configuration = False  # initialization options are all it has
        async with session(
            VSCODE, ws.folder, env=clean_environment(), options=options, capabilities=capabilities
        ) as client:
            await open_workspace_document(client, ws)
            run = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello")
            await wait_status(client, run["run_id"], "completed")
        assert [r.headers.get("authorization") for r in provider.requests] == [header]

"""Secrets never reach the store, transcripts, logs, error messages or diagnostics.

The API key lives in a `.nxs` file (and the environment). A hostile provider echoes it
back everywhere it can: in a 401 body, in 500 bodies, in streamed text, in a malformed
chunk, in a tool call. The key must not appear in any byte of the store (WAL included),
in the run's JSON, its transcript, its events, the messages of its errors, the log
records of every logger, or the CLI's output.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.errors import SettingsError
from nexa_lsp.runtime.providers import provider_from_settings
from nexa_lsp.runtime.run_state import RunConfig, RunState
from nexa_lsp.runtime.settings import Settings, parse_nxs
from nexa_lsp.runtime.transcript import render_transcript
from tests.robustness.helpers import subprocess_env
from tests.robustness.hostile_server import Behaviour, Exchange, head, hostile_server, send
from tests.robustness.streams import answer

KEY = "sk-live-7f3Qx9TopSecretValue0123456789"
PASSWORD = "hunter2-db-pass"
URL_TOKEN = "tok-abcdef123456"


def echo(status: int, template: str) -> Behaviour:
    """Answer with ``template`` filled with the request's Authorization/x-api-key header."""

    def behaviour(exchange: Exchange) -> None:
        headers = exchange.request.headers
        credential = headers.get("authorization") or headers.get("x-api-key") or ""
        body = template.replace("{credential}", credential).replace("{key}", credential.removeprefix("Bearer "))
        content_type = "text/event-stream" if body.startswith("data:") else "application/json"
        exchange.send(head(status, content_type))
        exchange.send(body.encode())

    return behaviour


HOSTILE = {
    "401-echo": [echo(401, '{"error": {"message": "Incorrect API key provided: {key}"}}')],
    "403-header-dump": [echo(403, '{"error": "you sent authorization: {credential}"}')],
    "500-echo-until-retries-run-out": [echo(500, '{"error": {"message": "upstream rejected {key}"}}')],
    "400-echo": [echo(400, "bad request from {credential}")],
    "streamed-text-echo": [
        echo(200, 'data: {"choices": [{"delta": {"content": "your key is {key}"}}]}\n\ndata: [DONE]\n\n')
    ],
    "malformed-chunk-echo": [echo(200, "data: {not json {key}\n\n")],
    "tool-call-echo": [
        echo(
            200,
            'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", "function": '
            '{"name": "{key}", "arguments": "{\\"k\\": \\"{key}\\"}"}}]}}]}\n\ndata: [DONE]\n\n',
        ),
        send(*answer("chat", "done", turn=2)),
    ],
}


def write_settings(workdir: Path, url: str, in_url: bool = False) -> None:
    """A `.nxs` file with the key; with ``in_url`` the base URL also carries a password and a token."""
    base_url = url.replace("http://", f"http://robot:{PASSWORD}@") + f"/v1?api_key={URL_TOKEN}" if in_url else url
    (workdir / "project.nxs").write_text(
        "\n".join(
            [
                'PROVIDER = "hostile"',
                f'HOSTILE_API_KEY = "{KEY}"',
                f"HOSTILE_BASE_URL = {base_url}",
                'MODEL = "m"',
                "MAX_RETRIES = 1",
                "BACKOFF = 0.01",
                "TIMEOUT = 5",
            ]
        )
        + "\n",
        encoding="utf-8",
    )


def assert_clean(where: str, text: str) -> None:
    for secret in (KEY, PASSWORD, URL_TOKEN):
        assert secret not in text, f"a secret reached {where}"


@pytest.mark.parametrize("in_url", [False, True], ids=["key", "key-and-url-credentials"])
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_provider_echoing_the_key_cannot_leak_it(
    case: str,
    in_url: bool,
    isolated_environment: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOSTILE_API_KEY", KEY)  # also in the environment, as many users have it
    caplog.set_level(logging.DEBUG)
    events: list[Any] = []
    texts: list[str] = []
    with hostile_server(*HOSTILE[case]) as server:
        write_settings(isolated_environment, server.url, in_url)
        store_path = isolated_environment / ".nexa" / "runs.sqlite3"
        with SQLiteCheckpointStore(store_path) as store:
            state = NexaAgent("Leaky", prompt="p").execute(
                "hello", config=RunConfig(timeout=20), save=store.save, on_event=events.append, on_text=texts.append
            )
            assert state.settled
            sent = server.requests[0]
            if in_url:  # httpx turns URL credentials into HTTP Basic, which wins over the key
                assert URL_TOKEN in sent.path and sent.headers["authorization"].startswith("Basic ")
            else:
                assert sent.headers["authorization"] == f"Bearer {KEY}"
            stored = store.load(state.run_id)
    assert_clean("the run state", state.to_json())
    assert_clean("the stored state", stored.to_json())
    assert_clean("the transcript", render_transcript(state))
    assert_clean("the events", repr(events) + "".join(texts))
    assert_clean("the logs", "\n".join(record.getMessage() for record in caplog.records))
    encoded = "cm9ib3Q6aHVudGVyMi1kYi1wYXNz"  # base64 of robot:hunter2-db-pass, as HTTP Basic sends it
    assert encoded not in state.to_json() and encoded not in render_transcript(state)
    for path in store_path.parent.iterdir():
        data = path.read_bytes()
        for secret in (KEY, PASSWORD, URL_TOKEN):
            assert secret.encode() not in data, f"a secret reached {path.name}"
    if state.error is not None:
        assert "[redacted]" in state.error.message or case in ("malformed-chunk-echo",), state.error


def test_cli_output_and_stored_runs_never_show_the_key(isolated_environment: Path) -> None:
    with hostile_server(echo(401, '{"error": {"message": "Incorrect API key provided: {key}"}}')) as server:
        write_settings(isolated_environment, server.url)
        source = isolated_environment / "leaky.nx"
        source.write_text('agent Leaky {\n  prompt: "p"\n}\n', encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "nexa_lsp", "agent", str(source), "Leaky", "hello"],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert "NXR032" in done.stdout + done.stderr
    assert_clean("the CLI output", done.stdout + done.stderr)
    listing = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "runs", "list", "--json"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    (run,) = json.loads(listing.stdout)
    shown = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "runs", "show", run["run_id"]],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "NXR032" in shown.stdout
    assert_clean("`runs show`", shown.stdout + shown.stderr + listing.stdout)


@pytest.mark.parametrize(
    "text",
    [
        f"OPENAI_API_KEY: {KEY}\n",
        f"{KEY}\n",
        f'config prod {{ API_KEY "{KEY}" }}\n',
        f'config prod {{ API_KEY = "{KEY}"\n',
        f"OPENAI_API_KEY = {KEY}\nbroken line {KEY}\n",
    ],
)
def test_settings_errors_name_the_line_never_the_value(tmp_path: Path, text: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_nxs(text, tmp_path / "secrets.nxs")
    assert_clean("a settings error", str(caught.value))
    assert "secrets.nxs:" in str(caught.value)


def test_configuration_objects_do_not_show_the_key() -> None:
    settings = Settings(environ={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"http://u:{PASSWORD}@h/v1"})
    provider = provider_from_settings("openai", settings)
    shown = repr(settings) + repr(settings.provider("openai")) + repr(provider.transport.options)  # type: ignore[attr-defined]
    assert_clean("repr()", shown)


def test_a_run_state_has_no_field_for_a_key() -> None:
    names = [*RunState.__dataclass_fields__, *RunConfig.__dataclass_fields__]
    assert not [n for n in names if "key" in n.lower() or "secret" in n.lower() or "password" in n.lower()]


def test_the_language_server_never_shows_the_key(isolated_environment: Path) -> None:
    """A broken `.nxs` holding the key and a stored run that failed on a key-echoing provider:
    nothing the server sends (diagnostics, logs, messages, lenses, runs, hovers) contains it."""
    from tests.robustness.lsp_wire import WireClient

    root = isolated_environment
    source = root / "leaky.nx"
    source.write_text('agent Leaky {\n  prompt: "p"\n}\n', encoding="utf-8")
    with hostile_server(echo(401, '{"error": {"message": "Incorrect API key provided: {key}"}}')) as server:
        write_settings(root, server.url, in_url=True)
        done = subprocess.run(
            [sys.executable, "-m", "nexa_lsp", "agent", str(source), "Leaky", "hello"],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    with open(root / "project.nxs", "a", encoding="utf-8") as handle:
        handle.write(f"BROKEN_LINE_WITH {KEY}\n")
    client = WireClient(root)
    transcripts: list[str] = []
    try:
        client.initialize(root)
        uri = source.as_uri()
        client.open(uri, source.read_text(encoding="utf-8"))
        client.wait_notification("textDocument/publishDiagnostics", lambda m: m["params"]["uri"] == uri)
        client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 7}})
        client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        runs = client.request("workspace/executeCommand", {"command": "nexa.listRuns", "arguments": [{}]})
        (run,) = runs["result"]["runs"]
        shown = client.request(
            "workspace/executeCommand", {"command": "nexa.showRun", "arguments": [{"run_id": run["run_id"]}]}
        )
        transcript_uri = shown["result"]["uri"]
        if transcript_uri.startswith("file:"):
            transcripts.append(Path(transcript_uri.removeprefix("file://")).read_text(encoding="utf-8"))
        else:  # a virtual document: ask the server for its text
            opened = client.request("nexa/transcript", {"uri": transcript_uri})
            transcripts.append(json.dumps(opened))
        # the broken .nxs line is reported when a run needs the settings
        started = client.request(
            "workspace/executeCommand",
            {"command": "nexa.execute", "arguments": [{"uri": uri, "agent": "Leaky", "task": "again"}]},
        )
        client.request("workspace/diagnostic", {"previousResultIds": []})
    finally:
        client.close()
    everything = (
        json.dumps(client.notifications)
        + json.dumps(client.responses)
        + "".join(client.stderr_lines)
        + "".join(transcripts)
    )
    assert "NXR032" in "".join(transcripts), "the transcript shows the (redacted) provider error"
    assert "project.nxs" in json.dumps(started) + json.dumps(client.notifications), "the settings error was reported"
    assert_clean("the language server's messages", everything)
    assert KEY not in everything and "cm9ib3Q6aHVudGVyMi1kYi1wYXNz" not in everything

"""``nexa/runDetails`` and ``nexa/runUpdated`` over stdio: the data a live run panel shows,
as a view of the server's state (streaming text, tool calls, approvals, budget, chain)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.server.conftest import wait_until
from tests.server.test_runs_support import (
    NEOVIM,
    VSCODE,
    as_plain,
    command,
    make_workspace,
    open_workspace_document,
    session,
    wait_status,
)

SCRIPT = [
    {
        "text": "Looking up the evidence, 证据 first.",
        "chunk_delay": 0.05,
        "tool_calls": [{"id": "call_lookup", "name": "lookup", "arguments": {}}],
    },
    {"text": "Publishing.", "tool_calls": [{"id": "call_publish", "name": "publish", "arguments": {"title": "t"}}]},
    {"text": "Published the finding."},
    {"text": "In short: badge 4411."},
]
CONFIG = {"timeout": 120, "token_budget": 100000, "tool_call_budget": 5}


async def details(client: LanguageClient, run_id: str, **extra: Any) -> dict[str, Any]:
    answer = await client.protocol.send_request_async("nexa/runDetails", {"run_id": run_id, **extra})
    found: dict[str, Any] = as_plain(answer)
    return found


def updates(client: LanguageClient, run_id: str) -> list[dict[str, Any]]:
    return [u for u in client.run_updates if u["run_id"] == run_id]  # type: ignore[attr-defined]


def without_clock(found: dict[str, Any]) -> dict[str, Any]:
    return {**found, "budget": {k: v for k, v in found["budget"].items() if k != "seconds_left"}}


def call(found: dict[str, Any], call_id: str) -> dict[str, Any]:
    return next(c for c in found["tool_calls"] if c["call_id"] == call_id)


@pytest.mark.parametrize("profile", [VSCODE, NEOVIM])
async def test_a_panel_follows_a_run_through_streaming_approval_and_continue(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, SCRIPT)
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        started = await command(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="Analyze", config=CONFIG)
        run_id = started["run_id"]
        first = await details(client, run_id)
        assert first["status"] == "running" and first["live"] is True
        assert first["actions"] == ["cancel", "show"]
        assert first["agent"] == "Analyst" and first["input"] == "Analyze"
        assert first["session_id"] == started["session_id"] and first["parent_run_id"] is None
        assert first["budget"]["token_budget"] == 100000 and first["budget"]["tool_call_budget"] == 5
        assert first["budget"]["timeout"] == 120 and 0 < first["budget"]["seconds_left"] <= 120
        assert first["chain"] == [
            {
                "run_id": run_id,
                "status": "running",
                "input": "Analyze",
                "parent_run_id": None,
                "started_at": first["started_at"],
                "current": True,
            }
        ]

        # while the model streams, updates carry the text so far (a part of it, then more)
        streamed = await wait_until(
            lambda: [u["streaming"] for u in updates(client, run_id) if "证据" not in u["streaming"] and u["streaming"]]
        )
        assert "Looking up the evidence, 证据 first.".startswith(streamed[0])

        await wait_status(client, run_id, "waiting_approval")
        waiting = await wait_until(lambda: [u for u in updates(client, run_id) if u["status"] == "waiting_approval"])
        current = await details(client, run_id)
        # the last update is the server's state (only the time left has moved on)
        assert without_clock(waiting[-1]) == without_clock(current)
        assert current["live"] is False and current["streaming"] == ""
        assert set(current["actions"]) == {"approve", "deny", "cancel", "show"}
        lookup, publish = call(current, "call_lookup"), call(current, "call_publish")
        assert lookup["status"] == "completed" and lookup["result"] == "evidence: badge 4411 at 02:13"
        assert lookup["approval"] is None
        assert publish["status"] == "waiting_approval" and publish["result"] is None
        assert publish["arguments"] == '{"title": "t"}' and publish["approval"]["status"] == "pending"
        assert current["usage"]["tool_calls"] == 1 and current["budget"]["tool_calls_left"] == 4
        assert [m["role"] for m in current["messages"]] == ["user", "assistant", "tool", "assistant"]
        assert current["messages"][1]["content"] == "Looking up the evidence, 证据 first."

        await command(client, "nexa.approve", run_id=run_id, call_id="call_publish")
        await wait_status(client, run_id, "completed")
        done = await wait_until(lambda: [u for u in updates(client, run_id) if u["status"] == "completed"])
        publish = call(done[-1], "call_publish")
        assert publish["status"] == "completed" and publish["result"] == "published"
        assert publish["approval"]["status"] == "approved" and publish["approval"]["decided_by"]
        assert done[-1]["output"] == "Published the finding." and done[-1]["budget"]["seconds_left"] is None
        assert done[-1]["actions"] == ["continue", "show"]

        second = (await command(client, "nexa.continue", run_id=run_id, input="Summarize"))["run_id"]
        await wait_status(client, second, "completed")
        turn = await details(client, second)
        assert turn["parent_run_id"] == run_id and turn["session_id"] == started["session_id"]
        assert [(c["run_id"], c["current"]) for c in turn["chain"]] == [(run_id, False), (second, True)]
        assert [m["role"] for m in turn["messages"]] == ["user", "assistant"]  # this turn only
        assert turn["tool_calls"] == []


async def test_unwatching_stops_the_updates_and_an_unknown_run_is_an_error(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [{"text": " ".join(f"w{i}" for i in range(80)), "chunk_delay": 0.02}])
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Talk"))["run_id"]
        await details(client, run_id)
        await wait_until(lambda: updates(client, run_id))
        await details(client, run_id, watch=False)
        seen = len(updates(client, run_id))
        await wait_status(client, run_id, "completed")
        assert len(updates(client, run_id)) <= seen + 1  # at most one already on its way
        with pytest.raises(JsonRpcException) as refused:
            await details(client, "run_" + "0" * 32)
        assert "NXR021" in str(refused.value)
        assert not updates(client, "run_" + "0" * 32)

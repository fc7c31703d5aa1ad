"""The stored run state carries its format version; older ones are migrated, newer refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import scripted

from nexa_lsp import __version__
from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.continuation import continuation_blockers
from nexa_lsp.runtime.errors import RunUnreadableError
from nexa_lsp.runtime.run_state import RUN_STATE_FORMAT, RunConfig, RunState, RunStateFormatError, RunStatus
from nexa_lsp.runtime.tools import tool

FIXTURES = Path(__file__).parent / "fixtures"
V1 = FIXTURES / "run_state_v1.json"  # written by nexa-lsp at commit b315bf0 (write_run_state_v1.py)


def v1() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(V1.read_text(encoding="utf-8"))
    return data


def store_row(store: SQLiteCheckpointStore, text: str) -> str:
    """Put a state's JSON text into the store as it is (as an older or newer nexa-lsp would have)."""
    data = json.loads(text)
    raw = sqlite3.connect(store.path)
    raw.execute(
        "INSERT INTO runs (run_id, agent, session_id, parent_run_id, status, started_at, updated_at, state) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            data["run_id"],
            data["agent"],
            data["metadata"]["session_id"],
            None,
            data["status"],
            data["started_at"],
            data["updated_at"],
            text,
        ),
    )
    raw.commit()
    raw.close()
    return str(data["run_id"])


def analyst() -> NexaAgent:
    """The agent that wrote the fixture, defined the same way (so its fingerprint matches)."""

    @tool
    def lookup(case: str) -> str:
        """Look up evidence."""
        return "证据"

    @tool(approval_required=True)
    def publish(title: str) -> str:
        """Publish."""
        return f"published {title}"

    return NexaAgent("Analyst", prompt="依据证据工作", tools=[lookup, publish], role="分析员")


def test_the_fixture_is_format_1() -> None:
    assert "format" not in v1() and "written_by" not in v1()


def test_a_format_1_state_is_read_completely() -> None:
    state = RunState.from_dict(v1())
    assert state.status is RunStatus.COMPLETED and state.output == "结论：徽章 4411。"
    assert [m.role for m in state.history] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert state.history[1].response_id == "resp_0" and json.loads(state.history[1].opaque[0])["type"] == "reasoning"
    assert state.history[2].artifact and state.history[2].artifact.endswith("call_lookup.txt")
    assert [(a.call_id, a.status, a.decided_by, a.reason) for a in state.approvals] == [
        ("call_publish", "approved", "李雷", "看过了")
    ]
    assert [(e.call_id, e.status) for e in state.journal] == [
        ("call_lookup", "completed"),
        ("call_publish", "completed"),
    ]
    assert state.config == RunConfig(
        timeout=600,
        token_budget=100000,
        provider="openai-responses",
        working_directory="/tmp",
        artifact_directory="/srv/nexa/artifacts",
        artifact_threshold=16384,
        config_name="staging",
    )
    assert state.extra == ()


def test_a_migrated_state_is_written_in_the_current_format_and_loses_nothing() -> None:
    state = RunState.from_dict(v1())
    written = json.loads(state.to_json())
    assert written["format"] == RUN_STATE_FORMAT == 2 and written["written_by"] == f"nexa-lsp {__version__}"
    assert {k: v for k, v in written.items() if k not in ("format", "written_by")} == v1()
    assert RunState.from_json(state.to_json()) == state


def test_a_format_1_run_in_a_store_is_migrated_on_load_and_continues(store: SQLiteCheckpointStore) -> None:
    run_id = store_row(store, V1.read_text(encoding="utf-8"))
    previous = store.load(run_id)
    assert previous.output == "结论：徽章 4411。"
    agent = analyst()
    provider = scripted({"text": "总结：徽章 4411 的持有人。"})
    provider.name = "openai-responses"
    config = RunConfig(working_directory="/tmp")
    assert continuation_blockers(previous, agent, "总结", config) == []
    second = agent.continue_run(previous, "总结", config=config, save=store.save, provider=provider)
    assert second.success and second.parent_run_id == run_id
    stored = json.loads(
        sqlite3.connect(store.path).execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]
    )
    assert "format" not in stored, "loading never rewrites the older run"
    assert json.loads(store.load(second.run_id).to_json())["format"] == RUN_STATE_FORMAT


def test_a_newer_format_is_refused_naming_who_wrote_it(store: SQLiteCheckpointStore) -> None:
    newer = {**v1(), "format": RUN_STATE_FORMAT + 1, "written_by": "nexa-lsp 9.4.0", "reasoning_budget": 3}
    with pytest.raises(RunStateFormatError) as refused:
        RunState.from_dict(newer)
    message = str(refused.value)
    assert "nexa-lsp 9.4.0" in message and f"format {RUN_STATE_FORMAT + 1}" in message and "upgrade" in message
    run_id = store_row(store, json.dumps(newer, ensure_ascii=False))
    with pytest.raises(RunUnreadableError) as unreadable:
        store.load(run_id)
    assert unreadable.value.code == "NXR025" and "nexa-lsp 9.4.0" in str(unreadable.value)
    assert store.list_states() == [] and "nexa-lsp 9.4.0" in store.unreadable[run_id]


@pytest.mark.parametrize("bad", [0, "2", True, -1])
def test_a_format_that_is_not_a_version_is_refused(bad: object) -> None:
    with pytest.raises(RunStateFormatError):
        RunState.from_dict({**v1(), "format": bad})


def test_unknown_top_level_keys_are_kept_and_written_back(store: SQLiteCheckpointStore) -> None:
    """A same-format state from another nexa-lsp with a key this one does not know."""
    data = {**v1(), "format": RUN_STATE_FORMAT, "written_by": "nexa-lsp 0.2.7", "labels": {"团队": ["审计"]}}
    run_id = store_row(store, json.dumps(data, ensure_ascii=False))
    state = store.load(run_id)
    assert state.extra == (("labels", '{"团队":["审计"]}'),)
    saved = store.save(state.evolve(output="changed"))
    raw = sqlite3.connect(store.path).execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]
    assert json.loads(raw)["labels"] == {"团队": ["审计"]} and json.loads(raw)["output"] == "changed"
    assert store.load(run_id).extra == saved.extra


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("config.temperature", lambda d: d["config"].update(temperature=0.2)),
        ("history[1].tool_calls[0].index", lambda d: d["history"][1]["tool_calls"][0].update(index=0)),
        ("journal[0].exit_code", lambda d: d["journal"][0].update(exit_code=0)),
        ("approvals[0].channel", lambda d: d["approvals"][0].update(channel="slack")),
        ("fingerprint.schema", lambda d: d["fingerprint"].update(schema="x")),
    ],
)
def test_an_unknown_key_inside_a_record_is_refused_by_name(where: str, change: Any) -> None:
    data = {**v1(), "format": RUN_STATE_FORMAT, "written_by": "nexa-lsp 0.2.7"}
    data = json.loads(json.dumps(data))
    change(data)
    with pytest.raises(RunStateFormatError) as refused:
        RunState.from_dict(data)
    assert where in str(refused.value) and "nexa-lsp 0.2.7" in str(refused.value)

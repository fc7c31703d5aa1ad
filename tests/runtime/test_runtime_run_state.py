"""The run model: statuses, immutability, the run value's members, JSON round trips."""

from __future__ import annotations

import dataclasses
import json

import pytest
from runtime_helpers import call, counting_tool, scripted

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus


def test_status_values_are_the_contract_strings() -> None:
    assert [s.value for s in RunStatus] == [
        "running",
        "waiting_approval",
        "completed",
        "failed",
        "cancelled",
        "timed_out",
        "budget_exhausted",
    ]


def test_success_only_for_completed_and_settled_for_the_five_settled_states() -> None:
    agent = NexaAgent("A", prompt="p")
    state = agent.execute("task")
    for status in RunStatus:
        changed = state.evolve(status=status)
        assert changed.success is (status is RunStatus.COMPLETED)
        assert changed.settled is (status not in (RunStatus.RUNNING, RunStatus.WAITING_APPROVAL))


def test_run_state_and_config_are_frozen() -> None:
    state = NexaAgent("A").execute("task")
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.status = RunStatus.FAILED  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.config.timeout = 3  # type: ignore[misc]
    assert isinstance(state.history, tuple)
    assert isinstance(state.journal, tuple)


def test_every_change_makes_a_new_object() -> None:
    state = NexaAgent("A").execute("task")
    changed = state.evolve(output="other")
    assert changed is not state
    assert state.output != "other"


def test_run_stands_for_its_output_where_text_is_expected() -> None:
    state = NexaAgent("A", provider=scripted({"text": "结论：证据充分"})).execute("分析")
    assert str(state) == "结论：证据充分"
    assert f"{state}" == "结论：证据充分"


def test_state_json_round_trip_keeps_everything(tmp_path: object) -> None:
    send, _ = counting_tool(approval_required=True)
    agent = NexaAgent(
        "Mailer",
        prompt="发送邮件",
        tools=[send],
        provider=scripted({"text": "先发邮件", "tool_calls": [call("send_mail", to="王")]}),
    )
    state = agent.execute("给王先生发邮件", config=RunConfig(timeout=30, token_budget=999))
    assert state.status is RunStatus.WAITING_APPROVAL
    again = RunState.from_json(state.to_json())
    assert again == state
    assert json.loads(state.to_json())["status"] == "waiting_approval"


def test_run_config_from_dict_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="timout"):
        RunConfig.from_dict({"timout": 3})
    assert RunConfig.from_dict({"timeout": 3, "model": "m"}) == RunConfig(timeout=3, model="m")

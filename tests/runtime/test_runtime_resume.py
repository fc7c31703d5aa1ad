"""execute(state=...) resumes the original run; approvals, recovery, cancel, valid actions, drift."""

from __future__ import annotations

import time
from typing import Any

import pytest
from runtime_helpers import call, counting_tool, scripted

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.continuation import definition_drift, valid_actions
from nexa_lsp.runtime.control import approve, cancel_run, deny, recover_tool_call
from nexa_lsp.runtime.errors import (
    AgentDefinitionMismatchError,
    ApprovalNotPendingError,
    ApprovalPendingError,
    RecoveryNotNeededError,
    RunAlreadySettledError,
    RunNotCancellableError,
    UnknownToolOutcomeError,
)
from nexa_lsp.runtime.events import ApprovalNeeded, RunEnded
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.summary import RunSummary
from nexa_lsp.runtime.tools import tool


def mailer(*replies: dict[str, Any]) -> tuple[NexaAgent, Any]:
    send, counter = counting_tool(approval_required=True)
    agent = NexaAgent(
        "Mailer",
        prompt="Send mail carefully",
        tools=[send],
        provider=scripted(
            *(
                replies
                or (
                    {
                        "tool_calls": [call("send_mail", "c1", to="张三")],
                        "usage": {"input_tokens": 7, "output_tokens": 2},
                    },
                    {"text": "已发送", "usage": {"input_tokens": 9, "output_tokens": 1}},
                )
            )
        ),
    )
    return agent, counter


def test_approval_required_tool_stops_in_waiting_approval_before_the_call() -> None:
    agent, counter = mailer()
    saved: list[RunState] = []
    events: list[Any] = []
    state = agent.execute("给张三发邮件", save=saved.append, on_event=events.append)
    assert state.status is RunStatus.WAITING_APPROVAL
    assert events[-2:] == [
        ApprovalNeeded(state.run_id, "c1", "send_mail", '{"to": "张三"}'),
        RunEnded(state.run_id, "waiting_approval", None),
    ]
    assert counter.calls == []
    (approval,) = state.approvals
    assert (approval.call_id, approval.tool, approval.status) == ("c1", "send_mail", "pending")
    assert approval.requested_at >= state.started_at
    assert saved[-1] == state, "the approval request is saved"


def test_resume_after_approval_keeps_id_config_usage_and_deadline() -> None:
    agent, counter = mailer()
    waiting = agent.execute("给张三发邮件", config=RunConfig(timeout=60, token_budget=1000))
    approved = approve(waiting, "c1", by="alice")
    decision = approved.approvals[0]
    assert decision.status == "approved" and decision.decided_by == "alice" and decision.decided_at is not None
    assert approved.status is RunStatus.WAITING_APPROVAL
    done = agent.execute(state=approved)
    assert done.success and done.output == "已发送"
    assert done.run_id == waiting.run_id and done.session_id == waiting.session_id
    assert done.config == waiting.config
    assert done.deadline == waiting.deadline and done.started_at == waiting.started_at
    assert (done.usage.input_tokens, done.usage.output_tokens, done.usage.tool_calls) == (16, 3, 1)
    assert counter.calls == [{"to": "张三"}]


def test_denied_call_is_not_executed_and_the_model_is_told() -> None:
    agent, counter = mailer()
    waiting = agent.execute("send")
    done = agent.execute(state=deny(waiting, "c1", by="bob", reason="wrong person"))
    assert done.success and counter.calls == []
    result = next(m for m in done.history if m.role == "tool")
    assert result.is_error and "denied by bob" in result.content and "wrong person" in result.content
    assert done.journal[0].status == "not_executed"
    assert done.approvals[0].decided_by == "bob"


def test_each_risky_call_of_a_turn_waits_for_its_own_approval() -> None:
    agent, counter = mailer(
        {"tool_calls": [call("send_mail", "c1", to="a"), call("send_mail", "c2", to="b")]}, {"text": "both"}
    )
    first = agent.execute("send two")
    second = agent.execute(state=approve(first, "c1"))
    assert second.status is RunStatus.WAITING_APPROVAL
    assert [a.call_id for a in second.pending_approvals] == ["c2"]
    assert counter.calls == [{"to": "a"}]
    done = agent.execute(state=approve(second, "c2"))
    assert done.success and counter.calls == [{"to": "a"}, {"to": "b"}]


def test_resume_while_approval_pending_is_refused() -> None:
    agent, _ = mailer()
    waiting = agent.execute("send")
    with pytest.raises(ApprovalPendingError) as caught:
        agent.execute(state=waiting)
    assert caught.value.code == "NXR009" and "approve or deny" in str(caught.value)


def test_resume_of_a_settled_run_is_refused_pointing_to_continue_run() -> None:
    agent, _ = mailer({"text": "nothing to do"})
    done = agent.execute("noop")
    with pytest.raises(RunAlreadySettledError) as caught:
        agent.execute(state=done)
    assert caught.value.code == "NXR008" and "continue_run" in str(caught.value)


def test_resume_keeps_the_original_deadline() -> None:
    agent, counter = mailer()
    waiting = agent.execute("send", config=RunConfig(timeout=0.2))
    time.sleep(0.3)
    late = agent.execute(state=approve(waiting, "c1"))
    assert late.status is RunStatus.TIMED_OUT
    assert counter.calls == []


def test_resume_with_a_changed_agent_is_refused() -> None:
    agent, _ = mailer()
    waiting = approve(agent.execute("send"), "c1")
    other = NexaAgent("Mailer", prompt="Send mail recklessly", tools=agent.tools)
    with pytest.raises(AgentDefinitionMismatchError):
        other.execute(state=waiting)


def test_interrupted_run_resumes_after_recovery_without_replaying_side_effects() -> None:
    effects: list[str] = []

    class Crash(BaseException):
        pass

    def deploy(target: str) -> str:
        effects.append(target)
        if len(effects) == 1:
            raise Crash()
        return f"deployed {target}"

    agent = NexaAgent(
        "Ops",
        tools=[tool(deploy)],
        provider=scripted(
            {"tool_calls": [call("deploy", "c1", target="eu"), call("deploy", "c2", target="us")]},
            {"text": "done"},
        ),
    )
    saved: list[RunState] = []
    with pytest.raises(Crash):
        agent.execute("deploy", save=saved.append)
    interrupted = saved[-1]
    assert interrupted.status is RunStatus.RUNNING
    with pytest.raises(UnknownToolOutcomeError):
        agent.execute(state=interrupted)
    done = agent.execute(state=recover_tool_call(interrupted, "c1", "completed", result="deployed eu", by="ops"))
    assert done.success
    assert effects == ["eu", "us"], "c1 is not run again; c2 (never started) runs once"
    assert [(e.call_id, e.status, e.recovered_by) for e in done.journal] == [
        ("c1", "completed", "ops"),
        ("c2", "completed", None),
    ]


def test_recover_as_not_executed_tells_the_model_it_did_not_run() -> None:
    class Crash(BaseException):
        pass

    def deploy() -> str:
        raise Crash()

    agent = NexaAgent("Ops", tools=[tool(deploy)], provider=scripted({"tool_calls": [call("deploy", "c1")]}))
    saved: list[RunState] = []
    with pytest.raises(Crash):
        agent.execute("deploy", save=saved.append)
    recovered = recover_tool_call(saved[-1], "c1", "not_executed")
    assert recovered.unknown_outcomes == ()
    closed = cancel_run(recovered)
    nxt = agent.continue_run(closed, "status?", provider=scripted({"text": "x"}, {"text": "it did not run"}))
    result = next(m for m in nxt.history if m.role == "tool")
    assert result.is_error and "not executed" in result.content


def test_actions_on_wrong_calls_are_refused_with_codes() -> None:
    agent, _ = mailer()
    waiting = agent.execute("send")
    with pytest.raises(ApprovalNotPendingError) as not_pending:
        approve(waiting, "nope")
    assert not_pending.value.code == "NXR010"
    with pytest.raises(RecoveryNotNeededError) as no_recovery:
        recover_tool_call(waiting, "c1", "completed")
    assert no_recovery.value.code == "NXR011"
    done = agent.execute(state=approve(waiting, "c1"))
    with pytest.raises(RunNotCancellableError) as not_cancellable:
        cancel_run(done)
    assert not_cancellable.value.code == "NXR012"


def test_cancel_a_stored_waiting_run_denies_its_pending_approvals() -> None:
    agent, counter = mailer()
    cancelled = cancel_run(agent.execute("send"), by="carol")
    assert cancelled.status is RunStatus.CANCELLED
    assert cancelled.approvals[0].status == "denied" and cancelled.approvals[0].decided_by == "carol"
    assert counter.calls == []


# --- valid actions, summaries, drift --------------------------------------------------


def test_valid_actions_follow_the_run_state() -> None:
    agent, _ = mailer()
    waiting = agent.execute("send")
    assert valid_actions(waiting) == ["approve", "deny", "cancel", "show"]
    approved = approve(waiting, "c1")
    assert valid_actions(approved) == ["resume", "cancel", "show"]
    done = agent.execute(state=approved)
    assert valid_actions(done) == ["continue", "show"]
    interrupted = done.evolve(status=RunStatus.RUNNING)
    assert valid_actions(interrupted) == ["resume", "cancel", "show"]


def test_valid_actions_offer_recover_for_unknown_outcomes() -> None:
    class Crash(BaseException):
        pass

    def deploy() -> str:
        raise Crash()

    agent = NexaAgent("Ops", tools=[tool(deploy)], provider=scripted({"tool_calls": [call("deploy", "c1")]}))
    saved: list[RunState] = []
    with pytest.raises(Crash):
        agent.execute("deploy", save=saved.append)
    assert valid_actions(saved[-1]) == ["cancel", "recover", "show"]
    assert valid_actions(cancel_run(saved[-1])) == ["recover", "show"]


def test_run_summary_has_the_command_contract_shape() -> None:
    agent, _ = mailer()
    waiting = agent.execute("send")
    summary = RunSummary.of(waiting).to_dict()
    assert set(summary) == {
        "run_id",
        "agent",
        "status",
        "session_id",
        "parent_run_id",
        "started_at",
        "updated_at",
        "pending_approvals",
        "unknown_outcomes",
        "usage",
        "actions",
    }
    assert summary["status"] == "waiting_approval"
    assert summary["pending_approvals"] == [{"call_id": "c1", "tool": "send_mail"}]
    assert summary["usage"] == {"input_tokens": 7, "output_tokens": 2, "tool_calls": 0}
    assert summary["started_at"].endswith("Z") and "T" in summary["started_at"]
    assert summary["actions"] == ["approve", "deny", "cancel", "show"]


def test_definition_drift_names_what_changed(tmp_path: Any) -> None:
    agent = NexaAgent("A", prompt="p1", model="m1")
    state = agent.execute("go")
    assert definition_drift(state, agent) == []
    send, _ = counting_tool()
    changed = NexaAgent("A", prompt="p2", model="m2", tools=[send])
    parts = [d.part for d in definition_drift(state, changed, RunConfig(working_directory=str(tmp_path)))]
    assert parts == ["prompt", "tools", "model", "working_directory"]
    drift = definition_drift(state, NexaAgent("A", prompt="p1", model="m1"), provider="openai")
    assert [(d.part, d.previous, d.current) for d in drift] == [("provider", "scripted", "openai")]

"""continue_run and the checks before continuation (run-continuation-2.4, sentence by sentence)."""

from __future__ import annotations

import copy
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import EventLog, call, counting_tool, scripted

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.artifacts import read_artifact
from nexa_lsp.runtime.continuation import continuation_blockers
from nexa_lsp.runtime.control import approve, cancel_run, recover_tool_call
from nexa_lsp.runtime.errors import (
    AgentDefinitionMismatchError,
    ContinuationError,
    EmptyInputError,
    ModelMismatchError,
    ProviderMismatchError,
    RunNotSettledError,
    UnknownToolOutcomeError,
    WorkingDirectoryMismatchError,
)
from nexa_lsp.runtime.events import CancelToken, RunStarted
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.tools import tool


class SimulatedCrash(BaseException):
    """Stands for the process dying inside a tool (not caught by the runtime)."""


def two_turn_agent(**kwargs: Any) -> NexaAgent:
    return NexaAgent(
        "Analyst",
        prompt="Work from evidence",
        provider=scripted(
            {"text": "The evidence points to A.", "usage": {"input_tokens": 10, "output_tokens": 6}},
            {"text": "Conclusion: A.", "usage": {"input_tokens": 20, "output_tokens": 3}},
        ),
        **kwargs,
    )


def test_continue_run_gives_new_id_same_session_parent_link_and_keeps_history() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze the evidence")
    second = agent.continue_run(first, "Summarize the conclusion")
    assert second.success and second.output == "Conclusion: A."
    assert second.run_id != first.run_id
    assert second.metadata.parent_run_id == first.run_id
    assert second.metadata.session_id == first.metadata.session_id
    assert second.history[: len(first.history)] == first.history
    assert [m.content for m in second.history if m.role == "user"] == [
        "Analyze the evidence",
        "Summarize the conclusion",
    ]
    assert second.input == "Summarize the conclusion"
    assert second.history[second.turn_start].content == "Summarize the conclusion"


def test_continue_run_resets_usage_and_start_time_and_reuses_the_config() -> None:
    agent = two_turn_agent()
    config = RunConfig(timeout=120, token_budget=5000, tool_call_budget=4, max_output_tokens=300)
    first = agent.execute("Analyze", config=config)
    time.sleep(0.01)
    second = agent.continue_run(first, "Summarize")
    assert second.usage.input_tokens == 20 and second.usage.output_tokens == 3, "usage starts at zero"
    assert second.started_at > first.started_at
    assert second.deadline == pytest.approx(second.started_at + 120)
    assert second.config == first.config


def test_explicit_config_overrides_only_what_it_sets() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze", config=RunConfig(timeout=120, token_budget=5000))
    second = agent.continue_run(first, "Summarize", config=RunConfig(timeout=30))
    assert second.config.timeout == 30
    assert second.deadline == pytest.approx(second.started_at + 30)
    assert second.config.token_budget == 5000
    assert second.config.working_directory == first.config.working_directory


def test_previous_state_object_remains_unchanged() -> None:
    send, _ = counting_tool()
    agent = NexaAgent(
        "A",
        tools=[send],
        provider=scripted({"tool_calls": [call("send_mail", "c1")]}, {"text": "sent"}, {"text": "again"}),
    )
    first = agent.execute("send")
    snapshot = copy.deepcopy(first)
    agent.continue_run(first, "once more")
    assert first == snapshot
    assert first.to_json() == snapshot.to_json()


def test_events_of_a_continuation_carry_the_new_run_id() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    log = EventLog()
    second = agent.continue_run(first, "Summarize", on_event=log)
    assert log.events and {e.run_id for e in log.events} == {second.run_id}
    started = log.events[0]
    assert isinstance(started, RunStarted)
    assert started.parent_run_id == first.run_id and started.session_id == first.session_id


def test_continue_joins_several_input_arguments_and_a_run_stands_for_its_output() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    second = agent.continue_run(first, "Compare with", first)
    assert second.input == "Compare with The evidence points to A."


# --- checks before continuation ----------------------------------------------------------


def test_running_and_waiting_approval_runs_are_refused_with_resume_or_cancel_hint() -> None:
    send, _ = counting_tool(approval_required=True)
    agent = NexaAgent("A", tools=[send], provider=scripted({"tool_calls": [call("send_mail", "c1")]}))
    waiting = agent.execute("send")
    assert waiting.status is RunStatus.WAITING_APPROVAL
    with pytest.raises(RunNotSettledError) as caught:
        agent.continue_run(waiting, "next")
    assert caught.value.code == "NXR001"
    assert "resume" in str(caught.value) and "cancel" in str(caught.value)
    running = waiting.evolve(status=RunStatus.RUNNING, approvals=())
    with pytest.raises(RunNotSettledError):
        agent.continue_run(running, "next")


def crashed_run(store_saves: list[RunState]) -> tuple[NexaAgent, Any, RunState]:
    """A run whose process 'died' inside tool call c1 of a two-call turn; returns the last saved state."""
    counter: dict[str, int] = {"n": 0}

    def deploy() -> str:
        counter["n"] += 1
        raise SimulatedCrash()

    agent = NexaAgent(
        "Ops",
        tools=[tool(deploy)],
        provider=scripted({"tool_calls": [call("deploy", "c1"), call("deploy", "c2")]}, {"text": "all good"}),
    )
    with pytest.raises(SimulatedCrash):
        agent.execute("deploy twice", save=store_saves.append)
    return agent, counter, store_saves[-1]


def test_unknown_tool_outcomes_block_continuation_with_the_recovery_hint() -> None:
    agent, _counter, last = crashed_run([])
    assert [e.call_id for e in last.unknown_outcomes] == ["c1"]
    stopped = last.evolve(status=RunStatus.FAILED)
    with pytest.raises(UnknownToolOutcomeError) as caught:
        agent.continue_run(stopped, "next")
    assert caught.value.code == "NXR002"
    assert caught.value.call_ids == ("c1",)
    assert "recover_tool_call" in str(caught.value) and "c1" in str(caught.value)


def test_history_is_completed_from_the_journal_and_unstarted_calls_get_cancellation_results() -> None:
    agent, counter, last = crashed_run([])
    recovered = recover_tool_call(last, "c1", "completed", result="deployed v2 (checked by hand)")
    cancelled = cancel_run(recovered)
    nxt = agent.continue_run(cancelled, "what happened?", provider=ScriptedProvider({"fallback": "v2 is out"}))
    assert nxt.success and nxt.output == "v2 is out"
    assert counter["n"] == 1, "a completed side effect is never replayed"
    results = {m.tool_call_id: m for m in nxt.history if m.role == "tool"}
    assert results["c1"].content == "deployed v2 (checked by hand)" and not results["c1"].is_error
    assert results["c2"].is_error and "not executed" in results["c2"].content
    roles = [m.role for m in nxt.history]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"], "pairs closed before the new input"


def test_unstarted_calls_after_a_budget_stop_are_closed_and_not_executed() -> None:
    send, counter = counting_tool()
    agent = NexaAgent(
        "A",
        tools=[send],
        provider=scripted({"tool_calls": [call("send_mail", "c1"), call("send_mail", "c2")]}, {"text": "second turn"}),
    )
    first = agent.execute("go", config=RunConfig(tool_call_budget=1))
    assert first.status is RunStatus.BUDGET_EXHAUSTED
    second = agent.continue_run(first, "continue")
    assert len(counter.calls) == 1
    c2 = next(m for m in second.history if m.tool_call_id == "c2")
    assert c2.is_error and "not executed" in c2.content
    assert second.success


def test_empty_input_is_refused() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    for empty in ("", "   \n"):
        with pytest.raises(EmptyInputError) as caught:
            agent.continue_run(first, empty)
        assert caught.value.code == "NXR003"
    with pytest.raises(EmptyInputError):
        agent.continue_run(first)


def test_changed_agent_definition_is_refused_naming_what_changed() -> None:
    first = two_turn_agent().execute("Analyze")
    changed_prompt = NexaAgent("Analyst", prompt="Guess freely")
    with pytest.raises(AgentDefinitionMismatchError) as caught:
        changed_prompt.continue_run(first, "Summarize")
    assert caught.value.code == "NXR004" and "prompt" in str(caught.value)
    send, _ = counting_tool()
    with pytest.raises(AgentDefinitionMismatchError, match="tools"):
        NexaAgent("Analyst", prompt="Work from evidence", tools=[send]).continue_run(first, "Summarize")
    with pytest.raises(AgentDefinitionMismatchError, match="agent"):
        NexaAgent("Other", prompt="Work from evidence").continue_run(first, "Summarize")


def test_changed_model_is_refused() -> None:
    agent = NexaAgent("A", model="m-1")
    first = agent.execute("go")
    with pytest.raises(ModelMismatchError) as caught:
        agent.continue_run(first, "next", config=RunConfig(model="m-2"))
    assert caught.value.code == "NXR005" and "m-1" in str(caught.value) and "m-2" in str(caught.value)
    with pytest.raises(ModelMismatchError):
        NexaAgent("A", model="m-3").continue_run(first, "next")


def test_changed_provider_is_refused() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    with pytest.raises(ProviderMismatchError) as caught:
        agent.continue_run(first, "next", provider=ScriptedProvider(name="other"))
    assert caught.value.code == "NXR006"


def test_changed_working_directory_is_refused(tmp_path: Path) -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(WorkingDirectoryMismatchError) as caught:
        agent.continue_run(first, "next", config=RunConfig(working_directory=str(elsewhere)))
    assert caught.value.code == "NXR007"


def test_continuing_from_another_process_directory_keeps_the_original_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    other = tmp_path / "cwd2"
    other.mkdir()
    monkeypatch.chdir(other)
    second = agent.continue_run(first, "Summarize")
    assert second.config.working_directory == first.config.working_directory


def test_every_check_has_its_own_type_and_code() -> None:
    types = [
        RunNotSettledError,
        UnknownToolOutcomeError,
        EmptyInputError,
        AgentDefinitionMismatchError,
        ModelMismatchError,
        ProviderMismatchError,
        WorkingDirectoryMismatchError,
    ]
    codes = [t.code for t in types]
    assert len(set(codes)) == len(codes)
    assert all(issubclass(t, ContinuationError) for t in types)


def test_continuation_blockers_lists_every_reason_at_once() -> None:
    agent = NexaAgent("A", model="m-1")
    first = agent.execute("go").evolve(status=RunStatus.RUNNING)
    blockers = continuation_blockers(first, NexaAgent("A", model="m-2"), "  ")
    assert [type(b) for b in blockers] == [RunNotSettledError, EmptyInputError, ModelMismatchError]
    assert continuation_blockers(agent.execute("go"), agent, "next") == []


def test_artifact_directory_override_keeps_the_original_when_history_references_artifacts(
    tmp_path: Path,
) -> None:
    def dump() -> str:
        return "x" * 5000

    agent = NexaAgent(
        "A",
        tools=[tool(dump)],
        provider=scripted({"tool_calls": [call("dump", "c1")]}, {"text": "ok"}, {"text": "2"}),
    )
    original = tmp_path / "original"
    first = agent.execute("go", config=RunConfig(artifact_directory=str(original), artifact_threshold=100))
    second = agent.continue_run(first, "next", config=RunConfig(artifact_directory=str(tmp_path / "new")))
    assert second.config.artifact_directory == str(original)
    old = next(m for m in second.history if m.artifact)
    assert read_artifact(second, old) == "x" * 5000


def test_artifact_directory_override_applies_when_no_artifacts_are_referenced(tmp_path: Path) -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze", config=RunConfig(artifact_directory=str(tmp_path / "a")))
    second = agent.continue_run(first, "next", config=RunConfig(artifact_directory=str(tmp_path / "b")))
    assert second.config.artifact_directory == str(tmp_path / "b")


def test_earlier_approvals_never_authorize_the_new_turn() -> None:
    send, counter = counting_tool(approval_required=True)
    agent = NexaAgent(
        "Mailer",
        tools=[send],
        provider=scripted(
            {"tool_calls": [call("send_mail", "same-id", to="a")]},
            {"text": "sent"},
            {"tool_calls": [call("send_mail", "same-id", to="a")]},
        ),
    )
    waiting = agent.execute("send it")
    done = agent.execute(state=approve(waiting, "same-id", by="alice"))
    assert done.success and len(counter.calls) == 1
    nxt = agent.continue_run(done, "send it again")
    assert nxt.status is RunStatus.WAITING_APPROVAL
    assert [(a.call_id, a.status) for a in nxt.approvals] == [("same-id", "pending")]
    assert len(counter.calls) == 1
    assert done.approvals[0].status == "approved", "the previous run keeps its own record"


def settled_runs() -> dict[str, tuple[NexaAgent, RunState]]:
    runs: dict[str, tuple[NexaAgent, RunState]] = {}
    agent = two_turn_agent()
    runs["completed"] = (agent, agent.execute("go"))
    failing = NexaAgent("F", provider=scripted({"error": "boom"}))
    runs["failed"] = (failing, failing.execute("go"))
    token = CancelToken()
    token.cancel()
    cancelled = two_turn_agent()
    runs["cancelled"] = (cancelled, cancelled.execute("go", cancel=token))
    slow = NexaAgent("S", provider=scripted({"text": "late", "delay": 3}))
    runs["timed_out"] = (slow, slow.execute("go", config=RunConfig(timeout=0.05)))
    send, _ = counting_tool()
    budget = NexaAgent("B", tools=[send], provider=scripted({"tool_calls": [call("send_mail")]}))
    runs["budget_exhausted"] = (budget, budget.execute("go", config=RunConfig(tool_call_budget=0)))
    return runs


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled", "timed_out", "budget_exhausted"])
def test_each_settled_state_can_continue(status: str) -> None:
    agent, previous = settled_runs()[status]
    assert previous.status.value == status
    nxt = agent.continue_run(
        previous,
        "继续",
        provider=ScriptedProvider({"replies": [], "fallback": "继续完成"}),
        config=RunConfig(timeout=5),
    )
    assert nxt.success and nxt.output == "继续完成"
    assert nxt.parent_run_id == previous.run_id


def test_continuation_in_a_background_thread_reports_events_on_that_thread() -> None:
    agent = two_turn_agent()
    first = agent.execute("Analyze")
    log = EventLog()
    results: list[RunState] = []
    worker = threading.Thread(target=lambda: results.append(agent.continue_run(first, "next", on_event=log)))
    worker.start()
    worker.join(5)
    assert results and results[0].success
    assert log.threads == {worker.ident}

"""execute("task"): identity, events, saves, tools, journal, budgets, deadline, cancel, artifacts."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from runtime_helpers import EventLog, call, counting_tool, scripted

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.artifacts import read_artifact
from nexa_lsp.runtime.errors import EmptyInputError
from nexa_lsp.runtime.events import (
    CancelToken,
    RunEnded,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
)
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.tools import tool


def test_each_execute_gets_a_new_run_id_and_session_and_a_fresh_budget() -> None:
    agent = NexaAgent("A", provider=scripted({"text": "one", "usage": {"input_tokens": 5, "output_tokens": 7}}))
    first = agent.execute("task one")
    second = agent.execute("task two")
    assert first.run_id != second.run_id
    assert first.session_id != second.session_id
    assert first.parent_run_id is None and second.parent_run_id is None
    assert second.usage.input_tokens == 5 and second.usage.output_tokens == 7
    assert [m.content for m in second.history if m.role == "user"] == ["task two"]


def test_text_streams_to_on_text_and_events_on_the_callers_thread() -> None:
    log = EventLog()
    pieces: list[str] = []
    agent = NexaAgent("A", provider=scripted({"text": "证据表明 the sky is blue today"}))
    state = agent.execute("看天", on_event=log, on_text=pieces.append)
    assert len(pieces) > 1, "text arrives in several deltas"
    assert "".join(pieces) == state.output == "证据表明 the sky is blue today"
    assert log.threads == {threading.get_ident()}
    assert isinstance(log.events[0], RunStarted) and isinstance(log.events[-1], RunEnded)
    assert all(e.run_id == state.run_id for e in log.events)
    assert [e.text for e in log.events if isinstance(e, TextDelta)] == pieces
    assert log.events[-1] == RunEnded(state.run_id, "completed", None)


def test_tool_calls_emit_requested_started_finished_and_journal_them() -> None:
    send, counter = counting_tool()
    log = EventLog()
    agent = NexaAgent(
        "Mailer",
        tools=[send],
        provider=scripted({"tool_calls": [call("send_mail", "c1", to="li@example.com")]}, {"text": "sent"}),
    )
    state = agent.execute("mail Li", on_event=log)
    assert state.success and state.output == "sent"
    assert counter.calls == [{"to": "li@example.com"}]
    kinds = log.kinds()
    assert kinds.index("ToolCallRequested") < kinds.index("ToolCallStarted") < kinds.index("ToolCallFinished")
    finished = next(e for e in log.events if isinstance(e, ToolCallFinished))
    assert finished.status == "completed" and finished.result_preview == "done #1"
    assert any(isinstance(e, ToolCallRequested) and e.call_id == "c1" for e in log.events)
    assert any(isinstance(e, ToolCallStarted) and e.tool == "send_mail" for e in log.events)
    (entry,) = state.journal
    assert (entry.call_id, entry.status, entry.result) == ("c1", "completed", "done #1")
    assert entry.finished_at is not None and entry.finished_at >= entry.started_at
    assert state.usage.tool_calls == 1
    tool_message = next(m for m in state.history if m.role == "tool")
    assert tool_message.tool_call_id == "c1" and tool_message.content == "done #1"


def test_save_gets_start_each_journal_transition_and_the_end() -> None:
    send, _ = counting_tool()
    saved: list[RunState] = []
    agent = NexaAgent(
        "Mailer", tools=[send], provider=scripted({"tool_calls": [call("send_mail", "c1")]}, {"text": "ok"})
    )
    final = agent.execute("go", save=saved.append)
    assert saved[0].status is RunStatus.RUNNING and saved[0].journal == ()
    journal_states = [s.journal[0].status for s in saved if s.journal]
    assert journal_states[0] == "started", "the journal entry is saved before the tool runs"
    started_save = next(s for s in saved if s.journal and s.journal[0].status == "started")
    assert not any(m.role == "tool" for m in started_save.history)
    assert "completed" in journal_states
    assert saved[-1] == final and final.status is RunStatus.COMPLETED


def test_write_ahead_entry_is_saved_before_the_side_effect() -> None:
    saved: list[RunState] = []
    seen_at_call: list[list[str]] = []

    def effect() -> str:
        seen_at_call.append([e.status for s in saved for e in s.journal])
        return "ok"

    agent = NexaAgent(
        "A", tools=[tool(effect)], provider=scripted({"tool_calls": [call("effect", "c1")]}, {"text": "done"})
    )
    agent.execute("go", save=saved.append)
    assert seen_at_call == [["started"]]


def test_empty_task_is_refused() -> None:
    with pytest.raises(EmptyInputError) as caught:
        NexaAgent("A").execute("   ")
    assert caught.value.code == "NXR003"


def test_cancel_token_stops_a_slow_model_promptly() -> None:
    token = CancelToken()
    agent = NexaAgent("A", provider=scripted({"text": "late", "delay": 5}))
    threading.Timer(0.1, token.cancel).start()
    began = time.monotonic()
    state = agent.execute("wait", cancel=token)
    assert time.monotonic() - began < 1.5
    assert state.status is RunStatus.CANCELLED
    assert state.error is not None and state.error.code == "NXR050"


def test_cancel_accepts_a_threading_event_and_stops_between_chunks() -> None:
    event = threading.Event()
    pieces: list[str] = []
    agent = NexaAgent("A", provider=scripted({"text": "word " * 200, "chunk_delay": 0.02}))

    def on_text(piece: str) -> None:
        pieces.append(piece)
        if len(pieces) == 3:
            event.set()

    state = agent.execute("talk", cancel=event, on_text=on_text)
    assert state.status is RunStatus.CANCELLED
    assert len(pieces) < 50
    assert state.output.startswith("word word word")


def test_deadline_from_start_time_gives_timed_out() -> None:
    agent = NexaAgent("A", provider=scripted({"text": "slow", "delay": 5}))
    began = time.monotonic()
    state = agent.execute("wait", config=RunConfig(timeout=0.2))
    assert time.monotonic() - began < 1.5
    assert state.status is RunStatus.TIMED_OUT
    assert state.deadline == pytest.approx(state.started_at + 0.2)
    assert state.error is not None and state.error.code == "NXR051"


def test_token_budget_gives_budget_exhausted() -> None:
    send, counter = counting_tool()
    agent = NexaAgent(
        "A",
        tools=[send],
        provider=scripted(
            {"tool_calls": [call("send_mail")], "usage": {"input_tokens": 60, "output_tokens": 50}},
            {"text": "never"},
        ),
    )
    state = agent.execute("go", config=RunConfig(token_budget=100))
    assert state.status is RunStatus.BUDGET_EXHAUSTED
    assert state.usage.total_tokens == 110
    assert counter.calls == []
    assert state.error is not None and "token budget" in state.error.message


def test_tool_call_budget_gives_budget_exhausted_before_the_next_call() -> None:
    send, counter = counting_tool()
    agent = NexaAgent(
        "A",
        tools=[send],
        provider=scripted({"tool_calls": [call("send_mail", "c1"), call("send_mail", "c2")]}, {"text": "x"}),
    )
    state = agent.execute("go", config=RunConfig(tool_call_budget=1))
    assert state.status is RunStatus.BUDGET_EXHAUSTED
    assert len(counter.calls) == 1
    assert state.usage.tool_calls == 1
    assert [e.call_id for e in state.journal] == ["c1"]


def test_provider_failure_gives_failed_with_the_reason() -> None:
    state = NexaAgent("A", provider=scripted({"error": "quota gone"})).execute("go")
    assert state.status is RunStatus.FAILED
    assert state.error is not None and "quota gone" in state.error.message and state.error.code == "NXR030"


def test_tool_failure_gives_failed_with_the_reason_and_closes_the_call() -> None:
    def explode() -> str:
        raise RuntimeError("disk full")

    agent = NexaAgent(
        "A", tools=[tool(explode)], provider=scripted({"tool_calls": [call("explode", "c1")]}, {"text": "x"})
    )
    state = agent.execute("go")
    assert state.status is RunStatus.FAILED
    assert state.error is not None and "disk full" in state.error.message and state.error.code == "NXR053"
    assert state.journal[0].status == "failed"
    result = next(m for m in state.history if m.role == "tool")
    assert result.is_error and "disk full" in result.content


def test_unknown_tool_and_bad_arguments_are_answered_to_the_model() -> None:
    agent = NexaAgent(
        "A",
        provider=scripted(
            {"tool_calls": [call("nope", "c1"), {"id": "c2", "name": "nope", "arguments": "{not json"}]},
            {"text": "recovered"},
        ),
    )
    state = agent.execute("go")
    assert state.success and state.output == "recovered"
    answers = [m for m in state.history if m.role == "tool"]
    assert [m.tool_call_id for m in answers] == ["c1", "c2"]
    assert all(m.is_error for m in answers)


def test_large_tool_results_go_to_the_artifact_directory(tmp_path: Path) -> None:
    big = "数据" * 20_000

    def dump() -> str:
        return big

    agent = NexaAgent("A", tools=[tool(dump)], provider=scripted({"tool_calls": [call("dump", "c1")]}, {"text": "ok"}))
    artifacts = tmp_path / "arts"
    state = agent.execute("go", config=RunConfig(artifact_directory=str(artifacts), artifact_threshold=1000))
    message = next(m for m in state.history if m.role == "tool")
    assert message.artifact is not None
    assert len(message.content) < 3000 and message.artifact in message.content
    assert (artifacts / message.artifact).read_text(encoding="utf-8") == big
    assert read_artifact(state, message) == big


def test_small_tool_results_stay_inline(tmp_path: Path) -> None:
    send, _ = counting_tool()
    agent = NexaAgent("A", tools=[send], provider=scripted({"tool_calls": [call("send_mail")]}, {"text": "ok"}))
    state = agent.execute("go", config=RunConfig(artifact_directory=str(tmp_path / "a")))
    assert all(m.artifact is None for m in state.history)
    assert not (tmp_path / "a").exists()


def test_default_working_and_artifact_directories(isolated_environment: Path) -> None:
    state = NexaAgent("A").execute("go")
    assert state.config.working_directory == str(isolated_environment.resolve())
    assert state.config.artifact_directory == str(isolated_environment.resolve() / ".nexa" / "artifacts")
    assert state.config.provider == "scripted"
    assert state.fingerprint.provider == "scripted"

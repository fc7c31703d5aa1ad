"""Regression fixtures: each crash or wrong outcome the robustness suites found, reduced to its core.

The numbers (R1 ...) are those of docs/reliability.md, which says how each was found.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.artifacts import read_artifact
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.declarations import agent_from_declaration
from nexa_lsp.runtime.errors import ProviderConfigError
from nexa_lsp.runtime.events import CancelToken
from nexa_lsp.runtime.providers import provider_from_settings
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_loop.driver import MAX_REJECTED_TURNS
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.runtime.tools import tool
from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t


class Counting:
    """Wraps a provider and counts the model turns it answered."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.turns = 0

    def complete(self, request: ProviderRequest, on_text: Callable[[str], None], cancel: CancelToken) -> ProviderReply:
        self.turns += 1
        return self.inner.complete(request, on_text, cancel)


class Crash(Exception):
    pass


def mail_tool(sent: list[str]) -> Any:
    def send_mail(to: str) -> str:
        sent.append(to)
        return f"sent to {to}"

    return tool(send_mail)


def test_r1_a_final_answer_saved_before_the_crash_is_not_asked_for_again() -> None:
    """Found by the crash matrix (point `final_save`): resume asked the model again."""
    provider = Counting(ScriptedProvider({"replies": [{"text": "The answer."}, {"text": "A different answer."}]}))
    agent = NexaAgent("A", provider=provider)
    saved: list[RunState] = []

    def save(state: RunState) -> None:
        if state.settled:
            raise Crash("killed while saving the settled state")
        saved.append(state)

    with pytest.raises(Crash):
        agent.execute("question", save=save)
    interrupted = saved[-1]
    assert interrupted.status is RunStatus.RUNNING and interrupted.history[-1].content == "The answer."
    finished = agent.execute(state=interrupted)
    assert finished.success and finished.output == "The answer."
    assert provider.turns == 1, "the model was not asked again"


def test_r2_invalid_unicode_from_a_provider_is_cleaned_and_saved(tmp_path: Path) -> None:
    """Found by hostile answers: a lone surrogate made every save fail (UnicodeEncodeError)."""
    agent = NexaAgent("A", provider=ScriptedProvider({"replies": [{"text": "bad \ud800 text"}]}))
    with SQLiteCheckpointStore(tmp_path / "runs.sqlite3") as store:
        state = agent.execute("go", save=store.save)
        assert state.success and state.output == "bad \ufffd text"
        assert store.load(state.run_id) == state
    # a state built by hand with invalid text still saves and reads back unchanged
    odd = state.evolve(output="\udcff")
    assert RunState.from_json(odd.to_json()) == odd


def test_r3_tool_call_ids_reused_on_later_turns_still_run() -> None:
    """Found by hostile answers: a reused id got the earlier call's result, and its tool never ran."""
    sent: list[str] = []
    agent = NexaAgent(
        "A",
        tools=[mail_tool(sent)],
        provider=ScriptedProvider(
            {
                "replies": [
                    {"tool_calls": [{"id": "call_0", "name": "send_mail", "arguments": {"to": "li"}}]},
                    {"tool_calls": [{"id": "call_0", "name": "send_mail", "arguments": {"to": "wang"}}]},
                    {"text": "done"},
                ]
            }
        ),
    )
    state = agent.execute("go")
    assert state.success and sent == ["li", "wang"]
    assert [e.call_id for e in state.journal] == ["call_0", "call_0~2"]


def test_r4_duplicate_ids_in_one_reply_each_run_once() -> None:
    sent: list[str] = []
    calls = [{"id": "c", "name": "send_mail", "arguments": {"to": to}} for to in ("li", "wang")]
    agent = NexaAgent(
        "A",
        tools=[mail_tool(sent)],
        provider=ScriptedProvider({"replies": [{"tool_calls": calls}, {"text": "done"}]}),
    )
    state = agent.execute("go")
    assert state.success and sent == ["li", "wang"]
    assert len([m for m in state.history if m.role == "tool"]) == 2


def test_r5_arguments_that_do_not_fit_the_tool_are_refused_before_it_runs() -> None:
    """Found by hostile answers: a wrong argument name failed the whole run as a tool failure."""
    sent: list[str] = []
    agent = NexaAgent(
        "A",
        tools=[mail_tool(sent)],
        provider=ScriptedProvider(
            {
                "replies": [
                    {"tool_calls": [{"id": "c1", "name": "send_mail", "arguments": {"recipient": "li"}}]},
                    {"tool_calls": [{"id": "c2", "name": "send_mail", "arguments": {"to": "li"}}]},
                    {"text": "done"},
                ]
            }
        ),
    )
    state = agent.execute("go")
    assert state.success and sent == ["li"]
    refused = next(m for m in state.history if m.tool_call_id == "c1")
    assert refused.is_error and "invalid arguments" in refused.content and "recipient" in refused.content
    assert [e.call_id for e in state.journal] == ["c2"]


def test_r6_a_model_that_only_calls_missing_tools_fails_the_run_instead_of_looping() -> None:
    """Found by hostile answers: the run asked the model forever."""
    provider = Counting(ScriptedProvider({"replies": [{"tool_calls": [{"name": "nope"}]}] * 1000}))
    state = NexaAgent("A", provider=provider).execute("go")
    assert state.status is RunStatus.FAILED and state.error is not None and state.error.code == "NXR054"
    assert provider.turns == MAX_REJECTED_TURNS


def test_r6_valid_calls_in_between_reset_the_count() -> None:
    sent: list[str] = []
    bad = {"tool_calls": [{"name": "nope"}]}
    good = {"tool_calls": [{"name": "send_mail", "arguments": {"to": "li"}}]}
    replies = ([bad] * (MAX_REJECTED_TURNS - 1) + [good]) * 2 + [{"text": "done"}]
    state = NexaAgent("A", tools=[mail_tool(sent)], provider=ScriptedProvider({"replies": replies})).execute("go")
    assert state.success and sent == ["li", "li"]


def test_r10_building_every_agent_of_a_large_file_is_linear() -> None:
    """Found by the hostile LSP suite: a 1.2 MB file took 86 s in the server (quadratic)."""
    unit = 'agent A{n} {{\n  prompt: "Agent {n}"\n  model: "m"\n}}\n\n'

    def build_all(count: int) -> float:
        source = parse_source("".join(unit.format(n=n) for n in range(count)))
        agents = [i for i in source.items if isinstance(i, t.AgentDecl)]
        began = time.perf_counter()
        for decl in agents:
            agent_from_declaration(decl, source)
        return time.perf_counter() - began

    small, large = build_all(1000), build_all(8000)
    assert large < 16 * max(small, 0.01), f"1,000 agents: {small:.3f}s, 8,000 agents: {large:.3f}s"


@pytest.mark.parametrize("key", ["TIMEOUT", "MAX_RETRIES", "MAX_RESPONSE_BYTES", "ANSWER_TIMEOUT", "BACKOFF"])
def test_r11_a_setting_that_is_not_a_number_is_a_clear_error(key: str) -> None:
    """Found while fuzzing settings: `TIMEOUT = "soon"` raised a bare ValueError."""
    settings = Settings(environ={"OPENAI_API_KEY": "sk-x", key: "soon"})
    with pytest.raises(ProviderConfigError) as caught:
        provider_from_settings("openai", settings)
    assert key in str(caught.value) and caught.value.code == "NXR031"


def test_r14_call_ids_that_differ_only_in_unsafe_characters_get_distinct_artifacts(tmp_path: Path) -> None:
    """Found reviewing artifact names: `a/b` and `a_b` shared one file, so one result overwrote the other."""
    results = {"a/b": "first " * 5000, "a_b": "second " * 5000}

    def big(which: str) -> str:
        return results[which]

    agent = NexaAgent(
        "A",
        tools=[tool(big)],
        provider=ScriptedProvider(
            {
                "replies": [
                    {"tool_calls": [{"id": cid, "name": "big", "arguments": {"which": cid}} for cid in results]},
                    {"text": "done"},
                ]
            }
        ),
    )
    state = agent.execute("go", config=RunConfig(artifact_directory=str(tmp_path / "artifacts")))
    assert state.success
    messages = [m for m in state.history if m.role == "tool"]
    assert len({m.artifact for m in messages}) == 2
    assert sorted(read_artifact(state, m) for m in messages) == sorted(results.values())
    assert json.loads(state.to_json())["status"] == "completed"


def test_r18_a_run_failing_after_some_steps_keeps_them(tmp_path: Path) -> None:
    """Found by the claim race: a provider error after a tool call saved the failure over the
    state the run had *started* from (losing the tool call, its journal entry and usage)."""
    sent: list[str] = []
    agent = NexaAgent(
        "A",
        tools=[mail_tool(sent)],
        provider=ScriptedProvider(
            {
                "replies": [
                    {"text": "寄出", "tool_calls": [{"id": "c1", "name": "send_mail", "arguments": {"to": "li"}}]},
                    {"error": "the provider went away"},
                ]
            }
        ),
    )
    with SQLiteCheckpointStore(tmp_path / "runs.sqlite3") as store:
        state = agent.execute("go", save=store.save)
        stored = store.load(state.run_id)
    assert state.status.value == "failed" and sent == ["li"]
    for kept in (state, stored):
        assert [(e.call_id, e.status) for e in kept.journal] == [("c1", "completed")]
        assert [m.role for m in kept.history] == ["user", "assistant", "tool"]
        assert kept.usage.tool_calls == 1 and kept.error is not None and "went away" in kept.error.message

"""OpenAI-compatible Chat Completions against a loopback server: exact requests, errors, retries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loopback import Answer, LoopbackServer, chat_text, json_answer, sse
from runtime_helpers import counting_tool

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.control import approve
from nexa_lsp.runtime.providers import HttpOptions, OpenAIChatProvider
from nexa_lsp.runtime.run_state import RunConfig, RunStatus

TOOL_SCHEMA = {"type": "object", "properties": {"to": {"type": "string"}}}


def chat_tool_call(call_id: str, name: str, argument_parts: list[str]) -> Answer:
    first = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    chunks: list[Any] = [{"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]}}]}]
    chunks += [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": part}}]}}]}
        for part in argument_parts
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 6}})
    return Answer(chunks=sse(*chunks, done=True))


def provider_for(server: LoopbackServer, **options: Any) -> OpenAIChatProvider:
    settings = {"max_retries": 2, "backoff": 0.01, "request_timeout": 5.0, **options}
    return OpenAIChatProvider(HttpOptions(base_url=server.url + "/v1", api_key="sk-test-key", **settings))


def test_execute_resume_and_continue_send_the_exact_requests(loopback: LoopbackServer) -> None:
    loopback.answers += [
        chat_tool_call("call_1", "send_mail", ['{"to": ', '"王五"}']),
        chat_text("已", "发送"),
        chat_text("总结：", "邮件已发"),
    ]
    send, counter = counting_tool(approval_required=True)
    agent = NexaAgent("Mailer", prompt="Work from evidence", model="gpt-test", tools=[send])
    provider = provider_for(loopback)
    pieces: list[str] = []
    waiting = agent.execute("给王五发邮件", provider=provider, on_text=pieces.append)
    assert waiting.status is RunStatus.WAITING_APPROVAL
    done = agent.execute(state=approve(waiting, "call_1"), provider=provider, on_text=pieces.append)
    assert done.success and done.output == "已发送" and counter.calls == [{"to": "王五"}]
    second = agent.continue_run(done, "总结一下", provider=provider, on_text=pieces.append)
    assert second.success and second.output == "总结：邮件已发"
    assert pieces == ["已", "发送", "总结：", "邮件已发"]
    assert (done.usage.input_tokens, done.usage.output_tokens) == (31, 10)
    assert (second.usage.input_tokens, second.usage.output_tokens) == (11, 4)

    tools = [
        {
            "type": "function",
            "function": {
                "name": "send_mail",
                "description": "send_mail (counted)",
                "parameters": TOOL_SCHEMA,
            },
        }
    ]
    system = {"role": "system", "content": "Work from evidence"}
    user1 = {"role": "user", "content": "给王五发邮件"}
    assistant_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "send_mail", "arguments": '{"to": "王五"}'},
            }
        ],
    }
    tool_result = {"role": "tool", "tool_call_id": "call_1", "content": "done #1"}
    common = {"model": "gpt-test", "stream": True, "stream_options": {"include_usage": True}, "tools": tools}
    assert loopback.bodies() == [
        {**common, "messages": [system, user1]},
        {**common, "messages": [system, user1, assistant_call, tool_result]},
        {
            **common,
            "messages": [
                system,
                user1,
                assistant_call,
                tool_result,
                {"role": "assistant", "content": "已发送"},
                {"role": "user", "content": "总结一下"},
            ],
        },
    ]
    assert all(r.path == "/v1/chat/completions" for r in loopback.requests)
    assert all(r.headers["authorization"] == "Bearer sk-test-key" for r in loopback.requests)


def test_continuation_closes_unstarted_tool_calls_in_the_request(loopback: LoopbackServer) -> None:
    loopback.answers += [chat_tool_call("call_9", "send_mail", ["{}"]), chat_text("ok")]
    send, counter = counting_tool()
    agent = NexaAgent("Mailer", model="gpt-test", tools=[send])
    provider = provider_for(loopback)
    first = agent.execute("mail", provider=provider, config=RunConfig(tool_call_budget=0))
    assert first.status is RunStatus.BUDGET_EXHAUSTED
    agent.continue_run(first, "just answer", provider=provider)
    messages = loopback.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2]["tool_call_id"] == "call_9" and "not executed" in messages[2]["content"]
    assert counter.calls == []


def test_retries_429_and_5xx_with_backoff_then_succeeds(loopback: LoopbackServer) -> None:
    loopback.answers += [
        json_answer({"error": {"message": "busy"}}, status=503),
        json_answer({"error": {"message": "slow down"}}, status=429, headers={"retry-after": "0"}),
        chat_text("finally"),
    ]
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback))
    assert state.success and state.output == "finally"
    assert len(loopback.requests) == 3


def test_gives_up_after_the_retries_with_a_clear_error(loopback: LoopbackServer) -> None:
    loopback.answers.append(json_answer({"error": {"message": "overloaded"}}, status=500))
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback, max_retries=1))
    assert state.status is RunStatus.FAILED and state.error is not None
    assert state.error.code == "NXR034" and "overloaded" in state.error.message and "2 time(s)" in state.error.message
    assert len(loopback.requests) == 2


def test_401_is_not_retried_and_says_to_fix_the_key(loopback: LoopbackServer) -> None:
    loopback.answers.append(json_answer({"error": {"message": "Incorrect API key"}}, status=401))
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback))
    assert state.status is RunStatus.FAILED and state.error is not None
    assert state.error.code == "NXR032" and "API key" in state.error.message and "OPENAI_API_KEY" in state.error.message
    assert "sk-test-key" not in state.error.message
    assert len(loopback.requests) == 1


def test_404_names_the_url_and_model(loopback: LoopbackServer) -> None:
    loopback.answers.append(json_answer({"error": {"message": "model not found"}}, status=404))
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback))
    assert state.error is not None and state.error.code == "NXR033"
    assert "/v1/chat/completions" in state.error.message and "model" in state.error.message


@pytest.mark.parametrize(
    "chunks",
    [
        [b"data: {not json\n\n"],
        sse({"choices": [{"index": 0, "delta": {"content": "cut off"}}]}),
        sse({"usage": {"prompt_tokens": 1}}, done=True),
    ],
    ids=["bad-json", "no-done", "no-choices"],
)
def test_malformed_answers_fail_clearly(loopback: LoopbackServer, chunks: list[bytes]) -> None:
    loopback.answers.append(Answer(chunks=chunks))
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback))
    assert state.status is RunStatus.FAILED and state.error is not None and state.error.code == "NXR036"


def test_response_size_limit(loopback: LoopbackServer) -> None:
    loopback.answers.append(chat_text("x" * 5000))
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback, max_response_bytes=2000))
    assert state.error is not None and state.error.code == "NXR037"


def test_request_timeout(loopback: LoopbackServer) -> None:
    loopback.answers.append(Answer(chunks=chat_text("late").chunks, delay=1.0))
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback, request_timeout=0.2, max_retries=0))
    assert state.error is not None and state.error.code == "NXR035"


def test_a_plain_json_answer_is_accepted(loopback: LoopbackServer) -> None:
    loopback.answers.append(
        json_answer(
            {
                "choices": [{"message": {"role": "assistant", "content": "整段回答"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            }
        )
    )
    pieces: list[str] = []
    state = NexaAgent("A", model="m").execute("go", provider=provider_for(loopback), on_text=pieces.append)
    assert state.output == "整段回答" and pieces == ["整段回答"] and state.usage.input_tokens == 3


def test_settings_from_nxs_reach_the_endpoint_and_the_key_is_never_stored(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    secret = "sk-loopback-secret-987654321"
    Path("project.nxs").write_text(
        f'OPENAI_API_KEY = "{secret}"\nOPENAI_BASE_URL = {loopback.url}/v1\nMODEL_NAME = {{"strong": "gpt-nxs"}}\n',
        encoding="utf-8",
    )
    loopback.answers.append(chat_text("hi"))
    store_path = tmp_path / "runs.sqlite3"
    with SQLiteCheckpointStore(store_path) as store:
        state = NexaAgent("A").execute("go", provider="openai", save=store.save)
    assert state.success and state.config.provider == "openai" and state.config.model == "gpt-nxs"
    assert loopback.requests[0].headers["authorization"] == f"Bearer {secret}"
    assert loopback.bodies()[0]["model"] == "gpt-nxs"
    assert secret not in state.to_json()
    for file in tmp_path.glob("runs.sqlite3*"):
        assert secret.encode() not in file.read_bytes()


def test_provider_model_id_selects_the_provider_credentials(loopback: LoopbackServer) -> None:
    Path("keys.nxs").write_text(
        f'config deepseek {{ API_KEY = "sk-ds", BASE_URL = "{loopback.url}/v1" }}\n', encoding="utf-8"
    )
    loopback.answers.append(chat_text("ok"))
    state = NexaAgent("A", model="deepseek/deepseek-chat").execute("go")
    assert state.success and state.config.provider == "deepseek"
    assert loopback.bodies()[0]["model"] == "deepseek-chat"
    assert loopback.requests[0].headers["authorization"] == "Bearer sk-ds"
    assert json.loads(state.to_json())["fingerprint"]["model"] == "deepseek/deepseek-chat"

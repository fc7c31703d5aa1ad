"""Anthropic Messages against a loopback server: thinking signatures and tool_use/tool_result pairs."""

from __future__ import annotations

from typing import Any

from loopback import Answer, LoopbackServer, json_answer, sse
from runtime_helpers import counting_tool

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.control import approve
from nexa_lsp.runtime.providers import AnthropicProvider, HttpOptions
from nexa_lsp.runtime.run_state import RunConfig, RunStatus


def stream(*blocks: dict[str, Any], usage: tuple[int, int] = (21, 9)) -> Answer:
    """A Messages stream producing ``blocks`` (text and thinking streamed in two deltas)."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_x", "usage": {"input_tokens": usage[0], "output_tokens": 1}},
        }
    ]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "thinking":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": ""},
                }
            )
            half = len(block["thinking"]) // 2
            for part in (block["thinking"][:half], block["thinking"][half:]):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": part},
                    }
                )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": block["signature"]},
                }
            )
        elif kind == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            half = len(block["text"]) // 2
            for part in (block["text"][:half], block["text"][half:]):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": part},
                    }
                )
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            for part in ('{"to": ', '"孙七"}'):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part},
                    }
                )
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": usage[1]}})
    events.append({"type": "message_stop"})
    return Answer(chunks=sse(*events, event_names=[e["type"] for e in events]))


THINKING = {
    "type": "thinking",
    "thinking": "先确认收件人再发送。",
    "signature": "EqQBCkYIARgCIkD-signature==",
}
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "send_mail", "input": {"to": "孙七"}}
TOOLS = [
    {
        "name": "send_mail",
        "description": "send_mail (counted)",
        "input_schema": {"type": "object", "properties": {"to": {"type": "string"}}},
    }
]


def provider_for(server: LoopbackServer, **kwargs: Any) -> AnthropicProvider:
    return AnthropicProvider(HttpOptions(base_url=server.url, api_key="sk-ant-test", backoff=0.01), **kwargs)


def test_execute_resume_and_continue_keep_thinking_and_tool_pairs(loopback: LoopbackServer) -> None:
    final_thinking = {"type": "thinking", "thinking": "已完成。", "signature": "sig-2"}
    loopback.answers += [
        stream(THINKING, {"type": "text", "text": "我来发送"}, TOOL_USE),
        stream(final_thinking, {"type": "text", "text": "已发送给孙七"}),
        stream({"type": "text", "text": "没有了"}),
    ]
    send, counter = counting_tool(approval_required=True)
    agent = NexaAgent("Mailer", prompt="Be careful", model="claude-test", tools=[send])
    provider = provider_for(loopback, thinking_budget=1024)
    pieces: list[str] = []
    waiting = agent.execute("发给孙七", provider=provider, on_text=pieces.append)
    assert waiting.status is RunStatus.WAITING_APPROVAL
    assert waiting.history[-1].tool_calls[0].call_id == "toolu_1"
    done = agent.execute(state=approve(waiting, "toolu_1"), provider=provider, on_text=pieces.append)
    assert done.success and done.output == "已发送给孙七" and counter.calls == [{"to": "孙七"}]
    third = agent.continue_run(done, "还有吗", provider=provider)
    assert third.output == "没有了"
    assert "".join(pieces) == "我来发送已发送给孙七"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (42, 18)

    common = {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "Be careful",
        "stream": True,
        "tools": TOOLS,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    user1 = {"role": "user", "content": [{"type": "text", "text": "发给孙七"}]}
    assistant1 = {"role": "assistant", "content": [THINKING, {"type": "text", "text": "我来发送"}, TOOL_USE]}
    results = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done #1"}],
    }
    assistant2 = {"role": "assistant", "content": [final_thinking, {"type": "text", "text": "已发送给孙七"}]}
    assert loopback.bodies() == [
        {**common, "messages": [user1]},
        {**common, "messages": [user1, assistant1, results]},
        {
            **common,
            "messages": [
                user1,
                assistant1,
                results,
                assistant2,
                {"role": "user", "content": [{"type": "text", "text": "还有吗"}]},
            ],
        },
    ]
    headers = loopback.requests[0].headers
    assert headers["x-api-key"] == "sk-ant-test" and headers["anthropic-version"] == "2023-06-01"
    assert all(r.path == "/v1/messages" for r in loopback.requests)


def test_unstarted_tool_use_is_closed_in_the_same_user_message_as_the_new_input(
    loopback: LoopbackServer,
) -> None:
    loopback.answers += [stream(THINKING, TOOL_USE), stream({"type": "text", "text": "好的"})]
    send, counter = counting_tool()
    agent = NexaAgent("Mailer", model="claude-test", tools=[send])
    provider = provider_for(loopback)
    first = agent.execute("发", provider=provider, config=RunConfig(tool_call_budget=0, max_output_tokens=500))
    assert first.status is RunStatus.BUDGET_EXHAUSTED
    agent.continue_run(first, "不用发了", provider=provider)
    body = loopback.bodies()[1]
    assert body["max_tokens"] == 500
    last = body["messages"][-1]
    assert last["role"] == "user"
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert last["content"][0]["tool_use_id"] == "toolu_1" and last["content"][0]["is_error"] is True
    assert body["messages"][1]["content"][0] == THINKING
    assert counter.calls == []


def test_error_event_and_missing_stop_fail_the_run(loopback: LoopbackServer) -> None:
    loopback.answers += [
        Answer(chunks=sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        Answer(chunks=sse({"type": "message_start", "message": {"usage": {"input_tokens": 1}}})),
    ]
    agent = NexaAgent("A", model="claude-test")
    first = agent.execute("go", provider=provider_for(loopback))
    assert first.error is not None and first.error.code == "NXR036" and "Overloaded" in first.error.message
    second = agent.execute("go", provider=provider_for(loopback))
    assert second.error is not None and "message_stop" in second.error.message


def test_a_plain_json_message_is_accepted(loopback: LoopbackServer) -> None:
    loopback.answers.append(
        json_answer({"content": [{"type": "text", "text": "整段"}], "usage": {"input_tokens": 2, "output_tokens": 1}})
    )
    state = NexaAgent("A", model="claude-test").execute("go", provider=provider_for(loopback))
    assert state.output == "整段" and state.usage.input_tokens == 2

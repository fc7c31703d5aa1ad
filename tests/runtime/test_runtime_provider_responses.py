"""OpenAI Responses against a loopback server: cursors and encrypted reasoning across turns."""

from __future__ import annotations

import json
from typing import Any

from loopback import Answer, LoopbackServer, sse
from runtime_helpers import counting_tool

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.control import approve
from nexa_lsp.runtime.providers import HttpOptions, OpenAIResponsesProvider
from nexa_lsp.runtime.run_state import RunStatus

REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-opaque-blob-1"}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "send_mail",
    "arguments": '{"to":"赵六"}',
    "status": "completed",
}


def message_item(text: str, item_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def completed(response_id: str, output: list[dict[str, Any]], deltas: tuple[str, ...] = ()) -> Answer:
    events: list[Any] = [{"type": "response.created", "response": {"id": response_id, "output": []}}]
    events += [{"type": "response.output_text.delta", "item_id": "m", "delta": d} for d in deltas]
    events.append(
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "output": output,
                "usage": {"input_tokens": 13, "output_tokens": 8},
            },
        }
    )
    names = [e["type"] for e in events]
    return Answer(chunks=sse(*events, event_names=names))


def run_three_turns(server: LoopbackServer, store: bool) -> tuple[list[Any], Any]:
    reasoning2 = {**REASONING, "id": "rs_2", "encrypted_content": "gAAAA-opaque-blob-2"}
    server.answers += [
        completed("resp_1", [REASONING, CALL]),
        completed("resp_2", [reasoning2, message_item("已发给赵六", "msg_2")], ("已发给", "赵六")),
        completed("resp_3", [message_item("完毕", "msg_3")], ("完毕",)),
    ]
    send, counter = counting_tool(approval_required=True)
    agent = NexaAgent("Mailer", prompt="Be careful", model="o-test", tools=[send])
    provider = OpenAIResponsesProvider(
        HttpOptions(base_url=server.url + "/v1", api_key="sk-r", backoff=0.01), store=store
    )
    waiting = agent.execute("发给赵六", provider=provider)
    assert waiting.status is RunStatus.WAITING_APPROVAL
    assistant = waiting.history[-1]
    assert [json.loads(item) for item in assistant.opaque] == [REASONING, CALL], "native items kept verbatim"
    assert assistant.response_id == "resp_1"
    done = agent.execute(state=approve(waiting, "call_1"), provider=provider)
    assert done.success and done.output == "已发给赵六" and counter.calls == [{"to": "赵六"}]
    third = agent.continue_run(done, "还有吗", provider=provider)
    assert third.success and third.output == "完毕"
    return server.bodies(), reasoning2


TOOLS = [
    {
        "type": "function",
        "name": "send_mail",
        "description": "send_mail (counted)",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
    }
]


def test_stored_mode_sends_previous_response_id_and_only_new_items(loopback: LoopbackServer) -> None:
    bodies, _ = run_three_turns(loopback, store=True)
    common = {"model": "o-test", "instructions": "Be careful", "stream": True, "store": True, "tools": TOOLS}
    assert bodies == [
        {**common, "input": [{"role": "user", "content": "发给赵六"}]},
        {
            **common,
            "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "call_1", "output": "done #1"}],
        },
        {**common, "previous_response_id": "resp_2", "input": [{"role": "user", "content": "还有吗"}]},
    ]
    assert all(r.path == "/v1/responses" for r in loopback.requests)


def test_stateless_mode_sends_encrypted_reasoning_items_back_verbatim(loopback: LoopbackServer) -> None:
    bodies, reasoning2 = run_three_turns(loopback, store=False)
    common = {
        "model": "o-test",
        "instructions": "Be careful",
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "tools": TOOLS,
    }
    user1 = {"role": "user", "content": "发给赵六"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "done #1"}
    assert bodies[0] == {**common, "input": [user1]}
    assert bodies[1] == {**common, "input": [user1, REASONING, CALL, output]}
    assert bodies[2] == {
        **common,
        "input": [
            user1,
            REASONING,
            CALL,
            output,
            reasoning2,
            message_item("已发给赵六", "msg_2"),
            {"role": "user", "content": "还有吗"},
        ],
    }
    assert all("previous_response_id" not in body for body in bodies)


def test_failed_response_event_fails_the_run(loopback: LoopbackServer) -> None:
    loopback.answers.append(
        Answer(chunks=sse({"type": "response.failed", "response": {"error": {"message": "content filter"}}}))
    )
    provider = OpenAIResponsesProvider(HttpOptions(base_url=loopback.url, api_key="k"))
    state = NexaAgent("A", model="o").execute("go", provider=provider)
    assert state.status is RunStatus.FAILED and state.error is not None
    assert state.error.code == "NXR036" and "content filter" in state.error.message


def test_stream_without_completion_is_malformed(loopback: LoopbackServer) -> None:
    loopback.answers.append(Answer(chunks=sse({"type": "response.output_text.delta", "delta": "half"})))
    provider = OpenAIResponsesProvider(HttpOptions(base_url=loopback.url, api_key="k"))
    state = NexaAgent("A", model="o").execute("go", provider=provider)
    assert state.error is not None and state.error.code == "NXR036"

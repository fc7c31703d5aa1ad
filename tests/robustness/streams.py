"""Valid streamed answers of the three provider protocols, as SSE events, for hostile tests to break."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nexa_lsp.runtime.providers import AnthropicProvider, HttpOptions, OpenAIChatProvider, OpenAIResponsesProvider
from nexa_lsp.runtime.providers.base import Provider

PROTOCOLS = ("chat", "responses", "anthropic")
Call = tuple[str, str, str]  # call id, tool name, arguments (JSON text)


def sse_bytes(events: Sequence[Any], named: bool = False) -> list[bytes]:
    chunks = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        name = f"event: {event['type']}\n" if named and isinstance(event, dict) and "type" in event else ""
        chunks.append(f"{name}data: {data}\n\n".encode())
    return chunks


def chat_events(text: str, calls: Sequence[Call] = ()) -> list[Any]:
    events: list[Any] = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    for start in range(0, len(text), 7):
        events.append({"choices": [{"index": 0, "delta": {"content": text[start : start + 7]}}]})
    for index, (call_id, name, arguments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
        part = {"index": index, "function": {"arguments": arguments}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [part]}}]})
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}]})
    events.append({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5}})
    events.append("[DONE]")
    return events


def responses_events(text: str, calls: Sequence[Call] = (), response_id: str = "resp_1") -> list[Any]:
    output: list[dict[str, Any]] = []
    if text:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    output += [
        {"type": "function_call", "id": f"fc_{n}", "call_id": c, "name": name, "arguments": args}
        for n, (c, name, args) in enumerate(calls)
    ]
    events: list[Any] = [{"type": "response.created", "response": {"id": response_id, "output": []}}]
    events += [
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": text[s : s + 7]}
        for s in range(0, len(text), 7)
    ]
    events.append(
        {
            "type": "response.completed",
            "response": {"id": response_id, "output": output, "usage": {"input_tokens": 12, "output_tokens": 5}},
        }
    )
    return events


def anthropic_events(text: str, calls: Sequence[Call] = ()) -> list[Any]:
    events: list[Any] = [{"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 12}}}]
    index = 0
    if text:
        events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        for start in range(0, len(text), 7):
            delta = {"type": "text_delta", "text": text[start : start + 7]}
            events.append({"type": "content_block_delta", "index": 0, "delta": delta})
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for offset, (call_id, name, arguments) in enumerate(calls):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append({"type": "content_block_start", "index": index + offset, "content_block": block})
        delta = {"type": "input_json_delta", "partial_json": arguments}
        events.append({"type": "content_block_delta", "index": index + offset, "delta": delta})
        events.append({"type": "content_block_stop", "index": index + offset})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}})
    events.append({"type": "message_stop"})
    return events


def events_for(protocol: str, text: str, calls: Sequence[Call] = (), turn: int = 1) -> list[Any]:
    if protocol == "chat":
        return chat_events(text, calls)
    if protocol == "responses":
        return responses_events(text, calls, f"resp_{turn}")
    return anthropic_events(text, calls)


def answer(protocol: str, text: str, calls: Sequence[Call] = (), turn: int = 1) -> list[bytes]:
    return sse_bytes(events_for(protocol, text, calls, turn), named=protocol != "chat")


def provider_for(protocol: str, url: str, api_key: str = "sk-test-robustness-0000", **options: Any) -> Provider:
    settings: dict[str, Any] = {"max_retries": 0, "backoff": 0.01, "request_timeout": 5.0}
    settings.update(options)
    http = HttpOptions(base_url=url, api_key=api_key, **settings)
    if protocol == "chat":
        return OpenAIChatProvider(http, name="openai", default_model="m")
    if protocol == "responses":
        return OpenAIResponsesProvider(http, name="openai", default_model="m")
    return AnthropicProvider(http, name="anthropic", default_model="m")

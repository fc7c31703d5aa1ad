"""OpenAI-compatible Chat Completions (``POST {base}/chat/completions``), streamed over SSE."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nexa_lsp.runtime.errors import ProviderResponseError
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest
from nexa_lsp.runtime.providers.http import (
    HttpOptions,
    HttpProvider,
    bearer_headers,
    parse_json,
    require_dict,
    sse_events,
)
from nexa_lsp.runtime.run_state import Message, ToolCall


def chat_messages(system: str, history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """History in Chat Completions form; every assistant tool call is followed by its result."""
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    for message in history:
        if message.role == "user":
            messages.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": c.call_id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in message.tool_calls
                ]
            messages.append(entry)
        else:
            messages.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
    return messages


def _arguments_text(arguments: Any) -> str:
    """Arguments as JSON text (some endpoints send an object instead of a string)."""
    if not arguments:
        return "{}"
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


@dataclass
class _ToolCallParts:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIChatProvider(HttpProvider):
    """Any endpoint speaking the OpenAI Chat Completions protocol (OpenAI, DeepSeek, vLLM, ...)."""

    path = "chat/completions"

    def __init__(self, options: HttpOptions, name: str = "openai", default_model: str | None = None) -> None:
        super().__init__(options, name, default_model)

    def auth_headers(self, options: HttpOptions) -> dict[str, str]:
        return bearer_headers(options)

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_of(request),
            "messages": chat_messages(request.system, request.history),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [{"type": "function", "function": t.as_function()} for t in request.tools]
        if request.max_output_tokens is not None:
            body["max_tokens"] = request.max_output_tokens
        return body

    def read_whole(self, data: dict[str, Any], on_text: Callable[[str], None]) -> ProviderReply:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ProviderResponseError(f"{self.name} answer has no choices: {json.dumps(data)[:200]}")
        message = require_dict(choices[0].get("message"), self.name, "choices[0].message")
        text = message.get("content") or ""
        if text:
            on_text(text)
        calls = tuple(
            ToolCall(str(c["id"]), str(c["function"]["name"]), _arguments_text(c["function"].get("arguments")))
            for c in message.get("tool_calls") or ()
        )
        usage = data.get("usage") or {}
        return ProviderReply(text, calls, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))

    def read_stream(self, lines: Iterator[str], on_text: Callable[[str], None]) -> ProviderReply:
        text: list[str] = []
        calls: dict[int, _ToolCallParts] = {}
        input_tokens = output_tokens = 0
        saw_choice = False
        done = False
        for _event, data in sse_events(lines):
            if data.strip() == "[DONE]":
                done = True
                break
            chunk = require_dict(parse_json(data, self.name, "a stream chunk"), self.name, "a stream chunk")
            if "error" in chunk:
                raise ProviderResponseError(f"{self.name} reported an error mid-stream: {chunk['error']}")
            usage = chunk.get("usage")
            if isinstance(usage, dict):
                input_tokens = int(usage.get("prompt_tokens", 0))
                output_tokens = int(usage.get("completion_tokens", 0))
            for choice in chunk.get("choices") or ():
                saw_choice = True
                delta = choice.get("delta") or {}
                content = delta.get("content")
                if content:
                    text.append(content)
                    on_text(content)
                for part in delta.get("tool_calls") or ():
                    slot = calls.setdefault(int(part.get("index", 0)), _ToolCallParts())
                    slot.call_id = part.get("id") or slot.call_id
                    function = part.get("function") or {}
                    slot.name = function.get("name") or slot.name
                    arguments = function.get("arguments")
                    if arguments:
                        slot.arguments.append(
                            arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
                        )
        if not saw_choice:
            raise ProviderResponseError(f"{self.name} stream ended without any choice")
        if not done:
            raise ProviderResponseError(f"{self.name} stream ended before [DONE]")
        tool_calls = []
        for index in sorted(calls):
            parts = calls[index]
            if not parts.call_id or not parts.name:
                raise ProviderResponseError(f"{self.name} sent a tool call without id or name")
            tool_calls.append(ToolCall(parts.call_id, parts.name, "".join(parts.arguments) or "{}"))
        return ProviderReply("".join(text), tuple(tool_calls), input_tokens, output_tokens)

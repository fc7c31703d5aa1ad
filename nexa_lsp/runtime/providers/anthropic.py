"""Anthropic Messages (``POST {base}/v1/messages``), streamed over SSE.

The assistant's content blocks are kept verbatim (thinking blocks with their signatures,
redacted thinking, text, tool_use) and sent back unchanged; tool results go back as
``tool_result`` blocks in the next user message, so every tool_use/tool_result pair stays
closed across turns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from nexa_lsp.runtime.errors import ProviderResponseError
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest
from nexa_lsp.runtime.providers.http import (
    HttpOptions,
    HttpProvider,
    native_json,
    parse_json,
    require_dict,
    sse_events,
)
from nexa_lsp.runtime.run_state import Message, ToolCall

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


def _blocks_of(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "user":
        return "user", [{"type": "text", "text": message.content}]
    if message.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            block["is_error"] = True
        return "user", [block]
    if message.opaque:
        return "assistant", [json.loads(item) for item in message.opaque]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": c.call_id, "name": c.name, "input": json.loads(c.arguments or "{}")}
        for c in message.tool_calls
    )
    return "assistant", blocks


def anthropic_messages(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """History as alternating user/assistant messages (consecutive same-role entries merged)."""
    messages: list[dict[str, Any]] = []
    for message in history:
        role, blocks = _blocks_of(message)
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return messages


class AnthropicProvider(HttpProvider):
    """The Anthropic Messages API."""

    path = "v1/messages"

    def __init__(
        self,
        options: HttpOptions,
        name: str = "anthropic",
        default_model: str | None = None,
        thinking_budget: int | None = None,
    ) -> None:
        self.thinking_budget = thinking_budget
        super().__init__(options, name, default_model)

    def auth_headers(self, options: HttpOptions) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if options.api_key:
            headers["x-api-key"] = options.api_key
        return headers

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_of(request),
            "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
        }
        if request.system:
            body["system"] = request.system
        body["messages"] = anthropic_messages(request.history)
        body["stream"] = True
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
                for t in request.tools
            ]
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        return body

    def read_whole(self, data: dict[str, Any], on_text: Callable[[str], None]) -> ProviderReply:
        content = data.get("content")
        if not isinstance(content, list):
            raise ProviderResponseError(f"{self.name} answer has no content list: {json.dumps(data)[:200]}")
        usage = data.get("usage") or {}
        reply = self._reply_from(
            [require_dict(b, self.name, "a content block") for b in content],
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
        )
        if reply.text:
            on_text(reply.text)
        return reply

    def read_stream(self, lines: Iterator[str], on_text: Callable[[str], None]) -> ProviderReply:
        blocks: dict[int, dict[str, Any]] = {}
        partial_json: dict[int, list[str]] = {}
        input_tokens = output_tokens = 0
        stopped = False
        for event, data in sse_events(lines):
            payload = require_dict(parse_json(data, self.name, "a stream event"), self.name, "a stream event")
            kind = payload.get("type") or event
            if kind == "message_start":
                usage = (payload.get("message") or {}).get("usage") or {}
                input_tokens = int(usage.get("input_tokens", 0))
                output_tokens = int(usage.get("output_tokens", 0))
            elif kind == "content_block_start":
                index = int(payload.get("index", 0))
                blocks[index] = dict(require_dict(payload.get("content_block"), self.name, "a content block"))
            elif kind == "content_block_delta":
                index = int(payload.get("index", 0))
                if index not in blocks:
                    raise ProviderResponseError(f"{self.name} sent a delta for unknown block {index}")
                self._apply_delta(blocks[index], partial_json, index, payload.get("delta") or {}, on_text)
            elif kind == "content_block_stop":
                index = int(payload.get("index", 0))
                if index in partial_json and index in blocks:
                    text = "".join(partial_json.pop(index))
                    blocks[index]["input"] = parse_json(text, self.name, "tool input") if text else {}
            elif kind == "message_delta":
                usage = payload.get("usage") or {}
                output_tokens = int(usage.get("output_tokens", output_tokens))
            elif kind == "message_stop":
                stopped = True
                break
            elif kind == "error":
                raise ProviderResponseError(f"{self.name} reported an error mid-stream: {payload.get('error')}")
        if not stopped:
            raise ProviderResponseError(f"{self.name} stream ended without message_stop")
        return self._reply_from([blocks[i] for i in sorted(blocks)], input_tokens, output_tokens)

    def _apply_delta(
        self,
        block: dict[str, Any],
        partial_json: dict[int, list[str]],
        index: int,
        delta: dict[str, Any],
        on_text: Callable[[str], None],
    ) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
            if delta.get("text"):
                on_text(delta["text"])
        elif kind == "input_json_delta":
            partial_json.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")

    def _reply_from(self, blocks: list[dict[str, Any]], input_tokens: int, output_tokens: int) -> ProviderReply:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in blocks:
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                if "id" not in block or "name" not in block:
                    raise ProviderResponseError(f"{self.name} tool_use block lacks id or name")
                calls.append(
                    ToolCall(block["id"], block["name"], json.dumps(block.get("input") or {}, ensure_ascii=False))
                )
        return ProviderReply(
            text="".join(texts),
            tool_calls=tuple(calls),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            opaque=tuple(native_json(b) for b in blocks),
        )

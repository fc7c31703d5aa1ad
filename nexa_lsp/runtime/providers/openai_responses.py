"""OpenAI Responses (``POST {base}/responses``), streamed over SSE.

The provider's output items (reasoning items with ``encrypted_content``, messages,
function calls) are kept verbatim on the assistant message, and the response id is kept as
its cursor. With ``store=True`` (the API's default) a later request sends
``previous_response_id`` plus only the items after that response; with ``store=False``
nothing lives on the server, so every request sends the whole conversation with the
opaque items verbatim and asks for ``reasoning.encrypted_content`` again.
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
    bearer_headers,
    native_json,
    parse_json,
    require_dict,
    sse_events,
)
from nexa_lsp.runtime.run_state import Message, ToolCall


def _items_of(message: Message) -> list[dict[str, Any]]:
    if message.role == "user":
        return [{"role": "user", "content": message.content}]
    if message.role == "tool":
        return [{"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content}]
    if message.opaque:
        return [json.loads(item) for item in message.opaque]
    items: list[dict[str, Any]] = []
    if message.content:
        items.append({"role": "assistant", "content": message.content})
    items.extend(
        {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    )
    return items


class OpenAIResponsesProvider(HttpProvider):
    """The OpenAI Responses API, keeping cursors and encrypted reasoning across turns."""

    path = "responses"

    def __init__(
        self,
        options: HttpOptions,
        name: str = "openai",
        default_model: str | None = None,
        store: bool = True,
    ) -> None:
        self.store = store
        super().__init__(options, name, default_model)

    def auth_headers(self, options: HttpOptions) -> dict[str, str]:
        return bearer_headers(options)

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        model = self.model_of(request)
        history = request.history
        previous_response_id: str | None = None
        if self.store:
            for index in range(len(history) - 1, -1, -1):
                if history[index].response_id:
                    previous_response_id = history[index].response_id
                    history = history[index + 1 :]
                    break
        body: dict[str, Any] = {"model": model}
        if request.system:
            body["instructions"] = request.system
        if previous_response_id:
            body["previous_response_id"] = previous_response_id
        body["input"] = [item for message in history for item in _items_of(message)]
        body["stream"] = True
        body["store"] = self.store
        if not self.store:
            body["include"] = ["reasoning.encrypted_content"]
        if request.tools:
            body["tools"] = [{"type": "function", **t.as_function()} for t in request.tools]
        if request.max_output_tokens is not None:
            body["max_output_tokens"] = request.max_output_tokens
        return body

    def read_stream(self, lines: Iterator[str], on_text: Callable[[str], None]) -> ProviderReply:
        for event, data in sse_events(lines):
            payload = require_dict(parse_json(data, self.name, "a stream event"), self.name, "a stream event")
            kind = payload.get("type") or event
            if kind == "response.output_text.delta":
                delta = payload.get("delta")
                if isinstance(delta, str) and delta:
                    on_text(delta)
            elif kind in ("response.completed", "response.incomplete"):
                final = require_dict(payload.get("response"), self.name, "the completed response")
                return self._reply_from(final, on_text, streamed=True)
            elif kind in ("response.failed", "error"):
                problem = payload.get("response", {}).get("error") if kind == "response.failed" else payload
                raise ProviderResponseError(f"{self.name} reported a failed response: {problem}")
        raise ProviderResponseError(f"{self.name} stream ended without response.completed")

    def read_whole(self, data: dict[str, Any], on_text: Callable[[str], None]) -> ProviderReply:
        return self._reply_from(data, on_text, streamed=False)

    def _reply_from(self, data: dict[str, Any], on_text: Callable[[str], None], streamed: bool) -> ProviderReply:
        response_id = data.get("id")
        output = data.get("output")
        if not isinstance(response_id, str) or not isinstance(output, list):
            raise ProviderResponseError(f"{self.name} response lacks id or output: {json.dumps(data)[:200]}")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for item in output:
            item = require_dict(item, self.name, "an output item")
            if item.get("type") == "message":
                texts.extend(
                    part.get("text", "") for part in item.get("content") or () if part.get("type") == "output_text"
                )
            elif item.get("type") == "function_call":
                try:
                    calls.append(ToolCall(item["call_id"], item["name"], item.get("arguments") or "{}"))
                except KeyError as exc:
                    raise ProviderResponseError(f"{self.name} function_call item lacks {exc}") from exc
        text = "".join(texts)
        if text and not streamed:
            on_text(text)
        usage = data.get("usage") or {}
        return ProviderReply(
            text=text,
            tool_calls=tuple(calls),
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
            opaque=tuple(native_json(item) for item in output),
            response_id=response_id,
        )

"""``scripted``: an offline, deterministic provider driven by a JSON script.

It is the embedded default: a run with no provider configured uses it, so examples, docs
and tests run without an account. Script format (a JSON object, or a file holding one)::

    {"replies": [
        {"text": "Looking it up.", "tool_calls": [{"name": "lookup", "arguments": {"id": 7}}]},
        {"text": "Record 7 is ...", "usage": {"input_tokens": 12, "output_tokens": 9}},
        {"error": "simulated provider failure"}
     ],
     "fallback": "Nothing more to say."}

Reply *n* answers the *n*-th model turn of the conversation (the number of assistant
messages already in history), so a resumed or continued run picks up where the script
left off and the same history always gets the same reply. Without a matching reply the
``fallback`` text is used, or else an echo of the last user input. Token usage, when
not given, is estimated as one token per four characters. ``delay`` (seconds, before the
reply) and ``chunk_delay`` (between streamed chunks) simulate a slow model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.errors import ProviderError, ProviderResponseError
from nexa_lsp.runtime.events import CancelToken
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest
from nexa_lsp.runtime.providers.http import ProviderCancelled
from nexa_lsp.runtime.run_state import ToolCall


def _estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _chunks(text: str) -> list[str]:
    """Split text into word-sized pieces (spaces kept) so streaming is visible."""
    pieces: list[str] = []
    current = ""
    for char in text:
        current += char
        if char.isspace() or len(current) >= 8:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


class ScriptedProvider:
    """Replies from a script; no network, same answer for the same history."""

    def __init__(self, script: Mapping[str, Any] | None = None, name: str = "scripted") -> None:
        self.name = name
        self.script: Mapping[str, Any] = script or {}
        replies = self.script.get("replies", [])
        if not isinstance(replies, list):
            raise ProviderResponseError("a scripted provider's `replies` must be a list")
        self.replies: list[Mapping[str, Any]] = replies

    @classmethod
    def from_file(cls, path: str | Path, name: str = "scripted") -> ScriptedProvider:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ProviderResponseError(f"cannot read the provider script {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ProviderResponseError(f"the provider script {path} must hold a JSON object")
        return cls(data, name=name)

    def close(self) -> None:
        """Nothing to release (like the HTTP providers' ``close``)."""

    def complete(self, request: ProviderRequest, on_text: Callable[[str], None], cancel: CancelToken) -> ProviderReply:
        turn = sum(1 for m in request.history if m.role == "assistant")
        entry: Mapping[str, Any]
        if turn < len(self.replies):
            entry = self.replies[turn]
        else:
            last_user = next((m.content for m in reversed(request.history) if m.role == "user"), "")
            entry = {"text": self.script.get("fallback") or f"(scripted reply to: {last_user})"}
        delay = float(entry.get("delay", self.script.get("delay", 0.0)))
        if delay and cancel.wait(delay):
            raise ProviderCancelled()
        if "error" in entry:
            raise ProviderError(f"scripted provider failure: {entry['error']}")
        text = str(entry.get("text", ""))
        chunk_delay = float(entry.get("chunk_delay", self.script.get("chunk_delay", 0.0)))
        for piece in _chunks(text):
            if cancel.cancelled or (chunk_delay and cancel.wait(chunk_delay)):
                raise ProviderCancelled()
            on_text(piece)
        calls = tuple(
            ToolCall(
                str(call.get("id") or f"call_{turn}_{index}"),
                str(call["name"]),
                call["arguments"]
                if isinstance(call.get("arguments"), str)
                else json.dumps(call.get("arguments") or {}, ensure_ascii=False),
            )
            for index, call in enumerate(entry.get("tool_calls") or ())
        )
        usage = entry.get("usage") or {}
        prompt_text = request.system + "".join(m.content for m in request.history)
        return ProviderReply(
            text=text,
            tool_calls=calls,
            input_tokens=int(usage.get("input_tokens", _estimate_tokens(prompt_text))),
            output_tokens=int(usage.get("output_tokens", _estimate_tokens(text))),
        )

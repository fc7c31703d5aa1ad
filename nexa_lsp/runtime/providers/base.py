"""What every provider receives and returns, independent of its wire protocol."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from nexa_lsp.runtime.errors import ProviderConfigError
from nexa_lsp.runtime.events import CancelToken
from nexa_lsp.runtime.run_state import Message, ToolCall


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def as_function(self) -> dict[str, Any]:
        """The tool as the OpenAI protocols' function declaration (name, description, JSON schema)."""
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}


@dataclass(frozen=True)
class ProviderRequest:
    """One model turn: the system prompt, the whole conversation so far and the tools.

    ``model`` is the model id to send (without a ``provider/`` prefix), or ``None`` for the
    provider's default model.
    """

    system: str
    history: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    model: str | None
    max_output_tokens: int | None = None
    run_id: str = ""


@dataclass(frozen=True)
class ProviderReply:
    """The model's answer: text, tool calls, token usage, and native items kept verbatim."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    opaque: tuple[str, ...] = ()
    response_id: str | None = None


@runtime_checkable
class Provider(Protocol):
    """A model endpoint. ``name`` is recorded in the run's fingerprint."""

    name: str

    def complete(self, request: ProviderRequest, on_text: Callable[[str], None], cancel: CancelToken) -> ProviderReply:
        """Answer one turn, calling ``on_text`` with each text delta as it arrives."""
        ...


def missing_model_error(provider: str) -> ProviderConfigError:
    return ProviderConfigError(
        f"provider {provider!r} needs a model: set `model` on the agent, --model, or MODEL in a .nxs file"
    )

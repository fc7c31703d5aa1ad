"""One model turn: the provider is called on a helper thread so that cancellation and the
deadline stop a run promptly even while a model is slow to answer; text deltas are
delivered on the run's thread, in order."""

from __future__ import annotations

import queue
import re
import threading
from dataclasses import replace
from typing import Any

from nexa_lsp.runtime.errors import RUN_CANCELLED, ProviderResponseError
from nexa_lsp.runtime.events import CancelToken, TextDelta
from nexa_lsp.runtime.providers import split_model_id
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest, ToolSpec
from nexa_lsp.runtime.providers.http import ProviderCancelled
from nexa_lsp.runtime.run_loop.context import RunContext
from nexa_lsp.runtime.run_state import RunError, RunState, RunStatus, ToolCall

PROVIDER_POLL_SECONDS = 0.02
#: Not Nexa syntax: lone surrogates in model text, which JSON cannot encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (invalid Unicode a provider may send) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def ask_model(context: RunContext, state: RunState) -> tuple[ProviderReply, str]:
    """The provider's reply to the run's history, and the text streamed while it answered."""
    _provider, model = split_model_id(state.config.model, state.config.provider)
    request = ProviderRequest(
        system=context.system_prompt,
        history=state.history,
        tools=tuple(ToolSpec(t.name, t.description, t.parameters) for t in context.tools),
        model=model,
        max_output_tokens=state.config.max_output_tokens,
        run_id=state.run_id,
    )
    messages: queue.Queue[tuple[str, Any]] = queue.Queue()
    inner = CancelToken()
    provider = context.provider

    def call_provider() -> None:
        try:
            reply = provider.complete(request, lambda text: messages.put(("text", text)), inner)
            messages.put(("done", reply))
        except BaseException as exc:  # handed to the run's thread
            messages.put(("error", exc))

    threading.Thread(target=call_provider, name=f"nexa-provider-{state.run_id}", daemon=True).start()
    streamed: list[str] = []
    try:
        while True:
            context.check_interrupts(state, streamed)
            try:
                kind, value = messages.get(timeout=PROVIDER_POLL_SECONDS)
            except queue.Empty:
                continue
            if kind == "text":
                value = clean_text(value)
                streamed.append(value)
                if context.on_text is not None:
                    context.on_text(value)
                context.emit(TextDelta(state.run_id, value))
            elif kind == "done":
                return value, "".join(streamed)
            elif isinstance(value, ProviderCancelled):
                raise context.stop(
                    state.evolve(output="".join(streamed)),
                    RunStatus.CANCELLED,
                    RunError(RUN_CANCELLED, "cancelled by the user"),
                )
            else:
                raise value
    finally:
        inner.cancel("run stopped")


def with_unique_call_ids(context: RunContext, state: RunState, reply: ProviderReply) -> ProviderReply:
    """Tool call ids unique within the run (the journal and approvals are keyed by them), and
    text without lone surrogates (so output can be printed, sent and stored).

    Some endpoints reuse ids such as ``call_0`` on every turn; a reused id would find the
    earlier call's journal entry and get its old result instead of running. Ids are
    renamed when the reply carries no native items (they would repeat the old id); a
    reply with native items and a reused id is refused as malformed.
    """
    seen = {c.call_id for m in state.history if m.run_id == state.run_id for c in m.tool_calls}
    seen.update(e.call_id for e in state.journal)
    seen.update(a.call_id for a in state.approvals)
    calls: list[ToolCall] = []
    renamed = False
    for call in reply.tool_calls:
        if clean_text(call.name + call.arguments) != call.name + call.arguments:
            call = replace(call, name=clean_text(call.name), arguments=clean_text(call.arguments))
            renamed = True
        call_id = call.call_id
        if call_id in seen or not call_id:
            if reply.opaque or reply.response_id:
                raise ProviderResponseError(
                    f"{context.provider.name} sent tool call id {call_id!r} that this run already used; "
                    "the answer cannot be matched to its results"
                )
            number = 2
            while f"{call_id or 'call'}~{number}" in seen:
                number += 1
            call_id = f"{call_id or 'call'}~{number}"
            call = replace(call, call_id=call_id)
            renamed = True
        seen.add(call_id)
        calls.append(call)
    text = clean_text(reply.text)
    if renamed or text is not reply.text:
        return replace(reply, text=text, tool_calls=tuple(calls))
    return reply

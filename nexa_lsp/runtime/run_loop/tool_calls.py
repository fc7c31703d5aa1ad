"""Executing one tool call under the write-ahead journal.

Before a tool runs, a journal entry ``started`` is saved; after it returns the entry
becomes ``completed`` or ``failed`` together with the result. A call whose entry is
already settled is answered from the journal and never runs again; one still
``started`` is an unknown outcome (the process died in between) and stops the run.
Calls to unknown tools and calls with arguments that do not fit are answered with an
error for the model and not executed. A result larger than the run's artifact threshold
goes to an artifact file and history keeps a preview.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from nexa_lsp.runtime.artifacts import artifact_reference, write_artifact
from nexa_lsp.runtime.errors import TOOL_FAILED, UnknownToolOutcomeError
from nexa_lsp.runtime.events import ToolCallFinished, ToolCallStarted
from nexa_lsp.runtime.run_loop.approvals import approval_gate
from nexa_lsp.runtime.run_loop.context import RunContext
from nexa_lsp.runtime.run_state import (
    DEFAULT_ARTIFACT_THRESHOLD,
    JournalEntry,
    Message,
    RunError,
    RunState,
    RunStatus,
    ToolCall,
)
from nexa_lsp.runtime.tool_process import ToolRaised
from nexa_lsp.runtime.tools import calling_in

ARGUMENTS_SHOWN = 600
"""Characters of a tool's parameter schema quoted back to a model that got them wrong."""


def answered(state: RunState, call: ToolCall, content: str, is_error: bool, artifact: str | None = None) -> RunState:
    """``state`` with the tool result message that answers ``call``."""
    message = Message(
        role="tool",
        content=content,
        tool_call_id=call.call_id,
        tool_name=call.name,
        is_error=is_error,
        artifact=artifact,
        run_id=state.run_id,
    )
    return state.evolve(history=(*state.history, message))


def _rejection(context: RunContext, state: RunState, call: ToolCall) -> tuple[str, dict[str, object]]:
    """Why ``call`` cannot be executed at all (``""`` when it can), and its parsed arguments."""
    tool = context.tool_named(call.name)
    if tool is None:
        known = ", ".join(t.name for t in context.tools) or "none"
        return f"Error: no tool named {call.name!r} (tools: {known}).", {}
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        return f"Error: the arguments of {call.name} are not a JSON object.", {}
    problem = tool.argument_problem(arguments)
    if problem is not None:
        expected = json.dumps(dict(tool.parameters), ensure_ascii=False)[:ARGUMENTS_SHOWN]
        return (
            f"Error: invalid arguments for {call.name}: {problem}; it was not executed. Its parameters: {expected}",
            {},
        )
    return "", arguments


def handle_call(context: RunContext, state: RunState, call: ToolCall) -> RunState:
    """Answer ``call``: from the journal, with an error, after the approval gate, or by running it."""
    entry = state.journal_entry(call.call_id)
    if entry is not None:
        if entry.status == "started":
            raise UnknownToolOutcomeError(f"call {call.call_id} has an unknown outcome", (call.call_id,))
        # already executed, denied or recovered: its saved result answers it; never run it again
        content = entry.result or entry.status
        return context.save(answered(state, call, content, entry.status != "completed", entry.artifact))
    rejection, arguments = _rejection(context, state, call)
    if rejection:
        return context.save(answered(state, call, rejection, True))
    tool = context.tool_named(call.name)
    assert tool is not None  # checked by _rejection
    if tool.approval_required:
        state, denial = approval_gate(context, state, call)
        if denial is not None:
            return context.save(answered(state, call, denial, True))
    context.check_budget(state, state.config.tool_call_budget, state.usage.tool_calls, "tool-call")
    started = JournalEntry(call.call_id, call.name, call.arguments, "started", time.time())
    state = context.save(state.with_journal(started).evolve(usage=state.usage.plus(tool_calls=1)))
    context.emit(ToolCallStarted(state.run_id, call.call_id, call.name))
    failed = False
    try:
        with calling_in(state.config.working_directory):
            result = tool.call(arguments)
    except Exception as exc:  # the tool's own failure: recorded, then the run fails
        failed = True
        kind = exc.type_name if isinstance(exc, ToolRaised) else type(exc).__name__
        result = f"Tool {call.name} failed: {kind}: {exc}"
    artifact: str | None = None
    content = result
    threshold = state.config.artifact_threshold or DEFAULT_ARTIFACT_THRESHOLD
    if len(result.encode("utf-8")) > threshold and state.config.artifact_directory:
        artifact = write_artifact(state.config.artifact_directory, state.run_id, call.call_id, result)
        content = artifact_reference(artifact, result)
    finished = replace(
        started,
        status="failed" if failed else "completed",
        finished_at=time.time(),
        result=content,
        artifact=artifact,
    )
    state = context.save(answered(state.with_journal(finished), call, content, failed, artifact))
    context.emit(ToolCallFinished(state.run_id, call.call_id, call.name, finished.status, content[:200]))
    if failed:
        raise context.stop(state, RunStatus.FAILED, RunError(TOOL_FAILED, result))
    return state

"""The full view of one run, as a run panel shows it (pure; JSON-ready plain data).

``run_details`` turns a run's ``RunView`` (stored state, live or not, the actions accepted
now) plus what only the server knows while the run streams (the text so far, the current
activity) and the runs of its session into the ``RunDetails`` object of docs/commands.md:
status, conversation of this turn, every tool call with arguments, result and approval
state, usage against the budget, the session chain and the actions that apply.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nexa_lsp.ide.runs import RunView
from nexa_lsp.runtime.run_state import Approval, JournalEntry, Message, RunState
from nexa_lsp.runtime.summary import iso_time

#: Characters of a tool result or message kept in the details (the transcript has it all).
TEXT_LIMIT = 20_000


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_LIMIT:
        return text
    return text[:TEXT_LIMIT] + f"… ({len(text) - TEXT_LIMIT} more characters in the transcript)"


def _tool_status(entry: JournalEntry | None, approval: Approval | None, answered: bool, live: bool) -> str:
    """``requested`` / ``waiting_approval`` / ``denied`` / ``running`` / ``unknown`` /
    ``completed`` / ``failed`` / ``not_executed`` / ``answered`` (closed without running)."""
    if entry is not None:
        if entry.status == "started":
            return "running" if live else "unknown"
        return entry.status
    if approval is not None and approval.status == "pending":
        return "waiting_approval"
    if approval is not None and approval.status == "denied":
        return "denied"
    return "answered" if answered else "requested"


def _approval(approval: Approval | None) -> dict[str, Any] | None:
    if approval is None:
        return None
    return {
        "status": approval.status,
        "requested_at": iso_time(approval.requested_at),
        "decided_by": approval.decided_by,
        "decided_at": None if approval.decided_at is None else iso_time(approval.decided_at),
        "reason": approval.reason,
    }


def _tool_calls(state: RunState, turn: tuple[Message, ...], live: bool) -> list[dict[str, Any]]:
    answers = {m.tool_call_id: m for m in turn if m.role == "tool" and m.tool_call_id}
    calls: list[dict[str, Any]] = []
    for message in turn:
        for call in message.tool_calls:
            entry = state.journal_entry(call.call_id)
            approval = state.approval_for(call.call_id)
            answer = answers.get(call.call_id)
            result = entry.result if entry is not None and entry.result is not None else None
            if result is None and answer is not None:
                result = answer.content
            calls.append(
                {
                    "call_id": call.call_id,
                    "tool": call.name,
                    "arguments": call.arguments,
                    "status": _tool_status(entry, approval, answer is not None, live),
                    "result": _clip(result),
                    "approval": _approval(approval),
                    "recovered_by": None if entry is None else entry.recovered_by,
                }
            )
    return calls


def _budget(state: RunState, now: float) -> dict[str, Any]:
    config = state.config
    usage = state.usage
    return {
        "token_budget": config.token_budget,
        "tokens_left": None if config.token_budget is None else max(0, config.token_budget - usage.total_tokens),
        "tool_call_budget": config.tool_call_budget,
        "tool_calls_left": (
            None if config.tool_call_budget is None else max(0, config.tool_call_budget - usage.tool_calls)
        ),
        "timeout": config.timeout,
        "deadline": None if state.deadline is None else iso_time(state.deadline),
        "seconds_left": None if state.deadline is None or state.settled else round(max(0.0, state.deadline - now), 1),
    }


def _chain(state: RunState, session: Iterable[RunState]) -> list[dict[str, Any]]:
    runs = {s.run_id: s for s in session}
    runs[state.run_id] = state
    ordered = sorted(runs.values(), key=lambda s: (s.started_at, s.updated_at))
    return [
        {
            "run_id": s.run_id,
            "status": s.status.value,
            "input": s.input,
            "parent_run_id": s.parent_run_id,
            "started_at": iso_time(s.started_at),
            "current": s.run_id == state.run_id,
        }
        for s in ordered
    ]


def run_details(
    view: RunView,
    *,
    streaming: str = "",
    activity: str = "",
    session: Iterable[RunState] = (),
    now: float,
) -> dict[str, Any]:
    """``RunDetails`` of ``view`` (see the module docstring); ``streaming`` and ``activity``
    are the live run's text so far and what it does now (empty when it is not live)."""
    state = view.state
    turn = state.history[state.turn_start :]
    return {
        "run_id": state.run_id,
        "agent": state.agent,
        "status": "running" if view.live else state.status.value,
        "live": view.live,
        "driven_elsewhere": view.elsewhere,
        "source": state.metadata.source,
        "session_id": state.session_id,
        "parent_run_id": state.parent_run_id,
        "started_at": iso_time(state.started_at),
        "updated_at": iso_time(state.updated_at or state.started_at),
        "input": state.input,
        "output": _clip(state.output),
        "streaming": _clip(streaming) if view.live else "",
        "activity": activity if view.live else "",
        "error": None if state.error is None else {"code": state.error.code, "message": state.error.message},
        "messages": [
            {
                "role": m.role,
                "content": _clip(m.content),
                "tool_call_id": m.tool_call_id,
                "tool_name": m.tool_name,
                "is_error": m.is_error,
            }
            for m in turn
        ],
        "tool_calls": _tool_calls(state, turn, view.live),
        "usage": {
            "input_tokens": state.usage.input_tokens,
            "output_tokens": state.usage.output_tokens,
            "total_tokens": state.usage.total_tokens,
            "tool_calls": state.usage.tool_calls,
        },
        "budget": _budget(state, now),
        "chain": _chain(state, session),
        "actions": list(view.actions),
        "refused": [{"action": action, "reason": reason} for action, reason in view.refused.items()],
    }

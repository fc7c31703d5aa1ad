"""Decisions on stored runs: approve, deny, recover an unknown tool outcome, cancel.

Each returns a new ``RunState`` (save it); none of them runs anything. After approving
or denying every pending call, ``agent.execute(state=...)`` resumes the run.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Literal

from nexa_lsp.runtime.errors import (
    RUN_CANCELLED,
    ApprovalNotPendingError,
    RecoveryNotNeededError,
    RunNotCancellableError,
)
from nexa_lsp.runtime.run_state import RunError, RunState, RunStatus


def _decide(
    state: RunState, call_id: str, status: Literal["approved", "denied"], by: str, reason: str | None
) -> RunState:
    approval = state.approval_for(call_id)
    if approval is None or approval.status != "pending":
        pending = ", ".join(a.call_id for a in state.pending_approvals) or "none"
        raise ApprovalNotPendingError(
            f"run {state.run_id} has no pending approval for call {call_id!r} (pending: {pending})"
        )
    decided = replace(approval, status=status, decided_by=by, decided_at=time.time(), reason=reason)
    return state.with_approval(decided)


def approve(state: RunState, call_id: str, by: str = "user", reason: str | None = None) -> RunState:
    """Record that ``by`` approved tool call ``call_id``; the call runs when the run resumes."""
    return _decide(state, call_id, "approved", by, reason)


def deny(state: RunState, call_id: str, by: str = "user", reason: str | None = None) -> RunState:
    """Record that ``by`` denied tool call ``call_id``; the model is told it was not executed."""
    return _decide(state, call_id, "denied", by, reason)


def recover_tool_call(
    state: RunState,
    call_id: str,
    outcome: Literal["completed", "not_executed"],
    result: str | None = None,
    by: str = "user",
) -> RunState:
    """Resolve an unknown tool outcome: the call did complete (with ``result``) or never ran.

    Nothing is executed: a completed call's ``result`` goes into history as its result, a
    not-executed call gets a result saying so. Then the run can be resumed or continued.
    """
    entry = state.journal_entry(call_id)
    if entry is None or entry.status != "started":
        unknown = ", ".join(e.call_id for e in state.unknown_outcomes) or "none"
        raise RecoveryNotNeededError(
            f"run {state.run_id} has no unknown outcome for call {call_id!r} (unknown: {unknown})"
        )
    if outcome not in ("completed", "not_executed"):
        raise ValueError("outcome must be 'completed' or 'not_executed'")
    if outcome == "completed":
        text = result if result is not None else "(completed; result not recorded)"
    else:
        text = f"Tool call to {entry.tool} was not executed (recovered by {by} after an interruption)."
    resolved = replace(entry, status=outcome, finished_at=time.time(), result=text, recovered_by=by)
    return state.with_journal(resolved)


def cancel_run(state: RunState, reason: str = "cancelled by the user", by: str = "user") -> RunState:
    """Cancel a stored run that is running (interrupted) or waiting for approval.

    Pending approvals are recorded as denied by the cancellation. A run being driven right
    now is cancelled with its ``CancelToken`` instead.
    """
    if state.settled:
        raise RunNotCancellableError(
            f"run {state.run_id} is already {state.status.value}; only running or approval-waiting runs cancel"
        )
    for approval in state.pending_approvals:
        state = state.with_approval(
            replace(approval, status="denied", decided_by=by, decided_at=time.time(), reason="run cancelled")
        )
    return state.evolve(status=RunStatus.CANCELLED, error=RunError(RUN_CANCELLED, reason))

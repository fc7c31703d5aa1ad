"""The approval gate: an approval-required tool runs only after a person approved the call.

The first time such a call comes up, a pending approval is saved and the run stops in
``waiting_approval``; ``control.approve`` / ``control.deny`` record the decision and a
resume comes back here. A denied call is journalled as ``not_executed`` and the model is
told who denied it. An approval never carries over to another run.
"""

from __future__ import annotations

import time

from nexa_lsp.runtime.events import ApprovalNeeded
from nexa_lsp.runtime.run_loop.context import RunContext
from nexa_lsp.runtime.run_state import Approval, JournalEntry, RunState, RunStatus, ToolCall


def denial_text(call: ToolCall, approval: Approval) -> str:
    who = approval.decided_by or "user"
    reason = f": {approval.reason}" if approval.reason else ""
    return f"Tool call to {call.name} was denied by {who}{reason}; it was not executed."


def approval_gate(context: RunContext, state: RunState, call: ToolCall) -> tuple[RunState, str | None]:
    """Pass ``call`` (approved), or stop the run to wait for a decision, or - denied - return
    the state with the denial journalled and the text that answers the call."""
    approval = state.approval_for(call.call_id)
    if approval is None or approval.status == "pending":
        if approval is None:
            approval = Approval(call.call_id, call.name, call.arguments, "pending", time.time())
            state = state.with_approval(approval)
        context.emit(ApprovalNeeded(state.run_id, call.call_id, call.name, call.arguments))
        raise context.stop(state, RunStatus.WAITING_APPROVAL, None)
    if approval.status == "denied":
        text = denial_text(call, approval)
        now = time.time()
        entry = JournalEntry(call.call_id, call.name, call.arguments, "not_executed", now, now, text)
        return state.with_journal(entry), text
    return state, None

"""``RunSummary``: the compact view of a run that listings and the language server show."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from nexa_lsp.runtime.continuation import valid_actions
from nexa_lsp.runtime.run_state import RunState, RunStatus, Usage


def iso_time(timestamp: float) -> str:
    """UTC ISO 8601 with a ``Z``, to the second."""
    moment = _dt.datetime.fromtimestamp(timestamp, tz=_dt.UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    agent: str
    status: str
    session_id: str
    parent_run_id: str | None
    started_at: float
    updated_at: float
    pending_approvals: tuple[tuple[str, str], ...]
    unknown_outcomes: tuple[tuple[str, str], ...]
    usage: Usage
    actions: tuple[str, ...]
    input: str
    output: str
    error: str | None

    @classmethod
    def of(cls, state: RunState) -> RunSummary:
        pending = (
            tuple((a.call_id, a.tool) for a in state.pending_approvals)
            if state.status is RunStatus.WAITING_APPROVAL
            else ()
        )
        return cls(
            run_id=state.run_id,
            agent=state.agent,
            status=state.status.value,
            session_id=state.session_id,
            parent_run_id=state.parent_run_id,
            started_at=state.started_at,
            updated_at=state.updated_at or state.started_at,
            pending_approvals=pending,
            unknown_outcomes=tuple((e.call_id, e.tool) for e in state.unknown_outcomes),
            usage=state.usage,
            actions=tuple(valid_actions(state)),
            input=state.input,
            output=state.output,
            error=None if state.error is None else f"{state.error.code}: {state.error.message}",
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``RunSummary`` in docs/commands.md."""
        return {
            "run_id": self.run_id,
            "agent": self.agent,
            "status": self.status,
            "session_id": self.session_id,
            "parent_run_id": self.parent_run_id,
            "started_at": iso_time(self.started_at),
            "updated_at": iso_time(self.updated_at),
            "pending_approvals": [{"call_id": c, "tool": t} for c, t in self.pending_approvals],
            "unknown_outcomes": [{"call_id": c, "tool": t} for c, t in self.unknown_outcomes],
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "tool_calls": self.usage.tool_calls,
            },
            "actions": list(self.actions),
        }

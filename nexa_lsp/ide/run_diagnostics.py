"""Run-aware diagnostics (NX201-NX204) of one Nexa document (pure), from its agent views."""

from __future__ import annotations

from collections.abc import Sequence

from nexa_lsp.analysis.run_codes import (
    RUN_CODES,
    RUN_DEFINITION_DRIFT,
    RUN_RUNNING,
    RUN_UNKNOWN_OUTCOME,
    RUN_WAITING_APPROVAL,
)
from nexa_lsp.ide.runs import AgentView, RunView
from nexa_lsp.runtime.continuation import Drift
from nexa_lsp.runtime.errors import DefinitionDriftError
from nexa_lsp.runtime.run_state import RunStatus
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic

#: What a drifted part of an agent is called in a declaration (for the diagnostic's range).
_DRIFT_PROPERTY = {"model": ("model",), "prompt": ("prompt", "role"), "provider": ("provider", "model")}


# --- run-aware diagnostics ----------------------------------------------------------------


def _diagnostic(code: str, message: str, span: t.Span, run: RunView, agent: str) -> Diagnostic:
    return Diagnostic(
        code=code,
        message=message,
        span=span,
        severity=RUN_CODES[code].severity,
        data={"run_id": run.run_id, "agent": agent, "actions": list(run.actions)},
    )


def _drift_span(decl: t.AgentDecl, drift: Sequence[Drift]) -> t.Span:
    for item in drift:
        for key in _DRIFT_PROPERTY.get(item.part, ()):
            prop = decl.get_property(key)
            if prop is not None:
                return prop.span
    return decl.name_span


def _verb(action: str) -> str:
    return {"continue": "continuing", "resume": "resuming", "approve": "approving", "deny": "denying"}.get(
        action, action
    )


def run_diagnostics(views: Sequence[AgentView], *, enabled: bool = True) -> list[Diagnostic]:
    """NX201 waiting for approval, NX202 running or interrupted, NX204 unknown tool outcome
    (one per such run), and NX203 drift against the newest run that could otherwise be
    resumed or continued (one per agent)."""
    if not enabled:
        return []
    found: list[Diagnostic] = []
    for view in views:
        name_span = view.decl.name_span
        drift_reported = False
        for run in view.runs:
            state = run.state
            if state.status is RunStatus.WAITING_APPROVAL:
                calls = ", ".join(f"{a.tool} ({a.call_id})" for a in state.pending_approvals) or "a tool call"
                found.append(
                    _diagnostic(
                        RUN_WAITING_APPROVAL,
                        f"run {state.run_id} of {view.name} waits for approval of {calls}: approve or deny it",
                        name_span,
                        run,
                        view.name,
                    )
                )
            elif state.status is RunStatus.RUNNING:
                if run.live:
                    what = "is running"
                elif run.elsewhere:
                    what = f"is running in {run.elsewhere}"
                else:
                    what = "was interrupted while running: resume or cancel it"
                found.append(
                    _diagnostic(RUN_RUNNING, f"run {state.run_id} of {view.name} {what}", name_span, run, view.name)
                )
            if state.unknown_outcomes and not run.live and not run.elsewhere:  # a tool running now is not unknown
                calls = ", ".join(f"{e.tool} ({e.call_id})" for e in state.unknown_outcomes)
                found.append(
                    _diagnostic(
                        RUN_UNKNOWN_OUTCOME,
                        f"run {state.run_id} of {view.name} has tool calls whose outcome is unknown: {calls}. "
                        "They started but their end was never recorded; find out whether they ran, "
                        "then recover each (completed with its result, or not executed)",
                        name_span,
                        run,
                        view.name,
                    )
                )
            if drift_reported or not run.drift:
                continue
            drift_refusals = [
                (action, reason)
                for action, reason in run.refused.items()
                if action in ("continue", "resume", "approve", "deny") and _is_drift_reason(reason)
            ]
            if not drift_refusals:
                continue
            action, reason = drift_refusals[0]
            changed = "; ".join(d.describe() for d in run.drift)
            found.append(
                _diagnostic(
                    RUN_DEFINITION_DRIFT,
                    f"agent {view.name} changed since run {state.run_id} ({changed}): "
                    f"{_verb(action)} that run would be refused - {reason}",
                    _drift_span(view.decl, run.drift),
                    run,
                    view.name,
                )
            )
            drift_reported = True
    return found


_DRIFT_CODES = tuple(
    cls.code
    for cls in DefinitionDriftError.__subclasses__()  # NXR004-NXR007
)


def _is_drift_reason(reason: str) -> bool:
    return reason.startswith(_DRIFT_CODES)

"""Checks before continuing or resuming a run, definition drift, and the actions a run allows.

Everything here is pure (it reads states and fingerprints, never changes or saves them),
so a language server can call it for any stored run to decide what to offer. The checks
compare a stored run's ``AgentFingerprint`` with the fingerprint the next turn or the
resume would have (``blockers_for_fingerprint``, ``resume_blockers_for_fingerprint``,
``fingerprint_drift``); ``continuation_blockers``, ``resume_blockers`` and
``definition_drift`` compute that fingerprint from an agent first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from nexa_lsp.runtime.errors import (
    AgentDefinitionMismatchError,
    ApprovalPendingError,
    ContinuationError,
    EmptyInputError,
    ModelMismatchError,
    ProviderMismatchError,
    RunAlreadySettledError,
    RunNotSettledError,
    UnknownToolOutcomeError,
    WorkingDirectoryMismatchError,
)
from nexa_lsp.runtime.run_state import AgentFingerprint, Message, RunConfig, RunState, RunStatus

if TYPE_CHECKING:  # the providers package loads httpx; the checks only name the type
    from nexa_lsp.runtime.providers.base import Provider


class FingerprintSource(Protocol):
    """What the checks need from an agent (``NexaAgent`` is one): the configuration a
    continuation or a resume would run with, and the fingerprint under a configuration."""

    def fingerprint(self, config: RunConfig) -> AgentFingerprint: ...

    def continuation_config(
        self, previous: RunState, config: RunConfig | None, provider: str | Provider | None = None
    ) -> RunConfig: ...

    def resume_config(self, state: RunState, provider: str | Provider | None = None) -> RunConfig: ...


ACTION_ORDER = ("resume", "approve", "deny", "cancel", "continue", "recover", "show")


@dataclass(frozen=True)
class Drift:
    """One difference between a stored run's fingerprint and the agent as it is now.

    ``part`` is one of ``agent``, ``prompt``, ``tools``, ``model``, ``provider``,
    ``working_directory``.
    """

    part: str
    previous: str | None
    current: str | None

    def describe(self) -> str:
        if self.part in ("prompt", "tools") and self.previous and self.current and len(self.previous) == 64:
            return f"{self.part} changed"
        return f"{self.part} changed from {self.previous!r} to {self.current!r}"


def fingerprint_drift(previous: AgentFingerprint, current: AgentFingerprint) -> list[Drift]:
    """What differs between two fingerprints, named part by part."""
    drift: list[Drift] = []
    if previous.agent != current.agent:
        drift.append(Drift("agent", previous.agent, current.agent))
    if previous.prompt != current.prompt:
        drift.append(Drift("prompt", previous.prompt, current.prompt))
    if previous.tools != current.tools:
        drift.append(
            Drift("tools", ", ".join(previous.tool_names) or "(none)", ", ".join(current.tool_names) or "(none)")
        )
    if previous.definition != current.definition and not drift:
        drift.append(Drift("agent", previous.definition, current.definition))
    if previous.model != current.model:
        drift.append(Drift("model", previous.model, current.model))
    if previous.provider != current.provider:
        drift.append(Drift("provider", previous.provider, current.provider))
    if previous.working_directory != current.working_directory:
        drift.append(Drift("working_directory", previous.working_directory, current.working_directory))
    return drift


def definition_drift(
    state: RunState,
    agent: FingerprintSource,
    config: RunConfig | None = None,
    provider: str | Provider | None = None,
) -> list[Drift]:
    """How ``agent`` (with ``config``/``provider`` overrides) differs from the one that made ``state``."""
    resolved = agent.continuation_config(state, config, provider)
    return fingerprint_drift(state.fingerprint, agent.fingerprint(resolved))


def _drift_errors(state: RunState, drift: list[Drift]) -> list[ContinuationError]:
    errors: list[ContinuationError] = []
    definition = [d for d in drift if d.part in ("agent", "prompt", "tools")]
    if definition:
        errors.append(
            AgentDefinitionMismatchError(
                f"agent {state.agent!r} is not defined as it was for run {state.run_id} "
                f"({'; '.join(d.describe() for d in definition)}); restore the earlier definition, "
                "or start a new conversation with execute()"
            )
        )
    for item in drift:
        if item.part == "model":
            errors.append(
                ModelMismatchError(
                    f"run {state.run_id} used model {item.previous!r} "
                    f"but this turn would use {item.current!r}; "
                    "continue with the same model, or start a new conversation with execute()"
                )
            )
        elif item.part == "provider":
            errors.append(
                ProviderMismatchError(
                    f"run {state.run_id} used provider {item.previous!r} but this turn would use "
                    f"{item.current!r}; continue with the same provider, or start a new conversation"
                )
            )
        elif item.part == "working_directory":
            errors.append(
                WorkingDirectoryMismatchError(
                    f"run {state.run_id} ran in {item.previous} but this turn would run in {item.current}; "
                    "continue from the same working directory (or pass it in the config)"
                )
            )
    return errors


def _unknown_outcome_error(state: RunState, verb: str) -> UnknownToolOutcomeError:
    calls = ", ".join(f"{e.call_id} ({e.tool})" for e in state.unknown_outcomes)
    return UnknownToolOutcomeError(
        f"run {state.run_id} has tool call(s) whose outcome is unknown: {calls}. "
        "They started but their end was never recorded, so they may or may not have run. "
        "Check what happened, then recover each with "
        f"recover_tool_call(state, call_id, 'completed', result=...) or 'not_executed' "
        f"(CLI: nexa-lsp runs recover {state.run_id} CALL_ID --completed RESULT | --not-executed) "
        f"before you {verb}",
        tuple(e.call_id for e in state.unknown_outcomes),
    )


def continuation_blockers(
    previous: RunState,
    agent: FingerprintSource,
    input: str,
    config: RunConfig | None = None,
    provider: str | Provider | None = None,
) -> list[ContinuationError]:
    """Every reason ``agent.continue_run(previous, input, config=config)`` would be refused, in order."""
    resolved = agent.continuation_config(previous, config, provider)
    return blockers_for_fingerprint(previous, input, agent.fingerprint(resolved))


def blockers_for_fingerprint(previous: RunState, input: str, current: AgentFingerprint) -> list[ContinuationError]:
    """``continuation_blockers`` for an already computed fingerprint of the next turn."""
    blockers: list[ContinuationError] = []
    if previous.unknown_outcomes:
        blockers.append(_unknown_outcome_error(previous, "continue"))
    if not previous.settled:
        what = "is waiting for approval" if previous.status is RunStatus.WAITING_APPROVAL else "is still running"
        blockers.append(
            RunNotSettledError(
                f"run {previous.run_id} {what}; resume it (execute(state=...)) or cancel it before continuing"
            )
        )
    if not input.strip():
        blockers.append(EmptyInputError("the continuation input is empty; pass the next task or question"))
    blockers.extend(_drift_errors(previous, fingerprint_drift(previous.fingerprint, current)))
    return blockers


def resume_blockers(
    state: RunState, agent: FingerprintSource, provider: str | Provider | None = None
) -> list[ContinuationError]:
    """Every reason ``agent.execute(state=state)`` would be refused, in order."""
    return resume_blockers_for_fingerprint(state, agent.fingerprint(agent.resume_config(state, provider)))


def resume_blockers_for_fingerprint(state: RunState, current: AgentFingerprint) -> list[ContinuationError]:
    """``resume_blockers`` for an already computed fingerprint of the resumed run."""
    blockers: list[ContinuationError] = []
    if state.settled:
        blockers.append(
            RunAlreadySettledError(
                f"run {state.run_id} is {state.status.value}; only running or approval-waiting runs resume. "
                "Start a new turn with continue_run(previous, 'next input')"
            )
        )
    if state.unknown_outcomes:
        blockers.append(_unknown_outcome_error(state, "resume"))
    if state.pending_approvals:
        calls = ", ".join(f"{a.call_id} ({a.tool})" for a in state.pending_approvals)
        blockers.append(
            ApprovalPendingError(f"run {state.run_id} waits for approval of {calls}; approve or deny each first")
        )
    blockers.extend(_drift_errors(state, fingerprint_drift(state.fingerprint, current)))
    return blockers


def valid_actions(state: RunState) -> list[str]:
    """The actions the runtime would accept for ``state``, in a stable order.

    ``continue`` still needs a nonempty input and a matching agent (see
    ``continuation_blockers``); those depend on the caller, not on the stored run.
    """
    actions = {"show"}
    unknown = bool(state.unknown_outcomes)
    if unknown:
        actions.add("recover")
    if state.status is RunStatus.WAITING_APPROVAL and state.pending_approvals:
        actions.update(("approve", "deny"))
    elif not state.settled and not unknown:
        actions.add("resume")
    if not state.settled:
        actions.add("cancel")
    elif not unknown:
        actions.add("continue")
    return [a for a in ACTION_ORDER if a in actions]


def cancellation_result(state: RunState, tool: str) -> str:
    return f"Tool call to {tool} was not executed: run {state.run_id} ended ({state.status.value}) before it started."


def closed_history(state: RunState) -> tuple[Message, ...]:
    """History where every tool call has its result, for the next turn.

    Results come from the journal (completed, failed, recovered or denied calls; nothing is
    executed again); calls that never started get a cancellation result. Each missing
    result is placed right after the results its assistant message already has, so the
    provider protocol's call/result pairs stay closed.
    """
    if state.unknown_outcomes:
        raise _unknown_outcome_error(state, "continue")
    answered = {m.tool_call_id for m in state.history if m.role == "tool"}
    closed: list[Message] = []
    waiting: list[Message] = []

    def flush() -> None:
        for message in waiting:
            for call in message.tool_calls:
                if call.call_id in answered:
                    continue
                entry = state.journal_entry(call.call_id)
                if entry is not None and entry.status != "started":
                    content = entry.result if entry.result is not None else f"{entry.status}"
                    closed.append(
                        Message(
                            role="tool",
                            content=content,
                            tool_call_id=call.call_id,
                            tool_name=call.name,
                            is_error=entry.status != "completed",
                            artifact=entry.artifact,
                            run_id=state.run_id,
                        )
                    )
                else:
                    closed.append(
                        Message(
                            role="tool",
                            content=cancellation_result(state, call.name),
                            tool_call_id=call.call_id,
                            tool_name=call.name,
                            is_error=True,
                            run_id=state.run_id,
                        )
                    )
        waiting.clear()

    for message in state.history:
        if message.role != "tool":
            flush()
        closed.append(message)
        if message.role == "assistant" and message.tool_calls:
            waiting.append(message)
    flush()
    return tuple(closed)

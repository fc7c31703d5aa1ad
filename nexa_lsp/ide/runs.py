"""Run actions, code lenses and run-aware diagnostics of one Nexa document (pure).

Inputs are the parsed document, its path, the stored runs of its agents, the ids of the
runs this server is executing right now and the provider setting. Nothing here saves a
run, starts one or imports user code: agents are built from their declarations only to
compare fingerprints (``agent_from_declaration`` never imports a tool).

Every action offered is one the runtime accepts at this moment: the stored run's
``valid_actions`` narrowed by the same checks the runtime makes before resuming or
continuing (``resume_blockers``, ``continuation_blockers``). A run being executed by
this server can only be cancelled or shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexa_lsp.analysis.run_codes import (
    RUN_CODES,
    RUN_DEFINITION_DRIFT,
    RUN_RUNNING,
    RUN_UNKNOWN_OUTCOME,
    RUN_WAITING_APPROVAL,
)
from nexa_lsp.runtime.continuation import (
    Drift,
    continuation_blockers,
    fingerprint_drift,
    resume_blockers,
    valid_actions,
)
from nexa_lsp.runtime.errors import ApprovalPendingError, DefinitionDriftError, NexaRuntimeError
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.source import SourceFile

if TYPE_CHECKING:
    from nexa_lsp.runtime.agent import NexaAgent

#: Code action kind of every run action (``context.only`` = ``source`` or ``source.nexa.run``).
RUN_ACTION_KIND = "source.nexa.run"

#: Settled runs shown per agent in lenses (newest first); unsettled runs are always shown.
SETTLED_RUNS_SHOWN = 1
#: Most runs shown per agent in lenses.
MAX_RUNS_SHOWN = 3

COMMANDS = {
    "execute": "nexa.execute",
    "resume": "nexa.resume",
    "continue": "nexa.continue",
    "approve": "nexa.approve",
    "deny": "nexa.deny",
    "cancel": "nexa.cancel",
    "recover": "nexa.recover",
    "show": "nexa.showRun",
    "list": "nexa.listRuns",
}

#: What a drifted part of an agent is called in a declaration (for the diagnostic's range).
_DRIFT_PROPERTY = {"model": ("model",), "prompt": ("prompt", "role"), "provider": ("provider", "model")}


def short_id(run_id: str) -> str:
    """``run_`` and the first 8 hex digits: enough to tell runs apart in a title."""
    return run_id[:12]


@dataclass(frozen=True)
class RunCommand:
    """One command a lens or code action runs: ``command`` with the single object ``argument``.

    ``needs`` names a field the client must ask the user for (``task`` or ``input``)
    before sending; clients that cannot ask should offer the variants that carry it.
    """

    title: str
    command: str
    argument: dict[str, Any]
    action: str
    run_id: str | None = None
    needs: str | None = None

    @property
    def arguments(self) -> list[Any]:
        return [self.argument]


@dataclass(frozen=True)
class RunView:
    """A stored run as the editor shows it.

    ``actions`` are the actions offered now (subset of ``valid_actions``); ``refused``
    maps each action the stored run allows but the runtime would refuse now to the
    runtime's reason; ``drift`` names what changed in the agent since the run.
    """

    state: RunState
    live: bool
    actions: tuple[str, ...]
    refused: Mapping[str, str] = field(default_factory=dict)
    drift: tuple[Drift, ...] = ()
    elsewhere: str | None = None  # another live process drives it (e.g. "process 12 on host")

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def status(self) -> str:
        return self.state.status.value

    def label(self) -> str:
        """``run_1a2b3c4d completed`` plus what blocks it, for a lens title."""
        status = "running" if self.live else self.status.replace("_", " ")
        text = f"{short_id(self.run_id)} {status}"
        if self.elsewhere:
            text += f" in {self.elsewhere}"
        elif self.state.unknown_outcomes and not self.live:
            text += " (tool outcome unknown)"
        if self.drift and self.refused:
            text += f" ({', '.join(sorted({d.part for d in self.drift}))} changed)"
        return text


@dataclass(frozen=True)
class AgentView:
    """One ``agent`` declaration of the document with its runs (newest first).

    ``agent`` is None when it cannot be built (``problem`` says why); then nothing that
    needs the agent (execute, resume, approve, deny, continue) is offered.
    ``tasks`` and ``inputs`` are the string literals the file passes to
    ``Agent.execute`` / ``Agent.continue`` - ready-made arguments for clients that cannot ask.
    """

    decl: t.AgentDecl
    agent: NexaAgent | None
    problem: str | None
    runs: tuple[RunView, ...]
    tasks: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.decl.name


# --- building the views ------------------------------------------------------------------


def agent_declarations(source: SourceFile) -> list[t.AgentDecl]:
    return [item for item in source.items if isinstance(item, t.AgentDecl) and item.name]


def declaration_problem(source: SourceFile, decl: t.AgentDecl, path: Path | None) -> str | None:
    """Why the runtime would refuse to build ``decl`` (as ``load_agent`` does), else None."""
    errors = [
        d
        for d in source.diagnostics
        if d.severity is Severity.ERROR and decl.span.start <= d.span.start < decl.span.end
    ]
    if not errors:
        return None
    first = errors[0]
    line = source.lines.line_of(first.span.start) + 1
    where = f" in {path}" if path is not None else ""
    return (
        f"NXR042: agent {decl.name}{where} has syntax errors (line {line}: {first.code} {first.message}); "
        "fix them before running it"
    )


def build_agent(source: SourceFile, decl: t.AgentDecl, path: Path | None) -> tuple[NexaAgent | None, str | None]:
    """The runtime's agent for ``decl`` (no user code imported), or the reason it cannot be built."""
    problem = declaration_problem(source, decl, path)
    if problem is not None:
        return None, problem
    # imported on first use: the runtime's agent module loads the providers and httpx,
    # which the language server's start-up does not need (issue 12)
    from nexa_lsp.runtime.declarations import agent_from_declaration

    try:
        return agent_from_declaration(decl, source, path=path), None
    except NexaRuntimeError as exc:
        return None, str(exc)
    except ValueError as exc:  # e.g. two tools with one name
        return None, f"NXR042: {exc}"


def _literal(argument: t.Argument | None) -> str | None:
    if argument is None or argument.name is not None or not isinstance(argument.value, t.StringLit):
        return None
    value = argument.value
    if value.interpolations or not value.value.strip():
        return None
    return value.value


def run_entry_literals(source: SourceFile) -> dict[str, tuple[list[str], list[str]]]:
    """Per agent name: the literal tasks of ``A.execute("...")`` (2.4: ``A.run("...")``) and
    the literal inputs of ``A.continue(r, "...")`` in the file, in order, without repeats."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for item in source.items:
        for node in t.walk(item):
            if not isinstance(node, t.Call) or node.run_entry is None:
                continue
            receiver = node.receiver_name
            if receiver is None:
                continue
            tasks, inputs = found.setdefault(receiver.id, ([], []))
            if node.run_entry in ("execute", "run"):
                text = _literal(node.args[0] if node.args else None)
                if text is not None and text not in tasks:
                    tasks.append(text)
            elif node.run_entry == "continue":
                text = _literal(node.args[1] if len(node.args) > 1 else None)
                if text is not None and text not in inputs:
                    inputs.append(text)
    return found


def _reason(errors: Sequence[NexaRuntimeError]) -> str | None:
    return str(errors[0]) if errors else None


def run_view(
    state: RunState,
    agent: NexaAgent | None,
    problem: str | None,
    *,
    live: bool = False,
    provider: str | None = None,
    elsewhere: str | None = None,
) -> RunView:
    """What the editor may offer for ``state`` now (see the module docstring).

    ``elsewhere`` describes another live process driving the run (the store's owner): the
    store refuses to let anyone else resume it, and a cancel from here would be overwritten
    by that process, so only ``show`` is offered."""
    if live:
        return RunView(state, True, ("cancel", "show"))
    if elsewhere is not None and state.status is RunStatus.RUNNING:
        busy = (
            f"NXR024: run {state.run_id} is being driven right now by {elsewhere}; "
            "wait for it to stop, or cancel it there"
        )
        return RunView(state, False, ("show",), {"resume": busy, "cancel": busy}, elsewhere=elsewhere)
    stored = valid_actions(state)
    offered: list[str] = []
    refused: dict[str, str] = {}
    drift: list[Drift] = []
    for action in stored:
        if action in ("show", "cancel", "recover"):
            offered.append(action)
            continue
        if agent is None:
            refused[action] = problem or f"agent {state.agent} cannot be built"
            continue
        try:
            if action == "continue":
                reason = _reason(continuation_blockers(state, agent, "next input", None, provider))
            else:
                blockers = resume_blockers(state, agent, provider)
                if action in ("approve", "deny"):  # the decision is made first, then the run resumes
                    blockers = [b for b in blockers if not isinstance(b, ApprovalPendingError)]
                reason = _reason(blockers)
        except (NexaRuntimeError, ValueError, OSError) as exc:  # e.g. a broken .nxs settings file
            reason = str(exc)
        if reason is None:
            offered.append(action)
        else:
            refused[action] = reason
    if agent is not None and any(a in stored for a in ("resume", "approve", "deny", "continue")):
        try:
            if state.settled:
                current = agent.fingerprint(agent.continuation_config(state, None, provider))
            else:
                current = agent.fingerprint(agent.resume_config(state, provider))
            drift = fingerprint_drift(state.fingerprint, current)
        except (NexaRuntimeError, ValueError, OSError):
            drift = []
    return RunView(state, False, tuple(offered), refused, tuple(drift))


def shown_runs(runs: Iterable[RunState]) -> list[RunState]:
    """Runs worth showing for one agent, newest first: every unsettled run (or one with an
    unknown tool outcome), then the newest settled runs, at most ``MAX_RUNS_SHOWN`` in lenses."""
    ordered = sorted(runs, key=lambda s: (s.started_at, s.updated_at), reverse=True)
    open_runs = [s for s in ordered if not s.settled or s.unknown_outcomes]
    settled = [s for s in ordered if s.settled and not s.unknown_outcomes][:SETTLED_RUNS_SHOWN]
    return sorted(open_runs + settled, key=lambda s: (s.started_at, s.updated_at), reverse=True)


def agent_views(
    source: SourceFile,
    path: Path | None,
    runs: Iterable[RunState],
    *,
    live: Iterable[str] = (),
    provider: str | None = None,
    elsewhere: Mapping[str, str] | None = None,
    only_with_runs: bool = False,
) -> list[AgentView]:
    """One view per named agent declaration of ``source``; ``runs`` are the stored runs of
    this file (other agents' runs are ignored); ``live`` the ids this server drives now and
    ``elsewhere`` the running runs another live process drives (id -> that process).

    With ``only_with_runs`` the agents without runs are left out (what run-aware
    diagnostics need; building every agent of a large file on each edit is costly)."""
    elsewhere = elsewhere or {}
    live_ids = frozenset(live)
    by_agent: dict[str, list[RunState]] = {}
    for state in runs:
        by_agent.setdefault(state.agent, []).append(state)
    literals: dict[str, tuple[list[str], list[str]]] | None = None
    views: list[AgentView] = []
    seen: set[str] = set()
    for decl in agent_declarations(source):
        if decl.name in seen:  # a duplicate declaration (NX110): the runtime would use neither reliably
            continue
        seen.add(decl.name)
        states = shown_runs(by_agent.get(decl.name, ()))
        if only_with_runs and not states:
            continue
        agent, problem = build_agent(source, decl, path)
        if literals is None:
            literals = run_entry_literals(source)
        tasks, inputs = literals.get(decl.name, ([], []))
        views.append(
            AgentView(
                decl,
                agent,
                problem,
                tuple(
                    run_view(
                        s,
                        agent,
                        problem,
                        live=s.run_id in live_ids,
                        provider=provider,
                        elsewhere=elsewhere.get(s.run_id),
                    )
                    for s in states
                ),
                tuple(tasks),
                tuple(inputs),
            )
        )
    return views


# --- commands ------------------------------------------------------------------------------


def _quote(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return f'"{text}"' if len(text) <= limit else f'"{text[: limit - 1]}…"'


def execute_commands(view: AgentView, uri: str, *, with_literals: bool = True) -> list[RunCommand]:
    if view.agent is None:
        return []
    base = {"uri": uri, "agent": view.name}
    commands = [RunCommand("▶ Execute…", COMMANDS["execute"], dict(base), "execute", needs="task")]
    if with_literals:
        commands += [
            RunCommand(f"▶ Execute {_quote(task)}", COMMANDS["execute"], {**base, "task": task}, "execute")
            for task in view.tasks
        ]
    return commands


def run_commands(view: AgentView, run: RunView, *, with_literals: bool = True) -> list[RunCommand]:
    """The commands of the actions offered for ``run`` (``show`` last)."""
    run_id = run.run_id
    state = run.state
    commands: list[RunCommand] = []
    for action in run.actions:
        if action == "resume":
            commands.append(RunCommand("Resume", COMMANDS["resume"], {"run_id": run_id}, action, run_id))
        elif action in ("approve", "deny"):
            for approval in state.pending_approvals:
                verb = "Approve" if action == "approve" else "Deny"
                commands.append(
                    RunCommand(
                        f"{verb} {approval.tool}",
                        COMMANDS[action],
                        {"run_id": run_id, "call_id": approval.call_id},
                        action,
                        run_id,
                    )
                )
        elif action == "cancel":
            commands.append(RunCommand("Cancel", COMMANDS["cancel"], {"run_id": run_id}, action, run_id))
        elif action == "continue":
            commands.append(
                RunCommand("Continue…", COMMANDS["continue"], {"run_id": run_id}, action, run_id, needs="input")
            )
            if with_literals:
                commands += [
                    RunCommand(
                        f"Continue {_quote(text)}",
                        COMMANDS["continue"],
                        {"run_id": run_id, "input": text},
                        action,
                        run_id,
                    )
                    for text in view.inputs
                ]
        elif action == "recover":
            for entry in state.unknown_outcomes:
                for outcome, words in (("completed", "it completed"), ("not_executed", "it did not run")):
                    commands.append(
                        RunCommand(
                            f"Recover {entry.tool}: {words}",
                            COMMANDS["recover"],
                            {"run_id": run_id, "call_id": entry.call_id, "outcome": outcome},
                            action,
                            run_id,
                        )
                    )
    if "show" in run.actions:
        commands.append(RunCommand("Show", COMMANDS["show"], {"run_id": run_id}, "show", run_id))
    return commands


@dataclass(frozen=True)
class Lens:
    """A code lens: ``command`` shown on the line of ``span`` (the agent's name)."""

    span: t.Span
    command: RunCommand


def code_lenses(views: Sequence[AgentView], uri: str, *, enabled: bool = True) -> list[Lens]:
    """Per agent: ``Execute``, then each shown run's status (opens its transcript) and actions.

    With runs disabled there are no lenses at all: no run can be started or steered.
    """
    if not enabled:
        return []
    lenses: list[Lens] = []
    for view in views:
        span = view.decl.name_span
        lenses += [Lens(span, c) for c in execute_commands(view, uri, with_literals=False)]
        for run in view.runs:
            lenses.append(
                Lens(span, RunCommand(run.label(), COMMANDS["show"], {"run_id": run.run_id}, "show", run.run_id))
            )
            lenses += [Lens(span, c) for c in run_commands(view, run, with_literals=False) if c.action != "show"]
    return lenses


def view_at(views: Sequence[AgentView], start: int, end: int) -> list[AgentView]:
    """The agents whose declaration overlaps ``[start, end]``."""
    return [v for v in views if v.decl.span.start <= end and start <= v.decl.span.end]


@dataclass(frozen=True)
class Action:
    """A code action: ``command`` titled ``Nexa: ...``; ``codes`` are the run-aware
    diagnostic codes of the run it acts on (to attach the request's matching diagnostics)."""

    title: str
    command: RunCommand
    agent: str
    run_id: str | None
    codes: frozenset[str] = frozenset()


def _codes_of(run: RunView) -> frozenset[str]:
    codes: set[str] = set()
    if run.state.status is RunStatus.WAITING_APPROVAL:
        codes.add(RUN_WAITING_APPROVAL)
    elif run.state.status is RunStatus.RUNNING:
        codes.add(RUN_RUNNING)
    if run.state.unknown_outcomes:
        codes.add(RUN_UNKNOWN_OUTCOME)
    if run.drift and run.refused:
        codes.add(RUN_DEFINITION_DRIFT)
    return frozenset(codes)


def code_actions(
    views: Sequence[AgentView],
    uri: str,
    start: int,
    end: int,
    *,
    enabled: bool = True,
    diagnostic_runs: Iterable[str] = (),
) -> list[Action]:
    """Run actions for the agents at ``[start, end]`` and for the runs named by the run-aware
    diagnostics of the request (``diagnostic_runs``), wherever those agents are."""
    if not enabled:
        return []
    wanted_runs = set(diagnostic_runs)
    actions: list[Action] = []
    for view in views:
        at_cursor = view in view_at(views, start, end)
        runs = [r for r in view.runs if at_cursor or r.run_id in wanted_runs]
        if not at_cursor and not runs:
            continue
        if at_cursor:
            for command in execute_commands(view, uri):
                title = command.title.replace("▶ Execute", f"Execute {view.name}", 1)
                actions.append(Action(f"Nexa: {title}", command, view.name, None))
        for run in runs:
            for command in run_commands(view, run):
                title = f"Nexa: {command.title} ({short_id(run.run_id)} {run.status.replace('_', ' ')})"
                actions.append(Action(title, command, view.name, run.run_id, _codes_of(run)))
    return actions


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

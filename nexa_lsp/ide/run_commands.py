"""Run code lenses and run code actions of one Nexa document (pure), from its agent views.

Clients that prompt for a run's task or input (the VS Code extension) get ``Execute…`` /
``Continue…`` lenses that leave the text out; every other client gets lenses carrying the
task and input literals the file's flows pass (``A.execute("...")``, ``A.run("...")`` on
2.4, ``A.continue(r, "...")``), so a lens never sends a command that must fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nexa_lsp.analysis.run_codes import (
    RUN_DEFINITION_DRIFT,
    RUN_RUNNING,
    RUN_UNKNOWN_OUTCOME,
    RUN_WAITING_APPROVAL,
)
from nexa_lsp.ide.runs import AgentView, RunView, short_id
from nexa_lsp.runtime.run_state import RunStatus
from nexa_lsp.syntax import tree as t

#: Code action kind of every run action (``context.only`` = ``source`` or ``source.nexa.run``).
RUN_ACTION_KIND = "source.nexa.run"

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

#: Lenses per agent (or run) carrying the file's literals, for clients that cannot prompt;
#: the code actions offer every literal.
LITERAL_LENSES = 3


@dataclass(frozen=True)
class RunCommand:
    """One command a lens or code action runs: ``command`` with the single object ``argument``.

    ``needs`` names a field the client must ask the user for (``task`` or ``input``)
    before sending; clients that cannot ask get the variants that carry a literal of the
    file instead (``literal``).
    """

    title: str
    command: str
    argument: dict[str, Any]
    action: str
    run_id: str | None = None
    needs: str | None = None
    literal: bool = False

    @property
    def arguments(self) -> list[Any]:
        return [self.argument]


# --- commands ------------------------------------------------------------------------------


def _quote(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return f'"{text}"' if len(text) <= limit else f'"{text[: limit - 1]}…"'


def execute_commands(view: AgentView, uri: str) -> list[RunCommand]:
    """``Execute…`` (asks for the task) and one ``Execute "..."`` per task literal of the file."""
    if view.agent is None:
        return []
    base = {"uri": uri, "agent": view.name}
    commands = [RunCommand("▶ Execute…", COMMANDS["execute"], dict(base), "execute", needs="task")]
    commands += [
        RunCommand(f"▶ Execute {_quote(task)}", COMMANDS["execute"], {**base, "task": task}, "execute", literal=True)
        for task in view.tasks
    ]
    return commands


def for_client(commands: Sequence[RunCommand], *, prompts: bool, lens: bool) -> list[RunCommand]:
    """The commands a client is offered: no command that needs a prompt where the client
    cannot prompt; in lenses of a client that prompts, no literal variants (its ``Execute…``
    asks); literal lenses at most ``LITERAL_LENSES`` per action."""
    if not prompts:
        chosen = [c for c in commands if c.needs is None]
    elif lens:
        chosen = [c for c in commands if not c.literal]
    else:
        chosen = list(commands)
    if not lens:
        return chosen
    kept: list[RunCommand] = []
    literals: dict[str, int] = {}
    for c in chosen:
        if c.literal:
            literals[c.action] = literals.get(c.action, 0) + 1
            if literals[c.action] > LITERAL_LENSES:
                continue
        kept.append(c)
    return kept


def run_commands(view: AgentView, run: RunView) -> list[RunCommand]:
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
            commands += [
                RunCommand(
                    f"Continue {_quote(text)}",
                    COMMANDS["continue"],
                    {"run_id": run_id, "input": text},
                    action,
                    run_id,
                    literal=True,
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


def code_lenses(
    views: Sequence[AgentView],
    uri: str,
    *,
    enabled: bool = True,
    prompts: bool = True,
    transcripts: Mapping[str, str] | None = None,
) -> list[Lens]:
    """Per agent: ``Execute``, then each shown run's status (opens its transcript) and actions.

    ``prompts``: the client asks for a missing task or input (else the lenses carry the
    file's literals, see ``for_client``). ``transcripts`` maps run ids to where their
    transcript file is, for a ``Transcript: PATH`` lens (clients that cannot open a
    document). With runs disabled there are no lenses at all: no run can be started or
    steered.
    """
    transcripts = transcripts or {}
    if not enabled:
        return []
    lenses: list[Lens] = []
    for view in views:
        span = view.decl.name_span
        lenses += [Lens(span, c) for c in for_client(execute_commands(view, uri), prompts=prompts, lens=True)]
        for run in view.runs:
            lenses.append(
                Lens(span, RunCommand(run.label(), COMMANDS["show"], {"run_id": run.run_id}, "show", run.run_id))
            )
            if run.run_id in transcripts:
                title = f"Transcript: {transcripts[run.run_id]}"
                lenses.append(
                    Lens(span, RunCommand(title, COMMANDS["show"], {"run_id": run.run_id}, "show", run.run_id))
                )
            commands = for_client(run_commands(view, run), prompts=prompts, lens=True)
            lenses += [Lens(span, c) for c in commands if c.action != "show"]
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
    prompts: bool = True,
) -> list[Action]:
    """Run actions for the agents at ``[start, end]`` and for the runs named by the run-aware
    diagnostics of the request (``diagnostic_runs``), wherever those agents are; every
    literal variant, and the prompting ones only when the client ``prompts``."""
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
            for command in for_client(execute_commands(view, uri), prompts=prompts, lens=False):
                title = command.title.replace("▶ Execute", f"Execute {view.name}", 1)
                actions.append(Action(f"Nexa: {title}", command, view.name, None))
        for run in runs:
            for command in for_client(run_commands(view, run), prompts=prompts, lens=False):
                title = f"Nexa: {command.title} ({short_id(run.run_id)} {run.status.replace('_', ' ')})"
                actions.append(Action(title, command, view.name, run.run_id, _codes_of(run)))
    return actions

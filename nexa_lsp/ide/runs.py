"""The agents of one Nexa document with their runs, as the editor shows them (pure).

Inputs are the parsed document, its path, the stored runs of its agents, the ids of the
runs this server is executing right now and the provider setting. Nothing here saves a
run, starts one or imports user code: agents are built from their declarations only to
compare fingerprints (``agent_from_declaration`` never imports a tool).

Every action offered is one the runtime accepts at this moment: the stored run's
``valid_actions`` narrowed by the same checks the runtime makes before resuming or
continuing (``resume_blockers``, ``continuation_blockers``). A run being executed by
this server can only be cancelled or shown. The lenses and code actions built from these
views are in ``ide.run_commands``, the run-aware diagnostics in ``ide.run_diagnostics``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nexa_lsp.runtime.continuation import (
    Drift,
    continuation_blockers,
    fingerprint_drift,
    resume_blockers,
    valid_actions,
)
from nexa_lsp.runtime.errors import ApprovalPendingError, NexaRuntimeError
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Severity

if TYPE_CHECKING:
    from nexa_lsp.runtime.agent import NexaAgent
    from nexa_lsp.runtime.tool_modules import ToolModules
    from nexa_lsp.syntax.source import SourceFile  # annotations only: no parser at start-up

#: Settled runs shown per agent in lenses (newest first); unsettled runs are always shown.
SETTLED_RUNS_SHOWN = 1
#: Most runs shown per agent in lenses.
MAX_RUNS_SHOWN = 3


def short_id(run_id: str) -> str:
    """``run_`` and the first 8 hex digits: enough to tell runs apart in a title."""
    return run_id[:12]


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


def build_agent(
    source: SourceFile, decl: t.AgentDecl, path: Path | None, tool_modules: ToolModules | None = None
) -> tuple[NexaAgent | None, str | None]:
    """The runtime's agent for ``decl`` (no user code imported), or the reason it cannot be built.
    ``tool_modules`` are the editor's (setting ``nexa.runs.toolModules``); where each tool's
    code comes from follows the runtime's one rule (``runtime.tool_modules``)."""
    problem = declaration_problem(source, decl, path)
    if problem is not None:
        return None, problem
    # imported on first use: the runtime's agent module loads the providers and httpx,
    # which the language server's start-up does not need (issue 12)
    from nexa_lsp.runtime.declarations import agent_from_declaration

    try:
        return agent_from_declaration(decl, source, path=path, tool_modules=tool_modules or ()), None
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
    tool_modules: ToolModules | None = None,
) -> list[AgentView]:
    """One view per named agent declaration of ``source``; ``runs`` are the stored runs of
    this file (other agents' runs are ignored); ``live`` the ids this server drives now and
    ``elsewhere`` the running runs another live process drives (id -> that process);
    ``tool_modules`` the editor's tool modules (see ``build_agent``).

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
        agent, problem = build_agent(source, decl, path, tool_modules)
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

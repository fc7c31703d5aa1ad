"""The rules applied to a whole source, one body at a time, with what each body reads kept.

Each executable body (a *unit*: a flow, a test, a job block ...) is walked on its own and
the walk is kept with its chunk, together with every answer it got from the rest of the
file (is ``X`` an agent, a flow, which agents a called flow runs, the history other flows
leave when this flow starts). An edit re-walks the bodies it changed and those whose
answers changed; every other walk is reused. The findings of a unit are kept the same
way, with what the rules read (the agents it runs, the callers of its flow, names taken).

Other flows reach a unit in two ways, both summarised by the walks: a flow call records
the agents that ran before it (``FlowCall``), and ``Program.flow_runs`` says which agents
a flow runs. The history other flows leave when a flow starts (``entry ext``) is computed
from those summaries in rounds, to a fixed point, as a whole-file walk would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nexa_lsp.analysis.migration.context import Finding, RuleContext
from nexa_lsp.analysis.migration.positions import LineNumbers, chunk_serial
from nexa_lsp.analysis.migration.program import AgentFacts, Program
from nexa_lsp.analysis.migration.rules import (
    nxm002_first_run,
    nxm003_later_run,
    nxm004_approval_on_24,
    nxm005_human_approval_helper,
    nxm006_run_without_call,
    nxm010_unsettled_continue,
    nxm011_empty_continue,
    nxm012_other_agents_run,
    nxm013_resume_settled,
)
from nexa_lsp.analysis.migration.state import FlowCall
from nexa_lsp.analysis.migration.units import UnitSpec, chunk_units
from nexa_lsp.analysis.migration.walker import Walker
from nexa_lsp.analysis.symbols import ChunkCache
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.syntax.version import VersionPath

#: The 3.3 checks of a `continue` / `resume` call, each ``check(ctx, site, var, origins)``.
_ENTRY_CHECKS = (
    nxm011_empty_continue.check,
    nxm012_other_agents_run.check,
    nxm010_unsettled_continue.check,
    nxm013_resume_settled.check,
)
_ROUNDS = 4  # at most this many walks of every unit while the entry histories settle
_VARIANTS = 4  # walks kept per unit (one per entry history seen in the rounds)
#: Questions whose answers only change with the program's stamp (``Program.stamp``).
_NAME_KINDS = frozenset({"agent", "flow"})

EntryExt = dict[str, frozenset[tuple[str, str]]]
#: flow -> its calls in source order, with the walk each is in.
Callers = dict[str, list[tuple[FlowCall, Walker]]]


def callers_of(walks: Sequence[Walker]) -> Callers:
    """The calls of every flow in ``walks`` (in order)."""
    out: Callers = {}
    for walk in walks:
        for call in walk.flow_calls.values():
            out.setdefault(call.flow, []).append((call, walk))
    return out


class WalkEnv:
    """What a walk may ask about the rest of the file (see ``Walker.ask``)."""

    def __init__(self, program: Program, entry_ext: EntryExt) -> None:
        self.program = program
        self.entry_ext = entry_ext

    def answer(self, kind: str, name: str) -> object:
        if kind == "agent":
            return name in self.program.agents
        if kind == "flow":
            return name in self.program.flows
        if kind == "runs":
            return self.program.flow_runs(name)
        if kind == "entry":
            return self.entry_ext.get(name, frozenset())
        raise ValueError(f"unknown question {kind!r}")

    def still(self, reads: dict[tuple[str, str], object], stamp: object) -> bool:
        """Would the walk that got ``reads`` get the same answers now? With the program's
        stamp unchanged, only the answers about flow bodies and histories can differ."""
        same_names = stamp is self.program.stamp
        return all(
            (same_names and kind in _NAME_KINDS) or self.answer(kind, name) == value
            for (kind, name), value in reads.items()
        )

    def still_walk(self, walk: Walker) -> bool:
        """``still`` for a finished walk: with the stamp unchanged only its ``body_reads``
        are asked again (a walk's reads do not change once it has ended)."""
        if walk.stamp is not self.program.stamp:
            return self.still(walk.reads, walk.stamp)
        return all(self.answer(kind, name) == value for kind, name, value in walk.body_reads)


@dataclass(eq=False)
class _ChunkState:
    """What is kept per chunk: its units, their walks and their findings."""

    units: list[UnitSpec]
    walks: list[list[Walker]]
    findings: list[KeptFindings | None]


@dataclass(eq=False, slots=True)
class KeptFindings:
    walk: Walker
    reads: dict[tuple[str, str], object]
    findings: list[Finding]
    stamp: object  # the program stamp the reads were last checked against
    plan: object = None  # the unit's share of the migrate fix (``plan.UnitPlan``), made when asked


def _chunk_state(chunk: ParsedChunk) -> _ChunkState:
    units = chunk_units(chunk)
    return _ChunkState(units, [[] for _ in units], [None for _ in units])


_STATES: ChunkCache[_ChunkState] = ChunkCache(_chunk_state)


def chunk_state(chunk: ParsedChunk) -> _ChunkState:
    """The units of ``chunk`` with their kept walks and findings."""
    return _STATES.get(chunk)


class SourceFacts:
    """What the rules may ask about the rest of the file (``context.FileFacts``)."""

    def __init__(self, source: SourceFile, program: Program, callers: Callers) -> None:
        self.lines = LineNumbers(source)
        self.path = source.path
        self.text = source.text
        self.program = program
        self._callers = callers

    def agent_facts(self, agent: str) -> AgentFacts:
        return self.program.agent_facts(agent)

    def callers(self, flow: str) -> list[tuple[FlowCall, Walker]]:
        return self._callers.get(flow, [])

    def name_taken(self, name: str) -> bool:
        return self.program.name_taken(name)

    def rendered(self, text: str) -> str:
        return self.lines.render(text)

    def still(self, reads: dict[tuple[str, str], object], stamp: object) -> bool:
        same_names = stamp is self.program.stamp
        for (kind, name), value in reads.items():
            if kind == "agent":
                if same_names:
                    continue
                now: object = self.agent_facts(name)
            elif kind == "callers":
                now = tuple(call for call, _walk in self.callers(name))
            elif kind == "rendered":
                now = self.rendered(name)
            else:
                now = self.name_taken(name)
            if now != value:
                return False
        return True


@dataclass(eq=False)
class Analysis:
    """The findings of one source (path-independent; fixes are planned) and the notes."""

    source: SourceFile
    findings: list[Finding]
    notes: list[str]
    too_deep: bool = False
    units: list[list[Finding]] = field(default_factory=list)  # the findings of each unit, in order
    #: Per unit, what is kept with its findings (None when nothing is kept: ``use_cache`` off).
    kept: list[KeptFindings | None] = field(default_factory=list)
    #: What a later version can be spliced from (``splice``): None without ``use_cache``.
    basis: Basis | None = None


@dataclass(eq=False, slots=True)
class Basis:
    """The walks of an analysis and what they were walked with."""

    program: Program
    walks: list[Walker]  # per unit, in order
    chunk_units: list[int]  # units per chunk of the source
    entry_ext: EntryExt  # the entry histories the walks were made with
    callers: Callers
    unit_findings: list[Finding]  # the findings of every unit, in order (NXM004 left out)
    rendered_reads: int  # units whose findings read a rendered message (line numbers)
    taken_reads: frozenset[str]  # names any unit's findings asked `name_taken` about (or more)


def walk_unit(state: _ChunkState, index: int, chunk: ParsedChunk, env: WalkEnv, use_cache: bool) -> Walker:
    variants = state.walks[index]
    if use_cache:
        for walk in variants:
            if env.still_walk(walk):
                walk.stamp = env.program.stamp
                return walk
    walk = Walker(state.units[index], chunk.text, chunk.anchor, chunk_serial(chunk), env)
    walk.walk()
    walk.body_reads = tuple(
        (kind, name, value) for (kind, name), value in walk.reads.items() if kind not in _NAME_KINDS
    )
    walk.stamp = env.program.stamp
    if use_cache:
        variants.insert(0, walk)
        del variants[_VARIANTS:]
    return walk


def _entry_ext(program: Program, walks: list[Walker]) -> EntryExt:
    """Agents whose 2.4 history may already hold turns when each flow starts."""
    by_flow: dict[str, list[FlowCall]] = {}
    for walk in walks:
        for call in walk.flow_calls.values():
            by_flow.setdefault(call.flow, []).append(call)
    routed = program.routed
    out: EntryExt = {}
    for flow, calls in by_flow.items():
        items: set[tuple[str, str]] = set()
        for call in calls:
            for agent in call.ran_before:
                items.add((agent, f"flow `{flow}` is called on line {call.line} after {agent} ran"))
        if len(calls) > 1 or any(c.in_loop for c in calls) or flow in routed:
            why = "handles a server route" if flow in routed else "is called more than once"
            for agent in program.flow_runs(flow):
                items.add((agent, f"flow `{flow}` {why}, so its earlier runs of {agent} come first"))
        out[flow] = frozenset(items)
    for flow in routed:
        if flow in program.flows and flow not in out:
            out[flow] = frozenset(
                (a, f"flow `{flow}` handles a server route, so its earlier runs of {a} come first")
                for a in program.flow_runs(flow)
            )
    return out


def unit_findings(walk: Walker, facts: SourceFacts) -> tuple[list[Finding], dict[tuple[str, str], object]]:
    """The findings of one walked unit, and what the rules read to make them."""
    ctx = RuleContext(walk, facts)
    findings: list[Finding] = []
    for site in sorted(walk.sites.values(), key=lambda s: s.node.span.start):
        if site.kind in ("run", "run_member"):
            run = ctx.run_call(site)
            rule = nxm002_first_run if run.first else nxm003_later_run
            findings.append(rule.finding(ctx, run))
        elif ctx.path is VersionPath.NEXA_30 and site.kind in ("continue", "resume") and site.call is not None:
            var, origins = ctx.origins(site)
            for check in _ENTRY_CHECKS:
                found = check(ctx, site, var, origins)
                if found is not None:
                    findings.append(found)
    for member, _unit in walk.member_runs.values():
        findings.append(nxm006_run_without_call.finding(ctx, member))
    for call, helper, unit in walk.hitl.values():
        findings.append(nxm005_human_approval_helper.finding(call, helper, unit))
    findings.sort(key=lambda f: (f.span.start, f.span.end, f.code))
    return findings, ctx.reads


def analyse(source: SourceFile, use_cache: bool = True, included: Sequence[SourceFile] = ()) -> Analysis:
    """All findings of ``source``; a pathologically nested file gives none (``too_deep``).

    ``included`` are the files it includes: their agents, tools and flows count as declared.
    With ``use_cache`` every unit whose text and answers are unchanged since an earlier
    call reuses its walk and findings; without, everything is computed afresh.
    """
    program = Program(source, included, incremental=use_cache)
    chunks = [(chunk, _STATES.get(chunk) if use_cache else _chunk_state(chunk)) for chunk in source.chunks]
    try:
        entry_ext: EntryExt = {}
        walks: list[tuple[_ChunkState, int, Walker]] = []
        env = WalkEnv(program, entry_ext)
        for _round in range(_ROUNDS):
            env = WalkEnv(program, entry_ext)
            walks = [
                (state, index, walk_unit(state, index, chunk, env, use_cache))
                for chunk, state in chunks
                for index in range(len(state.units))
            ]
            new_entry = _entry_ext(program, [walk for _state, _index, walk in walks])
            if new_entry == entry_ext:
                break
            entry_ext = new_entry
        callers = callers_of([walk for _state, _index, walk in walks])
        facts = SourceFacts(source, program, callers)
        per_unit: list[list[Finding]] = []
        per_kept: list[KeptFindings | None] = []
        for state, index, walk in walks:
            kept = state.findings[index]
            if kept is not None and kept.walk is walk and facts.still(kept.reads, kept.stamp):
                kept.stamp = program.stamp
                per_unit.append(kept.findings)
                per_kept.append(kept)
                continue
            found, reads = unit_findings(walk, facts)
            kept = KeptFindings(walk, reads, found, program.stamp) if use_cache else None
            if use_cache:
                state.findings[index] = kept
            per_unit.append(found)
            per_kept.append(kept)
    except RecursionError:
        return Analysis(source, [], [], too_deep=True)
    # units lie in source order and keep their findings sorted, so the list is sorted
    findings = [f for unit in per_unit for f in unit]
    basis = None
    if use_cache:
        basis = Basis(
            program,
            [walk for _state, _index, walk in walks],
            [len(state.units) for _chunk, state in chunks],
            env.entry_ext,
            callers,
            findings,
            sum(1 for kept in per_kept if kept is not None and reads_rendered(kept.reads)),
            frozenset(name for kept in per_kept if kept is not None for name in reads_taken(kept.reads)),
        )
    return finish(source, program, findings, per_unit, per_kept, basis)


def reads_taken(reads: dict[tuple[str, str], object]) -> list[str]:
    """The names the rules asked ``name_taken`` about."""
    return [name for kind, name in reads if kind == "taken"]


def reads_rendered(reads: dict[tuple[str, str], object]) -> bool:
    """Did the rules read a rendered message (whose line numbers move with edits above)?"""
    return any(kind == "rendered" for kind, _name in reads)


def finish(
    source: SourceFile,
    program: Program,
    unit_found: list[Finding],
    per_unit: list[list[Finding]],
    per_kept: list[KeptFindings | None],
    basis: Basis | None,
) -> Analysis:
    """The analysis of the units' (sorted, in order) findings, with the NXM004 ones."""
    findings = unit_found
    if source.path is VersionPath.COMPAT_24:
        approvals = nxm004_approval_on_24.findings(program)
        if approvals:
            findings = [*findings, *approvals]
            findings.sort(key=lambda f: (f.span.start, f.span.end, f.code))
    notes = nxm004_approval_on_24.approval_notes(program)
    return Analysis(source, findings, notes, units=per_unit, kept=per_kept, basis=basis)


__all__ = ["Analysis", "Basis", "analyse"]

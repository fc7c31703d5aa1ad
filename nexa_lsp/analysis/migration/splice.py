"""The analysis of an edited source, spliced from the previous version's analysis.

A whole-file analysis (``findings.analyse``) asks every unit whether its walk and findings
still hold, which costs a few microseconds per unit even when the edit touched one. When
the program was updated from the previous version's (``Program.base``, the same stamp) and
the edit cannot reach other units, only the units of the changed chunks are analysed and
the lists of the previous analysis are spliced around them. Other units are reached only
through what the edit changes in:

* flow calls (the callers of a flow, the entry histories): the old and new units of the
  changed chunks call no flow, so every flow's callers and the entry histories, computed
  round by round from the same walks, stay what they were;
* what a flow runs (``Program.flow_runs``): the changed flows name the same agents and flows;
* names taken: every name whose presence changes is taken or free in both versions alike;
* line numbers in messages the rules compared: the number of lines is unchanged, or no unit
  read one.

Anything else, and whatever is not spliced, is analysed whole; both give the same analysis
(``tests/migration/test_splice.py``).
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding
from nexa_lsp.analysis.migration.findings import (
    Analysis,
    Basis,
    KeptFindings,
    SourceFacts,
    WalkEnv,
    analyse,
    chunk_state,
    finish,
    reads_rendered,
    reads_taken,
    unit_findings,
    walk_unit,
)
from nexa_lsp.analysis.migration.positions import last_line
from nexa_lsp.analysis.migration.program import _CHUNK_NAMES, _FLOW_SUMMARIES, FlowSummary, Program
from nexa_lsp.analysis.migration.walker import Walker
from nexa_lsp.syntax.source import ParsedChunk, SourceFile


class Splice:
    """Where an analysis was spliced into its predecessor: the units ``start:end`` and the
    findings ``found_start:found_end`` of ``previous`` were replaced by ``units`` units."""

    __slots__ = ("end", "found_end", "found_start", "previous", "start", "units")

    def __init__(
        self, previous: Analysis, span: tuple[int, int], found_start: int, found_end: int, units: list[list[Finding]]
    ) -> None:
        self.previous = previous
        self.start, self.end = span
        self.found_start = found_start
        self.found_end = found_end
        self.units = units


#: The last analysis made by ``analyse_edited`` (one file at a time, like ``Program``).
_LAST: Analysis | None = None
#: analysis -> how it was spliced (kept only for the last one).
_SPLICES: dict[int, tuple[Analysis, Splice]] = {}


def spliced_from(analysis: Analysis) -> Splice | None:
    """How ``analysis`` was made from its predecessor, if it was spliced."""
    found = _SPLICES.get(id(analysis))
    return found[1] if found is not None and found[0] is analysis else None


def analyse_edited(source: SourceFile, included: list[SourceFile]) -> Analysis:
    """``analyse(source)``, spliced from the last analysis when possible."""
    global _LAST
    previous = _LAST
    analysis = None
    if not included and previous is not None and previous.basis is not None:
        analysis = _splice(previous, source)
    if analysis is None:
        analysis = analyse(source, included=included)
        _SPLICES.clear()
    _LAST = analysis if analysis.basis is not None and not included else None
    return analysis


def _summaries(chunks: list[ParsedChunk], program: Program) -> dict[str, tuple[frozenset[str], ...]]:
    """The flows the chunks declare, each with what ``Program.flow_runs`` reads of its summary:
    the agents it runs, and those of its names that are agents or flows of ``program`` (a
    renamed local variable leaves this alone)."""
    out: dict[str, tuple[frozenset[str], ...]] = {}
    agents, flows = program.agents, program.flows
    for chunk in chunks:
        summaries: dict[str, FlowSummary] = _FLOW_SUMMARIES.get(chunk)
        for flow, summary in summaries.items():
            out[flow] = (
                summary.runs,
                frozenset(n for n in summary.maybe_agents if n in agents),
                frozenset(n for n in summary.maybe_flows if n in flows),
            )
    return out


def _names(chunks: list[ParsedChunk]) -> frozenset[str]:
    out: set[str] = set()
    for chunk in chunks:
        out |= _CHUNK_NAMES.get(chunk)
    return frozenset(out)


def _splice(previous: Analysis, source: SourceFile) -> Analysis | None:
    basis = previous.basis
    assert basis is not None
    old = basis.program
    program = Program(source)
    if program.base is not old or program.stamp is not old.stamp or old.source is not previous.source:
        return None
    if source.path is not previous.source.path:
        return None  # every rule reads the path
    head, tail = program.diff
    old_chunks, new_chunks = previous.source.chunks, source.chunks
    gone = old_chunks[head : len(old_chunks) - tail]
    came = new_chunks[head : len(new_chunks) - tail]
    counts = basis.chunk_units
    start = sum(counts[:head])
    end = start + sum(counts[head : len(old_chunks) - tail])
    if any(walk.flow_calls for walk in basis.walks[start:end]):
        return None
    if _summaries(gone, program) != _summaries(came, program):  # same agents and flows: the stamp
        return None
    program.share_flow_runs(old)
    gone_names, came_names = _names(gone), _names(came)
    if gone_names == came_names:
        program.share_names(old)
    elif any(program.name_taken(n) != old.name_taken(n) for n in (gone_names ^ came_names) & basis.taken_reads):
        return None  # a kept unit's findings depend on whether that name is taken
    if basis.rendered_reads and last_line(source) != last_line(previous.source):
        return None
    env = WalkEnv(program, basis.entry_ext)
    facts = SourceFacts(source, program, basis.callers)
    walks: list[Walker] = []
    units: list[list[Finding]] = []
    kept_list: list[KeptFindings | None] = []
    came_counts: list[int] = []
    rendered = 0
    try:
        for chunk in came:
            state = chunk_state(chunk)
            came_counts.append(len(state.units))
            for index in range(len(state.units)):
                walk = walk_unit(state, index, chunk, env, True)
                if walk.flow_calls:
                    return None
                kept = state.findings[index]
                if kept is None or kept.walk is not walk or not facts.still(kept.reads, kept.stamp):
                    found, reads = unit_findings(walk, facts)
                    kept = state.findings[index] = KeptFindings(walk, reads, found, program.stamp)
                kept.stamp = program.stamp
                walks.append(walk)
                units.append(kept.findings)
                kept_list.append(kept)
                rendered += reads_rendered(kept.reads)
    except RecursionError:
        return None
    rendered -= sum(1 for kept in previous.kept[start:end] if kept is not None and reads_rendered(kept.reads))
    found_start = sum(map(len, previous.units[:start]))
    found_end = found_start + sum(map(len, previous.units[start:end]))
    unit_found = basis.unit_findings
    new_found = [*unit_found[:found_start], *(f for unit in units for f in unit), *unit_found[found_end:]]
    new_basis = Basis(
        program,
        [*basis.walks[:start], *walks, *basis.walks[end:]],
        [*counts[:head], *came_counts, *counts[len(old_chunks) - tail :]],
        basis.entry_ext,
        basis.callers,
        new_found,
        basis.rendered_reads + rendered,
        basis.taken_reads.union(*(reads_taken(kept.reads) for kept in kept_list if kept is not None)),
    )
    analysis = finish(
        source,
        program,
        new_found,
        [*previous.units[:start], *units, *previous.units[end:]],
        [*previous.kept[:start], *kept_list, *previous.kept[end:]],
        new_basis,
    )
    _SPLICES.clear()
    _SPLICES[id(analysis)] = (analysis, Splice(previous, (start, end), found_start, found_end, units))
    return analysis

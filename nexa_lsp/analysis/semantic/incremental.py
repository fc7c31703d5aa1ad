"""Semantic diagnostics kept from the previous version of a file.

A file's findings are kept in parts: per chunk (property checks, bad references) and per
declared name (NX110 / NX111, NX130). When an edit changes a few chunks, leaves the
declared names and kinds in the same order and the includes resolve to the same parsed
files, only the changed chunks are checked again, and only the names those chunks
declare or mention are asked again; everything else is the previous version's findings,
whose spans are anchored to their (reused) chunks. Otherwise every part is computed
again. Both give the same list as :func:`~.checks.analysis_diagnostics`
(``tests/analysis/test_semantic_incremental.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from nexa_lsp.analysis.semantic.checks import (
    chunk_problem_refs,
    declaration_diagnostics,
    has_included_declarations,
    property_diagnostics,
    reference_diagnostic,
)
from nexa_lsp.analysis.semantic.rules import nx130_unused_tool, nx140_include_not_found
from nexa_lsp.analysis.symbols import (
    Analysis,
    DeclKind,
    FileSymbols,
    NameRef,
    analyze,
    chunk_facts,
    chunk_window,
    locator_from_resolver,
)
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic
from nexa_lsp.syntax.source import ParsedChunk, SourceFile

#: At most this many changed chunks (old and new together) are checked into the previous findings.
_WINDOW = 64
#: Findings of this many recently checked files are kept (several open documents).
_STATES_SIZE = 8


@dataclass(slots=True, eq=False)
class _State:
    """One checked version of a file and its findings in parts."""

    analysis: Analysis
    includes: list[tuple[str, object, bool, FileSymbols | None]]
    properties: list[Diagnostic]  # in chunk order
    property_counts: list[int]  # per chunk
    references: list[tuple[NameRef, Diagnostic]]  # in chunk order
    reference_counts: list[int]  # per chunk
    name_index: dict[str, int]  # position of each declared name
    declared: dict[str, list[Diagnostic]]  # NX110 / NX111 per name (non-empty only), in name order
    unused: dict[str, list[Diagnostic]]  # NX130 per name (non-empty only), in name order
    unused_checked: bool  # the file has tools and agents (else no NX130)
    ref_counts: Counter[str]  # how often the file references each name
    included_refs: frozenset[str]  # names the included files reference
    auto_attach: set[str]  # names of visible agents without `uses`
    output: list[Diagnostic]

    @property
    def source(self) -> SourceFile:
        return self.analysis.source


_STATES: list[_State] = []
T = TypeVar("T")


def semantic_diagnostics(source: SourceFile, includes: IncludeResolver | None = None) -> list[Diagnostic]:
    """Diagnostics that need names resolved across the file and its includes."""
    locate = locator_from_resolver(includes) if includes is not None else None
    return kept_diagnostics(analyze(source, None, locate))


def kept_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    """:func:`~.checks.analysis_diagnostics` of ``analysis``, from the previous version's
    findings where the edit cannot change them."""
    previous = _take_previous(analysis.source)
    state = None
    if previous is not None and _same_includes(previous, analysis):
        state = previous if previous.source is analysis.source else _update(previous, analysis)
    if state is None:
        state = _fresh(analysis)
    _STATES.append(state)
    del _STATES[:-_STATES_SIZE]
    return list(state.output)


def _take_previous(source: SourceFile) -> _State | None:
    """The most recent state of ``source`` or of a version sharing its first or last chunk
    (removed from the list: its parts are updated in place)."""
    chunks = source.chunks
    for i in range(len(_STATES) - 1, -1, -1):
        old = _STATES[i].source
        if old is source or (chunks and old.chunks and (old.chunks[0] is chunks[0] or old.chunks[-1] is chunks[-1])):
            return _STATES.pop(i)
    return None


def _include_key(analysis: Analysis) -> list[tuple[str, object, bool, FileSymbols | None]]:
    return [(inc.include.name, inc.path, inc.secrets, inc.symbols) for inc in analysis.includes]


def _same_includes(previous: _State, analysis: Analysis) -> bool:
    key = _include_key(analysis)
    if len(key) != len(previous.includes) or previous.analysis.signature != analysis.signature:
        return False
    return all(a[:3] == b[:3] and a[3] is b[3] for a, b in zip(key, previous.includes, strict=True))


# ---------------------------------------------------------------------- every part


def _chunk_references(analysis: Analysis, chunk: ParsedChunk) -> list[tuple[NameRef, Diagnostic]]:
    out = []
    for ref in chunk_problem_refs(analysis, chunk):
        found = reference_diagnostic(analysis, ref)
        if found is not None:
            out.append((ref, found))
    return out


def _unused_checked(analysis: Analysis) -> bool:
    declared = analysis.file.symbols.values()
    return any(s.kind is DeclKind.TOOL for syms in declared for s in syms) and any(
        s.kind is DeclKind.AGENT for syms in declared for s in syms
    )


def _unused_of(state: _State, name: str) -> list[Diagnostic]:
    used = state.ref_counts[name] > 0 or name in state.included_refs
    auto = bool(state.auto_attach)
    decls = state.analysis.file.declarations.get(name, ())
    return [nx130_unused_tool.unused(d) for d in decls if nx130_unused_tool.is_reported(d, used, auto)]


def _is_auto_attach(analysis: Analysis, name: str) -> bool:
    symbols = analysis.scope.get(name)
    if not symbols:
        return False
    return symbols[0].kind is DeclKind.AGENT and nx130_unused_tool.is_auto_attach(symbols[0])


def _fresh(analysis: Analysis) -> _State:
    chunks = analysis.source.chunks
    properties: list[Diagnostic] = []
    property_counts: list[int] = []
    references: list[tuple[NameRef, Diagnostic]] = []
    reference_counts: list[int] = []
    for chunk in chunks:
        found = property_diagnostics(chunk)
        properties.extend(found)
        property_counts.append(len(found))
        pairs = _chunk_references(analysis, chunk)
        references.extend(pairs)
        reference_counts.append(len(pairs))
    own = analysis.file
    included = has_included_declarations(analysis)
    declared = {
        name: found for name in own.declarations if (found := declaration_diagnostics(analysis, name, included))
    }
    included_refs = frozenset(ref.name for inc in analysis.includes if inc.symbols for ref in inc.symbols.refs)
    state = _State(
        analysis,
        _include_key(analysis),
        properties,
        property_counts,
        references,
        reference_counts,
        {name: i for i, name in enumerate(own.declarations)},
        declared,
        {},
        _unused_checked(analysis),
        Counter(ref.name for ref in own.refs),
        included_refs,
        {name for name in analysis.scope if _is_auto_attach(analysis, name)},
        [],
    )
    if state.unused_checked:
        state.unused = {name: found for name in own.declarations if (found := _unused_of(state, name))}
    state.output = _output(state)
    return state


def _output(state: _State) -> list[Diagnostic]:
    out = list(state.properties)
    out.extend(nx140_include_not_found.diagnostics(state.analysis))
    out.extend(d for found in state.declared.values() for d in found)
    out.extend(d for _ref, d in state.references)
    out.extend(d for found in state.unused.values() for d in found)
    return out


# ---------------------------------------------------------------------- a few chunks changed


def _update(state: _State, analysis: Analysis) -> _State | None:
    """``state`` updated in place to ``analysis``'s file, or None when the edit changed
    more than a few chunks or the declared names or kinds."""
    old, new = state.source.chunks, analysis.source.chunks
    head, tail = chunk_window(state.source, analysis.source)
    if len(old) + len(new) - 2 * (head + tail) > _WINDOW:
        return None
    gone, came = old[head : len(old) - tail], new[head : len(new) - tail]
    gone_decls = [(s.name, s.kind) for c in gone for s in chunk_facts(c).symbols]
    came_decls = [(s.name, s.kind) for c in came for s in chunk_facts(c).symbols]
    if gone_decls != came_decls:
        return None
    state.analysis = analysis
    state.includes = _include_key(analysis)
    changed = {name for name, _kind in came_decls}

    # per chunk: the changed chunks checked again, the references to changed names asked again
    came_properties = [property_diagnostics(c) for c in came]
    state.properties, state.property_counts = _splice(
        state.properties, state.property_counts, head, tail, came_properties
    )
    came_references = [_chunk_references(analysis, c) for c in came]
    references, state.reference_counts = _splice(state.references, state.reference_counts, head, tail, came_references)
    if changed:
        for i, (ref, _found) in enumerate(references):
            if ref.name in changed:
                again = reference_diagnostic(analysis, ref)
                if again is None:  # cannot happen: the same names of the same kinds
                    return None
                references[i] = (ref, again)
    state.references = references

    # per name
    included = has_included_declarations(analysis)
    state.declared = _update_named(
        state, state.declared, changed, lambda name: declaration_diagnostics(analysis, name, included)
    )
    touched = set(changed)
    for chunks, sign in ((gone, -1), (came, 1)):
        for chunk in chunks:
            for ref in chunk_facts(chunk).refs:
                state.ref_counts[ref.name] += sign
                touched.add(ref.name)
    for name in touched:
        if state.ref_counts[name] <= 0:
            del state.ref_counts[name]
    had_auto = bool(state.auto_attach)
    for name in changed:
        if _is_auto_attach(analysis, name):
            state.auto_attach.add(name)
        else:
            state.auto_attach.discard(name)
    if state.unused_checked:
        asked = analysis.file.declarations if had_auto != bool(state.auto_attach) else touched
        state.unused = _update_named(state, state.unused, asked, lambda name: _unused_of(state, name))
    state.output = _output(state)
    return state


def _splice(flat: list[T], counts: list[int], head: int, tail: int, parts: list[list[T]]) -> tuple[list[T], list[int]]:
    """``flat`` (``counts[i]`` items per chunk) with the chunks between ``head`` and the
    last ``tail`` replaced by ``parts``."""
    end = len(counts) - tail
    start_at, tail_items = sum(counts[:head]), sum(counts[end:])
    out = flat[:start_at]
    for part in parts:
        out.extend(part)
    out.extend(flat[len(flat) - tail_items :] if tail_items else ())
    return out, counts[:head] + [len(part) for part in parts] + counts[end:]


def _update_named(
    state: _State,
    findings: dict[str, list[Diagnostic]],
    names: Iterable[str],
    compute: Callable[[str], list[Diagnostic]],
) -> dict[str, list[Diagnostic]]:
    """``findings`` with the entries of ``names`` computed again, kept in name order."""
    added = False
    for name in names:
        found = compute(name)
        if found:
            added = added or name not in findings
            findings[name] = found
        else:
            findings.pop(name, None)
    if added:
        index = state.name_index
        return dict(sorted(findings.items(), key=lambda item: index[item[0]]))
    return findings

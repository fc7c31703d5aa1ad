"""Call hierarchy: flows call agents (``A.execute(...)``, pipelines, ``join``), flows and
tools; agents use tools and other agents (``uses``).

:func:`prepare_call_hierarchy` gives the flow, agent or tool named at the cursor;
:func:`outgoing_calls` what a declaration calls, read from its own chunk;
:func:`incoming_calls` who calls it, in its file and in the other files given
(callers that include the file). A :class:`CallItem` names its declaration by
file, kind and name, so the server can hand it back in a later request.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nexa_lsp.analysis.symbols import Analysis, DeclKind, NameRef, RefRole, Symbol, chunk_facts, declared_kind
from nexa_lsp.ide.chunked import chunks_between, occurrence_at
from nexa_lsp.ide.context import item_at
from nexa_lsp.ide.describe import signature
from nexa_lsp.ide.navigation import FileAnalysis
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile

#: Kinds of declaration in the hierarchy.
CALLABLE = (DeclKind.FLOW, DeclKind.AGENT, DeclKind.TOOL)
#: Roles of a name that make its declaration a callee.
_CALL_ROLES = (RefRole.RUN_RECEIVER, RefRole.AGENT, RefRole.CALL, RefRole.USES, RefRole.HANDLER)


@dataclass(frozen=True, slots=True)
class CallItem:
    """A flow, agent or tool; ``path`` None is the document asked about. Offsets are into ``source``."""

    name: str
    kind: DeclKind
    detail: str
    path: Path | None
    source: SourceFile
    start: int
    end: int
    selection_start: int
    selection_end: int


@dataclass(frozen=True, slots=True)
class CallLink:
    """``item`` and the spans of the calls: in the caller's file (for an incoming call, the
    file of ``item``; for an outgoing one, the file of the declaration asked about)."""

    item: CallItem
    ranges: list[tuple[int, int]]


def prepare_call_hierarchy(analysis: Analysis, offset: int) -> CallItem | None:
    """The flow, agent or tool named (or declared) at ``offset``."""
    occurrence = occurrence_at(analysis, offset)
    if occurrence is None or occurrence.symbol is None or occurrence.symbol.kind not in CALLABLE:
        return None
    return _item(analysis, occurrence.symbol)


def outgoing_calls(analysis: Analysis, item: CallItem) -> list[CallLink]:
    """What ``item`` calls; ``analysis`` is the analysis of the file that declares it."""
    decl = _declaration(analysis, item)
    if decl is None:
        return []
    grouped: dict[int, tuple[Symbol, list[tuple[int, int]]]] = {}
    for ref in _refs_inside(analysis.source, decl):
        symbol = analysis.lookup(ref.name)
        if symbol is None or symbol.kind not in CALLABLE or ref.role not in _CALL_ROLES:
            continue
        grouped.setdefault(id(symbol.decl), (symbol, []))[1].append((ref.span.start, ref.span.end))
    return [CallLink(_item(analysis, symbol), ranges) for symbol, ranges in grouped.values()]


def incoming_calls(analysis: Analysis, item: CallItem, others: Iterable[FileAnalysis] = ()) -> list[CallLink]:
    """Who calls ``item`` (declared in ``analysis``' file), there and in ``others``."""
    decl = _declaration(analysis, item)
    if decl is None:
        return []
    out: list[CallLink] = []
    for path, other in [(None, analysis), *others]:
        grouped: dict[int, tuple[t.Decl, list[tuple[int, int]]]] = {}
        for ref in other.file.refs:
            if ref.name != decl.name or ref.role not in _CALL_ROLES:
                continue
            symbol = other.lookup(ref.name)
            if symbol is None or symbol.decl is not decl:
                continue
            caller = _enclosing(other.source, ref.span.start)
            if caller is not None:
                grouped.setdefault(id(caller), (caller, []))[1].append((ref.span.start, ref.span.end))
        for caller, ranges in grouped.values():
            kind = declared_kind(caller)
            assert kind is not None
            out.append(CallLink(_item_of(caller, kind, path, other.source), ranges))
    return out


def _item(analysis: Analysis, symbol: Symbol) -> CallItem:
    if symbol.include is None:
        return _item_of(symbol.decl, symbol.kind, None, analysis.source)
    source = symbol.source
    assert source is not None  # a symbol comes from an include that was found and parsed
    return _item_of(symbol.decl, symbol.kind, symbol.include.path, source)


def _item_of(decl: t.Decl, kind: DeclKind, path: Path | None, source: SourceFile) -> CallItem:
    span, name = decl.span, decl.name_span
    return CallItem(decl.name, kind, signature(decl), path, source, span.start, span.end, name.start, name.end)


def _declaration(analysis: Analysis, item: CallItem) -> t.Decl | None:
    """The file's own declaration that ``item`` names."""
    for symbol in analysis.file.symbols.get(item.name, []):
        if symbol.kind is item.kind:
            return symbol.decl
    return None


def _refs_inside(source: SourceFile, decl: t.Decl) -> list[NameRef]:
    span = decl.span
    return [
        ref
        for chunk in chunks_between(source, span.start, span.end)
        for ref in chunk_facts(chunk).refs
        if span.start <= ref.span.start and ref.span.end <= span.end
    ]


def _enclosing(source: SourceFile, offset: int) -> t.Decl | None:
    item = item_at(source, offset)
    if not isinstance(item, t.Decl) or declared_kind(item) not in CALLABLE or not item.name:
        return None
    return item


def item_named(analysis: Analysis, name: str, kind: DeclKind) -> CallItem | None:
    """The item of the file's own declaration ``name`` of ``kind`` (how a later request
    names an item it was given)."""
    for symbol in analysis.file.symbols.get(name, []):
        if symbol.kind is kind and kind in CALLABLE:
            return _item(analysis, symbol)
    return None

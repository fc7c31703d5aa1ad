"""Go to definition, find references, rename and document highlight.

Cross-file features take the analyses of the other files that may mention the
symbol (the caller decides which: open documents, files that include the one
declaring it ...). Symbols are compared by declaration identity, so the
analyses must share parsed files for the same path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nexa_lsp.analysis.symbols import Analysis, LocalVar, Occurrence, Symbol, is_identifier
from nexa_lsp.ide.chunked import occurrence_at
from nexa_lsp.ide.context import item_at
from nexa_lsp.ide.knowledge import HARD_KEYWORDS
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile


@dataclass(frozen=True, slots=True)
class Place:
    """A range of a file: ``path`` None means the document that was asked about."""

    path: Path | None
    source: SourceFile
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Highlight:
    start: int
    end: int
    write: bool


class RenameError(Exception):
    """A rename that cannot be done; the message says why."""


#: Another file's analysis and its path.
FileAnalysis = tuple[Path | None, Analysis]


def target_at(analysis: Analysis, offset: int) -> Occurrence | None:
    occurrence = occurrence_at(analysis, offset)
    if occurrence is None or (occurrence.symbol is None and occurrence.local is None):
        return None
    return occurrence


def _symbol_place(analysis: Analysis, symbol: Symbol) -> Place | None:
    if symbol.include is None:
        return Place(None, analysis.source, symbol.name_span.start, symbol.name_span.end)
    included = symbol.include.symbols
    if included is None:
        return None
    return Place(symbol.include.path, included.source, symbol.name_span.start, symbol.name_span.end)


def definition(analysis: Analysis, offset: int) -> list[Place]:
    """Where the name at ``offset`` is declared (or the file an include names)."""
    occurrence = target_at(analysis, offset)
    if occurrence is not None:
        if occurrence.symbol is not None:
            place = _symbol_place(analysis, occurrence.symbol)
            return [place] if place is not None else []
        assert occurrence.local is not None
        span = occurrence.local.definition
        return [Place(None, analysis.source, span.start, span.end)] if span is not None else []
    item = item_at(analysis.source, offset)
    if isinstance(item, t.Include):
        for inc in analysis.includes:
            if inc.include is item and inc.symbols is not None:
                return [Place(inc.path, inc.symbols.source, 0, 0)]
    return []


def _local_places(analysis: Analysis, var: LocalVar, include_declaration: bool) -> list[Place]:
    out = []
    for span, binds in var.occurrences():
        if binds and not include_declaration and span is var.definition:
            continue
        out.append(Place(None, analysis.source, span.start, span.end))
    return out


def symbol_places(
    symbol: Symbol, analysis: Analysis, others: Iterable[FileAnalysis], include_declaration: bool = True
) -> list[Place]:
    """Every place that names ``symbol``: in the analysed document and in ``others``."""
    others = list(others)
    places: list[Place] = []
    seen: set[tuple[Path | None, int]] = set()

    def add(path: Path | None, source: SourceFile, start: int, end: int) -> None:
        key = (path, start)
        if key not in seen:
            seen.add(key)
            places.append(Place(path, source, start, end))

    if include_declaration:
        decl_place = _symbol_place(analysis, symbol)
        if decl_place is not None:
            add(decl_place.path, decl_place.source, decl_place.start, decl_place.end)
    for span in analysis.references_to(symbol):
        add(None, analysis.source, span.start, span.end)
    for path, other in others:
        if other is analysis:
            continue
        for span in other.references_to(symbol):
            add(path, other.source, span.start, span.end)
        if include_declaration:
            for decl in other.file.declarations.get(symbol.name, ()):
                if decl is symbol.decl:
                    add(path, other.source, decl.name_span.start, decl.name_span.end)
    if symbol.include is not None and symbol.include.symbols is not None:
        # references inside the included file itself, resolved in that file's own scope
        for _path, other in others:
            if other.source is symbol.include.symbols.source:
                break
        else:
            inc = symbol.include.symbols
            for ref in inc.refs:
                if ref.name == symbol.name:
                    own = inc.declarations.get(ref.name)
                    if own and own[0] is symbol.decl:
                        add(symbol.include.path, inc.source, ref.span.start, ref.span.end)
    return places


def references(
    analysis: Analysis, offset: int, others: Iterable[FileAnalysis] = (), include_declaration: bool = True
) -> list[Place]:
    occurrence = target_at(analysis, offset)
    if occurrence is None:
        return []
    if occurrence.local is not None:
        return _local_places(analysis, occurrence.local, include_declaration)
    assert occurrence.symbol is not None
    return symbol_places(occurrence.symbol, analysis, others, include_declaration)


def highlights(analysis: Analysis, offset: int) -> list[Highlight]:
    """Occurrences of the name at ``offset`` in the analysed document."""
    occurrence = target_at(analysis, offset)
    if occurrence is None:
        return []
    if occurrence.local is not None:
        return [Highlight(s.start, s.end, binds) for s, binds in occurrence.local.occurrences()]
    assert occurrence.symbol is not None
    symbol = occurrence.symbol
    out = [Highlight(s.start, s.end, False) for s in analysis.references_to(symbol)]
    if symbol.include is None:
        out.append(Highlight(symbol.name_span.start, symbol.name_span.end, True))
    out.sort(key=lambda h: h.start)
    return out


def prepare_rename(analysis: Analysis, offset: int) -> tuple[int, int, str]:
    """The range and current text of the name to rename; raises :class:`RenameError`."""
    occurrence = target_at(analysis, offset)
    if occurrence is None:
        raise RenameError("There is no agent, tool, flow, protocol or variable name at the cursor.")
    span = occurrence.span
    return span.start, span.end, analysis.source.text[span.start : span.end]


def rename(
    analysis: Analysis, offset: int, new_name: str, others: Iterable[FileAnalysis] = ()
) -> dict[Path | None, list[tuple[Place, str]]]:
    """Edits per file (None = the analysed document) that rename the name at ``offset``."""
    occurrence = target_at(analysis, offset)
    if occurrence is None:
        raise RenameError("There is no agent, tool, flow, protocol or variable name at the cursor.")
    if not is_identifier(new_name):
        raise RenameError(
            f"`{new_name}` is not a valid Nexa name (letters, digits and `_`, not starting with a digit)."
        )
    if new_name in HARD_KEYWORDS:
        raise RenameError(f"`{new_name}` is a keyword and cannot be a name.")
    others = list(others)
    if occurrence.local is not None:
        var = occurrence.local
        if any(v.name == new_name and v.owner is var.owner for v in analysis.file.locals):
            raise RenameError(f"`{new_name}` is already a variable of this flow.")
        places = _local_places(analysis, var, True)
    else:
        assert occurrence.symbol is not None
        symbol = occurrence.symbol
        existing = analysis.lookup(new_name)
        if existing is not None and existing != symbol:
            raise RenameError(f"`{new_name}` is already declared (a {existing.kind.value}).")
        places = symbol_places(symbol, analysis, others, True)
    edits: dict[Path | None, list[tuple[Place, str]]] = {}
    for place in places:
        edits.setdefault(place.path, []).append((place, new_name))
    return edits

"""Per-chunk IDE data, and finding the chunk under a position.

A document is parsed in chunks of top-level items (:mod:`nexa_lsp.syntax.chunks`),
and :func:`~nexa_lsp.syntax.source.parse_source` reuses the object of every
chunk whose text an edit left alone, moving its anchor. What the IDE derives
from one chunk (outline entries, folds, semantic tokens, the index of names) is
kept in one :class:`ChunkRecord` per chunk, in the analysis layer's
:class:`~nexa_lsp.analysis.symbols.ChunkCache`; a request after an edit
computes the edited chunk's record and assembles the others' from the cache.
Offsets in a record are chunk-relative (spans anchored on the chunk, lines
counted from the chunk's first line), so they follow the chunk when it moves.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nexa_lsp.analysis.symbols import Analysis, ChunkCache, LocalVar, NameRef, Occurrence, Symbol, chunk_facts
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.syntax.tree import Span
from nexa_lsp.text import LineIndex

if TYPE_CHECKING:
    from nexa_lsp.ide.outline import OutlineSymbol
    from nexa_lsp.ide.structure import ChunkFolds
    from nexa_lsp.ide.tokens import ChunkTokens


#: One name of a chunk: chunk-relative start and end, what it is, its span, and whether it binds.
NameEntry = tuple[int, int, NameRef | LocalVar | Symbol, Span, bool]


@dataclass(slots=True, eq=False)
class ChunkRecord:
    """What the IDE computed from one chunk so far (each part filled when first asked for)."""

    outline: list[OutlineSymbol] | None = None
    folds: ChunkFolds | None = None
    tokens: ChunkTokens | None = None
    names: list[NameEntry] | None = None
    lines: LineIndex | None = None
    extent: tuple[int, int] | None = None  # line breaks in the chunk, UTF-16 length after the last one


_RECORDS: ChunkCache[ChunkRecord] = ChunkCache(lambda _chunk: ChunkRecord())


def record(chunk: ParsedChunk) -> ChunkRecord:
    """The IDE record of ``chunk`` (kept while the chunk object is reused)."""
    return _RECORDS.get(chunk)


def chunk_lines(chunk: ParsedChunk) -> LineIndex:
    """Line starts of the chunk's own text (line 0 is the chunk's first line)."""
    rec = record(chunk)
    if rec.lines is None:
        rec.lines = LineIndex(chunk.text)
    return rec.lines


def utf16_length(text: str) -> int:
    """UTF-16 code units of ``text`` (as :func:`nexa_lsp.text.utf16_length`, at C speed)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def _extent(text: str) -> tuple[int, int]:
    """LSP line breaks in ``text`` (``\\n``, ``\\r\\n``, a lone ``\\r``) and the UTF-16 length after the last."""
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    return breaks, utf16_length(text[max(text.rfind("\n"), text.rfind("\r")) + 1 :])


def real_text(source: SourceFile, chunk: ParsedChunk) -> str | None:
    """The document's own text of ``chunk`` when it differs from the chunk's text (where
    the parser blanked the version declaration, a BOM or a ``#!`` line), else None."""
    if chunk.anchor.base != 0:
        return None
    text = source.text[: len(chunk.text)]
    return None if text == chunk.text else text


def walk_chunks(source: SourceFile, chunks: list[ParsedChunk] | None = None) -> Iterator[tuple[ParsedChunk, int, int]]:
    """Each chunk (of ``chunks``, consecutive chunks of ``source``; all by default) with the
    line and UTF-16 column where it starts, counted from per-chunk line counts."""
    chunks = source.chunks if chunks is None else chunks
    if not chunks:
        return
    first = chunks[0].anchor.base
    if first == 0:  # the document's start: no line index needed (building one is O(lines))
        line = column = 0
    else:
        position = source.lines.utf16_position(first)
        line, column = position.line, position.character
    for chunk in chunks:
        yield chunk, line, column
        own = real_text(source, chunk)
        if own is not None:
            breaks, tail = _extent(own)
        else:
            rec = record(chunk)
            if rec.extent is None:
                rec.extent = _extent(chunk.text)
            breaks, tail = rec.extent
        if breaks:
            line += breaks
            column = tail
        else:
            column += tail


def _base(chunk: ParsedChunk) -> int:
    return chunk.anchor.base


def chunk_index(source: SourceFile, offset: int) -> int:
    """Index of the chunk holding ``offset`` (the last chunk for the end of the text)."""
    return max(0, bisect.bisect_right(source.chunks, offset, key=_base) - 1)


def chunks_at(source: SourceFile, offset: int) -> list[ParsedChunk]:
    """The chunks a span holding ``offset`` can be in: the chunk that ends at
    ``offset`` (when it is a boundary), then the chunk holding it."""
    if not source.chunks:
        return []
    index = chunk_index(source, offset)
    chunk = source.chunks[index]
    if index > 0 and chunk.anchor.base == offset:
        return [source.chunks[index - 1], chunk]
    return [chunk]


def chunks_between(source: SourceFile, start: int, end: int) -> list[ParsedChunk]:
    """The chunks overlapping ``[start, end]`` (a chunk ending at ``start`` included)."""
    chunks = source.chunks
    if not chunks:
        return []
    first = chunk_index(source, start)
    if first > 0 and chunks[first].anchor.base == start:
        first -= 1
    last = max(first, bisect.bisect_right(chunks, end, key=_base) - 1)
    return chunks[first : last + 1]


# ---------------------------------------------------------------------- names in a chunk


def _names(chunk: ParsedChunk) -> list[NameEntry]:
    rec = record(chunk)
    if rec.names is None:
        base = chunk.anchor.base
        facts = chunk_facts(chunk)
        entries: list[NameEntry] = []
        for ref in facts.refs:
            entries.append((ref.span.start - base, ref.span.end - base, ref, ref.span, False))
        for var in facts.locals:
            for span, binds in var.occurrences():
                entries.append((span.start - base, span.end - base, var, span, binds))
        for symbol in facts.symbols:
            span = symbol.name_span
            entries.append((span.start - base, span.end - base, symbol, span, True))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        rec.names = entries
    return rec.names


def occurrence_at(analysis: Analysis, offset: int) -> Occurrence | None:
    """The name at ``offset`` and what it stands for (a cursor right after a name still counts).

    The same answer as :meth:`Analysis.occurrence_at`, from the index of the
    chunks around ``offset`` only.
    """
    entries: list[NameEntry] = []
    for chunk in chunks_at(analysis.source, offset):
        base = chunk.anchor.base
        entries.extend((s + base, e + base, what, span, binds) for s, e, what, span, binds in _names(chunk))
    pos = bisect.bisect_right(entries, offset, key=lambda entry: entry[0])
    best: NameEntry | None = None
    for i in range(max(0, pos - 3), min(len(entries), pos + 1)):
        entry = entries[i]
        if entry[0] <= offset <= entry[1] and (best is None or entry[0] >= best[0]):
            best = entry
    if best is None:
        return None
    _start, _end, what, span, binds = best
    if isinstance(what, LocalVar):
        return Occurrence(span, local=what, is_declaration=binds)
    if isinstance(what, NameRef):
        return Occurrence(span, analysis.lookup(what.name), role=what.role)
    return Occurrence(span, what, is_declaration=True)


def locals_at(analysis: Analysis, offset: int) -> list[LocalVar]:
    """Variables and parameters of the flow (tool function, test ...) holding ``offset``,
    in the order :attr:`FileSymbols.locals` has them."""
    out = []
    for chunk in chunks_at(analysis.source, offset):
        for var in chunk_facts(chunk).locals:
            owner = var.owner.span
            if owner.start <= offset <= owner.end:
                out.append(var)
    return out


def local_named(analysis: Analysis, name: str, offset: int) -> LocalVar | None:
    """The variable or parameter ``name`` visible at ``offset`` (as :meth:`Analysis.local_named`)."""
    return next((var for var in locals_at(analysis, offset) if var.name == name), None)

"""LSP answers assembled per chunk: what ``to_lsp`` builds for one chunk, kept while the chunk
object is reused and starts at the same line and column.

A document's chunks (:mod:`nexa_lsp.syntax.chunks`) survive an edit that leaves their
text alone; their positions move only when lines or columns before them change. The
diagnostics and the outline of a chunk are converted by :mod:`nexa_lsp.server.to_lsp`
(the only place protocol objects are built) once per chunk position and reused after
that, so an edit converts the edited chunk and the chunks it moved. Their JSON (compact,
decoding to what pygls' converter writes) is kept with them: ``publishDiagnostics``, full
``textDocument/diagnostic`` reports and ``documentSymbol`` are joined from kept strings, and
the diagnostics' result id is a digest of kept per-finding digests.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any

from nexa_lsp.server import to_lsp

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nexa_lsp.server.from_lsp import ClientFacts
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import ParsedChunk, SourceFile
    from nexa_lsp.text import LineIndex, Position


class _ChunkDiagnostics:
    """What the server keeps of one chunk for diagnostics: where it starts (``at``, in the
    document ``uri``) and the encoded findings anchored on it, valid while it
    starts there: by finding (``converted``) and, for the last check's findings of the chunk
    (``run``, the finding objects), their LSP forms, JSON and digests together."""

    __slots__ = ("at", "converted", "run", "run_digests", "run_json", "run_lsp", "uri")

    def __init__(self) -> None:
        self.at: tuple[int, int] | None = None
        self.uri = ""
        self.converted: dict[tuple[Any, ...], EncodedDiagnostic] = {}
        self.run: list[Diagnostic] | None = None
        self.run_lsp: list[lsp.Diagnostic] = []
        self.run_json = ""
        self.run_digests = b""


#: A chunk as ``_anchored_entries`` finds it: the chunk, its entry (None: not cached), its start
#: line and UTF-16 column, and the document's text of it when that is not the chunk's.
_Anchored = tuple["ParsedChunk", "_ChunkDiagnostics | None", int, int, "str | None"]

#: One finding for the client: its LSP form, that form's JSON text and a digest of the text.
EncodedDiagnostic = tuple["lsp.Diagnostic", str, bytes]


@dataclass(frozen=True, slots=True)
class ConvertedDiagnostics:
    """A document's findings for the client: LSP objects, their JSON and the result id."""

    lsp: list[lsp.Diagnostic]
    items_json: str  # the JSON of ``lsp`` as the items of a list (no brackets)
    result_id: str  # a digest of the findings' digests (equal ids: nothing to send again)


_ANCHOR_OF = operator.attrgetter("span.anchor")

#: Findings not kept per chunk placed by the document's lines up to theirs, before the whole index is built.
FEW_UNCACHED = 4

_CHUNK_DIAGNOSTICS: list[Any] = []  # the ChunkCache of _ChunkDiagnostics, made when first needed (start-up)
_CONVERTER: list[Any] = []  # pygls' converter, made when first needed (start-up)


def encode_json(value: object) -> str:
    """Compact JSON, as every pre-encoded answer is written (pygls' own spacing is not needed:
    clients decode the JSON; only its value counts)."""
    return json.dumps(value, separators=(",", ":"))


class _ChunkPositions:
    """UTF-16 positions of document offsets inside one chunk, from the chunk's own line index
    and where the chunk starts (so an edit need not index the whole document's lines)."""

    __slots__ = ("base", "column", "line", "own")

    def __init__(self, own: LineIndex, base: int, line: int, column: int) -> None:
        self.own, self.base, self.line, self.column = own, base, line, column

    def utf16_position(self, offset: int) -> Position:
        from nexa_lsp.text import Position  # lazy: start-up

        pos = self.own.utf16_position(offset - self.base)
        return Position(self.line + pos.line, pos.character + self.column if pos.line == 0 else pos.character)


def _encoded(d: Diagnostic, uri: str, lines: to_lsp.Utf16Positions, client: ClientFacts) -> EncodedDiagnostic:
    """``d`` converted by :func:`to_lsp.diagnostic`, encoded as pygls' converter unstructures it."""
    if not _CONVERTER:
        from pygls.protocol import default_converter  # lazy: start-up

        _CONVERTER.append(default_converter())  # type: ignore[no-untyped-call]
    converted = to_lsp.diagnostic(d, uri, lines, client)
    text = encode_json(_CONVERTER[0].unstructure(converted))
    return converted, text, hashlib.sha1(text.encode(), usedforsecurity=False).digest()


def _finding_key(d: Diagnostic) -> tuple[Any, ...]:
    """Everything of a chunk-anchored finding that its LSP form depends on, chunk-relative."""
    related = tuple((r.span.rel_start, r.span.rel_end, r.message) for r in d.related)
    fixes = tuple((f.title, f.safe) for f in d.fixes)
    data = repr(sorted(d.data.items())) if d.data else ""
    return (d.code, d.message, d.severity, d.span.rel_start, d.span.rel_end, d.unnecessary, related, fixes, data)


def _chunk_local(d: Diagnostic, anchor: Any, length: int) -> bool:
    """Whether ``d`` and its related locations lie inside the chunk of ``anchor`` (``length`` long)."""
    return (
        d.span.rel_start >= 0
        and d.span.rel_end <= length
        and all(r.span.anchor is anchor and r.span.rel_start >= 0 and r.span.rel_end <= length for r in d.related)
    )


def _anchored_entries(source: SourceFile, cache: Any) -> dict[int, _Anchored]:
    """By ``id`` of each chunk's anchor: the chunk, its entry (None for a chunk whose text is not
    the document's, not cached), its start (line, UTF-16 column, from
    :func:`nexa_lsp.ide.chunked.walk_chunks`) and, for the uncached, the document's text of it."""
    from nexa_lsp.ide.chunked import real_text, walk_chunks  # lazy: start-up

    out: dict[int, _Anchored] = {}
    for chunk, line, column in walk_chunks(source):
        own = real_text(source, chunk)
        out[id(chunk.anchor)] = (chunk, None if own is not None else cache.get(chunk), line, column, own)
    return out


def chunked_diagnostics(
    items: list[Diagnostic], uri: str, source: SourceFile, client: ClientFacts
) -> ConvertedDiagnostics:
    """``[to_lsp.diagnostic(d, uri, source.lines, client) for d in items]``, their JSON and result
    id. Findings anchored on a chunk that did not move (same chunk object, same start) keep all
    three: the same finding objects as in the last check join the chunk's kept JSON as they
    are; others are converted once per chunk position. So an edit converts and encodes the
    edited chunk's findings and those of chunks that moved; the rest is joining kept strings."""
    from nexa_lsp.analysis.symbols import ChunkCache  # lazy: start-up

    if not _CHUNK_DIAGNOSTICS:
        _CHUNK_DIAGNOSTICS.append(ChunkCache(lambda _chunk: _ChunkDiagnostics()))
    anchors = _anchored_entries(source, _CHUNK_DIAGNOSTICS[0]) if items else {}
    out: list[lsp.Diagnostic] = []
    texts: list[str] = []
    digests: list[bytes] = []
    uncached = 0
    for anchor, group in groupby(items, _ANCHOR_OF):  # anchors compare by identity
        run = list(group)
        found = anchors.get(id(anchor))
        entry = found[1] if found is not None and found[0].anchor is anchor else None
        if found is None or entry is None:  # not on a cached chunk: converted each time
            for d in run:
                uncached += 1
                positions = _positions_of(d, found, source, uncached > FEW_UNCACHED)
                converted, text, digest = _encoded(d, uri, positions, client)
                out.append(converted)
                texts.append(text)
                digests.append(digest)
            continue
        chunk, _entry, line, column, _own = found
        if entry.at != (line, column) or entry.uri != uri:
            entry.at, entry.uri, entry.converted, entry.run = (line, column), uri, {}, None
        kept = entry.run
        if kept is None or len(kept) != len(run) or not all(map(operator.is_, run, kept)):
            _encode_run(entry, chunk, run, uri, source, client)
        out.extend(entry.run_lsp)
        texts.append(entry.run_json)
        digests.append(entry.run_digests)
    result_id = hashlib.sha1(b"".join(digests), usedforsecurity=False).hexdigest()[:20]
    return ConvertedDiagnostics(out, ",".join(texts), result_id)


def _positions_of(d: Diagnostic, found: _Anchored | None, source: SourceFile, many: bool) -> to_lsp.Utf16Positions:
    """How to place ``d``, a finding not kept per chunk: by its chunk's own text when it lies in
    it (the chunk whose text is not the document's); else, unless there are ``many`` such
    findings, by the lines of the document up to the end of the finding's last line (a finding
    at the top, like NXM001, needs no index of the whole document); else by all its lines."""
    from nexa_lsp.text import LineIndex  # lazy: start-up

    if found is not None and found[0].anchor is d.span.anchor:
        chunk, _entry, line, column, own = found
        if own is not None and _chunk_local(d, chunk.anchor, len(own)):
            return _ChunkPositions(LineIndex(own), chunk.anchor.base, line, column)
    if many:
        return source.lines
    text = source.text
    last = max([d.span.start, d.span.end, *(r.span.end for r in d.related), *(r.span.start for r in d.related)])
    line_end = text.find("\n", last)  # whole lines: a line break is never cut in two
    return LineIndex(text if line_end == -1 else text[: line_end + 1])


def _encode_run(
    entry: _ChunkDiagnostics,
    chunk: ParsedChunk,
    run: list[Diagnostic],
    uri: str,
    source: SourceFile,
    client: ClientFacts,
) -> None:
    """The findings of ``run`` (anchored on ``chunk``, whose entry is ``entry``) encoded into the
    entry; it keeps the run as a whole when every finding lies inside the chunk."""
    from nexa_lsp.ide.chunked import chunk_lines  # lazy: start-up

    line, column = entry.at or (0, 0)
    positions = _ChunkPositions(chunk_lines(chunk), chunk.anchor.base, line, column)
    length = len(chunk.text)
    whole = True
    encoded: list[EncodedDiagnostic] = []
    for d in run:
        if not _chunk_local(d, chunk.anchor, length):  # reaches outside the chunk: converted each time
            whole = False
            encoded.append(_encoded(d, uri, source.lines, client))
            continue
        key = _finding_key(d)
        known = entry.converted.get(key)
        if known is None:
            known = entry.converted[key] = _encoded(d, uri, positions, client)
        encoded.append(known)
    entry.run = run if whole else None
    entry.run_lsp = [e[0] for e in encoded]
    entry.run_json = ",".join(e[1] for e in encoded)
    entry.run_digests = b"".join(e[2] for e in encoded)


def publish_diagnostics_json(uri: str, items_json: str, version: int | None) -> str:
    """The JSON of ``to_lsp.publish_diagnostics(uri, items, version)`` given the items' JSON."""
    tail = "" if version is None else f',"version":{encode_json(version)}'
    return f'{{"uri":{encode_json(uri)},"diagnostics":[{items_json}]{tail}}}'


def full_report_json(items_json: str, result_id: str) -> str:
    """The JSON of ``to_lsp.document_report``'s full report given the items' JSON."""
    return f'{{"kind":"full","resultId":{encode_json(result_id)},"items":[{items_json}]}}'


class EncodedJson:
    """A request's answer already encoded as JSON text: ``app.NexaProtocol`` sends it as it
    is, without pygls' cattrs pass over the protocol objects."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


#: Encodes LSP symbols as the JSON items of a list (the server's converter, ``features.py``).
SymbolEncoder = Callable[[Sequence["lsp.DocumentSymbol"]], str]


class _ChunkSymbols:
    """A chunk's outline as LSP symbols (and, once asked, their JSON), valid while the chunk
    starts at ``at`` (line, UTF-16 column)."""

    __slots__ = ("at", "json", "symbols")

    def __init__(self) -> None:
        self.at: tuple[int, int] | None = None
        self.symbols: list[lsp.DocumentSymbol] = []
        self.json: str | None = None


_CHUNK_SYMBOLS: list[Any] = []  # the ChunkCache of _ChunkSymbols, made when first needed (start-up)


def chunked_document_symbols(
    uri: str, source: SourceFile, client: ClientFacts, encode: SymbolEncoder | None = None
) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation] | EncodedJson:
    """:func:`~nexa_lsp.server.to_lsp.document_symbols` of the whole document, a tree built from per-chunk LSP symbols:
    a chunk's symbols are converted again only when the chunk is new or starts elsewhere.
    With ``encode`` (and a client that takes the tree) the answer is the JSON text, joined
    from each chunk's encoding, kept with its symbols."""
    from nexa_lsp.analysis.symbols import ChunkCache  # lazy: start-up
    from nexa_lsp.ide.chunked import real_text, walk_chunks  # lazy: start-up
    from nexa_lsp.ide.outline import chunk_outline  # lazy: start-up
    from nexa_lsp.ide.outline import document_symbols as outline  # lazy: start-up

    if not client.hierarchical_symbols:
        return to_lsp.document_symbols(uri, source.lines, outline(source), client)
    if not _CHUNK_SYMBOLS:
        _CHUNK_SYMBOLS.append(ChunkCache(lambda _chunk: _ChunkSymbols()))
    cache = _CHUNK_SYMBOLS[0]
    lines = source.lines
    out: list[lsp.DocumentSymbol] = []
    parts: list[str] = []
    for chunk, line, column in walk_chunks(source):
        if real_text(source, chunk) is not None:  # its text differs from the chunk's: not cached
            fresh = [to_lsp.document_symbol(lines, s) for s in chunk_outline(chunk)]
            out.extend(fresh)
            if encode is not None and fresh:
                parts.append(encode(fresh))
            continue
        entry = cache.get(chunk)
        if entry.at != (line, column):
            entry.symbols = [to_lsp.document_symbol(lines, s) for s in chunk_outline(chunk)]
            entry.at, entry.json = (line, column), None
        if encode is None:
            out.extend(entry.symbols)
        elif entry.symbols:
            if entry.json is None:
                entry.json = encode(entry.symbols)
            parts.append(entry.json)
    if encode is not None:
        return EncodedJson("[" + ",".join(parts) + "]")
    return out

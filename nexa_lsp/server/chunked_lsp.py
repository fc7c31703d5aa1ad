"""LSP answers assembled per chunk: what ``to_lsp`` builds for one chunk, kept while the chunk
object is reused and starts at the same line and column.

A document's chunks (:mod:`nexa_lsp.syntax.chunks`) survive an edit that leaves their
text alone; their positions move only when lines or columns before them change. The
diagnostics and the outline of a chunk are converted by :mod:`nexa_lsp.server.to_lsp`
(the only place protocol objects are built) once per chunk position and reused after
that, so an edit converts the edited chunk and the chunks it moved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nexa_lsp.server import to_lsp

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nexa_lsp.server.from_lsp import ClientFacts
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile
    from nexa_lsp.text import LineIndex


class _ChunkDiagnostics:
    """LSP diagnostics of findings anchored on one chunk (with their JSON and its digest), valid
    while the chunk starts at ``at`` in the document ``uri``."""

    __slots__ = ("at", "converted", "seen", "uri")

    def __init__(self) -> None:
        self.at: tuple[int, int] | None = None
        self.uri = ""
        self.converted: dict[tuple[Any, ...], EncodedDiagnostic] = {}
        self.seen: dict[int, tuple[Diagnostic, EncodedDiagnostic]] = {}  # by id of the finding object


#: One finding for the client: its LSP form, that form's JSON text and a digest of the text.
EncodedDiagnostic = tuple["lsp.Diagnostic", str, bytes]


@dataclass(frozen=True, slots=True)
class ConvertedDiagnostics:
    """A document's findings for the client: LSP objects, their JSON and the result id."""

    lsp: list[lsp.Diagnostic]
    items_json: str  # the JSON of ``lsp`` as the items of a list (no brackets)
    result_id: str  # a digest of ``items_json`` (equal ids: nothing to send again)


_CHUNK_DIAGNOSTICS: list[Any] = []  # the ChunkCache of _ChunkDiagnostics, made when first needed (start-up)
_CONVERTER: list[Any] = []  # pygls' converter, made when first needed (start-up)


def encode_json(value: object) -> str:
    """Compact JSON, as every pre-encoded answer is written (pygls' own spacing is not needed:
    clients decode the JSON; only its value counts)."""
    return json.dumps(value, separators=(",", ":"))


def _encoded(d: Diagnostic, uri: str, lines: LineIndex, client: ClientFacts) -> EncodedDiagnostic:
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


def chunked_diagnostics(
    items: list[Diagnostic], uri: str, source: SourceFile, client: ClientFacts
) -> ConvertedDiagnostics:
    """``[to_lsp.diagnostic(d, uri, source.lines, client) for d in items]``, their JSON and result
    id, reusing all three for a finding anchored on a chunk that did not move (same chunk object,
    same start), so an edit converts and encodes the edited chunk's findings and those of chunks
    that moved; the rest is joining kept strings and digests."""
    from nexa_lsp.analysis.symbols import ChunkCache  # lazy: start-up
    from nexa_lsp.ide.chunked import real_text, walk_chunks  # lazy: start-up

    if not _CHUNK_DIAGNOSTICS:
        _CHUNK_DIAGNOSTICS.append(ChunkCache(lambda _chunk: _ChunkDiagnostics()))
    cache = _CHUNK_DIAGNOSTICS[0]
    lines = source.lines
    anchors: dict[int, tuple[Any, _ChunkDiagnostics]] = {}
    if items:
        for chunk, line, column in walk_chunks(source):
            if real_text(source, chunk) is not None:
                continue
            entry = cache.get(chunk)
            if entry.at != (line, column) or entry.uri != uri:
                entry.at, entry.uri, entry.converted, entry.seen = (line, column), uri, {}, {}
            anchors[id(chunk.anchor)] = (chunk.anchor, entry)
    out: list[lsp.Diagnostic] = []
    texts: list[str] = []
    digests: list[bytes] = []
    for d in items:
        found = anchors.get(id(d.span.anchor))
        if found is None or found[0] is not d.span.anchor or any(r.span.anchor is not found[0] for r in d.related):
            encoded = _encoded(d, uri, lines, client)
        else:
            entry = found[1]
            seen = entry.seen.get(id(d))
            if seen is not None and seen[0] is d:  # the same finding object as in an earlier check
                encoded = seen[1]
            else:
                key = _finding_key(d)
                known = entry.converted.get(key)
                encoded = entry.converted[key] = known if known is not None else _encoded(d, uri, lines, client)
                if len(entry.seen) > 2 * len(entry.converted) + 8:  # findings of earlier checks
                    entry.seen.clear()
                entry.seen[id(d)] = (d, encoded)
        out.append(encoded[0])
        texts.append(encoded[1])
        digests.append(encoded[2])
    result_id = hashlib.sha1(b"".join(digests), usedforsecurity=False).hexdigest()[:20]
    return ConvertedDiagnostics(out, ",".join(texts), result_id)


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

"""Semantic tokens: what each name is (agent, tool, flow, protocol, variable ...).

Keywords, strings and comments are left to the TextMate grammar; these tokens
colour names by meaning, which a grammar cannot know.

Tokens are computed per chunk (:mod:`nexa_lsp.ide.chunked`) and kept while the
chunk object is reused and the names it mentions resolve to the same kinds of
declaration, so a request after an edit recomputes the edited chunk (and the
chunks whose names changed meaning) only. The LSP encoding is assembled the
same way from per-chunk encodings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from nexa_lsp.analysis.symbols import RUN_MEMBERS, Analysis, DeclKind, chunk_facts
from nexa_lsp.ide.chunked import chunk_lines, chunks_between, real_text, record, utf16_length, walk_chunks
from nexa_lsp.ide.legend import TOKEN_TYPES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk
from nexa_lsp.syntax.tree import Anchor
from nexa_lsp.syntax.version import VersionPath
from nexa_lsp.text import LineIndex

_TYPE_INDEX = {name: i for i, name in enumerate(TOKEN_TYPES)}
DECLARATION = 1
READONLY = 2
DEFAULT_LIBRARY = 4

_KIND_TOKEN = {
    DeclKind.AGENT: "class",
    DeclKind.TOOL: "function",
    DeclKind.FLOW: "function",
    DeclKind.PROTOCOL: "interface",
    DeclKind.TYPE: "type",
    DeclKind.STRUCT: "struct",
    DeclKind.ENUM: "enum",
    DeclKind.TRAIT: "interface",
    DeclKind.JOB: "namespace",
    DeclKind.RESOURCE: "variable",
}


@dataclass(frozen=True, slots=True, eq=False)
class Token:
    """One token; ``rel_start`` is relative to ``anchor`` (the chunk it is in)."""

    rel_start: int
    length: int  # code points (names never span lines)
    type_index: int
    modifiers: int
    anchor: Anchor

    @property
    def start(self) -> int:
        return self.anchor.base + self.rel_start


@dataclass(slots=True, eq=False)
class ChunkTokens:
    """The tokens of one chunk, and the names whose meaning they depend on.

    ``deps`` pairs each name the chunk mentions with the kind of declaration
    it resolved to (None: nothing); the tokens stay valid while every pair
    still holds. ``encoded`` is the LSP encoding of the tokens with the first
    token relative to the chunk's start (lines from the chunk's first line,
    UTF-16 columns; on that first line, columns from the chunk's start), and
    ``last`` the line and column, counted the same way, of the last token
    encoded.
    """

    deps: list[tuple[str, DeclKind | None]]
    data: list[int]  # per token: chunk-relative start, length, type index, modifiers (no objects to collect)
    encoded: list[int] | None = None
    last: tuple[int, int] = (0, 0)


def _chunk_tokens(analysis: Analysis, chunk: ParsedChunk) -> ChunkTokens:
    rec = record(chunk)
    cached = rec.tokens
    if cached is not None and _still_valid(cached, analysis):
        return cached
    rec.tokens = _compute_chunk_tokens(analysis, chunk)
    return rec.tokens


def _still_valid(cached: ChunkTokens, analysis: Analysis) -> bool:
    scope = analysis.scope
    for name, kind in cached.deps:
        found = scope.get(name)
        if (found[0].kind if found else None) is not kind:
            return False
    return True


def _compute_chunk_tokens(analysis: Analysis, chunk: ParsedChunk) -> ChunkTokens:
    facts = chunk_facts(chunk)
    deps: dict[str, DeclKind | None] = {}
    # (start, end, token type, modifiers), in the order the tie-breaking below relies on:
    # names by position (references, then variables, then declarations), then item tokens
    found: list[tuple[int, int, int, str, int]] = []
    for ref in facts.refs:
        symbol = analysis.lookup(ref.name)
        kind = symbol.kind if symbol is not None else None
        deps[ref.name] = kind
        if kind is not None:
            found.append((ref.span.start, ref.span.end, 0, _KIND_TOKEN[kind], 0))
    for var in facts.locals:
        token_type = "parameter" if var.kind == "parameter" else "variable"
        definition = var.definition
        for span, _binds in var.occurrences():
            mods = DECLARATION if definition is not None and definition.start == span.start else 0
            found.append((span.start, span.end, 1, token_type, mods))
    for symbol in facts.symbols:
        span = symbol.name_span
        found.append((span.start, span.end, 2, _KIND_TOKEN[symbol.kind], DECLARATION))
    found.sort(key=lambda entry: (entry[0], entry[1], entry[2]))
    items: list[tuple[int, int, str, int]] = []
    for item in chunk.items:
        _item_tokens(item, chunk.path, items)
    ordered = [(s, e, token_type, mods) for s, e, _order, token_type, mods in found] + items
    ordered.sort(key=lambda entry: (entry[0], entry[0] - entry[1]))
    base = chunk.anchor.base
    data: list[int] = []
    last_end = -1
    for s, e, token_type, mods in ordered:
        if s >= last_end and e > s:
            data.extend((s - base, e - s, _TYPE_INDEX[token_type], mods))
            last_end = e
    return ChunkTokens(list(deps.items()), data)


def _tokens_of(chunk: ParsedChunk, data: list[int]) -> Iterator[Token]:
    anchor = chunk.anchor
    for i in range(0, len(data), 4):
        yield Token(data[i], data[i + 1], data[i + 2], data[i + 3], anchor)


def semantic_tokens(analysis: Analysis, start: int = 0, end: int | None = None) -> list[Token]:
    """Tokens of the document, sorted and not overlapping; with ``start`` / ``end``, those of
    the document's tokens that overlap ``[start, end]`` (only the chunks there are looked at)."""
    source = analysis.source
    if start <= 0 and end is None:
        return [tk for chunk in source.chunks for tk in _tokens_of(chunk, _chunk_tokens(analysis, chunk).data)]
    stop = len(source.text) if end is None else end
    out = []
    for chunk in chunks_between(source, start, stop):
        for tk in _tokens_of(chunk, _chunk_tokens(analysis, chunk).data):
            if tk.start + tk.length >= start and tk.start <= stop:
                out.append(tk)
    return out


# ---------------------------------------------------------------------- the LSP encoding


def _encode_chunk(lines: LineIndex, tokens: list[int]) -> tuple[list[int], tuple[int, int]]:
    """Encode a chunk's token data (chunk-relative starts) over the chunk text ``lines.text``."""
    text = lines.text
    data: list[int] = []
    prev_line = prev_col = 0
    for i in range(0, len(tokens), 4):
        start, length, type_index, modifiers = tokens[i : i + 4]
        end = start + length
        if "\n" in text[start:end]:
            continue
        line = lines.line_of(start)
        col = utf16_length(text[lines.line_starts[line] : start])
        delta = line - prev_line
        data.extend(
            (delta, col - prev_col if delta == 0 else col, utf16_length(text[start:end]), type_index, modifiers)
        )
        prev_line, prev_col = line, col
    return data, (prev_line, prev_col)


def encode_tokens(lines: LineIndex, tokens: Iterable[Token]) -> list[int]:
    """The LSP encoding (relative lines, UTF-16 columns) of sorted tokens of ``lines.text``."""
    data: list[int] = []
    prev_line = prev_col = 0
    for tk in tokens:
        start = lines.utf16_position(tk.start)
        end = lines.utf16_position(tk.start + tk.length)
        if end.line != start.line:
            continue
        delta = start.line - prev_line
        col = start.character
        data.extend((delta, col - prev_col if delta == 0 else col, end.character - col, tk.type_index, tk.modifiers))
        prev_line, prev_col = start.line, col
    return data


def encoded_range_tokens(analysis: Analysis, start: int, end: int) -> list[int]:
    """The LSP encoding of the tokens overlapping ``[start, end]`` (``semanticTokens/range``);
    only the chunks there are computed."""
    return encode_tokens(analysis.source.lines, semantic_tokens(analysis, start, end))


def encoded_semantic_tokens(analysis: Analysis) -> list[int]:
    """The LSP encoding of the document's tokens, assembled from per-chunk encodings.

    Equal to ``encode_tokens(source.lines, semantic_tokens(analysis))``; a chunk's
    encoding is computed once per chunk object, so a request after an edit
    converts the edited chunk's positions only.
    """
    source = analysis.source
    out: list[int] = []
    prev_line = prev_col = 0
    for chunk, line0, col0 in walk_chunks(source):
        cached = _chunk_tokens(analysis, chunk)
        if not cached.data:
            continue
        own = real_text(source, chunk)
        if own is not None:
            data, last = _encode_chunk(LineIndex(own), cached.data)
        else:
            if cached.encoded is None:
                cached.encoded, cached.last = _encode_chunk(chunk_lines(chunk), cached.data)
            data, last = cached.encoded, cached.last
        if not data:
            continue
        first_line = line0 + data[0]
        first_col = data[1] + (col0 if data[0] == 0 else 0)
        at = len(out)
        out += data
        delta = first_line - prev_line
        out[at] = delta
        out[at + 1] = first_col - prev_col if delta == 0 else first_col
        prev_line = line0 + last[0]
        prev_col = last[1] + (col0 if last[0] == 0 else 0)
    return out


def _item_tokens(item: t.TopItem, path: VersionPath, out: list[tuple[int, int, str, int]]) -> None:
    """Property keys, decorators, `std` uses, run entries and run members of one item."""

    def add(span: t.Span, token_type: str, modifiers: int = 0) -> None:
        out.append((span.start, span.end, token_type, modifiers))

    if isinstance(item, t.AgentDecl):
        for deco in item.decorators:
            add(deco.name_span, "decorator")
        for prop in item.properties:
            add(prop.key_span, "property")
        for block in item.context_blocks:
            for prop in block.entries:
                add(prop.key_span, "property")
        for use in item.uses:
            if use.kind == "std":
                add(use.span, "namespace", DEFAULT_LIBRARY)
    elif isinstance(item, t.ToolDecl):
        for prop in item.properties:
            add(prop.key_span, "property")
    elif isinstance(item, t.ProtocolDecl):
        for fld in item.fields:
            add(fld.name_span, "property", DECLARATION)
    body = getattr(item, "body", None)
    if isinstance(body, t.Block):
        for node in t.walk(body):
            if isinstance(node, t.Call) and node.run_entry is not None and isinstance(node.callee, t.Member):
                member = node.callee
                add(member.name_span, "method", DEFAULT_LIBRARY)
            elif (
                isinstance(node, t.Member)
                and path is VersionPath.NEXA_30
                and node.name in RUN_MEMBERS
                and isinstance(node.obj, t.Name)
            ):
                add(node.name_span, "property", READONLY)

"""Document symbols (declarations and their members) and workspace symbols.

A document's outline is assembled from the outline of each chunk, computed once
per chunk object (:mod:`nexa_lsp.ide.chunked`); entries keep chunk-relative
offsets and read their position from the chunk's anchor.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nexa_lsp.ide.chunked import record
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk, SourceFile


class OutlineKind(enum.Enum):
    """Symbol kinds, named as in LSP ``SymbolKind``."""

    FILE = "File"
    MODULE = "Module"
    NAMESPACE = "Namespace"
    PACKAGE = "Package"
    CLASS = "Class"
    METHOD = "Method"
    PROPERTY = "Property"
    FIELD = "Field"
    FUNCTION = "Function"
    INTERFACE = "Interface"
    VARIABLE = "Variable"
    ENUM = "Enum"
    ENUM_MEMBER = "EnumMember"
    STRUCT = "Struct"
    EVENT = "Event"
    OBJECT = "Object"
    KEY = "Key"
    TYPE_PARAMETER = "TypeParameter"
    CONSTANT = "Constant"


@dataclass(slots=True, eq=False)
class OutlineSymbol:
    """An outline entry; its spans are anchored on its chunk, so a cached entry follows the chunk."""

    name: str
    kind: OutlineKind
    detail: str
    span: t.Span
    selection: t.Span
    children: list[OutlineSymbol] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        return self.span.end

    @property
    def selection_start(self) -> int:
        return self.selection.start

    @property
    def selection_end(self) -> int:
        return self.selection.end


def _sym(
    name: str,
    kind: OutlineKind,
    detail: str,
    span: t.Span,
    selection: t.Span | None = None,
    children: list[OutlineSymbol] | None = None,
) -> OutlineSymbol:
    sel = selection if selection is not None and span.start <= selection.start <= selection.end <= span.end else span
    kids = [c for c in (children or []) if span.start <= c.start and c.end <= span.end]
    return OutlineSymbol(name or "(anonymous)", kind, detail, span, sel, kids)


def _properties(props: Iterable[t.Property]) -> list[OutlineSymbol]:
    return [_sym(p.key, OutlineKind.PROPERTY, _value_detail(p.value), p.span, p.key_span) for p in props]


def _value_detail(value: t.Value) -> str:
    if value.kind is t.ValueKind.LIST:
        return "[" + ", ".join(str(v.value) for v in value.items) + "]"
    if value.kind is t.ValueKind.OBJECT:
        return "{…}"
    text = str(value.value) if value.value is not None else ""
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:39] + "…"


def _params(params: Iterable[t.Param]) -> list[OutlineSymbol]:
    return [_sym(p.name, OutlineKind.VARIABLE, p.type_text or "", p.span, p.name_span) for p in params]


def item_symbol(item: t.TopItem) -> OutlineSymbol | None:
    """The outline entry of one top-level item (None for statements)."""
    if isinstance(item, t.AgentDecl):
        children = _properties(item.properties)
        for block in item.context_blocks:
            children.append(_sym("context", OutlineKind.OBJECT, "", block.span, None, _properties(block.entries)))
        children.sort(key=lambda c: c.start)
        detail = "agent" + (f" implements {item.implements}" if item.implements else "")
        return _sym(item.name, OutlineKind.CLASS, detail, item.span, item.name_span, children)
    if isinstance(item, t.ToolDecl):
        children = []
        for prop in item.properties:
            if prop.key == "parameters":
                params = [
                    _sym(k, OutlineKind.FIELD, str(v.value), t.Span(ks.rel_start, v.span.rel_end, ks.anchor), ks)
                    for k, ks, v in prop.value.pairs
                ]
                children.append(_sym("parameters", OutlineKind.PROPERTY, "", prop.span, prop.key_span, params))
            else:
                children.extend(_properties([prop]))
        return _sym(item.name, OutlineKind.FUNCTION, "tool", item.span, item.name_span, children)
    if isinstance(item, t.ToolFunction):
        return _sym(item.name, OutlineKind.FUNCTION, "@tool fn", item.span, item.name_span, _params(item.params))
    if isinstance(item, t.FlowDecl):
        detail = "flow" + (f" -> {item.return_type}" if item.return_type else "")
        return _sym(item.name, OutlineKind.FUNCTION, detail, item.span, item.name_span, _params(item.params or []))
    if isinstance(item, t.ProtocolDecl):
        fields = [_sym(f.name, OutlineKind.FIELD, f.type_text, f.span, f.name_span) for f in item.fields]
        return _sym(item.name, OutlineKind.INTERFACE, "protocol", item.span, item.name_span, fields)
    if isinstance(item, t.TestDecl):
        return _sym(item.name, OutlineKind.METHOD, "test", item.span, item.name_span)
    if isinstance(item, t.TypeDecl):
        return _sym(item.name, OutlineKind.TYPE_PARAMETER, f"type = {item.type_text}", item.span, item.name_span)
    if isinstance(item, t.AdtDecl):
        member_kind = {"struct": OutlineKind.FIELD, "enum": OutlineKind.ENUM_MEMBER}.get(
            item.keyword, OutlineKind.METHOD
        )
        members = [_sym(m.name, member_kind, m.detail or "", m.span, m.name_span) for m in item.members]
        kind = {"struct": OutlineKind.STRUCT, "enum": OutlineKind.ENUM, "trait": OutlineKind.INTERFACE}.get(
            item.keyword, OutlineKind.NAMESPACE
        )
        name = f"impl {item.name} for {item.target}" if item.keyword == "impl" else item.name
        return _sym(name, kind, item.keyword, item.span, item.name_span, members)
    if isinstance(item, t.JobDecl):
        return _sym(item.name, OutlineKind.EVENT, f'job on "{item.queue}"', item.span, item.name_span)
    if isinstance(item, t.ServerDecl):
        routes = [
            _sym(f"{r.method} {r.path}", OutlineKind.METHOD, " |>> ".join(h for h, _ in r.handlers), r.span)
            for r in item.routes
        ]
        return _sym(f"server {item.name}", OutlineKind.NAMESPACE, "server", item.span, item.name_span, routes)
    if isinstance(item, t.ResourceDecl):
        return _sym(item.name, OutlineKind.VARIABLE, f"{item.kind} {item.function}(…)", item.span, item.name_span)
    if isinstance(item, t.Include):
        return _sym(item.name, OutlineKind.FILE, "include", item.span, item.name_span)
    if isinstance(item, t.UseConfig):
        return _sym(item.name, OutlineKind.PACKAGE, "use config", item.span, item.name_span)
    return None


def chunk_outline(chunk: ParsedChunk) -> list[OutlineSymbol]:
    """Outline entries of one chunk's items (computed once per chunk object; shared, do not modify)."""
    rec = record(chunk)
    if rec.outline is None:
        rec.outline = [symbol for item in chunk.items if (symbol := item_symbol(item)) is not None]
    return rec.outline


def document_symbols(source: SourceFile) -> list[OutlineSymbol]:
    """Hierarchical outline of a document, in source order (entries are shared with the cache)."""
    out: list[OutlineSymbol] = []
    for chunk in source.chunks:
        out.extend(chunk_outline(chunk))
    return out


@dataclass(frozen=True, slots=True)
class WorkspaceSymbolData:
    name: str
    kind: OutlineKind
    container: str
    path: Path
    source: SourceFile
    start: int
    end: int


def matches(query: str, name: str) -> bool:
    """Case-insensitive subsequence match (`ana` finds `DataAnalyst`)."""
    if not query:
        return True
    name = name.lower()
    pos = 0
    for ch in query.lower():
        pos = name.find(ch, pos)
        if pos == -1:
            return False
        pos += 1
    return True


def workspace_symbols(
    query: str, files: Iterable[tuple[Path, SourceFile]], limit: int = 500
) -> list[WorkspaceSymbolData]:
    """Declarations of ``files`` whose names match ``query``."""
    out: list[WorkspaceSymbolData] = []
    for path, source in files:
        for item in source.declarations():
            symbol = item_symbol(item)
            if symbol is None or not matches(query, symbol.name):
                continue
            out.append(
                WorkspaceSymbolData(
                    symbol.name, symbol.kind, symbol.detail, path, source, symbol.selection_start, symbol.selection_end
                )
            )
            if len(out) >= limit:
                return out
    return out

"""Completion: what may be written at the cursor, for the file's path."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from nexa_lsp.analysis.semantic import AGENT_PROPERTIES, CONTEXT_PROPERTIES, TOOL_PROPERTIES, PropertySpec
from nexa_lsp.analysis.symbols import (
    BUILTIN_TYPES,
    RUN_MEMBERS,
    Analysis,
    DeclKind,
    LocalVar,
    Symbol,
)
from nexa_lsp.ide.context import CursorContext, cursor_context
from nexa_lsp.ide.describe import protocol_of_run, signature, symbol_summary
from nexa_lsp.ide.knowledge import (
    AGENT_HEADER_KEYWORDS,
    AGENT_METHODS,
    DECLARATION_KEYWORDS,
    OTHER_KEYWORDS,
    RUN_MEMBER_DOCS,
    STATEMENT_KEYWORDS,
    STD_NAMESPACES,
)
from nexa_lsp.ide.outline import matches
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.version import VersionPath


class ItemKind(enum.Enum):
    """Completion item kinds (named as in LSP)."""

    KEYWORD = "Keyword"
    SNIPPET = "Snippet"
    PROPERTY = "Property"
    FIELD = "Field"
    METHOD = "Method"
    FUNCTION = "Function"
    CLASS = "Class"
    INTERFACE = "Interface"
    VARIABLE = "Variable"
    VALUE = "Value"
    MODULE = "Module"
    STRUCT = "Struct"
    ENUM = "Enum"
    TYPE = "TypeParameter"


@dataclass(frozen=True, slots=True)
class CompletionData:
    """One completion: ``insert_text`` is plain text, ``snippet`` the LSP snippet (if any)."""

    label: str
    kind: ItemKind
    detail: str = ""
    documentation: str = ""
    insert_text: str | None = None
    snippet: str | None = None
    group: int = 5  # sort group: lower first
    symbol: Symbol | None = None  # documentation is computed on demand (`item_documentation`)


@dataclass(frozen=True, slots=True)
class Completions:
    items: list[CompletionData]
    replace_start: int  # the items replace text from here to the cursor
    incomplete: bool = False  # more items match: ask again as the user types


#: At most this many items are returned (the best first); typing narrows them down.
MAX_ITEMS = 200


def item_documentation(item: CompletionData) -> str:
    """The Markdown documentation of an item (for declarations, built only when asked)."""
    if item.symbol is not None:
        return symbol_summary(item.symbol)
    return item.documentation


_KIND_ITEM = {
    DeclKind.AGENT: ItemKind.CLASS,
    DeclKind.TOOL: ItemKind.FUNCTION,
    DeclKind.FLOW: ItemKind.FUNCTION,
    DeclKind.PROTOCOL: ItemKind.INTERFACE,
    DeclKind.TYPE: ItemKind.TYPE,
    DeclKind.STRUCT: ItemKind.STRUCT,
    DeclKind.ENUM: ItemKind.ENUM,
    DeclKind.TRAIT: ItemKind.INTERFACE,
    DeclKind.JOB: ItemKind.MODULE,
    DeclKind.RESOURCE: ItemKind.VARIABLE,
}

_EXPRESSION_WORDS = (
    "true",
    "false",
    "join",
    "std",
    "img",
    "template",
    "parallel",
    "race",
    "channel",
    "after",
    "select",
)


def complete(analysis: Analysis, offset: int) -> Completions:
    """Completions at ``offset`` of the analysed document."""
    source = analysis.source
    ctx = cursor_context(source, offset)
    items: list[CompletionData] = []
    if ctx.in_comment or ctx.in_string:
        return Completions([], ctx.prefix_start)
    if ctx.receiver:
        items = _members(analysis, ctx)
    elif ctx.head == "nexa":
        items = [CompletionData(v, ItemKind.VALUE, f"Nexa {v} path") for v in ("3.0", "2.4")]
    elif not ctx.frames:
        items = _top_level(analysis, ctx)
    else:
        items = _inside(analysis, ctx)
    return _narrowed(items, ctx.prefix, ctx.prefix_start)


def _narrowed(items: list[CompletionData], prefix: str, replace_start: int) -> Completions:
    """Items matching the typed prefix (a case-insensitive subsequence), best first, capped."""
    if prefix:
        items = [i for i in items if matches(prefix, i.label)]
    if len(items) <= MAX_ITEMS:
        return Completions(items, replace_start)
    items = sorted(items, key=lambda i: (not i.label.lower().startswith(prefix.lower()), i.group, i.label))
    return Completions(items[:MAX_ITEMS], replace_start, incomplete=True)


# ---------------------------------------------------------------------- top level and headers


def _top_level(analysis: Analysis, ctx: CursorContext) -> list[CompletionData]:
    source = analysis.source
    if ctx.head is None:
        out = []
        for word, (snippet, summary) in DECLARATION_KEYWORDS.items():
            if word == "nexa" and (source.version.declaration is not None or _has_items_before(analysis, ctx)):
                continue
            out.append(CompletionData(word, ItemKind.KEYWORD, "declaration", summary, word + " ", snippet, 1))
        return out
    previous = ctx.previous
    if ctx.head == "agent":
        if previous == "implements":
            return _symbols(analysis, (DeclKind.PROTOCOL,))
        if previous == "->":
            return _types(analysis)
        if previous in ("uses", ",") and "uses" in ctx.header and "implements" not in ctx.header:
            return _uses_items(analysis)
        if len(ctx.header) >= 1:
            return [
                CompletionData(w, ItemKind.KEYWORD, "agent header", doc, w + " ", None, 1)
                for w, doc in AGENT_HEADER_KEYWORDS.items()
                if w not in ctx.header or w in ("requires", "ensures")
            ]
        return []
    if ctx.head in ("flow", "@tool") and previous in ("->", ":", "|", "["):
        return _types(analysis)
    if ctx.head == "impl" and previous in ("impl", "for"):
        return _symbols(analysis, (DeclKind.TRAIT, DeclKind.STRUCT, DeclKind.ENUM, DeclKind.TYPE))
    return []


def _has_items_before(analysis: Analysis, ctx: CursorContext) -> bool:
    return any(item.span.start < ctx.prefix_start for item in analysis.source.items)


def _uses_items(analysis: Analysis) -> list[CompletionData]:
    out = _symbols(analysis, (DeclKind.TOOL, DeclKind.AGENT))
    for name, summary in STD_NAMESPACES.items():
        out.append(CompletionData(f"std.{name}", ItemKind.MODULE, "standard library", summary, f"std.{name}", None, 6))
    out.append(
        CompletionData(
            'mcp:"..."', ItemKind.SNIPPET, "MCP server", "Tools from an MCP server.", 'mcp:""', 'mcp:"${1:https://}"', 7
        )
    )
    return out


def _types(analysis: Analysis) -> list[CompletionData]:
    out = _symbols(analysis, (DeclKind.PROTOCOL, DeclKind.TYPE, DeclKind.STRUCT, DeclKind.ENUM))
    for word in ("str", "int", "float", "bool", "list", "dict", "Option", "Result", "unit"):
        out.append(CompletionData(word, ItemKind.TYPE, "built-in type", "", word, None, 6))
    return out


def _symbols(analysis: Analysis, kinds: tuple[DeclKind, ...]) -> list[CompletionData]:
    return [_symbol_item(symbol) for symbol in analysis.symbols(kinds)]


def _symbol_item(symbol: Symbol) -> CompletionData:
    where = f" (from {symbol.include.include.name})" if symbol.include is not None else ""
    group = {DeclKind.AGENT: 2, DeclKind.TOOL: 3, DeclKind.FLOW: 3}.get(symbol.kind, 4)
    return CompletionData(
        symbol.name, _KIND_ITEM[symbol.kind], f"{symbol.kind.value}{where}", "", symbol.name, None, group, symbol
    )


# ---------------------------------------------------------------------- inside brackets


def _inside(analysis: Analysis, ctx: CursorContext) -> list[CompletionData]:
    first = ctx.frames[0]
    top = ctx.frames[-1]
    path = analysis.source.path
    if ctx.head == "agent" and first.char == "{":
        if ctx.depth == 1:
            if ctx.at_key:
                items = _property_keys(AGENT_PROPERTIES, path)
                items.append(
                    CompletionData(
                        "context",
                        ItemKind.SNIPPET,
                        "context block",
                        OTHER_KEYWORDS["context"],
                        "context { }",
                        "context {\n\tsource: ${1:upstream}\n}",
                        2,
                    )
                )
                return items
            return _property_values(AGENT_PROPERTIES, top.key, analysis)
        if ctx.depth == 2 and top.char == "{" and top.word_before == "context":
            if ctx.at_key:
                return _property_keys(CONTEXT_PROPERTIES, path)
            return _property_values(CONTEXT_PROPERTIES, top.key, analysis)
        return []
    if ctx.head == "tool" and first.char == "{":
        if ctx.depth == 1:
            return (
                _property_keys(TOOL_PROPERTIES, path)
                if ctx.at_key
                else _property_values(TOOL_PROPERTIES, top.key, analysis)
            )
        return []
    if ctx.head == "protocol" and first.char == "{":
        if ctx.depth == 1 and not ctx.at_key:
            return _types(analysis)
        return []
    if ctx.head == "server":
        if ctx.previous in ("=>", "|>>"):
            return _symbols(analysis, (DeclKind.AGENT, DeclKind.FLOW))
        return []
    if ctx.head in ("flow", "@tool", "test", "job", "impl", "defer", "match", "spawn", "parallel", "race") or (
        ctx.head is not None and first.char == "{"
    ):
        if first.char == "(" and ctx.depth == 1 and ctx.head in ("flow", "@tool"):
            return _types(analysis) if ctx.previous == ":" else []
        return _flow_body(analysis, ctx)
    return []


def _property_keys(table: dict[str, PropertySpec], path: VersionPath) -> list[CompletionData]:
    out = []
    for key, spec in table.items():
        if spec.on_30_only and path is not VersionPath.NEXA_30:
            continue
        kinds = ", ".join(sorted(k.value for k in spec.kinds))
        out.append(CompletionData(key, ItemKind.PROPERTY, kinds, spec.summary, f"{key}: ", f"{key}: {spec.snippet}", 1))
    return out


def _property_values(table: dict[str, PropertySpec], key: str | None, analysis: Analysis) -> list[CompletionData]:
    spec = table.get(key or "")
    if spec is None:
        return []
    if key in ("input_schema", "output_schema") and table is CONTEXT_PROPERTIES:
        return _symbols(analysis, (DeclKind.PROTOCOL,))
    return [CompletionData(v, ItemKind.VALUE, f"{key} value", "", v, None, 1) for v in spec.values]


def _flow_body(analysis: Analysis, ctx: CursorContext) -> list[CompletionData]:
    if ctx.previous in (">>", "&>>", "&&", "|>>", "||") or (
        ctx.top is not None and ctx.top.char == "[" and ctx.top.word_before is None
    ):
        return _symbols(analysis, (DeclKind.AGENT,))
    items: list[CompletionData] = []
    items.extend(_locals(analysis, ctx.offset))
    items.extend(
        _symbols(
            analysis, (DeclKind.AGENT, DeclKind.TOOL, DeclKind.FLOW, DeclKind.RESOURCE, DeclKind.STRUCT, DeclKind.ENUM)
        )
    )
    if ctx.statement_start:
        for word, (snippet, summary) in STATEMENT_KEYWORDS.items():
            items.append(CompletionData(word, ItemKind.KEYWORD, "statement", summary, word, snippet, 5))
    for word in _EXPRESSION_WORDS:
        items.append(CompletionData(word, ItemKind.KEYWORD, "keyword", OTHER_KEYWORDS.get(word, ""), word, None, 6))
    return items


def _locals(analysis: Analysis, offset: int) -> list[CompletionData]:
    seen: set[str] = set()
    out = []
    for var in analysis.file.locals:
        owner = var.owner.span
        if not (owner.start <= offset <= owner.end) or var.name in seen:
            continue
        seen.add(var.name)
        detail = f"parameter: {var.type_text}" if var.kind == "parameter" and var.type_text else var.kind
        if var.run_agent is not None:
            detail = f"run of {var.run_agent} ({var.run_entry})"
        out.append(CompletionData(var.name, ItemKind.VARIABLE, detail, "", var.name, None, 0))
    return out


# ---------------------------------------------------------------------- members


def _members(analysis: Analysis, ctx: CursorContext) -> list[CompletionData]:
    path = analysis.source.path
    chain = ctx.receiver
    root = chain[0]
    local = analysis.local_named(root, ctx.offset)
    if local is None and len(chain) == 1:
        if root == "std":
            return [
                CompletionData(name, ItemKind.MODULE, "std namespace", summary, name, None, 1)
                for name, summary in STD_NAMESPACES.items()
            ]
        symbol = analysis.lookup(root)
        if symbol is not None and symbol.kind is DeclKind.AGENT:
            return [
                CompletionData(name, ItemKind.METHOD, f"{root}.{name} ({path.label})", summary, name, snippet, 1)
                for name, (snippet, summary) in AGENT_METHODS[path].items()
            ]
        return []
    if local is None:
        return []
    protocol = protocol_of_run(analysis, local) if local.run_agent else _protocol_of_param(analysis, local)
    fields = _protocol_fields(protocol)
    if len(chain) == 1:
        if local.run_agent is not None and path is VersionPath.NEXA_30:
            return [
                CompletionData(m, ItemKind.FIELD, "run member", RUN_MEMBER_DOCS[m], m, None, 1) for m in RUN_MEMBERS
            ]
        return fields
    if len(chain) == 2 and chain[1] == "output" and local.run_agent is not None and path is VersionPath.NEXA_30:
        return fields
    return []


def _protocol_of_param(analysis: Analysis, var: LocalVar) -> t.ProtocolDecl | None:
    if var.type_text is None or var.type_text in BUILTIN_TYPES:
        return None
    symbol = analysis.lookup(var.type_text.rstrip("?"))
    if symbol is not None and isinstance(symbol.decl, t.ProtocolDecl):
        return symbol.decl
    return None


def _protocol_fields(protocol: t.ProtocolDecl | None) -> list[CompletionData]:
    if protocol is None:
        return []
    return [
        CompletionData(
            f.name, ItemKind.FIELD, f"{protocol.name}.{f.name}: {f.type_text}", signature(protocol), f.name, None, 1
        )
        for f in protocol.fields
    ]

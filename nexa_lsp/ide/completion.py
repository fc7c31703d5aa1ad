"""Completion: what may be written at the cursor, for the file's path."""

from __future__ import annotations

import enum
import re
from collections import OrderedDict
from collections.abc import Callable
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
from nexa_lsp.ide.chunked import local_named, locals_at
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


@dataclass(frozen=True, slots=True)
class _Declarations:
    """The visible declarations of some kinds, as one run of items (built only for the items shown)."""

    kinds: frozenset[DeclKind]


#: What the completion functions produce: items, and runs of declarations in their place.
_Parts = list["CompletionData | _Declarations"]


def complete(analysis: Analysis, offset: int) -> Completions:
    """Completions at ``offset`` of the analysed document.

    The work is the chunk around the cursor plus a per-file index of the visible
    declarations (names and kinds, sorted once): items are built only for the
    declarations that are returned.
    """
    source = analysis.source
    ctx = cursor_context(source, offset)
    parts: _Parts = []
    if ctx.in_comment or ctx.in_string:
        return Completions([], ctx.prefix_start)
    if ctx.receiver:
        parts = _members(analysis, ctx)
    elif ctx.head == "nexa":
        parts = [CompletionData(v, ItemKind.VALUE, f"Nexa {v} path") for v in ("3.0", "2.4")]
    elif not ctx.frames:
        parts = _top_level(analysis, ctx)
    else:
        parts = _inside(analysis, ctx)
    return _narrowed(analysis, parts, ctx.prefix, ctx.prefix_start)


def _narrowed(analysis: Analysis, parts: _Parts, prefix: str, replace_start: int) -> Completions:
    """Items matching the typed prefix (a case-insensitive subsequence) in the order they were
    produced; when there are more than :data:`MAX_ITEMS`, the best first, capped."""
    index = _index(analysis)
    test = _matcher(prefix)
    runs: list[list[int] | CompletionData] = []  # matching positions in the index, or one item
    total = 0
    for part in parts:
        if isinstance(part, _Declarations):
            found = [i for i in index.positions(part.kinds) if test(index.lowered[i])]
            runs.append(found)
            total += len(found)
        elif test(part.label.lower()):
            runs.append(part)
            total += 1
    if total <= MAX_ITEMS:
        items: list[CompletionData] = []
        for run in runs:
            if isinstance(run, CompletionData):
                items.append(run)
            else:
                items.extend(_symbol_item(analysis.scope[index.names[i]][0]) for i in run)
        return Completions(items, replace_start)
    lowered_prefix = prefix.lower()
    candidates: list[CompletionData] = []
    for run in runs:
        if isinstance(run, CompletionData):
            candidates.append(run)
            continue
        # the best MAX_ITEMS of a run: those starting with the prefix first, then by (group, label)
        member = bytearray(len(index.names))
        for i in run:
            member[i] = 1
        starting: list[int] = []
        others: list[int] = []
        for i in index.order:
            if not member[i]:
                continue
            if index.lowered[i].startswith(lowered_prefix):
                starting.append(i)
                if len(starting) >= MAX_ITEMS:
                    break
            elif len(others) < MAX_ITEMS:
                others.append(i)
        chosen = sorted((starting + others)[:MAX_ITEMS])  # back to the order they were produced in
        candidates.extend(_symbol_item(analysis.scope[index.names[i]][0]) for i in chosen)
    candidates.sort(key=lambda i: (not i.label.lower().startswith(lowered_prefix), i.group, i.label))
    return Completions(candidates[:MAX_ITEMS], replace_start, incomplete=True)


def _matcher(prefix: str) -> Callable[[str], bool]:
    """A test of lower-cased labels: does ``prefix`` occur in it as a subsequence (any case)."""
    if not prefix:
        return lambda _label: True
    pattern = re.compile(".*?".join(re.escape(ch) for ch in prefix.lower()), re.S)
    return lambda label: pattern.search(label) is not None


_GROUPS = {DeclKind.AGENT: 2, DeclKind.TOOL: 3, DeclKind.FLOW: 3}


class _DeclarationIndex:
    """The visible declarations of one file: names in scope order, their kinds, lower-cased
    names, and their positions in (group, name) order."""

    __slots__ = ("_positions", "kinds", "lowered", "names", "order")
    lowered: list[str]
    order: list[int]

    def __init__(self, names: list[str], kinds: list[DeclKind], previous: _DeclarationIndex | None) -> None:
        self.names = names
        self.kinds = kinds
        self._positions: dict[frozenset[DeclKind], list[int]] = {}
        if previous is not None and previous.names == names and previous.kinds == kinds:
            self.lowered, self.order, self._positions = previous.lowered, previous.order, previous._positions
            return
        self.lowered = [name.lower() for name in names]
        self.order = sorted(range(len(names)), key=lambda i: (_GROUPS.get(kinds[i], 4), names[i]))

    def positions(self, kinds: frozenset[DeclKind]) -> list[int]:
        """Positions of the declarations of ``kinds``, in scope order."""
        found = self._positions.get(kinds)
        if found is None:
            found = self._positions[kinds] = [i for i, kind in enumerate(self.kinds) if kind in kinds]
        return found


_INDEXES: OrderedDict[int, tuple[Analysis, _DeclarationIndex]] = OrderedDict()


def _index(analysis: Analysis) -> _DeclarationIndex:
    """The declaration index of ``analysis``, reusing the last one's sort when names and kinds match."""
    memo = _INDEXES.get(id(analysis))
    if memo is not None and memo[0] is analysis:
        return memo[1]
    scope = analysis.scope
    previous = next(reversed(_INDEXES.values()))[1] if _INDEXES else None
    index = _DeclarationIndex(list(scope), [symbols[0].kind for symbols in scope.values()], previous)
    _INDEXES[id(analysis)] = (analysis, index)
    while len(_INDEXES) > 8:
        _INDEXES.popitem(last=False)
    return index


# ---------------------------------------------------------------------- top level and headers


def _top_level(analysis: Analysis, ctx: CursorContext) -> _Parts:
    source = analysis.source
    if ctx.head is None:
        out: _Parts = []
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


def _uses_items(analysis: Analysis) -> _Parts:
    out = _symbols(analysis, (DeclKind.TOOL, DeclKind.AGENT))
    for name, summary in STD_NAMESPACES.items():
        out.append(CompletionData(f"std.{name}", ItemKind.MODULE, "standard library", summary, f"std.{name}", None, 6))
    out.append(
        CompletionData(
            'mcp:"..."', ItemKind.SNIPPET, "MCP server", "Tools from an MCP server.", 'mcp:""', 'mcp:"${1:https://}"', 7
        )
    )
    return out


def _types(analysis: Analysis) -> _Parts:
    out = _symbols(analysis, (DeclKind.PROTOCOL, DeclKind.TYPE, DeclKind.STRUCT, DeclKind.ENUM))
    for word in ("str", "int", "float", "bool", "list", "dict", "Option", "Result", "unit"):
        out.append(CompletionData(word, ItemKind.TYPE, "built-in type", "", word, None, 6))
    return out


def _symbols(_analysis: Analysis, kinds: tuple[DeclKind, ...]) -> _Parts:
    return [_Declarations(frozenset(kinds))]


def _symbol_item(symbol: Symbol) -> CompletionData:
    where = f" (from {symbol.include.include.name})" if symbol.include is not None else ""
    group = _GROUPS.get(symbol.kind, 4)
    return CompletionData(
        symbol.name, _KIND_ITEM[symbol.kind], f"{symbol.kind.value}{where}", "", symbol.name, None, group, symbol
    )


# ---------------------------------------------------------------------- inside brackets


def _inside(analysis: Analysis, ctx: CursorContext) -> _Parts:
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


def _property_keys(table: dict[str, PropertySpec], path: VersionPath) -> _Parts:
    out: _Parts = []
    for key, spec in table.items():
        if spec.on_30_only and path is not VersionPath.NEXA_30:
            continue
        kinds = ", ".join(sorted(k.value for k in spec.kinds))
        out.append(CompletionData(key, ItemKind.PROPERTY, kinds, spec.summary, f"{key}: ", f"{key}: {spec.snippet}", 1))
    return out


def _property_values(table: dict[str, PropertySpec], key: str | None, analysis: Analysis) -> _Parts:
    spec = table.get(key or "")
    if spec is None:
        return []
    if key in ("input_schema", "output_schema") and table is CONTEXT_PROPERTIES:
        return _symbols(analysis, (DeclKind.PROTOCOL,))
    return [CompletionData(v, ItemKind.VALUE, f"{key} value", "", v, None, 1) for v in spec.values]


def _flow_body(analysis: Analysis, ctx: CursorContext) -> _Parts:
    if ctx.previous in (">>", "&>>", "&&", "|>>", "||") or (
        ctx.top is not None and ctx.top.char == "[" and ctx.top.word_before is None
    ):
        return _symbols(analysis, (DeclKind.AGENT,))
    items: _Parts = []
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


def _locals(analysis: Analysis, offset: int) -> _Parts:
    seen: set[str] = set()
    out: _Parts = []
    for var in locals_at(analysis, offset):
        if var.name in seen:
            continue
        seen.add(var.name)
        detail = f"parameter: {var.type_text}" if var.kind == "parameter" and var.type_text else var.kind
        if var.run_agent is not None:
            detail = f"run of {var.run_agent} ({var.run_entry})"
        out.append(CompletionData(var.name, ItemKind.VARIABLE, detail, "", var.name, None, 0))
    return out


# ---------------------------------------------------------------------- members


def _members(analysis: Analysis, ctx: CursorContext) -> _Parts:
    path = analysis.source.path
    chain = ctx.receiver
    root = chain[0]
    local = local_named(analysis, root, ctx.offset)
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


def _protocol_fields(protocol: t.ProtocolDecl | None) -> _Parts:
    if protocol is None:
        return []
    return [
        CompletionData(
            f.name, ItemKind.FIELD, f"{protocol.name}.{f.name}: {f.type_text}", signature(protocol), f.name, None, 1
        )
        for f in protocol.fields
    ]

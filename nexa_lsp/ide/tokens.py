"""Semantic tokens: what each name is (agent, tool, flow, protocol, variable ...).

Keywords, strings and comments are left to the TextMate grammar; these tokens
colour names by meaning, which a grammar cannot know.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexa_lsp.analysis.symbols import RUN_MEMBERS, Analysis, DeclKind
from nexa_lsp.ide.legend import TOKEN_TYPES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.version import VersionPath

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


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    length: int  # code points (names never span lines)
    type_index: int
    modifiers: int


def _tok(start: int, end: int, token_type: str, modifiers: int = 0) -> Token:
    return Token(start, end - start, _TYPE_INDEX[token_type], modifiers)


def semantic_tokens(analysis: Analysis, start: int = 0, end: int | None = None) -> list[Token]:
    """Tokens of the document (or of ``[start, end)``), sorted and not overlapping."""
    source = analysis.source
    stop = len(source.text) if end is None else end
    tokens: list[Token] = []
    for s, e, occ in analysis.occurrences():
        if e < start or s > stop:
            continue
        if occ.symbol is not None:
            mods = DECLARATION if occ.is_declaration else 0
            tokens.append(_tok(s, e, _KIND_TOKEN[occ.symbol.kind], mods))
        elif occ.local is not None:
            kind = "parameter" if occ.local.kind == "parameter" else "variable"
            definition = occ.local.definition
            mods = DECLARATION if definition is not None and definition.start == s else 0
            tokens.append(_tok(s, e, kind, mods))
    for item in source.items:
        if item.span.end < start or item.span.start > stop:
            continue
        _item_tokens(item, analysis, tokens)
    tokens = [tk for tk in tokens if tk.start + tk.length >= start and tk.start <= stop]
    tokens.sort(key=lambda tk: (tk.start, -tk.length))
    out: list[Token] = []
    last_end = -1
    for tk in tokens:
        if tk.start >= last_end and tk.length > 0:
            out.append(tk)
            last_end = tk.start + tk.length
    return out


def _item_tokens(item: t.TopItem, analysis: Analysis, out: list[Token]) -> None:
    if isinstance(item, t.AgentDecl):
        for deco in item.decorators:
            out.append(_tok(deco.name_span.start, deco.name_span.end, "decorator"))
        for prop in item.properties:
            out.append(_tok(prop.key_span.start, prop.key_span.end, "property"))
        for block in item.context_blocks:
            for prop in block.entries:
                out.append(_tok(prop.key_span.start, prop.key_span.end, "property"))
        for use in item.uses:
            if use.kind == "std":
                out.append(_tok(use.span.start, use.span.end, "namespace", DEFAULT_LIBRARY))
    elif isinstance(item, t.ToolDecl):
        for prop in item.properties:
            out.append(_tok(prop.key_span.start, prop.key_span.end, "property"))
    elif isinstance(item, t.ProtocolDecl):
        for fld in item.fields:
            out.append(_tok(fld.name_span.start, fld.name_span.end, "property", DECLARATION))
    body = getattr(item, "body", None)
    if isinstance(body, t.Block):
        path = analysis.source.path
        for node in t.walk(body):
            if isinstance(node, t.Call) and node.run_entry is not None and isinstance(node.callee, t.Member):
                member = node.callee
                out.append(_tok(member.name_span.start, member.name_span.end, "method", DEFAULT_LIBRARY))
            elif (
                isinstance(node, t.Member)
                and path is VersionPath.NEXA_30
                and node.name in RUN_MEMBERS
                and isinstance(node.obj, t.Name)
            ):
                out.append(_tok(node.name_span.start, node.name_span.end, "property", READONLY))

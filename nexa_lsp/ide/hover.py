"""Hover: what the thing under the cursor is, in Markdown."""

from __future__ import annotations

from dataclasses import dataclass

from nexa_lsp.analysis.semantic import (
    AGENT_PROPERTIES,
    CONTEXT_PROPERTIES,
    IGNORED_AGENT_PROPERTIES,
    TOOL_PROPERTIES,
    PropertySpec,
)
from nexa_lsp.analysis.symbols import RUN_MEMBERS, Analysis, IncludedFile, LocalVar
from nexa_lsp.ide.chunked import local_named, occurrence_at
from nexa_lsp.ide.context import in_comment, item_at, node_path, word_at
from nexa_lsp.ide.describe import declaration_markdown, protocol_of_run, symbol_summary
from nexa_lsp.ide.knowledge import (
    AGENT_METHODS,
    DECLARATION_KEYWORDS,
    OTHER_KEYWORDS,
    RUN_MEMBER_DOCS,
    STATEMENT_KEYWORDS,
    STD_NAMESPACES,
    path_summary,
)
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.version import VersionPath


@dataclass(frozen=True, slots=True)
class HoverData:
    markdown: str
    start: int
    end: int


def hover(analysis: Analysis, offset: int) -> HoverData | None:
    """Hover text for ``offset`` of the analysed document, or None."""
    source = analysis.source
    declaration = source.version.declaration
    if declaration is not None and declaration.start <= offset <= declaration.end:
        return HoverData(
            path_summary(source.path, declaration.version, declaration.problem), declaration.start, declaration.end
        )
    if in_comment(source, offset):
        return None
    occurrence = occurrence_at(analysis, offset)
    if occurrence is not None:
        span = occurrence.span
        if occurrence.symbol is not None:
            return HoverData(symbol_summary(occurrence.symbol), span.start, span.end)
        if occurrence.local is not None:
            return HoverData(_local_markdown(analysis, occurrence.local), span.start, span.end)
        return None
    item = item_at(source, offset)
    if item is None:
        return _keyword(analysis, offset)
    if isinstance(item, t.Include):
        return _include(analysis, item)
    use = _use_at(item, offset)
    if use is not None:
        return use
    found = _property_at(item, offset)
    if found is not None:
        prop, table, what = found
        return HoverData(_property_markdown(prop.key, table, what, source.path), prop.key_span.start, prop.key_span.end)
    member = _member_at(analysis, item, offset)
    if member is not None:
        return member
    if _inside_literal(item, offset):
        return None
    return _keyword(analysis, offset)


def _keyword(analysis: Analysis, offset: int) -> HoverData | None:
    text = analysis.source.text
    found = word_at(text, offset)
    if found is None:
        return None
    start, end = found
    word = text[start:end]
    summary: str | None = None
    if word in DECLARATION_KEYWORDS:
        summary = DECLARATION_KEYWORDS[word][1]
    elif word in STATEMENT_KEYWORDS:
        summary = STATEMENT_KEYWORDS[word][1]
    elif word in OTHER_KEYWORDS:
        summary = OTHER_KEYWORDS[word]
    if summary is None:
        return None
    return HoverData(f"**{word}** (keyword)\n\n{summary}", start, end)


def _include(analysis: Analysis, item: t.Include) -> HoverData:
    resolved: IncludedFile | None = next((i for i in analysis.includes if i.include is item), None)
    if item.name.endswith(".nxs"):
        text = f'`include "{item.name}"`: a secrets file, read by the runtime (never parsed by the checker).'
    elif resolved is None:
        text = f'`include "{item.name}"`'
    elif resolved.missing:
        text = f'`include "{item.name}"`: **not found** (looked next to this file and in `stdlib/`).'
    else:
        where = f" `{resolved.path}`" if resolved.path is not None else ""
        count = sum(len(v) for v in resolved.symbols.declarations.values()) if resolved.symbols else 0
        text = f'`include "{item.name}"` ->{where}: {count} declarations.'
    return HoverData(text, item.span.start, item.span.end)


def _use_at(item: t.TopItem, offset: int) -> HoverData | None:
    """`uses std.fs`, `uses "skills/x.md"`, `uses mcp:"uri"` (names are occurrences)."""
    if not isinstance(item, t.AgentDecl):
        return None
    for use in item.uses:
        if use.kind == "name" or not (use.span.start <= offset <= use.span.end):
            continue
        if use.kind == "std":
            namespace = use.text.removeprefix("std.")
            summary = STD_NAMESPACES.get(namespace)
            text = (
                f"**{use.text}** (standard library: {summary})"
                if summary
                else f"**{use.text}**: not a standard library namespace this runtime knows"
            )
        elif use.kind == "skill":
            text = f"**skill file** `{use.text}`: its Markdown is added to what the agent knows."
        else:
            text = f"**MCP server** `{use.text}`: the agent may use the tools it provides."
        return HoverData(text, use.span.start, use.span.end)
    return None


def _property_at(item: t.TopItem, offset: int) -> tuple[t.Property, dict[str, PropertySpec], str] | None:
    if isinstance(item, t.AgentDecl):
        for prop in item.properties:
            if prop.key_span.start <= offset <= prop.key_span.end:
                return prop, AGENT_PROPERTIES, "agent"
        for block in item.context_blocks:
            for prop in block.entries:
                if prop.key_span.start <= offset <= prop.key_span.end:
                    return prop, CONTEXT_PROPERTIES, "context"
    elif isinstance(item, t.ToolDecl):
        for prop in item.properties:
            if prop.key_span.start <= offset <= prop.key_span.end:
                return prop, TOOL_PROPERTIES, "tool"
    return None


def _property_markdown(key: str, table: dict[str, PropertySpec], what: str, path: VersionPath) -> str:
    spec = table.get(key)
    if spec is None:
        if what == "agent" and key in IGNORED_AGENT_PROPERTIES:
            return f"**{key}** (agent property)\n\nHas no effect: {IGNORED_AGENT_PROPERTIES[key]}."
        return f"**{key}**\n\nNot a {what} property the runtime reads; it is ignored."
    kinds = " or ".join(sorted(k.value for k in spec.kinds))
    text = f"**{key}** ({what} property: {kinds})\n\n{spec.summary}"
    if spec.values:
        text += "\n\nValues: " + ", ".join(f"`{v}`" for v in spec.values)
    if spec.on_30_only and path is not VersionPath.NEXA_30:
        text += "\n\n*No effect on the 2.4 compatibility path (Nexa 3.0 only).*"
    return text


def _member_at(analysis: Analysis, item: t.TopItem, offset: int) -> HoverData | None:
    path = analysis.source.path
    for node in reversed(node_path(item, offset)):
        if not isinstance(node, t.Member) or not (node.name_span.start <= offset <= node.name_span.end):
            continue
        span = node.name_span
        obj = node.obj
        if isinstance(obj, t.Name):
            var = local_named(analysis, obj.id, offset)
            if var is None:
                symbol = analysis.lookup(obj.id)
                methods = AGENT_METHODS[path]
                if symbol is not None and isinstance(symbol.decl, t.AgentDecl):
                    if node.name in methods:
                        return HoverData(
                            f"**{obj.id}.{node.name}** ({path.label})\n\n{methods[node.name][1]}", span.start, span.end
                        )
                    other = AGENT_METHODS[VersionPath.COMPAT_24 if path is VersionPath.NEXA_30 else VersionPath.NEXA_30]
                    if node.name in other:
                        return HoverData(
                            f"**{node.name}** is not an agent method on the {path.label} path.\n\n"
                            f"{other[node.name][1]}",
                            span.start,
                            span.end,
                        )
                return None
            if var.run_agent is not None and path is VersionPath.NEXA_30 and node.name in RUN_MEMBERS:
                return HoverData(
                    f"**{obj.id}.{node.name}** (run member)\n\n{RUN_MEMBER_DOCS[node.name]}", span.start, span.end
                )
            protocol = protocol_of_run(analysis, var)
            if protocol is not None:
                for fld in protocol.fields:
                    if fld.name == node.name:
                        return HoverData(
                            f"```nexa\n{protocol.name}.{fld.name}: {fld.type_text}\n```\n\n"
                            + declaration_markdown(protocol),
                            span.start,
                            span.end,
                        )
        return None
    return None


def _local_markdown(analysis: Analysis, var: LocalVar) -> str:
    text = f"```nexa\n({var.kind}) {var.name}"
    if var.type_text:
        text += f": {var.type_text}"
    text += "\n```"
    if var.run_agent is not None:
        if analysis.source.path is VersionPath.NEXA_30:
            text += (
                f"\n\nA run of `{var.run_agent}` (from `{var.run_entry}`): "
                + ", ".join(f"`{m}`" for m in RUN_MEMBERS)
                + "."
            )
        else:
            text += f"\n\nThe answer of `{var.run_agent}.run(...)` (text)."
    return text


def _inside_literal(item: t.TopItem, offset: int) -> bool:
    return any(isinstance(n, t.StringLit | t.Value | t.TemplateLit) for n in node_path(item, offset)[1:])

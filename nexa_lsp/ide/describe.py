"""Markdown descriptions of declarations (hover, completion documentation)."""

from __future__ import annotations

from nexa_lsp.analysis.symbols import Analysis, LocalVar, Symbol
from nexa_lsp.syntax import tree as t

PROMPT_EXCERPT = 240


def _params(params: list[t.Param] | None) -> str:
    if not params:
        return ""
    parts = []
    for p in params:
        text = f"{p.name}: {p.type_text}" if p.type_text else p.name
        if p.default is not None and p.default.value is not None:
            text += f" = {p.default.value!r}" if isinstance(p.default.value, str) else f" = {p.default.value}"
        parts.append(text)
    return "(" + ", ".join(parts) + ")"


def signature(decl: t.Decl) -> str:
    """A one-line header of a declaration, in Nexa syntax."""
    if isinstance(decl, t.AgentDecl):
        text = f"agent {decl.name}"
        if decl.return_type:
            text += f" -> {decl.return_type}"
        if decl.uses:
            text += " uses " + ", ".join(_use_text(u) for u in decl.uses)
        if decl.implements:
            text += f" implements {decl.implements}"
        return text
    if isinstance(decl, t.ToolDecl):
        return f"tool {decl.name}"
    if isinstance(decl, t.ToolFunction):
        ret = f": {decl.return_type}" if decl.return_type else ""
        return f"fn {decl.name}{_params(decl.params) or '()'}{ret}"
    if isinstance(decl, t.FlowDecl):
        ret = f" -> {decl.return_type}" if decl.return_type else ""
        return f"flow {decl.name}{_params(decl.params)}{ret}"
    if isinstance(decl, t.ProtocolDecl):
        fields = ", ".join(f"{f.name}: {f.type_text}" for f in decl.fields)
        return f"protocol {decl.name} {{ {fields} }}"
    if isinstance(decl, t.TypeDecl):
        constraint = f' @ "{decl.constraint}"' if decl.constraint else ""
        return f"type {decl.name} = {decl.type_text}{constraint}"
    if isinstance(decl, t.AdtDecl):
        if decl.keyword == "impl":
            return f"impl {decl.name} for {decl.target}"
        members = ", ".join(m.name + (m.detail or "") for m in decl.members)
        return f"{decl.keyword} {decl.name} {{ {members} }}"
    if isinstance(decl, t.JobDecl):
        return f'job {decl.name} on "{decl.queue}"'
    if isinstance(decl, t.ResourceDecl):
        return f'{decl.kind} {decl.name} = {decl.function}("{decl.argument}")'
    return decl.name


def _use_text(use: t.UseItem) -> str:
    if use.kind == "skill":
        return f'"{use.text}"'
    if use.kind == "mcp":
        return f'mcp:"{use.text}"'
    return use.text


def _excerpt(text: str, limit: int = PROMPT_EXCERPT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def declaration_markdown(decl: t.Decl, origin: str | None = None) -> str:
    """Hover text for a declaration."""
    lines = [f"```nexa\n{signature(decl)}\n```"]
    if isinstance(decl, t.AgentDecl):
        facts = []
        if decl.model:
            facts.append(f"**model** `{decl.model}`")
        if decl.role:
            facts.append(f"**role** {_excerpt(decl.role, 120)}")
        tools = [u.text for u in decl.uses if u.kind in ("name", "std")]
        if tools:
            facts.append("**tools** " + ", ".join(f"`{x}`" for x in tools))
        if decl.implements:
            facts.append(f"**returns** protocol `{decl.implements}`")
        if facts:
            lines.append("  \n".join(facts))
        if decl.prompt:
            lines.append("> " + _excerpt(decl.prompt))
    elif isinstance(decl, t.ToolDecl):
        if decl.description:
            lines.append(decl.description)
        params = decl.parameters
        if params:
            lines.append("**parameters**\n" + "\n".join(f"* `{name}`: {kind}" for name, kind in params))
        for key in ("mcp", "python"):
            prop = decl.get_property(key)
            if prop is not None and prop.value.text:
                lines.append(f"**{key}** `{prop.value.text}`")
        if decl.approval:
            lines.append(f"**approval** `{decl.approval}`")
    elif isinstance(decl, t.ToolFunction):
        if decl.description:
            lines.append(decl.description)
        if decl.params:
            lines.append("**parameters**\n" + "\n".join(f"* `{p.name}`: {p.type_text or 'any'}" for p in decl.params))
        config = [f"`{p.key}: {p.value.value}`" for p in decl.config]
        if config:
            lines.append("**config** " + ", ".join(config))
    elif isinstance(decl, t.ProtocolDecl):
        if decl.fields:
            lines.append("**fields**\n" + "\n".join(f"* `{f.name}`: {f.type_text}" for f in decl.fields))
    elif isinstance(decl, t.FlowDecl):
        for contract in decl.contracts:
            lines.append(f"*{contract.keyword}* …")
    if origin:
        lines.append(f"*declared in* `{origin}`")
    return "\n\n".join(lines)


def symbol_summary(symbol: Symbol) -> str:
    origin = symbol.include.include.name if symbol.include is not None else None
    return declaration_markdown(symbol.decl, origin)


def protocol_of_run(analysis: Analysis, var: LocalVar) -> t.ProtocolDecl | None:
    """The protocol of the agent whose run ``var`` holds (``agent A implements P``)."""
    if var.run_agent is None:
        return None
    agent = analysis.lookup(var.run_agent)
    if agent is None or not isinstance(agent.decl, t.AgentDecl) or not agent.decl.implements:
        return None
    protocol = analysis.lookup(agent.decl.implements)
    if protocol is not None and isinstance(protocol.decl, t.ProtocolDecl):
        return protocol.decl
    return None

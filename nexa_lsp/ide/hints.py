"""Inlay hints: an agent's effective model and tool count where a flow uses it, and a
tool's approval requirement where it is called.

Hints are resolvable: :func:`inlay_hints` gives the labels, read from the
declarations (only the chunks in the asked range are looked at), and
:func:`resolve_hint` the Markdown tooltip with the details. The tools counted
are the ones the runtime gives the agent (``nexa_lsp.runtime.declarations``):
its ``uses`` entries that name a ``tool`` block or an ``@tool`` function of the
agent's own file, or, without ``uses``, every ``@tool`` function of that file.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from nexa_lsp.analysis.symbols import Analysis, RefRole, Symbol, chunk_facts, file_symbols
from nexa_lsp.ide.chunked import chunks_between
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.version import VersionPath

#: Roles of a name that uses an agent in a flow (`A.execute(...)`, `x >> A`, `join(A, B)` ...).
_AGENT_USES = (RefRole.RUN_RECEIVER, RefRole.AGENT)


@dataclass(frozen=True, slots=True)
class HintData:
    """A hint shown at ``offset``; ``kind`` ("agent" | "tool") and ``name`` say what
    :func:`resolve_hint` describes."""

    offset: int
    label: str
    kind: str
    name: str


def inlay_hints(analysis: Analysis, start: int, end: int, default_model: str | None = None) -> list[HintData]:
    """Hints for ``[start, end]``. ``default_model`` is the model configured for agents
    without ``model:`` (from the settings files), if the caller knows it."""
    source = analysis.source
    hints: list[HintData] = []
    for chunk in chunks_between(source, start, end):
        for ref in chunk_facts(chunk).refs:
            if not start <= ref.span.end <= end:
                continue
            symbol = analysis.lookup(ref.name)
            if symbol is None:
                continue
            decl = symbol.decl
            if ref.role in _AGENT_USES and isinstance(decl, t.AgentDecl):
                model = decl.model or default_model or "default model"
                count = len(agent_tools(decl, _source_of(analysis, symbol))[0])
                label = f"{model} · {count} tool{'' if count == 1 else 's'}"
                hints.append(HintData(ref.span.end, label, "agent", decl.name))
            elif (
                ref.role is RefRole.CALL
                and isinstance(decl, t.ToolDecl | t.ToolFunction)
                and _needs_approval(decl)
                and source.path is VersionPath.NEXA_30
            ):
                hints.append(HintData(ref.span.end, "needs approval", "tool", decl.name))
    hints.sort(key=lambda hint: hint.offset)
    return hints


def resolve_hint(analysis: Analysis, kind: str, name: str, default_model: str | None = None) -> str | None:
    """The Markdown tooltip of a hint (None when the declaration is gone)."""
    symbol = analysis.lookup(name)
    if symbol is None:
        return None
    decl = symbol.decl
    if kind == "agent" and isinstance(decl, t.AgentDecl):
        return _agent_details(decl, _source_of(analysis, symbol), default_model)
    if kind == "tool" and isinstance(decl, t.ToolDecl | t.ToolFunction):
        lines = [f"**tool** `{decl.name}`"]
        if decl.description:
            lines.append(decl.description)
        lines.append(_approval_text(decl, analysis.source.path))
        return "\n\n".join(lines)
    return None


def agent_tools(agent: t.AgentDecl, source: SourceFile | None) -> tuple[list[t.ToolDecl | t.ToolFunction], list[str]]:
    """The tools the runtime gives ``agent`` (declared in ``source``), and the ``uses``
    entries it skips, each with the reason."""
    tools, functions, agents = _file_tools(source)
    if not agent.uses:
        return list(functions), []
    found: list[t.ToolDecl | t.ToolFunction] = []
    skipped: list[str] = []
    for use in agent.uses:
        if use.kind != "name":
            skipped.append(f"`{use.text}` ({use.kind}: not available in this runtime)")
        elif use.text in tools:
            found.append(tools[use.text])
        elif use.text in agents:
            skipped.append(f"`{use.text}` (an agent: not usable as a tool here)")
        else:
            skipped.append(f"`{use.text}` (no tool of this name in the agent's file)")
    return found, skipped


_FileTools = tuple[dict[str, t.ToolDecl | t.ToolFunction], list[t.ToolFunction], set[str]]
_FILE_TOOLS: OrderedDict[int, tuple[SourceFile, _FileTools]] = OrderedDict()


def _file_tools(source: SourceFile | None) -> _FileTools:
    """Tools by name, the ``@tool`` functions and the agent names of a file (once per parse)."""
    if source is None:
        return {}, [], set()
    memo = _FILE_TOOLS.get(id(source))
    if memo is not None and memo[0] is source:
        return memo[1]
    tools: dict[str, t.ToolDecl | t.ToolFunction] = {}
    functions: list[t.ToolFunction] = []
    agents: set[str] = set()
    # as the runtime picks them: the last declaration of a name, a `tool` block before an `@tool` function
    for name, decls in file_symbols(source).declarations.items():
        blocks = [d for d in decls if isinstance(d, t.ToolDecl)]
        defined = [d for d in decls if isinstance(d, t.ToolFunction)]
        if blocks or defined:
            tools[name] = blocks[-1] if blocks else defined[-1]
        if defined:
            functions.append(defined[-1])
        if any(isinstance(d, t.AgentDecl) for d in decls):
            agents.add(name)
    index = (tools, functions, agents)
    _FILE_TOOLS[id(source)] = (source, index)
    while len(_FILE_TOOLS) > 8:
        _FILE_TOOLS.popitem(last=False)
    return index


def _source_of(analysis: Analysis, symbol: Symbol) -> SourceFile | None:
    return analysis.source if symbol.include is None else symbol.source


def _needs_approval(tool: t.ToolDecl | t.ToolFunction) -> bool:
    return tool.approval == "required" if isinstance(tool, t.ToolDecl) else tool.requires_approval


def _approval_text(tool: t.ToolDecl | t.ToolFunction, path: VersionPath) -> str:
    if not _needs_approval(tool):
        return "No approval needed: the run calls it directly."
    if path is VersionPath.NEXA_30:
        return "**Needs approval**: a call pauses the run in `waiting_approval` until it is approved or denied."
    return "Declares an approval, which has no effect on the 2.4 compatibility path."


def _agent_details(agent: t.AgentDecl, source: SourceFile | None, default_model: str | None) -> str:
    if agent.model:
        model = f"**model** `{agent.model}` (from its `model:`)"
    elif default_model:
        model = f"**model** `{default_model}` (the configured default: no `model:` here)"
    else:
        model = "**model**: the provider's default (no `model:` here and none configured)"
    lines = [f"**agent** `{agent.name}`", model]
    tools, skipped = agent_tools(agent, source)
    path = source.path if source is not None else VersionPath.COMPAT_24
    if tools:
        entries = []
        for tool in tools:
            entry = f"* `{tool.name}`"
            if _needs_approval(tool) and path is VersionPath.NEXA_30:
                entry += ": needs approval"
            entries.append(entry)
        origin = "" if agent.uses else " (every `@tool` function of the file: the agent has no `uses`)"
        lines.append(f"**tools** ({len(tools)}){origin}\n" + "\n".join(entries))
    else:
        lines.append("**tools**: none")
    if skipped:
        lines.append("**skipped** " + ", ".join(skipped))
    return "\n\n".join(lines)

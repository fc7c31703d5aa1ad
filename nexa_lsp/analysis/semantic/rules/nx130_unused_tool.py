"""NX130: unused tool.

## What it does
Reports a tool (or `@tool` function) of a file with agents that no agent lists after
`uses` and no flow calls, here or in the included files. `@tool` functions count as used
when an agent without `uses` attaches every tool. A file without agents is a tool library
for the files that include it and gets no NX130. Shown as unnecessary (faded) code.

## Why is this bad?
No agent can call it: usually a missing `uses` entry.

## Example
```nexa
tool T { description: "d", parameters: {"q": "string"} }   // no agent uses it, no flow calls it
```

## Fix safety
No fix: add it to an agent's `uses`, or remove it.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import Analysis, DeclKind, Symbol
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX130"
INFO = CodeInfo("unused tool", Severity.WARNING, "declarations")


def is_auto_attach(symbol: Symbol) -> bool:
    """Whether ``symbol`` is an agent without `uses` (it attaches every `@tool` function)."""
    return isinstance(symbol.decl, t.AgentDecl) and not symbol.decl.uses


def unused(tool: t.Decl) -> Diagnostic:
    return Diagnostic(
        CODE,
        f"tool `{tool.name}` is never used: no agent lists it after `uses` and no flow calls it",
        tool.name_span,
        Severity.WARNING,
        unnecessary=True,
    )


def is_reported(tool: t.Decl, used: bool, auto_attach: bool) -> bool:
    """Whether a tool of a file with agents is unused (``used``: its name is referenced)."""
    return (
        isinstance(tool, t.ToolDecl | t.ToolFunction)
        and not used
        and not (auto_attach and isinstance(tool, t.ToolFunction))
    )


def diagnostics(analysis: Analysis) -> list[Diagnostic]:
    own = analysis.file
    tools = [d for decls in own.declarations.values() for d in decls if isinstance(d, t.ToolDecl | t.ToolFunction)]
    if not tools:
        return []
    agents = list(analysis.symbols((DeclKind.AGENT,)))
    if not any(isinstance(d, t.AgentDecl) for decls in own.declarations.values() for d in decls):
        return []  # a file without agents is a tool library for the files that include it
    used: set[str] = {ref.name for ref in own.refs}
    for inc in analysis.includes:
        if inc.symbols is not None:
            used.update(ref.name for ref in inc.symbols.refs)
    auto_attach = any(is_auto_attach(s) for s in agents)
    return [unused(tool) for tool in tools if is_reported(tool, tool.name in used, auto_attach)]

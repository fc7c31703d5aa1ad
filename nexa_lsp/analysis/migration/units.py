"""The executable bodies of a chunk: flows, tests, job blocks, tool functions, ADT methods
and top-level statements. Each is walked (and cached) on its own."""

from __future__ import annotations

from dataclasses import dataclass

from nexa_lsp.analysis.migration.state import Unit
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk


@dataclass(eq=False, slots=True)
class UnitSpec:
    """One body: what it is called in messages, its statements and parameters."""

    unit: Unit
    statements: list[t.Stmt]
    params: list[t.Param]


def chunk_units(chunk: ParsedChunk) -> list[UnitSpec]:
    out: list[UnitSpec] = []
    for item in chunk.items:
        if isinstance(item, t.FlowDecl) and item.body is not None:
            out.append(UnitSpec(Unit(f"flow `{item.name}`", item.name), item.body.statements, list(item.params or [])))
        elif isinstance(item, t.TestDecl) and item.body is not None:
            out.append(UnitSpec(Unit(f'test "{item.name}"'), item.body.statements, []))
        elif isinstance(item, t.JobDecl):
            if item.perform is not None:
                out.append(UnitSpec(Unit(f"job `{item.name}`"), item.perform.statements, []))
            if item.on_failure is not None:
                out.append(UnitSpec(Unit(f"job `{item.name}` (on_failure)"), item.on_failure.statements, []))
        elif isinstance(item, t.ToolFunction) and item.body is not None:
            out.append(UnitSpec(Unit(f"tool `{item.name}`"), item.body.statements, list(item.params)))
        elif isinstance(item, t.AdtDecl):
            for member in item.members:
                if member.body is not None:
                    out.append(UnitSpec(Unit(f"method `{member.name}`"), member.body.statements, list(member.params)))
        elif isinstance(item, t.TopLevelStatement) and item.statement is not None:
            out.append(UnitSpec(Unit("top-level statement"), [item.statement], []))
    return out

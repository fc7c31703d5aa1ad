"""NXM004: tool approval has no effect on the 2.4 path.

## What it does
Reports `approval: "required"` on a `tool` and `requires_approval: true` on an `@tool`
function in a file on the 2.4 compatibility path. Shown as unnecessary (faded) code.

## Why is this bad?
2.x accepts both properties and never enforces them: the tool is called without asking.
In Nexa 3.0 each call of such a tool pauses the run in `waiting_approval` until it is
approved or denied, so the property starts to matter the moment the file migrates.

## Example
```nexa
tool publish { description: "d", parameters: {"b": "string"}, approval: "required" }
```

## Fix safety
No fix: the property is right for 3.0. Migrating the file makes it take effect, which
is why `--migrate` lists such tools in its notes.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding
from nexa_lsp.analysis.migration.program import Program
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NXM004"
INFO = CodeInfo("tool approval has no effect on the 2.4 path", Severity.HINT, "migration")


#: id(tool declaration) -> (declaration, its findings, its notes): kept while the declaration is.
_PARTS: dict[int, tuple[object, list[Finding], list[str]]] = {}
_PARTS_LIMIT = 50_000


def _tool_parts(tool: t.ToolDecl) -> tuple[list[Finding], list[str]]:
    prop = tool.get_property("approval")
    found = []
    if prop is not None:
        found.append(
            Finding(
                CODE,
                f"`approval:` on tool `{tool.name}` has no effect on the 2.4 compatibility path: the tool is "
                'called without asking. In Nexa 3.0, `approval: "required"` pauses the run in '
                "`waiting_approval` before each call until it is approved or denied",
                prop.span,
                unnecessary=True,
            )
        )
    notes = []
    if prop is not None and prop.value.text == "required":
        notes.append(
            f'tool `{tool.name}` declares `approval: "required"`: on Nexa 3.0 its calls pause the run until approved'
        )
    return found, notes


def _function_parts(function: t.ToolFunction) -> tuple[list[Finding], list[str]]:
    found = []
    for prop in function.config:
        if prop.key == "requires_approval" and prop.value.value is True:
            found.append(
                Finding(
                    CODE,
                    f"`requires_approval: true` on `@tool` `{function.name}` is recorded but never enforced "
                    "on the 2.4 path (2.x agents call the tool without asking). In Nexa 3.0 its calls pause "
                    "the run in `waiting_approval` until approved or denied",
                    prop.span,
                    unnecessary=True,
                )
            )
    notes = []
    if function.requires_approval:
        notes.append(
            f"`@tool` `{function.name}` has `requires_approval: true`: on Nexa 3.0 its calls pause "
            "the run until approved"
        )
    return found, notes


def _parts(decl: t.ToolDecl | t.ToolFunction) -> tuple[list[Finding], list[str]]:
    kept = _PARTS.get(id(decl))
    if kept is not None and kept[0] is decl:
        return kept[1], kept[2]
    found, notes = _tool_parts(decl) if isinstance(decl, t.ToolDecl) else _function_parts(decl)
    if len(_PARTS) > _PARTS_LIMIT:
        _PARTS.clear()
    _PARTS[id(decl)] = (decl, found, notes)
    return found, notes


def _declarations(program: Program) -> list[t.ToolDecl | t.ToolFunction]:
    return [*program.tools.values(), *program.tool_functions.values()]


def findings(program: Program) -> list[Finding]:
    out: list[Finding] = []
    for decl in _declarations(program):
        found = _parts(decl)[0]
        if found:
            out.extend(found)
    return out


def approval_notes(program: Program) -> list[str]:
    """What changes with the move itself: tools whose calls start to wait for approval."""
    notes: list[str] = []
    for decl in _declarations(program):
        found = _parts(decl)[1]
        if found:
            notes.extend(found)
    return notes

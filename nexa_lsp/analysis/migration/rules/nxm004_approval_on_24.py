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
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NXM004"
INFO = CodeInfo("tool approval has no effect on the 2.4 path", Severity.HINT, "migration")


def findings(program: Program) -> list[Finding]:
    out: list[Finding] = []
    for tool in program.tools.values():
        prop = tool.get_property("approval")
        if prop is None:
            continue
        out.append(
            Finding(
                CODE,
                f"`approval:` on tool `{tool.name}` has no effect on the 2.4 compatibility path: the tool is "
                'called without asking. In Nexa 3.0, `approval: "required"` pauses the run in '
                "`waiting_approval` before each call until it is approved or denied",
                prop.span,
                unnecessary=True,
            )
        )
    for function in program.tool_functions.values():
        for prop in function.config:
            if prop.key == "requires_approval" and prop.value.value is True:
                out.append(
                    Finding(
                        CODE,
                        f"`requires_approval: true` on `@tool` `{function.name}` is recorded but never enforced "
                        "on the 2.4 path (2.x agents call the tool without asking). In Nexa 3.0 its calls pause "
                        "the run in `waiting_approval` until approved or denied",
                        prop.span,
                        unnecessary=True,
                    )
                )
    return out


def approval_notes(program: Program) -> list[str]:
    """What changes with the move itself: tools whose calls start to wait for approval."""
    notes = []
    for tool in program.tools.values():
        if tool.approval == "required":
            notes.append(
                f'tool `{tool.name}` declares `approval: "required"`: on Nexa 3.0 its calls pause '
                "the run until approved"
            )
    for function in program.tool_functions.values():
        if function.requires_approval:
            notes.append(
                f"`@tool` `{function.name}` has `requires_approval: true`: on Nexa 3.0 its calls pause "
                "the run until approved"
            )
    return notes

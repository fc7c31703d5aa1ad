"""NXM005: 2.x human-approval helper in a flow.

## What it does
Reports calls of the 2.x human-in-the-loop helpers `wait_for_human(...)`,
`approve_request(...)`, `reject_request(...)` and `ask_human(...)` in a flow.

## Why is this bad?
In 2.x these block the flow until a person answers on the terminal, or edit an
in-memory approval record that never wakes a waiting flow. Nexa 3.0 puts approvals on
tools: a tool that declares `approval: "required"` pauses the run in
`waiting_approval` until it is approved or denied, and the flow resumes it with
`Agent.resume(r)`.

## Example
```nexa
flow main { ok = wait_for_human("Publish?") }
```

Use instead:
```nexa
nexa 3.0;
tool publish { description: "d", parameters: {"b": "string"}, approval: "required" }
```

## Fix safety
No automatic rewrite: which tool needs the person's consent is a decision. The finding
blocks `--migrate`.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding
from nexa_lsp.analysis.migration.state import Unit
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NXM005"
INFO = CodeInfo(
    '2.x human-approval helper in a flow: declare `approval: "required"` on the tool', Severity.ERROR, "migration"
)


def finding(call: t.Call, helper: str, unit: Unit) -> Finding:
    where = unit.label or "this flow"
    if helper in ("approve_request", "reject_request"):
        what = f"`{helper}(...)` in {where} only edits a 2.x in-memory approval record (it never wakes a waiting flow)"
    elif helper == "ask_human":
        what = f"`ask_human(...)` in {where} reads a person's answer from the terminal (2.x)"
    else:
        what = f"`{helper}(...)` in {where} blocks the flow until a person answers (2.x human-in-the-loop)"
    message = (
        f'{what}; in Nexa 3.0 approvals belong to tools: declare `approval: "required"` on the tool '
        "that needs a person's consent; its calls then pause the run in `waiting_approval` until "
        "approved or denied, and the flow resumes it with `Agent.resume(r)`"
    )
    return Finding(CODE, message, call.span)

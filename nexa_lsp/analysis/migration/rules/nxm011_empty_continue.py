"""NXM011: continuing a run with empty input.

## What it does
On the 3.0 path, reports `A.continue(r)`, `A.continue(r, "")` and `A.continue()`.

## Why is this bad?
A new turn needs a non-empty message: the runtime refuses to continue a run with empty
input, and `continue()` without arguments does not even say which run to continue.

## Example
```nexa
nexa 3.0;
flow main {
    r = Writer.execute("x")
    s = Writer.continue(r, "")
}
```

## Fix safety
No fix: only you know what the next message is.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding, RuleContext
from nexa_lsp.analysis.migration.state import Site
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NXM011"
INFO = CodeInfo("continuing a run with empty input", Severity.ERROR, "runs")


def check(ctx: RuleContext, site: Site, var: str | None, origins: list[Site]) -> Finding | None:
    call = site.call
    if call is None or site.kind != "continue":
        return None
    agent = site.agent
    inputs = ctx.inputs(site)
    if not call.args:
        message = f'`{agent}.continue()` needs the run to continue and the next message: `continue(r, "...")`'
    elif ctx.empty(inputs):
        what = "no input" if not inputs else "an empty input"
        message = (
            f"`{agent}.continue({var or 'the run'}, ...)` has {what}: a new turn needs a "
            "non-empty message (the runtime refuses to continue with empty input)"
        )
    else:
        return None
    return Finding(CODE, message, call.span)

"""NXM006: `Agent.run` used without a call.

## What it does
Reports `A.run` used as a value (assigned, passed, returned) other than the 2.x pipe
form `x |> A.run`, which NXM002 / NXM003 handle.

## Why is this bad?
Nexa 3.0 removes `.run`. There is no single 3.0 entry that means the same as the bare
method: `A.execute(...)` is an independent task, `A.continue(r, ...)` the next turn of
run `r`.

## Example
```nexa
flow main { f = Writer.run }
```

## Fix safety
No rewrite: call the entry you mean explicitly.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding, RuleContext
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NXM006"
INFO = CodeInfo("`Agent.run` used without a call", Severity.ERROR, "migration")


def finding(ctx: RuleContext, member: t.Member) -> Finding:
    agent = ctx.a.snippet(member.obj)
    return Finding(
        CODE,
        f"`{agent}.run` is used without calling it: Nexa 3.0 removes `.run`; call the entry you mean "
        f"explicitly, `{agent}.execute(...)` for an independent task or `{agent}.continue(r, ...)` for "
        "the next turn of run `r`",
        member.span,
    )

"""NXM013: resuming a run that is known to be settled.

## What it does
On the 3.0 path, reports `A.resume(r)` where `r` is known to be settled: inside
`if (r.success)`, `if (r.settled)` or `if (r.status == "completed")` (any settled
status), or when `A` can call no approval-required tool at all (all its tools are
declared in the file), so its runs always come back settled.

## Why is this bad?
Resuming carries on an interrupted run or one waiting for approval. A settled run
(`completed`, `failed`, `cancelled`, `timed_out`, `budget_exhausted`) is continued, not
resumed, and the runtime refuses to resume it.

## Example
```nexa
nexa 3.0;
flow main {
    r = Writer.execute("x")
    if (r.success) { r2 = Writer.resume(r) }
}
```

Use instead:
```nexa
nexa 3.0;
flow main {
    r = Writer.execute("x")
    if (r.success) { r2 = Writer.continue(r, "next") }
}
```

## Fix safety
No fix: a new turn needs a message only you can write.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding, RuleContext
from nexa_lsp.analysis.migration.state import SETTLED_STATUSES, Site
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NXM013"
INFO = CodeInfo("resuming a run that is known to be settled", Severity.WARNING, "runs")


def check(ctx: RuleContext, site: Site, var: str | None, origins: list[Site]) -> Finding | None:
    call = site.call
    if call is None or site.kind != "resume" or not origins:
        return None
    settled_by = _known_settled(ctx, site, var, origins)
    if not settled_by:
        return None
    shown = var or "the run"
    return Finding(
        CODE,
        f"`{shown}` is known to be settled here ({settled_by}): a settled "
        f"run is continued, not resumed, and resuming it is refused at run time; use "
        f'`{site.agent}.continue({shown}, "...")` for a new turn',
        call.span,
    )


def _known_settled(ctx: RuleContext, site: Site, var: str | None, origins: list[Site]) -> str | None:
    if var is not None:
        for guard in site.guards:
            if guard.branch != "then" or "or" in guard.condition.operators:
                continue
            for part in guard.condition.parts:
                if (
                    isinstance(part, t.Member)
                    and isinstance(part.obj, t.Name)
                    and part.obj.id == var
                    and part.name in ("success", "settled")
                ):
                    return f"inside `if ({var}.{part.name})`"
                if isinstance(part, t.BinaryOp) and part.op == "==":
                    sides = (part.left, part.right)
                    member = next(
                        (
                            s
                            for s in sides
                            if isinstance(s, t.Member)
                            and s.name == "status"
                            and isinstance(s.obj, t.Name)
                            and s.obj.id == var
                        ),
                        None,
                    )
                    literal = next((s for s in sides if isinstance(s, t.StringLit)), None)
                    if member is not None and literal is not None and literal.value in SETTLED_STATUSES:
                        return f'inside `if ({var}.status == "{literal.value}")`'
    agents = {o.agent for o in origins}
    if all(ctx.agent(a).tools_all_known and not ctx.agent(a).approval_tools for a in agents):
        names = ", ".join(sorted(agents))
        return f"{names} can call no approval-required tool, so its runs return settled"
    return None

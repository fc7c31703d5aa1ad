"""NXM010: continuing a run that may not be settled.

## What it does
On the 3.0 path, reports `A.continue(r, ...)` where `r` comes from a run of an agent
that can call an approval-required tool, and no enclosing condition tests `r.success`,
`r.settled` or `r.status`.

## Why is this bad?
Such a run can stop in `waiting_approval`. The runtime refuses to continue a run that is
not settled, so the turn fails at run time instead of waiting for the approval.

## Example
```nexa
nexa 3.0;
flow main {
    r = Publisher.execute("x")
    s = Publisher.continue(r, "next")
}
```

Use instead:
```nexa
nexa 3.0;
flow main {
    r = Publisher.execute("x")
    if (r.success) {
        s = Publisher.continue(r, "next")
    }
}
```

## Fix safety
The fix wraps the statement in `if (r.success) { ... }`. It is unsafe: it changes what
happens when the run waits (the turn is skipped); decide whether to resume it instead.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding, RuleContext, fit, short
from nexa_lsp.analysis.migration.state import Site
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Fix, Severity, TextEdit

CODE = "NXM010"
INFO = CodeInfo("continuing a run that may not be settled", Severity.WARNING, "runs")


def check(ctx: RuleContext, site: Site, var: str | None, origins: list[Site]) -> Finding | None:
    call = site.call
    if call is None or site.kind != "continue" or var is None:
        return None
    approving = [(o.agent, tools) for o in origins for tools in [ctx.agent(o.agent).approval_tools] if tools]
    if not approving or _tested(site, var):
        return None
    origin, tools = approving[0]
    message = (
        f"`{var}` may not be settled: {origin} can call `{tools[0]}`, which requires approval, "
        f"so its run can stop in `waiting_approval`, and continuing an unsettled run is refused "
        f"at run time. Test `{var}.success` (or `{var}.settled` / `{var}.status`) first, or "
        f"resume it with `{origin}.resume({var})` once approved"
    )
    fix = _guard_fix(ctx, site, var)
    return Finding(CODE, message, call.span, [fix] if fix is not None else [])


def _mentions(cond: t.Condition, var: str) -> bool:
    for part in cond.parts:
        for node in t.walk(part):
            if (
                isinstance(node, t.Member)
                and node.name in ("success", "settled", "status")
                and isinstance(node.obj, t.Name)
                and node.obj.id == var
            ):
                return True
    return False


def _tested(site: Site, var: str) -> bool:
    return any(_mentions(g.condition, var) for g in site.guards)


def _guard_fix(ctx: RuleContext, site: Site, var: str) -> Fix | None:
    stmt = site.stmt
    if stmt is None:
        return None
    start, end = stmt.span.start, stmt.span.end
    line_start = max(ctx.text.rfind("\n", 0, start) + 1, ctx.a.anchor.base)
    indent = ctx.text[line_start:start]
    why = (
        f"the turn (and everything in the statement) is skipped when `{var}` did not succeed; decide what "
        "should happen then (for example resume it after approval)"
    )
    title = fit(f"Continue only if `{short(var)}.success`")
    if indent.strip():
        edits = (
            TextEdit(ctx.at(start, start), f"if ({var}.success) {{ "),
            TextEdit(ctx.at(end, end), " }"),
        )
    else:
        edits = (
            TextEdit(ctx.at(start, start), f"if ({var}.success) {{\n{indent}    "),
            TextEdit(ctx.at(end, end), f"\n{indent}}}"),
        )
    return Fix(title, edits, safe=False, why_unsafe=why)

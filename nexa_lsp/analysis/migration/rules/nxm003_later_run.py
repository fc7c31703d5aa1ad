"""NXM003: `Agent.run(...)` after an earlier run of the agent.

## What it does
Reports `A.run(...)` (and `x |> A.run`) when an earlier run of `A` comes before it in
the same flow on every path.

## Why is this bad?
In 2.4 each agent keeps one conversation for the whole process, so a later `run`
silently continued the earlier one. Nexa 3.0 removes `.run` and makes history explicit:
the next turn of run `v` is `A.continue(v, ...)`, and `A.execute(...)` would start a new
conversation instead.

## Example
```nexa
flow main {
    a = Writer.run("x")
    b = Writer.run("y")
}
```

Use instead:
```nexa
nexa 3.0;
flow main {
    a = Writer.execute("x")
    b = Writer.continue(a, "y")
}
```

## Fix safety
When the earlier run is held in one variable `v` on every path (and `v` still holds it),
the rewrite `A.continue(v, ...)` keeps the 2.4 meaning and is safe under the same
conditions as NXM002's. When the earlier result was not kept (an expression statement,
a `print`, a pipeline stage, a reassigned variable, different variables on different
paths) there is no automatic rewrite; where the earlier run is a plain statement an
unsafe fix binds it (`writer_run = ...`) and continues it here, because it changes the
earlier statement too.
"""

from __future__ import annotations

import re

from nexa_lsp.analysis.migration.context import Finding, RuleContext, RunCall, dedupe_edits, fit, short
from nexa_lsp.analysis.migration.state import Site
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Fix, Severity, TextEdit

CODE = "NXM003"
INFO = CodeInfo(
    "`Agent.run(...)` after an earlier run of the agent: history is explicit in 3.0", Severity.ERROR, "migration"
)


def continue_edits(ctx: RuleContext, site: Site, var: str) -> list[TextEdit] | None:
    """The edits that turn the `.run` of ``site`` into `.continue(var, ...)`."""
    agent = ctx.a.snippet(site.receiver) if site.receiver is not None else site.agent
    if site.piped is not None:
        head = TextEdit(ctx.at(site.piped.span.start, site.piped.span.start), f"{agent}.continue({var}, ")
        if site.kind == "run_member":
            return [head, TextEdit(ctx.at(site.piped.span.end, site.node.span.end), ")")]
        call = site.call
        word = ctx.run_word(site)
        if call is None or word is None:
            return None
        paren = ctx.open_paren_end(site)
        if paren is None:
            return None
        tail = ", " if call.args else ""
        return [head, TextEdit(ctx.at(site.piped.span.end, paren), tail)]
    word = ctx.run_word(site)
    if word is None:
        return None
    paren = ctx.open_paren_end(site)
    if paren is None:
        return None
    has_args = site.call is not None and bool(site.call.args)
    return [TextEdit(ctx.at(word[0], paren), f"continue({var}, " if has_args else f"continue({var}")]


def finding(ctx: RuleContext, run: RunCall) -> Finding:
    site, agent, earlier, problems = run.site, run.agent, run.earlier, run.problems
    lines = ", ".join(str(ctx.a.line(s.node.span.start)) for s in earlier)
    var = _bound_var(ctx, site, earlier)
    problems.extend(ctx.ext_reasons(site))
    base = (
        f"in 2.4 this `{run.shown}` continued the conversation of {agent}'s earlier run (line {lines}), "
        f"because 2.4 shares each agent's history between runs; {run.removed} and history is explicit"
    )
    fixes: list[Fix] = []
    related = ctx.related(earlier, agent)
    if var is not None:
        message = f"{base}: the next turn of run `{var}` is `{agent}.continue({var}, ...)`"
        if ctx.empty(run.inputs):
            message += ". Not rewritten: the call has no input, and 3.0 refuses to continue with an empty message"
        else:
            edits = continue_edits(ctx, site, var)
            if edits is not None:
                title = fit(f"Use `{short(agent)}.continue({short(var)}, ...)`")
                fixes.append(ctx.fix(title, edits + run.output_edits, problems))
            message += ctx.why_not(problems, edits is None)
        return Finding(CODE, message, site.node.span, fixes, related=related)
    reason = _unbound_reason(ctx, earlier)
    message = (
        f"{base}, but {reason}. No automatic rewrite: bind the earlier run "
        f"(`r = {agent}.execute(...)`) and continue it here with `{agent}.continue(r, ...)`, or use "
        f"`{agent}.execute(...)` if this should be an independent task"
    )
    bind = _bind_fix(ctx, site, earlier, run.inputs)
    if bind is not None:
        fixes.append(bind)
    return Finding(CODE, message, site.node.span, fixes, related=related)


def _bound_var(ctx: RuleContext, site: Site, earlier: list[Site]) -> str | None:
    """The variable that holds the latest earlier run on every path, if there is one."""
    if not earlier:
        return None
    names: set[str] = set()
    defs: set[int] = set()
    for e in earlier:
        if e.bound_def is None or e.kind == "implicit":
            return None
        names.add(ctx.a.defs[e.bound_def].name)
        defs.add(e.bound_def)
    if len(names) != 1:
        return None
    var = names.pop()
    if site.defs_at.get(var) != frozenset(defs):
        return None
    return var


def _unbound_reason(ctx: RuleContext, earlier: list[Site]) -> str:
    implicit = [e for e in earlier if e.kind == "implicit"]
    if implicit:
        return f"that run (line {ctx.a.line(implicit[0].node.span.start)}) is a pipeline stage, not a value"
    unbound = [e for e in earlier if e.bound_def is None]
    if unbound:
        return f"the earlier run's result (line {ctx.a.line(unbound[0].node.span.start)}) is not kept in a variable"
    names = sorted({ctx.a.defs[e.bound_def].name for e in earlier if e.bound_def is not None})
    if len(names) > 1:
        return f"depending on the path the latest run is held in different variables ({', '.join(names)})"
    return f"`{names[0]}` no longer holds that run here (it is reassigned, or not assigned on every path)"


def _snake_case(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return re.sub(r"[^a-z0-9_]", "_", out) or "agent"


def _bind_fix(ctx: RuleContext, site: Site, earlier: list[Site], inputs: list[t.Expr]) -> Fix | None:
    if len(earlier) != 1 or ctx.empty(inputs):
        return None
    e = earlier[0]
    if e.expr_stmt is None or e.kind == "implicit":
        return None
    var = _snake_case(site.agent) + "_run"
    n = 2
    base = var
    while ctx.name_taken(var):
        var = f"{base}_{n}"
        n += 1
    edits = continue_edits(ctx, site, var)
    if edits is None:
        return None
    start = e.expr_stmt.span.start
    problems, output_edits = ctx.value_problems(site)
    why = [
        "binding changes the earlier statement, which you should review (the spec keeps this rewrite manual)",
        *problems,
    ]
    agent = short(site.agent)
    return Fix(
        fit(f"Bind the earlier run of {agent} to `{var}`", f"Bind the earlier run of {agent}"),
        tuple(dedupe_edits([TextEdit(ctx.at(start, start), f"{var} = "), *edits, *output_edits])),
        safe=False,
        why_unsafe="; ".join(why),
    )

"""NXM002: `Agent.run(...)`, first run of the agent in a flow.

## What it does
Reports `A.run(...)` (and `x |> A.run`) where no earlier run of `A` comes before it on
any path through the flow (test, job block, top-level statement).

## Why is this bad?
Nexa 3.0 removes `.run`. The first run of an agent in a flow is an independent task,
exactly like the first 2.4 call in a fresh process, and 3.0 says so with
`A.execute(...)` (new run id, session and budget).

## Example
```nexa
nexa 3.0;
flow main { r = Writer.run("a") }
```

Use instead:
```nexa
nexa 3.0;
flow main { r = Writer.execute("a") }
```

## Fix safety
The rewrite `A.execute(...)` is safe when the result is used where a run stands for its
text (printed, interpolated, piped, discarded, passed to another agent) and nothing else
about the call changes meaning; comparisons and `+` read `r.output` as part of the fix.
It is unsafe (offered, labelled, never applied by fix-all or `--migrate`) when the run
sits inside `try`, `?`, `otherwise` or `fallback`, in a loop or after a branch that may
already have run the agent, when the agent has a protocol result, `memory: persistent`
or approval-required tools, or when other flows share its history. A call without input
gets no rewrite: 3.0 refuses an empty task.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding, RuleContext, RunCall, fit, short
from nexa_lsp.analysis.migration.state import Site
from nexa_lsp.syntax.diagnostics import CodeInfo, Fix, Severity, TextEdit

CODE = "NXM002"
INFO = CodeInfo(
    "`Agent.run(...)`, first run of the agent in a flow: use `Agent.execute(...)`", Severity.ERROR, "migration"
)


def execute_edits(ctx: RuleContext, site: Site) -> list[TextEdit] | None:
    """The edits that turn the `.run` of ``site`` into `.execute`."""
    agent = ctx.a.snippet(site.receiver) if site.receiver is not None else site.agent
    if site.kind == "run_member" and site.piped is not None:
        return [
            TextEdit(ctx.at(site.piped.span.start, site.piped.span.start), f"{agent}.execute("),
            TextEdit(ctx.at(site.piped.span.end, site.node.span.end), ")"),
        ]
    word = ctx.run_word(site)
    if word is None:
        return None
    return [TextEdit(ctx.at(*word), "execute")]


def finding(ctx: RuleContext, run: RunCall) -> Finding:
    site, agent, earlier, problems = run.site, run.agent, run.earlier, run.problems
    a = ctx.a
    lines = ", ".join(str(a.line(s.node.span.start)) for s in earlier)
    if earlier:
        problems.insert(
            0,
            f"on some paths {agent} already ran before this call (line {lines}, "
            f"{'an earlier pass of the loop' if site.in_loop else 'a branch'}) and 2.4 "
            "continued that conversation here",
        )
    problems.extend(ctx.ext_reasons(site))
    if ctx.agent(agent).memory == "persistent":
        problems.append(
            f"{agent} has `memory: persistent`: 2.4 continued the history saved by earlier "
            "processes, `execute` starts a new conversation"
        )
    message = (
        f"`{run.shown}` is the first run of {agent} in {site.unit.label}: {run.removed}; an independent task is "
        f"`{agent}.execute(...)` (new run id, session and budget)"
    )
    fixes: list[Fix] = []
    if ctx.empty(run.inputs):
        message += f". Not rewritten: the call has no input, and 3.0 refuses an empty task; give {agent} its task"
    else:
        edits = execute_edits(ctx, site)
        if edits is not None:
            title = fit(f"Use `{short(agent)}.execute(...)` (independent task)", f"Use `{short(agent)}.execute(...)`")
            fixes.append(ctx.fix(title, edits + run.output_edits, problems))
        message += ctx.why_not(problems, edits is None)
    return Finding(CODE, message, site.node.span, fixes, related=ctx.related(earlier, agent))

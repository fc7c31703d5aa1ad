"""NXM012: continuing or resuming a run of another agent.

## What it does
On the 3.0 path, reports `B.continue(r, ...)` and `B.resume(r)` where `r` is known to be
a run of a different agent `A`.

## Why is this bad?
A run is continued or resumed by the agent that ran it: the runtime checks that the
agent definition matches the run's and refuses otherwise.

## Example
```nexa
nexa 3.0;
flow main {
    r = Writer.execute("x")
    s = Critic.continue(r, "next")
}
```

Use instead:
```nexa
nexa 3.0;
flow main {
    r = Writer.execute("x")
    s = Writer.continue(r, "next")
}
```

## Fix safety
The fix switches the receiver to the agent that ran `r`. It is unsafe: the turn would
run that agent's definition; check which agent you meant.
"""

from __future__ import annotations

from nexa_lsp.analysis.migration.context import Finding, RuleContext, fit, short
from nexa_lsp.analysis.migration.state import Site
from nexa_lsp.syntax.diagnostics import CodeInfo, Fix, Severity, TextEdit

CODE = "NXM012"
INFO = CodeInfo("continuing or resuming a run of another agent", Severity.ERROR, "runs")


def check(ctx: RuleContext, site: Site, var: str | None, origins: list[Site]) -> Finding | None:
    call = site.call
    agent = site.agent
    others = sorted({o.agent for o in origins if o.agent != agent})
    if call is None or not others:
        return None
    lines = ", ".join(str(ctx.a.line(o.node.span.start)) for o in origins if o.agent != agent)
    entry = "continue" if site.kind == "continue" else "resume"
    message = (
        f"`{var or 'the run'}` is a run of {others[0]} (line {lines}), but `{agent}.{entry}` would "
        f"{'continue' if entry == 'continue' else 'resume'} it with {agent}: a run is continued or "
        "resumed by the agent that ran it (the agent definition must match)"
    )
    fixes = []
    if len(others) == 1 and site.receiver is not None:
        fixes.append(
            Fix(
                fit(f"Use `{short(others[0])}.{entry}(...)`"),
                (TextEdit(ctx.at(site.receiver.span.start, site.receiver.span.end), others[0]),),
                safe=False,
                why_unsafe=f"the turn would run {others[0]}'s definition instead of "
                f"{agent}'s; check which agent you meant",
            )
        )
    return Finding(CODE, message, call.span, fixes)

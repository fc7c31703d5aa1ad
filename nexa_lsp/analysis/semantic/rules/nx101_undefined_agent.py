"""NX101: undefined agent.

## What it does
Reports a name used where an agent is required (the receiver of `A.run(...)` or another
run entry, a pipeline stage, a DAG list, `join(...)`, `spawn A(...)`) that no agent of
this file or the files it includes declares.

## Why is this bad?
The runtime fails when the flow reaches the name. A near miss of a declared agent gets a
did-you-mean.

## Example
```nexa
flow main { x = Writr.run("a") }   // undefined agent `Writr`
```

## Fix safety
"Change to `Writer`" is offered when a declared agent is close; it is unsafe because the
name may be declared in a file that includes this one.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import DeclKind, RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX101"
INFO = CodeInfo("undefined agent", Severity.WARNING, "names")
ROLES = (RefRole.RUN_RECEIVER, RefRole.AGENT)
WHAT = "agent"
KINDS = (DeclKind.AGENT,)

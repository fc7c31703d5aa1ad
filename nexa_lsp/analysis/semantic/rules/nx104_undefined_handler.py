"""NX104: undefined agent or flow.

## What it does
Reports a server route handler that names no agent or flow declared in this file or the
files it includes.

## Why is this bad?
The route would have nothing to call when a request arrives.

## Example
```nexa
server 8080 { route GET "/chat" => Missing }
```

## Fix safety
"Change to ..." is offered when a declared agent or flow is close; it is unsafe because
the name may be declared in a file that includes this one.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import DeclKind, RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX104"
INFO = CodeInfo("undefined agent or flow", Severity.WARNING, "names")
ROLES = (RefRole.HANDLER,)
WHAT = "agent or flow"
KINDS = (DeclKind.AGENT, DeclKind.FLOW)

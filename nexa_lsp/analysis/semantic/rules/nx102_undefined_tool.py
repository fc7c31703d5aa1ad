"""NX102: undefined tool.

## What it does
Reports a `uses` entry of an agent that names no tool or agent declared in this file or
the files it includes.

## Why is this bad?
The agent would start without the tool it expects to call.

## Example
```nexa
agent A uses search { prompt: "p" }   // undefined tool `search`
```

## Fix safety
"Change to ..." is offered when a declared tool is close; it is unsafe because the name
may be declared in a file that includes this one.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import DeclKind, RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX102"
INFO = CodeInfo("undefined tool", Severity.WARNING, "names")
ROLES = (RefRole.USES,)
WHAT = "tool"
KINDS = (DeclKind.TOOL, DeclKind.AGENT)

"""NX151: run entry called on something that is not an agent.

## What it does
Reports `.run`, `.execute`, `.continue` or `.resume` called on a name that is declared as
something other than an agent (a flow, a tool, a protocol ...).

## Why is this bad?
Only agents have run entries; the call fails when the flow reaches it.

## Example
```nexa
nexa 3.0;
flow f { }
flow main { r = f.execute("x") }   // `f` is a flow, not an agent
```

## Fix safety
No fix.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX151"
INFO = CodeInfo("run entry called on something that is not an agent", Severity.ERROR, "names")
ROLE = RefRole.RUN_RECEIVER
MESSAGE = "`{name}` is {what}, not an agent: only agents have run entries (`.run`, `.execute`, `.continue`, `.resume`)"

"""NX150: `uses` of something that is not a tool or agent.

## What it does
Reports a `uses` entry that names a declaration of another kind (a protocol, a flow ...).

## Why is this bad?
An agent uses tools, other agents, `std.*` namespaces, skill files (`"path.md"`) and
`mcp:"uri"` servers; anything else gives the model nothing to call.

## Example
```nexa
protocol P { a: str }
agent A uses P { prompt: "p" }   // `P` is a protocol
```

## Fix safety
No fix.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX150"
INFO = CodeInfo("`uses` of something that is not a tool or agent", Severity.ERROR, "names")
ROLE = RefRole.USES
MESSAGE = (
    "`uses {name}`: `{name}` is {what}; an agent uses tools, "
    'other agents, `std.*` namespaces, skill files ("path.md") and `mcp:"uri"` servers'
)

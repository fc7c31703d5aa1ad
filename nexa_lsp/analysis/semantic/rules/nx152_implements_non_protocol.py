"""NX152: `implements` of something that is not a protocol.

## What it does
Reports `implements P` where `P` is declared as something other than a protocol.

## Why is this bad?
The runtime validates an agent's result against a protocol; an agent or a tool gives it
nothing to validate against.

## Example
```nexa
agent B { prompt: "p" }
agent A implements B { prompt: "p" }   // `B` is an agent, not a protocol
```

## Fix safety
No fix.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX152"
INFO = CodeInfo("`implements` of something that is not a protocol", Severity.ERROR, "names")
ROLE = RefRole.PROTOCOL
MESSAGE = "`implements {name}`: `{name}` is {what}, not a protocol"

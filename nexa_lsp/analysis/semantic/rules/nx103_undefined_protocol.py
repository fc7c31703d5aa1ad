"""NX103: undefined protocol.

## What it does
Reports `implements P` where no protocol `P` is declared in this file or the files it
includes.

## Why is this bad?
The runtime cannot validate the agent's result against a protocol it does not know.

## Example
```nexa
agent A implements Report { prompt: "p" }   // undefined protocol `Report`
```

## Fix safety
"Change to ..." is offered when a declared protocol is close; it is unsafe because the
name may be declared in a file that includes this one.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import DeclKind, RefRole
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

CODE = "NX103"
INFO = CodeInfo("undefined protocol", Severity.WARNING, "names")
ROLES = (RefRole.PROTOCOL,)
WHAT = "protocol"
KINDS = (DeclKind.PROTOCOL,)

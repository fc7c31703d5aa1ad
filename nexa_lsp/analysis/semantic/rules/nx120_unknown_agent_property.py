"""NX120: unknown agent property.

## What it does
Reports an agent property the runtime does not read (and that is not one of the known
no-effect keys of NX124), with a did-you-mean for a near miss.

## Why is this bad?
The runtime ignores it, so a typo such as `promt:` silently leaves the agent without its
prompt.

## Example
```nexa
agent A { promt: "p" }   // did you mean `prompt`?
```

## Fix safety
"Change to `prompt`" is unsafe: the runtime starts reading the value under the new name.
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.common import unknown_key
from nexa_lsp.analysis.semantic.properties import AGENT_PROPERTIES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX120"
INFO = CodeInfo("unknown agent property", Severity.WARNING, "properties")


def diagnostic(prop: t.Property) -> Diagnostic:
    message = f"`{prop.key}` is not an agent property the runtime reads; it is ignored"
    return unknown_key(CODE, message, prop.key_span, prop.key, AGENT_PROPERTIES)

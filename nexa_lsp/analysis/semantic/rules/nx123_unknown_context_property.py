"""NX123: unknown context property.

## What it does
Reports a key of an agent's `context { ... }` block that is not one of `source`, `sink`,
`input_schema`, `output_schema`, `max_history_turns`, `inherit`, with a did-you-mean.

## Why is this bad?
The runtime ignores it, so the context flows where the defaults send it.

## Example
```nexa
agent A { prompt: "p" context { sorce: upstream } }   // did you mean `source`?
```

## Fix safety
"Change to `source`" is unsafe: the runtime starts reading the value under the new name.
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.common import unknown_key
from nexa_lsp.analysis.semantic.properties import CONTEXT_PROPERTIES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX123"
INFO = CodeInfo("unknown context property", Severity.WARNING, "properties")


def diagnostic(entry: t.Property) -> Diagnostic:
    message = f"`{entry.key}` is not a context property (use " + ", ".join(f"`{k}`" for k in CONTEXT_PROPERTIES) + ")"
    return unknown_key(CODE, message, entry.key_span, entry.key, CONTEXT_PROPERTIES)

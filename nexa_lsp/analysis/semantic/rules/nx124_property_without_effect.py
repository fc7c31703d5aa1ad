"""NX124: property has no effect.

## What it does
Reports agent keys that sources and docs use but no runtime reads (`max_tokens`,
`fallback`, `tools`, `protocol`, `uses`, `description`, `temperature`), saying where the
setting really goes. Shown as unnecessary (faded) code.

## Why is this bad?
The setting looks applied but is ignored.

## Example
```nexa
agent A { prompt: "p", max_tokens: 100 }   // use the `@limit(max_tokens=N)` decorator instead
```

## Fix safety
No fix: the replacement lives elsewhere (a decorator, the header, the model list).
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.properties import IGNORED_AGENT_PROPERTIES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX124"
INFO = CodeInfo("property has no effect", Severity.HINT, "properties")


def diagnostic(prop: t.Property) -> Diagnostic | None:
    where = IGNORED_AGENT_PROPERTIES.get(prop.key)
    if where is None:
        return None
    return Diagnostic(
        CODE, f"`{prop.key}` has no effect on an agent: {where}", prop.key_span, Severity.HINT, unnecessary=True
    )

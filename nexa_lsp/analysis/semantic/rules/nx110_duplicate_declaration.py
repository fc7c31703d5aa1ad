"""NX110: duplicate declaration.

## What it does
Reports a second declaration of a name already declared in the same file (any kinds:
two agents, an agent and a flow ...), pointing to the first one.

## Why is this bad?
Both end up in one program; which one a reference means depends on the runtime's
loading order.

## Example
```nexa
agent A { prompt: "p" }
agent A { prompt: "q" }   // `A` is already declared in this file (as an agent)
```

## Fix safety
No fix: rename one of them.
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.common import a_word
from nexa_lsp.analysis.symbols import declared_kind
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Related, Severity

CODE = "NX110"
INFO = CodeInfo("duplicate declaration", Severity.ERROR, "declarations")


def diagnostics(name: str, decls: list[t.Decl]) -> list[Diagnostic]:
    first = decls[0]
    kind = declared_kind(first)
    what = kind.value if kind is not None else "declaration"
    return [
        Diagnostic(
            CODE,
            f"`{name}` is already declared in this file (as {a_word(what)}); rename one of them",
            later.name_span,
            Severity.ERROR,
            related=(Related(first.name_span, "first declared here"),),
        )
        for later in decls[1:]
    ]

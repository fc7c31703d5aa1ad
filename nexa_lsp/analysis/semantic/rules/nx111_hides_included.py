"""NX111: declaration hides one from an included file.

## What it does
Reports a declaration whose name an included file declares too.

## Why is this bad?
Both declarations end up in one program, and references in this file mean this file's
declaration: the included one is silently shadowed.

## Example
```nexa
include "lib.nx";          // lib.nx declares agent A too
agent A { prompt: "p" }    // `A` is also declared in the included file "lib.nx"
```

## Fix safety
No fix: rename one of them, or drop the copy.
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.common import a_word
from nexa_lsp.analysis.symbols import Analysis
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX111"
INFO = CodeInfo("declaration hides one from an included file", Severity.WARNING, "declarations")


def diagnostic(analysis: Analysis, name: str, first: t.Decl) -> Diagnostic | None:
    outside = [s for s in analysis.scope.get(name, ()) if s.include is not None]
    if not outside:
        return None
    other = outside[0]
    assert other.include is not None
    return Diagnostic(
        CODE,
        f'`{name}` is also declared in the included file "{other.include.include.name}" '
        f"(as {a_word(other.kind.value)}); both declarations end up in one program",
        first.name_span,
        Severity.WARNING,
    )

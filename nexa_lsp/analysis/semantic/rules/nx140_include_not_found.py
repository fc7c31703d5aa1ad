"""NX140: include file not found.

## What it does
Reports an `include "path";` that resolves to no file: looked up next to the including
file, then in a `stdlib/` folder of that folder and each folder above it. `.nxs` secrets
files are read by the runtime and never looked up.

## Why is this bad?
Every declaration the file expects from the include is missing, so its names resolve to
nothing.

## Example
```nexa
include "missing.nx";   // looked next to this file and in stdlib/
```

## Fix safety
No fix: correct the path or add the file.
"""

from __future__ import annotations

from nexa_lsp.analysis.symbols import Analysis
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX140"
INFO = CodeInfo("include file not found", Severity.ERROR, "include")


def diagnostics(analysis: Analysis) -> list[Diagnostic]:
    return [
        Diagnostic(
            CODE,
            f'included file "{inc.include.name}" not found (looked next to this file and in stdlib/)',
            inc.include.span,
            Severity.ERROR,
        )
        for inc in analysis.includes
        if inc.missing
    ]

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

from nexa_lsp.analysis.semantic.common import a_word, declared_here, describe
from nexa_lsp.analysis.symbols import NameRef, RefRole, Symbol
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity

CODE = "NX152"
INFO = CodeInfo("`implements` of something that is not a protocol", Severity.ERROR, "names")
ROLE = RefRole.PROTOCOL


def diagnostic(ref: NameRef, symbol: Symbol) -> Diagnostic:
    return Diagnostic(
        CODE,
        f"`implements {ref.name}`: `{ref.name}` is {a_word(describe(symbol))}, not a protocol",
        ref.span,
        Severity.ERROR,
        related=declared_here(symbol),
    )

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

from nexa_lsp.analysis.semantic.common import change_fix, did_you_mean
from nexa_lsp.analysis.semantic.properties import AGENT_PROPERTIES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Fix, Severity

CODE = "NX120"
INFO = CodeInfo("unknown agent property", Severity.WARNING, "properties")


def diagnostic(prop: t.Property) -> Diagnostic:
    guess = did_you_mean(prop.key, AGENT_PROPERTIES)
    message = f"`{prop.key}` is not an agent property the runtime reads; it is ignored"
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        message += f"; did you mean `{guess}`?"
        fixes = (change_fix(prop.key_span, guess, f"the runtime starts reading the value as `{guess}`"),)
    return Diagnostic(CODE, message, prop.key_span, Severity.WARNING, fixes)

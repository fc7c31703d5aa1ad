"""NX122: unknown value for a property.

## What it does
Reports a property value that is not one of the few words the runtime accepts for it
(`memory`, `tool_call_strategy`, a tool's `approval` ...), with a did-you-mean.

## Why is this bad?
The runtime falls back to its default, so the setting silently does nothing.

## Example
```nexa
agent A { prompt: "p", memory: forever }   // use `local`, `shared`, `persistent`
```

## Fix safety
"Change to ..." is unsafe: it changes the setting the runtime receives.
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.common import change_fix, did_you_mean
from nexa_lsp.analysis.semantic.properties import N, PropertySpec, S
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Fix, Severity

CODE = "NX122"
INFO = CodeInfo("unknown value for a property", Severity.WARNING, "properties")


def diagnostic(prop: t.Property, spec: PropertySpec, code_kind: str) -> Diagnostic | None:
    value = prop.value
    if not (
        spec.values
        and value.kind in (N, S)
        and isinstance(value.value, str)
        and value.value.strip()
        and value.value not in spec.values
    ):
        return None
    guess = did_you_mean(value.value, spec.values)
    allowed = ", ".join(f"`{v}`" for v in spec.values)
    message = f"`{value.value}` is not a value of `{prop.key}` ({code_kind}): use {allowed}"
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        message += f"; did you mean `{guess}`?"
        new_text = f'"{guess}"' if value.kind is S else guess
        fixes = (change_fix(value.span, guess, "changes the setting the runtime receives", new_text),)
    return Diagnostic(CODE, message, value.span, Severity.WARNING, fixes)

"""NX121: wrong value kind for a property.

## What it does
Reports an agent or context property whose value is of a kind the runtime does not
accept there (a string where it takes true or false, a name where it takes an integer ...).

## Why is this bad?
2.x converts or misreads such values silently: the string `"false"`, for example, is true.

## Example
```nexa
agent A { prompt: "p", stream: "yes" }   // `stream` takes true or false, not a string
```

## Fix safety
A string holding a literal gets a rewrite into that literal: `"true"` -> `true` is safe;
`"false"` -> `false` is unsafe (2.x read the string as true, so the switch turns off), and
`"10"` -> `10` is unsafe (the runtime receives a number instead of text).
"""

from __future__ import annotations

from nexa_lsp.analysis.semantic.common import article
from nexa_lsp.analysis.semantic.properties import INT, MS, OBJ, B, L, N, PropertySpec, S
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Fix, Severity, TextEdit
from nexa_lsp.syntax.tree import ValueKind

CODE = "NX121"
INFO = CodeInfo("wrong value kind for a property", Severity.WARNING, "properties")

_KIND_WORDS = {
    S: "a string",
    MS: "a string",
    N: "a name",
    INT: "an integer",
    B: "true or false",
    L: "a list",
    OBJ: "an object",
}


def _kind_words(kinds: frozenset[ValueKind]) -> str:
    order = [S, MS, N, INT, B, L, OBJ]
    return " or ".join(_KIND_WORDS[k] for k in order if k in kinds and not (k is MS and S in kinds))


def _value_fix(value: t.Value, spec: PropertySpec) -> Fix | None:
    """A rewrite of a string that holds a number or a boolean into that literal."""
    text = value.text
    if value.kind is not S or text is None:
        return None
    stripped = text.strip()
    if B in spec.kinds and stripped in ("true", "false"):
        if stripped == "true":
            return Fix("Write `true` without quotes", (TextEdit(value.span, "true"),))
        return Fix(
            "Write `false` without quotes",
            (TextEdit(value.span, "false"),),
            safe=False,
            why_unsafe='Nexa 2.x treats the string "false" as true; the fix turns the switch off',
        )
    if INT in spec.kinds and stripped.isdigit():
        return Fix(
            f"Write {stripped if len(stripped) <= 20 else stripped[:19] + '…'} as a number",
            (TextEdit(value.span, stripped),),
            safe=False,
            why_unsafe="the runtime receives a number instead of text",
        )
    return None


def diagnostic(prop: t.Property, spec: PropertySpec, where: str) -> Diagnostic | None:
    value = prop.value
    if value.kind in spec.kinds:
        return None
    fix = _value_fix(value, spec)
    return Diagnostic(
        CODE,
        f"`{prop.key}` {where} takes {_kind_words(spec.kinds)}, not {article(value.kind)}",
        value.span,
        Severity.WARNING,
        (fix,) if fix else (),
    )

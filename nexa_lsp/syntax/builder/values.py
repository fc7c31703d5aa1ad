"""Literals and property values: strings (with their `#{...}` interpolations), numbers,
the values of agent, tool, context and config properties."""

from __future__ import annotations

import re

from lark import Token

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder.core import (
    Builder,
    Child,
    base_name,
    find_children,
    first_token,
    rule_name,
)
from nexa_lsp.syntax.diagnostics import Fix, TextEdit
from nexa_lsp.syntax.tree import Span

_INTERPOLATION = re.compile(r"(?<!\\)#\{([^{}]*)\}")
_INTERP_PATH = re.compile(r"\s*([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[\d+\]|\[[A-Za-z_]\w*\])*)\s*")


def string_lit(b: Builder, tok: Token) -> t.StringLit:
    raw = str(tok)
    sp = b.span(tok)
    if raw.startswith('"""'):
        return t.StringLit(sp, raw[3:-3] if len(raw) >= 6 else raw[3:], multiline=True)
    value = raw[1:-1] if len(raw) >= 2 else raw[1:]
    interpolations = []
    for m in _INTERPOLATION.finditer(value):
        path = _INTERP_PATH.fullmatch(m.group(1))
        if path is None:
            continue
        start = sp.rel_start + 1 + m.start(1)
        root_start = start + path.start(1)
        interpolations.append(
            t.Interpolation(
                path.group(0).strip(),
                Span(start, start + len(m.group(1)), b.anchor),
                path.group(1),
                Span(root_start, root_start + len(path.group(1)), b.anchor),
            )
        )
    return t.StringLit(sp, value, False, interpolations)


def number_lit(b: Builder, tok: Token) -> t.NumberLit:
    text = str(tok)
    value: int | float = float(text) if base_name(tok.type) == "FLOAT" else int(text)
    return t.NumberLit(b.span(tok), value, text)


def property_value(b: Builder, node: Child) -> t.Value:
    """A property value (agent / tool / context / config / decorator)."""
    if isinstance(node, Token):
        return _token_value(b, node)
    kind = rule_name(node)
    sp = b.span(node)
    if kind in ("value_string", "item_string", "lit_string", "json_string", "field_legacy_type"):
        lit = string_lit(b, first_token(node))
        return t.Value(sp, t.ValueKind.MULTILINE_STRING if lit.multiline else t.ValueKind.STRING, lit.value)
    if kind == "value_mstring":
        lit = string_lit(b, first_token(node))
        return t.Value(sp, t.ValueKind.MULTILINE_STRING, lit.value)
    if kind in ("value_name", "item_name", "lit_name", "json_name"):
        return t.Value(sp, t.ValueKind.NAME, str(first_token(node)))
    if kind in ("value_int", "item_int", "lit_int", "json_int"):
        return t.Value(sp, t.ValueKind.INT, int(first_token(node)))
    if kind in ("value_float", "item_float", "lit_float", "json_float"):
        return t.Value(sp, t.ValueKind.FLOAT, float(first_token(node)))
    if kind in ("value_true", "lit_true", "json_true"):
        return t.Value(sp, t.ValueKind.BOOL, True)
    if kind in ("value_false", "lit_false", "json_false"):
        return t.Value(sp, t.ValueKind.BOOL, False)
    if kind in ("value_negative", "lit_negative"):
        tok = first_token(node)
        number: int | float = -float(tok) if base_name(tok.type) == "FLOAT" else -int(tok)
        b.error(
            "NX021",
            "negative literals are not Nexa 2.x: write `0 - N` where an expression is allowed",
            sp,
        )
        return t.Value(sp, t.ValueKind.NEGATIVE, number)
    if kind == "item_fallback":
        lit = string_lit(b, first_token(node))
        return t.Value(sp, t.ValueKind.STRING, lit.value, is_fallback=True)
    if kind in ("value_list", "json_array"):
        return t.Value(
            sp,
            t.ValueKind.LIST,
            None,
            items=[
                property_value(b, c)
                for c in node.children
                if not (isinstance(c, Token) and base_name(c.type) == "COMMA")
            ],
        )
    if kind == "json_object":
        pairs = []
        for pair in find_children(node, "json_pair"):
            key_node = pair.children[0]
            key_tok = key_node if isinstance(key_node, Token) else first_token(key_node)
            key = str(key_tok)
            if key.startswith('"'):
                key = key[1:-1]
            else:
                b.error(
                    "NX027",
                    f'object keys are quoted strings in Nexa: write "{key}"',
                    b.span(key_tok),
                    fixes=[Fix(f'Quote "{key}"', (TextEdit(b.span(key_tok), f'"{key}"'),))],
                )
            pairs.append((key, b.span(key_tok), property_value(b, pair.children[1])))
        return t.Value(sp, t.ValueKind.OBJECT, None, pairs=pairs)
    # placeholder / unexpected shapes from error recovery
    return t.Value(sp, t.ValueKind.NAME, "")


def _token_value(b: Builder, tok: Token) -> t.Value:
    base = base_name(tok.type)
    sp = b.span(tok)
    if base in ("STRING", "MSTRING"):
        lit = string_lit(b, tok)
        return t.Value(sp, t.ValueKind.MULTILINE_STRING if lit.multiline else t.ValueKind.STRING, lit.value)
    if base == "INT":
        return t.Value(sp, t.ValueKind.INT, int(tok))
    if base == "FLOAT":
        return t.Value(sp, t.ValueKind.FLOAT, float(tok))
    return t.Value(sp, t.ValueKind.NAME, str(tok))


def prop(b: Builder, key: Child, value: Child) -> t.Property:
    key_tok = key if isinstance(key, Token) else first_token(key)
    val = property_value(b, value)
    return t.Property(b.span_between(key_tok, value), str(key_tok), b.span(key_tok), val)


def is_placeholder(value: t.Value) -> bool:
    """A value inserted by error recovery (an empty name)."""
    return value.kind is t.ValueKind.NAME and value.value == ""

"""Patterns of `match` arms, `let` and `for`."""

from __future__ import annotations

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import values
from nexa_lsp.syntax.builder.core import (
    Builder,
    Child,
    child_tokens,
    find_child,
    find_children,
    first_token,
    rule_name,
)


def pattern(b: Builder, node: Child) -> t.Pattern:
    if isinstance(node, Token):
        name = str(node)
        if name == "_":
            return t.Pattern(b.span(node), "wildcard")
        return t.Pattern(b.span(node), "name", name, b.span(node))
    kind = rule_name(node)
    sp = b.span(node)
    if kind == "pat_name":
        tok = first_token(node)
        if str(tok) == "_":
            return t.Pattern(sp, "wildcard")
        return t.Pattern(sp, "name", str(tok), b.span(tok))
    if kind == "pat_literal":
        inner = node.children[0]
        val = values.property_value(b, inner)
        lit: t.Expr
        if val.kind is t.ValueKind.BOOL:
            lit = t.BoolLit(val.span, bool(val.value))
        elif val.kind in (t.ValueKind.INT, t.ValueKind.FLOAT, t.ValueKind.NEGATIVE):
            lit = t.NumberLit(val.span, val.value if isinstance(val.value, int | float) else 0, str(val.value))
        else:
            lit = t.StringLit(val.span, str(val.value))
        return t.Pattern(sp, "literal", literal=lit)
    if kind == "pat_tuple":
        return t.Pattern(sp, "tuple", items=[pattern(b, c) for c in _pattern_children(b, node)])
    if kind == "pat_array":
        rest = find_child(node, "pat_rest")
        pat = t.Pattern(sp, "array", items=[pattern(b, c) for c in _pattern_children(b, node)])
        _set_rest(b, pat, rest)
        return pat
    if kind == "pat_map":
        pat = t.Pattern(sp, "map")
        for entry in find_children(node, "map_entry"):
            key_tok = entry.children[0]
            assert isinstance(key_tok, Token)
            pat.keys.append(str(key_tok))
            if len(entry.children) > 1:
                pat.items.append(pattern(b, entry.children[1]))
            else:
                pat.items.append(t.Pattern(b.span(key_tok), "name", str(key_tok), b.span(key_tok)))
        _set_rest(b, pat, find_child(node, "pat_rest"))
        return pat
    if kind == "pat_variant":
        toks = child_tokens(node, "IDENT")
        pat = t.Pattern(sp, "variant", str(toks[0]), b.span(toks[0]), variant=str(toks[1]))
        pat.items = [pattern(b, c) for c in _pattern_children(b, node)]
        return pat
    return t.Pattern(sp, "wildcard")


def _pattern_children(b: Builder, node: Tree[Token]) -> list[Child]:
    out: list[Child] = []
    for c in node.children:
        if isinstance(c, Tree):
            if rule_name(c) in ("pat_rest", "map_entry"):
                continue
            out.append(c)
    return out


def _set_rest(b: Builder, pat: t.Pattern, rest: Tree[Token] | None) -> None:
    if rest is not None:
        name_tok = child_tokens(rest, "IDENT")[0]
        pat.rest = str(name_tok)
        pat.rest_span = b.span(name_tok)

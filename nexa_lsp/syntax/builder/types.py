"""Type expressions: `str`, `list[str]`, `Option<T>`, `int | str`, `T?`, and agent return types."""

from __future__ import annotations

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder.core import (
    Builder,
    child_tokens,
    child_trees,
    find_child,
    find_children,
    has_token,
    rule_name,
)


def type_of(b: Builder, tree: Tree[Token]) -> t.TypeExpr | None:
    """The type expression among ``tree``'s children, if any."""
    node = find_child(tree, "type_expr")
    return type_expr(b, node) if node is not None else None


def type_expr(b: Builder, node: Tree[Token]) -> t.TypeExpr:
    """``type_opt ("|" type_opt)*``."""
    options = []
    for opt in find_children(node, "type_opt"):
        core = opt.children[0]
        assert isinstance(core, Tree)
        options.append(_type_name(b, core, has_token(opt, "QMARK"), b.span(opt)))
    return t.TypeExpr(b.span(node), options)


def _type_name(b: Builder, core: Tree[Token], optional: bool, span: t.Span) -> t.TypeName:
    name = core.children[0]
    assert isinstance(name, Token)
    if rule_name(core) == "type_angle":
        arg = core.children[1]
        assert isinstance(arg, Token)
        return t.TypeName(span, str(name), b.span(name), [_single(b, arg)], angle=True, optional=optional)
    args = [type_expr(b, c) for c in child_trees(core)]
    return t.TypeName(span, str(name), b.span(name), args, optional=optional)


def _single(b: Builder, name: Token) -> t.TypeExpr:
    """A type that is one bare name (the ``T`` of ``List<T>``)."""
    span = b.span(name)
    return t.TypeExpr(span, [t.TypeName(span, str(name), span)])


def agent_return(b: Builder, tree: Tree[Token]) -> t.TypeExpr:
    """``-> T`` or ``-> List<T>`` after an agent's name (its own rule, names only)."""
    names = child_tokens(tree, "IDENT")
    head = names[0]
    span = b.span_between(head, tree)
    args = [_single(b, arg) for arg in names[1:2]]
    return t.TypeExpr(span, [t.TypeName(span, str(head), b.span(head), args, angle=bool(args))])

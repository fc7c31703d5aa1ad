"""Type expressions: `str`, `list[str]`, `Option<T>`, `int | str`, `T?`."""

from __future__ import annotations

from lark import Token, Tree

from nexa_lsp.syntax.builder.core import (
    Builder,
    child_trees,
    find_child,
    find_children,
    has_token,
    rule_name,
)


def type_of(b: Builder, tree: Tree[Token]) -> str | None:
    node = find_child(tree, "type_expr")
    return type_expr_text(b, node) if node is not None else None


def type_expr_text(b: Builder, node: Tree[Token]) -> str:
    options = []
    for opt in find_children(node, "type_opt"):
        core = opt.children[0]
        assert isinstance(core, Tree)
        text = _type_core_text(b, core)
        if has_token(opt, "QMARK"):
            text += "?"
        options.append(text)
    return " | ".join(options)


def _type_core_text(b: Builder, core: Tree[Token]) -> str:
    name = str(core.children[0])
    if rule_name(core) == "type_angle":
        return f"{name}<{core.children[1]}>"
    args = [type_expr_text(b, c) for c in child_trees(core)]
    return f"{name}[{', '.join(args)}]" if args else name

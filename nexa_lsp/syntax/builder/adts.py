"""Data declarations: protocols, type aliases, structs, enums, traits and impls."""

from __future__ import annotations

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import agents, statements, types
from nexa_lsp.syntax.builder.core import (
    Builder,
    child_tokens,
    child_trees,
    find_child,
    find_children,
    first_token,
    name_token,
    rule_name,
)


def protocol_decl(b: Builder, tree: Tree[Token]) -> t.ProtocolDecl:
    name = name_token(b, tree)
    decl = t.ProtocolDecl(b.span(tree), str(name), b.span(name))
    for f in find_children(tree, "protocol_field"):
        key = f.children[0]
        key_tok = key if isinstance(key, Token) else first_token(key)
        type_node = f.children[1]
        assert isinstance(type_node, Tree)
        if rule_name(type_node) == "field_legacy_type":
            field = t.ProtocolField(b.span(f), str(key_tok), b.span(key_tok), None, str(first_token(type_node))[1:-1])
        else:
            field = t.ProtocolField(b.span(f), str(key_tok), b.span(key_tok), types.type_expr(b, type_node))
        decl.fields.append(field)
    for semi in child_tokens(tree, "SEMI"):
        b.semicolon_separator(b.span(semi), "protocol fields")
    return decl


def type_decl(b: Builder, tree: Tree[Token]) -> t.TypeDecl:
    name = name_token(b, tree)
    strings = child_tokens(tree, "STRING")
    return t.TypeDecl(
        b.span(tree), str(name), b.span(name), types.type_of(b, tree), str(strings[0])[1:-1] if strings else None
    )


def _adt_members(b: Builder, tree: Tree[Token], kinds: tuple[str, ...]) -> list[t.AdtMember]:
    members = []
    for m in child_trees(tree):
        kind = rule_name(m)
        if kind not in kinds:
            continue
        name = child_tokens(m, "IDENT")[0]
        detail = None
        member_type = None
        if kind == "enum_variant":
            nl = find_child(m, "name_list")
            if nl is not None:
                detail = "(" + ", ".join(str(x) for x in child_tokens(nl, "IDENT")) + ")"
        else:  # a struct field's type, a trait or impl method's return type
            member_type = types.type_of(b, m)
            detail = member_type.text if member_type is not None else None
        body = find_child(m, "block")
        members.append(
            t.AdtMember(
                b.span(m),
                str(name),
                b.span(name),
                detail,
                agents.param_list(b, find_child(m, "params")),
                statements.block(b, body) if body is not None else None,
                member_type,
            )
        )
    return members


def struct_decl(b: Builder, tree: Tree[Token]) -> t.AdtDecl:
    name = name_token(b, tree)
    return t.AdtDecl(b.span(tree), str(name), b.span(name), "struct", _adt_members(b, tree, ("struct_field",)))


def enum_decl(b: Builder, tree: Tree[Token]) -> t.AdtDecl:
    name = name_token(b, tree)
    return t.AdtDecl(b.span(tree), str(name), b.span(name), "enum", _adt_members(b, tree, ("enum_variant",)))


def trait_decl(b: Builder, tree: Tree[Token]) -> t.AdtDecl:
    name = name_token(b, tree)
    return t.AdtDecl(b.span(tree), str(name), b.span(name), "trait", _adt_members(b, tree, ("trait_method",)))


def impl_decl(b: Builder, tree: Tree[Token]) -> t.AdtDecl:
    names = child_tokens(tree, "IDENT")
    return t.AdtDecl(
        b.span(tree),
        str(names[0]),
        b.span(names[0]),
        "impl",
        _adt_members(b, tree, ("impl_method",)),
        str(names[1]) if len(names) > 1 else None,
        b.span(names[1]) if len(names) > 1 else None,
    )

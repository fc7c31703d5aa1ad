"""Agents and tools: agent declarations (decorators, `uses`, contracts, properties,
context blocks), `tool` declarations and `@tool` functions, and parameter lists."""

from __future__ import annotations

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import expressions, statements, types, values
from nexa_lsp.syntax.builder.core import (
    Builder,
    child_tokens,
    child_trees,
    find_child,
    find_children,
    name_token,
    rule_name,
)
from nexa_lsp.syntax.tree import Span

AGENT_DECORATORS = frozenset({"limit", "timeout", "retry", "temperature"})


def tool_decl(b: Builder, tree: Tree[Token]) -> t.ToolDecl:
    name = name_token(b, tree)
    props: list[t.Property] = []
    body = find_child(tree, "tool_props")
    if body is not None:
        for p in body.children:
            if not isinstance(p, Tree):
                continue
            if rule_name(p) == "tool_mcp_prop":
                key_tok = p.children[0]
                assert isinstance(key_tok, Token)
                val = values.property_value(b, p.children[1])
                props.append(
                    t.Property(
                        b.span(p),
                        "mcp",
                        Span(b.span(key_tok).rel_start, b.span(key_tok).rel_end - 1, b.anchor),
                        val,
                    )
                )
            else:
                prop = values.prop(b, p.children[0], p.children[1])
                if not values.is_placeholder(prop.value):
                    props.append(prop)
    decl = t.ToolDecl(b.span(tree), str(name), b.span(name), props)
    _check_tool_body(b, decl)
    return decl


def _check_tool_body(b: Builder, decl: t.ToolDecl) -> None:
    keys = [p.key for p in decl.properties if p.key != "approval"]
    # `python:` may also stand beside a described tool: it names the tool's implementation
    described = [k for k in keys if k != "python"] == ["description", "parameters"] and keys.count("python") <= 1
    if not described and keys not in (["mcp"], ["python"]):
        b.error(
            "NX032",
            f'tool {decl.name} needs either `description: "...", parameters: {{...}}` '
            '(optionally with `python: "module.function"`), or `mcp: "uri"`, or `python: "module.function"`',
            decl.name_span,
        )
    for p in decl.properties:
        if p.key in ("description", "mcp", "python", "approval") and not p.value.is_string:
            b.error("NX027", f"`{p.key}` takes a string", p.value.span)
        if p.key == "parameters":
            if p.value.kind is not t.ValueKind.OBJECT:
                b.error("NX027", '`parameters` takes an object of strings: {"name": "type"}', p.value.span)
            else:
                for key, _ks, v in p.value.pairs:
                    if not v.is_string:
                        b.error(
                            "NX027",
                            f"parameter `{key}`: Nexa 2.x accepts only string type "
                            'descriptions here ("string", "number")',
                            v.span,
                        )


def param_list(b: Builder, tree: Tree[Token] | None) -> list[t.Param]:
    if tree is None:
        return []
    out = []
    for p in find_children(tree, "param"):
        name = child_tokens(p, "IDENT")[0]
        type_node = find_child(p, "type_expr")
        default = next((c for c in p.children if isinstance(c, Tree) and rule_name(c) != "type_expr"), None)
        out.append(
            t.Param(
                b.span(p),
                str(name),
                b.span(name),
                types.type_expr(b, type_node) if type_node is not None else None,
                values.property_value(b, default) if default is not None else None,
            )
        )
    return out


def tool_fn_decl(b: Builder, tree: Tree[Token]) -> t.ToolFunction:
    cfg = find_child(tree, "tool_fn_config")
    description = ""
    config: list[t.Property] = []
    if cfg is not None:
        desc_tok = child_tokens(cfg, "STRING")
        description = str(desc_tok[0])[1:-1] if desc_tok else ""
        for pair in child_trees(cfg):
            config.append(values.prop(b, pair.children[0], pair.children[1]))
            if rule_name(pair) == "cfg_pair_eq":
                b.error("NX033", "@tool settings use `key: value`, not `key = value`", b.span(pair))
    name = name_token(b, tree)
    params = param_list(b, find_child(tree, "params"))
    for p in params:
        if p.type_text is None:
            b.error(
                "NX033",
                f"parameter `{p.name}` of an @tool function needs a type (`{p.name}: str`)",
                p.name_span,
            )
    ret = types.type_of(b, tree)
    body = find_child(tree, "block")
    return t.ToolFunction(
        b.span(tree),
        str(name),
        b.span(name),
        description,
        config,
        params,
        ret,
        statements.block(b, body) if body is not None else None,
    )


def agent_decl(b: Builder, tree: Tree[Token]) -> t.AgentDecl:
    name = name_token(b, tree)
    decl = t.AgentDecl(b.span(tree), str(name), b.span(name))
    for deco in find_children(tree, "decorator"):
        deco_name = child_tokens(deco, "IDENT")[0]
        args: list[t.Property] = []
        deco_args = find_child(deco, "deco_args")
        if deco_args is not None:
            for a in child_trees(deco_args):
                args.append(values.prop(b, a.children[0], a.children[1]))
                if rule_name(a) == "deco_arg_colon":
                    b.error("NX033", "decorator arguments use `name=value`", b.span(a))
        decl.decorators.append(t.Decorator(b.span(deco), str(deco_name), b.span(deco_name), args))
        if str(deco_name) not in AGENT_DECORATORS:
            b.error(
                "NX034",
                f"unknown agent decorator @{deco_name}: Nexa agents accept @limit, @timeout, @retry and @temperature",
                b.span(deco_name),
            )
    ret = find_child(tree, "agent_return")
    if ret is not None:
        decl.returns = types.agent_return(b, ret)
    uses = find_child(tree, "uses_clause")
    if uses is not None:
        for item in child_trees(uses):
            kind = rule_name(item)
            if kind == "use_name":
                dotted = child_trees(item)[0]
                words = [str(p) for p in child_tokens(dotted, "IDENT")]
                text = ".".join(words)
                if len(words) > 2 or (len(words) == 2 and words[0] != "std"):
                    b.error(
                        "NX033",
                        f"`uses {text}`: write a tool or agent name, or a two-part std namespace such as std.fs",
                        b.span(item),
                    )
                decl.uses.append(t.UseItem(b.span(item), "std" if len(words) > 1 else "name", text))
            elif kind == "use_skill":
                decl.uses.append(t.UseItem(b.span(item), "skill", str(child_tokens(item)[0])[1:-1]))
            else:
                decl.uses.append(t.UseItem(b.span(item), "mcp", str(child_tokens(item, "STRING")[0])[1:-1]))
    impl = find_child(tree, "implements_clause")
    if impl is not None:
        tok = child_tokens(impl, "IDENT")[0]
        decl.implements = str(tok)
        decl.implements_span = b.span(tok)
    decl.contracts = expressions.contracts(b, tree)
    brace = child_tokens(tree, "LBRACE")
    if brace:
        decl.body_span = Span(b.span(brace[0]).rel_start, decl.span.rel_end, b.anchor)
    for item in find_children(tree, "agent_item"):
        inner = item.children[0]
        if isinstance(inner, Token):
            continue
        kind = rule_name(inner)
        if kind == "agent_property":
            prop = values.prop(b, inner.children[0], inner.children[1])
            if not values.is_placeholder(prop.value):  # `model: ,` already has its syntax error
                decl.properties.append(prop)
        elif kind == "context_block":
            entries = [values.prop(b, e.children[0], e.children[1]) for e in find_children(inner, "ctx_entry")]
            entries = [e for e in entries if not values.is_placeholder(e.value)]
            decl.context_blocks.append(t.ContextBlock(b.span(inner), entries))
    for item in find_children(tree, "stray_semicolon"):
        b.semicolon_separator(b.span(item), "agent properties")
    for item in find_children(tree, "agent_item"):
        if isinstance(item.children[0], Token):
            b.semicolon_separator(b.span(item.children[0]), "agent properties")
    return decl

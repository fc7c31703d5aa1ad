"""Top-level items: the dispatcher, header items (version, include, use config), flows, tests,
jobs, servers, resources and the statements allowed at top level."""

from __future__ import annotations

from collections.abc import Callable

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import adts, agents, expressions, statements, types, values
from nexa_lsp.syntax.builder.core import (
    Builder,
    child_tokens,
    child_trees,
    find_child,
    find_children,
    first_token,
    has_token,
    name_token,
    rule_name,
)
from nexa_lsp.syntax.diagnostics import Fix, TextEdit
from nexa_lsp.syntax.tree import Span

STATEMENT_WORDS = frozenset({"let", "print", "if", "for", "while", "loop", "assert", "try", "python", "return"})
TOP_LEVEL_CALLS = frozenset({"spawn", "parallel", "race", "channel", "after", "schedule"})


def top_item(b: Builder, tree: Tree[Token]) -> t.TopItem | None:
    """The typed item of one top-level tree, or None for a rule that is no item."""
    kind = rule_name(tree)
    build = _DECLARATIONS.get(kind)
    if build is not None:
        return build(b, tree)
    if kind in ("defer_stmt", "match_expr"):
        sp = b.span(tree)
        stmt: t.Stmt
        stmt = (
            statements.keyword_stmt(b, tree, "defer")
            if kind == "defer_stmt"
            else t.ExprStmt(sp, expressions.match_expr(b, tree))
        )
        return t.TopLevelStatement(sp, "", Span(sp.rel_start, sp.rel_start, b.anchor), stmt)
    return None


def _version_decl(b: Builder, tree: Tree[Token]) -> t.VersionDecl:
    sp = b.span(tree)
    value = find_child(tree, "version_value")
    version = str(first_token(value)) if value is not None else None
    return t.VersionDecl(
        sp,
        "nexa",
        Span(sp.rel_start, sp.rel_start + 4, b.anchor),
        version,
        b.span(value) if value is not None else None,
    )


def _include_decl(b: Builder, tree: Tree[Token]) -> t.Include:
    tok = child_tokens(tree, "STRING")[0]
    has_semi = has_token(tree, "SEMI")
    if not has_semi:
        statements.semicolon_fix(b, tree, "include")
    return t.Include(b.span(tree), str(tok)[1:-1], b.span(tok), has_semi)


def _use_config_decl(b: Builder, tree: Tree[Token]) -> t.UseConfig:
    tok = name_token(b, tree)
    has_semi = has_token(tree, "SEMI")
    if not has_semi:
        statements.semicolon_fix(b, tree, "use config")
    return t.UseConfig(b.span(tree), str(tok), b.span(tok), has_semi)


def _flow_decl(b: Builder, tree: Tree[Token]) -> t.FlowDecl:
    name = name_token(b, tree)
    decl = t.FlowDecl(b.span(tree), str(name), b.span(name))
    params_tree = find_child(tree, "flow_params")
    if params_tree is not None:
        decl.params = agents.param_list(b, find_child(params_tree, "params"))
        if not decl.params:
            sp = b.span(params_tree)
            b.error(
                "NX020",
                f"`flow {name}()`: a flow without parameters is written without parentheses: `flow {name}`",
                sp,
                fixes=[Fix("Remove `()`", (TextEdit(sp, ""),))],
            )
        for p in decl.params:
            if p.type_text is None:
                b.error("NX033", f"flow parameter `{p.name}` needs a type (`{p.name}: str`)", p.name_span)
            if p.default is not None:
                b.error("NX033", "flow parameters have no default values", p.default.span)
    ret = find_child(tree, "flow_return") or find_child(tree, "flow_return_colon")
    if ret is not None:
        type_node = find_child(ret, "type_expr")
        decl.returns = types.type_expr(b, type_node) if type_node is not None else None
        if rule_name(ret) == "flow_return_colon":
            b.error("NX033", "a flow's return type is written with `->`, not `:`", b.span(ret))
    decl.contracts = expressions.contracts(b, tree)
    body = find_child(tree, "block")
    decl.body = statements.block(b, body) if body is not None else None
    return decl


def _test_decl(b: Builder, tree: Tree[Token]) -> t.TestDecl:
    tok = child_tokens(tree, "STRING")[0]
    body = find_child(tree, "block")
    return t.TestDecl(b.span(tree), str(tok)[1:-1], b.span(tok), statements.block(b, body) if body else None)


def _job_decl(b: Builder, tree: Tree[Token]) -> t.JobDecl:
    name = name_token(b, tree)
    queue = child_tokens(tree, "STRING")
    decl = t.JobDecl(b.span(tree), str(name), b.span(name), str(queue[0])[1:-1] if queue else "")
    opts = find_child(tree, "job_options")
    if opts is not None:
        for o in child_trees(opts):
            decl.options.append(values.prop(b, o.children[0], o.children[1]))
            if rule_name(o) == "job_option_colon":
                b.error("NX033", "job options in parentheses use `key = value` (`(retry = 2)`)", b.span(o))
    for c in find_children(tree, "job_config"):
        decl.config.append(values.prop(b, c.children[0], c.children[1]))
    perform = find_child(tree, "perform_block")
    if perform is None:
        b.error("NX033", f"job {name} needs a `perform(args) {{ ... }}` block", decl.name_span)
    else:
        nl = find_child(perform, "name_list")
        decl.perform_params = [str(x) for x in child_tokens(nl, "IDENT")] if nl is not None else []
        body = find_child(perform, "block")
        decl.perform = statements.block(b, body) if body is not None else None
    failure = find_child(tree, "on_failure_block")
    if failure is not None:
        nl = find_child(failure, "name_list")
        decl.on_failure_params = [str(x) for x in child_tokens(nl, "IDENT")] if nl is not None else []
        if len(decl.on_failure_params) != 2:
            b.error("NX033", "`on_failure` takes exactly two names: (error, attempt)", b.span(failure))
        body = find_child(failure, "block")
        decl.on_failure = statements.block(b, body) if body is not None else None
    return decl


def _server_decl(b: Builder, tree: Tree[Token]) -> t.ServerDecl:
    port = tree.children[0]
    port_tok = port if isinstance(port, Token) else first_token(port)
    if isinstance(port, Tree):
        b.error(
            "NX033",
            "a server is declared with its port number: `server 8080 { ... }`",
            b.span(port_tok),
        )
    decl = t.ServerDecl(b.span(tree), str(port_tok), b.span(port_tok))
    _server_items(b, tree, decl, 0)
    return decl


def _server_items(b: Builder, tree: Tree[Token], decl: t.ServerDecl, depth: int) -> None:
    order = {"directive": 0, "route": 1, "group": 2}
    last = 0
    for item in child_trees(tree):
        kind = rule_name(item)
        if kind in ("server_static", "server_cors", "server_middleware", "server_require_auth"):
            cls = "directive"
            if kind == "server_cors":
                cors = values.property_value(b, item.children[0])
                for key, _ks, val in cors.pairs:
                    if not val.is_string:
                        b.error("NX027", f'cors `{key}` takes a string (`cors {{"origins": "*"}}`)', val.span)
            decl.directives.append((kind.removeprefix("server_"), b.span(item)))
        elif kind in ("route", "semantic_route"):
            cls = "route"
            method = "semantic"
            if kind == "route":
                mt = find_child(item, "http_method")
                method = str(first_token(mt)) if mt is not None else "GET"
            path_tok = child_tokens(item, "STRING")[0]
            handler = find_child(item, "route_handler")
            handlers = [(str(h), b.span(h)) for h in child_tokens(handler, "IDENT")] if handler else []
            decl.routes.append(t.Route(b.span(item), method, str(path_tok)[1:-1], handlers))
        elif kind == "route_group":
            cls = "group"
            _server_items(b, item, decl, depth + 1)
        else:
            continue
        if order[cls] < last:
            b.error(
                "NX033",
                "inside a server, directives come first, then routes, then groups",
                b.span(item),
            )
        last = max(last, order[cls])


def _resource_decl(b: Builder, tree: Tree[Token]) -> t.ResourceDecl:
    kind_tree = find_child(tree, "resource_kind")
    kind = str(first_token(kind_tree)) if kind_tree is not None else "db"
    idents = child_tokens(tree, "IDENT")
    name, func = idents[0], idents[1] if len(idents) > 1 else idents[0]
    arg = child_tokens(tree, "STRING")
    expected = {"db": "connect", "auth": "enable_auth", "kv": "open"}[kind]
    if str(func) != expected:
        b.error("NX033", f'`{kind} {name} = ...` takes `{expected}("...")`', b.span(func))
    return t.ResourceDecl(b.span(tree), str(name), b.span(name), kind, str(func), str(arg[0])[1:-1] if arg else "")


def _top_call(b: Builder, tree: Tree[Token]) -> t.TopLevelStatement:
    name = child_tokens(tree, "IDENT")[0]
    sp = b.span(tree)
    call = expressions.call_of(b, tree, t.Name(b.span(name), str(name)))
    if str(name) in STATEMENT_WORDS:
        b.error(
            "NX031",
            f"`{name}` cannot stand at top level: only declarations can; put it inside a flow",
            b.span(name),
        )
    elif str(name) not in TOP_LEVEL_CALLS:
        b.error(
            "NX031",
            f"`{name}(...)` cannot stand at top level: only declarations and "
            "spawn/parallel/race/channel/after/schedule(...) can; call it inside a flow",
            sp,
        )
    return t.TopLevelStatement(sp, "", Span(sp.rel_start, sp.rel_start, b.anchor), t.ExprStmt(sp, call))


_DECLARATIONS: dict[str, Callable[[Builder, Tree[Token]], t.TopItem]] = {
    "version_decl": _version_decl,
    "include_decl": _include_decl,
    "use_config_decl": _use_config_decl,
    "tool_decl": agents.tool_decl,
    "tool_fn_decl": agents.tool_fn_decl,
    "agent_decl": agents.agent_decl,
    "flow_decl": _flow_decl,
    "test_decl": _test_decl,
    "protocol_decl": adts.protocol_decl,
    "type_decl": adts.type_decl,
    "struct_decl": adts.struct_decl,
    "enum_decl": adts.enum_decl,
    "trait_decl": adts.trait_decl,
    "impl_decl": adts.impl_decl,
    "job_decl": _job_decl,
    "server_decl": _server_decl,
    "resource_decl": _resource_decl,
    "top_call": _top_call,
}

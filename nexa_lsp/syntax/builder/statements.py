"""Statements of flow-like bodies (flows, tests, tool functions, jobs, handlers)."""

from __future__ import annotations

from collections.abc import Callable

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import expressions, patterns, types, values
from nexa_lsp.syntax.builder.core import (
    Builder,
    Child,
    base_name,
    child_tokens,
    find_child,
    find_children,
    first_token,
    has_token,
    rule_name,
)
from nexa_lsp.syntax.diagnostics import Fix, Severity, TextEdit
from nexa_lsp.syntax.tree import Span


def block(b: Builder, node: Child) -> t.Block:
    if not isinstance(node, Tree):
        return t.Block(b.span(node), [])
    stmts = []
    for c in node.children:
        if isinstance(c, Tree):
            st = stmt(b, c)
            if st is not None:
                stmts.append(st)
    return t.Block(b.span(node), stmts)


def stmt(b: Builder, tree: Tree[Token]) -> t.Stmt | None:
    handler = _HANDLERS.get(rule_name(tree))
    return handler(b, tree) if handler is not None else None


def semicolon_fix(b: Builder, tree: Tree[Token], what: str) -> None:
    sp = b.span(tree)
    end = Span(sp.rel_end, sp.rel_end, b.anchor)
    b.error(
        "NX004",
        f"`{what}` needs a `;` after it (Nexa 2.x reads it without one as a bare name)",
        sp,
        Severity.WARNING,
        [Fix("Add `;`", (TextEdit(end, ";"),))],
    )


def _assign(b: Builder, tree: Tree[Token]) -> t.Stmt:
    target = expressions.expr(b, tree.children[0])
    value = expressions.expr(b, tree.children[1])
    tail_tree = tree.children[2]
    tail = "plain"
    handler: t.Expr | t.Block | None = None
    has_semi = False
    if isinstance(tail_tree, Tree):
        kind = rule_name(tail_tree)
        has_semi = has_token(tail_tree, "SEMI")
        if kind == "tail_propagate":
            tail = "propagate"
        elif kind == "tail_otherwise":
            tail = "otherwise"
            h = next(c for c in tail_tree.children if isinstance(c, Tree))
            handler = block(b, h) if rule_name(h) == "block" else expressions.expr(b, h)
    sp = b.span(tree)
    if isinstance(value, t.SpecialExpr) and value.kind == "await":
        b.error(
            "NX026",
            "`x = await worker;` does not bind the result in Nexa 2.x (it reads `await;` "
            "then `worker;`): write `await worker;` on its own",
            value.span,
            Severity.WARNING,
        )
    if not isinstance(target, t.Name):
        b.error(
            "NX023",
            "Nexa 2.x assigns only to plain names (`x = ...`): member, index and computed targets are not supported",
            target.span,
        )
    return t.Assign(sp, target, value, tail, handler, has_semi)


def _expr_stmt(b: Builder, tree: Tree[Token]) -> t.Stmt:
    inner = tree.children[0]
    e = expressions.expr(b, inner)
    if isinstance(e, t.SpecialExpr) and e.kind == "await":
        return t.KeywordStmt(
            b.span(tree),
            "await",
            names=[(e.name or "", e.name_span or e.span)],
            has_semicolon=has_token(tree, "SEMI"),
        )
    return t.ExprStmt(b.span(tree), e, has_token(tree, "QMARK"))


def _print_legacy(b: Builder, tree: Tree[Token]) -> t.Stmt:
    value_node = tree.children[0]
    if isinstance(value_node, Tree):  # dotted name
        toks = child_tokens(value_node, "IDENT")
        e: t.Expr = t.Name(b.span(toks[0]), str(toks[0]))
        for tok in toks[1:]:
            e = t.Member(Span(e.span.rel_start, b.span(tok).rel_end, b.anchor), e, str(tok), b.span(tok))
    else:
        e = expressions.expr(b, value_node)
    sp = b.span(tree)
    vs = e.span
    # `(` goes right after the `print` keyword: the spaces before the value go, a comment stays
    after_print = sp.rel_start + len("print")
    gap_end = vs.rel_start if b.text[after_print : vs.rel_start].isspace() else after_print
    fix = Fix(
        "Wrap in print(...)",
        (
            TextEdit(Span(after_print, gap_end, b.anchor), "("),
            TextEdit(Span(vs.rel_end, vs.rel_end, b.anchor), ")"),
        ),
        safe=False,
        why_unsafe="Nexa 2.x printed nothing here; the fix makes the program print",
    )
    b.error(
        "NX025",
        "`print` without parentheses prints nothing in Nexa 2.x (it is the name `print` "
        "followed by a value): write print(...)",
        sp,
        Severity.WARNING,
        [fix],
    )
    return t.Print(sp, [t.Argument(e.span, e)], legacy=True)


def _if(b: Builder, tree: Tree[Token]) -> t.If:
    cond = expressions.condition(b, tree.children[0])
    then = block(b, tree.children[1])
    other: t.Block | t.If | None = None
    if len(tree.children) > 2:
        else_tree = tree.children[2]
        assert isinstance(else_tree, Tree)
        inner = else_tree.children[0]
        assert isinstance(inner, Tree)
        other = _if(b, inner) if rule_name(else_tree) == "else_if" else block(b, inner)
    return t.If(b.span(tree), cond, then, other)


def _for_each(b: Builder, tree: Tree[Token]) -> t.ForEach:
    names = child_tokens(tree, "IDENT")
    rest = [
        c
        for c in tree.children
        if isinstance(c, Tree) or (isinstance(c, Token) and base_name(c.type) not in ("IDENT", "COMMA"))
    ]
    iterable_node = rest[0] if len(rest) > 1 else names[-1]
    body_node = rest[-1]
    if len(rest) == 1:  # iterable is a bare name token consumed as IDENT
        iterable_node = names.pop()
    item = names[0]
    index = names[1] if len(names) > 1 else None
    return t.ForEach(
        b.span(tree),
        str(item),
        b.span(item),
        str(index) if index else None,
        b.span(index) if index else None,
        expressions.expr(b, iterable_node),
        block(b, body_node),
    )


def _for_pattern(b: Builder, tree: Tree[Token]) -> t.ForPattern:
    pat, iterable, body = tree.children[0], tree.children[1], tree.children[2]
    return t.ForPattern(b.span(tree), patterns.pattern(b, pat), expressions.expr(b, iterable), block(b, body))


def _jump(b: Builder, tree: Tree[Token], keyword: str) -> t.Jump:
    has_semi = has_token(tree, "SEMI")
    if not has_semi:
        semicolon_fix(b, tree, keyword)
    return t.Jump(b.span(tree), keyword, has_semi)


def _semantic_if_stmt(b: Builder, tree: Tree[Token]) -> t.SemanticIf:
    question_tok = tree.children[0]
    assert isinstance(question_tok, Token)
    fast = find_child(tree, "fast_match")
    fast_lit = None
    if fast is not None:
        tok = child_tokens(fast)[-1]
        raw = str(tok)
        start = 2 if raw.startswith("r") else 1
        fast_lit = t.StringLit(b.span(tok), raw[start:-1])
    rest = [c for c in tree.children[1:] if not (isinstance(c, Tree) and rule_name(c) == "fast_match")]
    target = expressions.expr(b, rest[0])
    blocks = [block(b, c) for c in rest[1:]]
    return t.SemanticIf(
        b.span(tree),
        values.string_lit(b, question_tok),
        fast_lit,
        target,
        blocks[0],
        blocks[1] if len(blocks) > 1 else None,
    )


def _let(b: Builder, tree: Tree[Token]) -> t.Let:
    if not has_token(tree, "SEMI"):
        semicolon_fix(b, tree, "let")
    return t.Let(b.span(tree), patterns.pattern(b, tree.children[0]), expressions.expr(b, tree.children[1]))


def _try(b: Builder, tree: Tree[Token]) -> t.Try:
    blocks = find_children(tree, "block")
    name = child_tokens(tree, "IDENT")[0]
    return t.Try(b.span(tree), block(b, blocks[0]), str(name), b.span(name), block(b, blocks[1]))


def _python(b: Builder, tree: Tree[Token]) -> t.PythonBlock:
    tok = child_tokens(tree)[-1]
    raw = str(tok)
    code = raw[3:-3] if raw.startswith('"""') else raw[1:-1]
    return t.PythonBlock(b.span(tree), code.strip())


def keyword_stmt(b: Builder, tree: Tree[Token], keyword: str, variant: str | None = None) -> t.KeywordStmt:
    exprs: list[t.Expr] = []
    names: list[tuple[str, Span]] = []
    declared_type = None
    for c in tree.children:
        if isinstance(c, Token):
            base = base_name(c.type)
            if base == "IDENT":
                names.append((str(c), b.span(c)))
            elif base in ("STRING", "MSTRING"):
                exprs.append(values.string_lit(b, c))
        elif rule_name(c) == "type_expr":
            declared_type = types.type_expr(b, c)
        else:
            exprs.append(expressions.expr(b, c))
    has_semi = has_token(tree, "SEMI")
    if not has_semi and keyword in ("assert", "defer", "reflect", "restore", "pass", "verify", "receive"):
        semicolon_fix(b, tree, keyword)
    if keyword == "verify" and variant == "call" and exprs:
        subject = exprs[0]
        if not (isinstance(subject, t.Call) and isinstance(subject.callee, t.Member) and not subject.args):
            b.error(
                "NX033",
                "`verify` needs `satisfies Type`, `against x`, or a method call with no "
                "arguments (`verify x.valid();`)",
                subject.span,
            )
    return t.KeywordStmt(b.span(tree), keyword, exprs, names, declared_type, variant, has_semi)


def _block_stmt(b: Builder, tree: Tree[Token], keyword: str) -> t.BlockStmt:
    settings: list[t.Property] = []
    blocks: list[t.Block] = []
    names: list[tuple[str, Span]] = []
    for c in tree.children:
        if isinstance(c, Tree):
            kind = rule_name(c)
            if kind in ("loop_param", "ctx_pair"):
                settings.append(values.prop(b, c.children[0], c.children[1]))
            elif kind == "block":
                blocks.append(block(b, c))
            elif kind == "correction":
                for tok in child_tokens(c, "IDENT"):
                    names.append((str(tok), b.span(tok)))
                inner = find_child(c, "block")
                if inner is not None:
                    blocks.append(block(b, inner))
        elif base_name(c.type) in ("STRING",):
            settings.append(t.Property(b.span(c), "reason", b.span(c), values.property_value(b, c)))
    if keyword == "autoloop":
        for s in settings:
            if s.key not in ("max_steps", "exit_when", "timeout"):
                b.error(
                    "NX033",
                    f"autoloop accepts max_steps, exit_when and timeout, not `{s.key}`",
                    s.key_span,
                )
            elif s.value.kind is t.ValueKind.NAME:
                b.error("NX027", f"autoloop `{s.key}` needs a literal value, not a variable", s.value.span)
    return t.BlockStmt(b.span(tree), keyword, settings, blocks, [], names)


def _hook(b: Builder, tree: Tree[Token]) -> t.BlockStmt:
    kw_tree = find_child(tree, "hook_kw")
    assert kw_tree is not None
    keyword = str(first_token(kw_tree))
    names = [(str(tok), b.span(tok)) for tok in child_tokens(tree, "IDENT")]
    blocks = [block(b, node) for node in find_children(tree, "block")]
    return t.BlockStmt(b.span(tree), keyword, [], blocks, [], names)


def _fork(b: Builder, tree: Tree[Token]) -> t.BlockStmt:
    exprs: list[t.Expr] = []
    names: list[tuple[str, Span]] = []
    for branch in find_children(tree, "fork_branch"):
        toks = [c for c in branch.children if isinstance(c, Token) and base_name(c.type) == "IDENT"]
        value = branch.children[-1]
        if len(branch.children) > 1 and toks:
            names.append((str(toks[0]), b.span(toks[0])))
        exprs.append(expressions.expr(b, value))
    merge = child_tokens(tree, "IDENT")
    if merge:
        names.append((str(merge[-1]), b.span(merge[-1])))
    return t.BlockStmt(b.span(tree), "fork", [], [], exprs, names)


def _print(b: Builder, tree: Tree[Token]) -> t.Stmt:
    return t.Print(b.span(tree), expressions.args_of(b, tree))


def _while(b: Builder, tree: Tree[Token]) -> t.Stmt:
    return t.While(b.span(tree), expressions.condition(b, tree.children[0]), block(b, tree.children[1]))


def _loop(b: Builder, tree: Tree[Token]) -> t.Stmt:
    return t.Loop(b.span(tree), block(b, tree.children[0]), expressions.condition(b, tree.children[1]))


def _keyword(keyword: str, variant: str | None = None) -> Callable[[Builder, Tree[Token]], t.Stmt]:
    return lambda b, tr: keyword_stmt(b, tr, keyword, variant)


def _with_block(keyword: str) -> Callable[[Builder, Tree[Token]], t.Stmt]:
    return lambda b, tr: _block_stmt(b, tr, keyword)


_HANDLERS: dict[str, Callable[[Builder, Tree[Token]], t.Stmt]] = {
    "assign_stmt": _assign,
    "expr_stmt": _expr_stmt,
    "print_stmt": _print,
    "print_legacy": _print_legacy,
    "if_stmt": _if,
    "for_each_stmt": _for_each,
    "for_pattern_stmt": _for_pattern,
    "while_stmt": _while,
    "loop_stmt": _loop,
    "break_stmt": lambda b, tr: _jump(b, tr, "break"),
    "continue_stmt": lambda b, tr: _jump(b, tr, "continue"),
    "semantic_if_stmt": _semantic_if_stmt,
    "let_stmt": _let,
    "assert_stmt": _keyword("assert"),
    "try_stmt": _try,
    "defer_stmt": _keyword("defer"),
    "python_stmt": _python,
    "autoloop_stmt": _with_block("autoloop"),
    "with_context_stmt": _with_block("with_context"),
    "context_policy_stmt": _with_block("context_policy"),
    "try_agent_stmt": _with_block("try_agent"),
    "reflect_stmt": _keyword("reflect"),
    "restore_stmt": _keyword("restore"),
    "fork_stmt": _fork,
    "verify_satisfies": _keyword("verify", "satisfies"),
    "verify_call": _keyword("verify", "call"),
    "verify_against": _keyword("verify", "against"),
    "unharnessed_stmt": _with_block("unharnessed"),
    "hook_stmt": _hook,
    "pass_stmt": _keyword("pass"),
    "receive_stmt": _keyword("receive"),
    "stray_semi": lambda b, tr: t.StraySemicolon(b.span(tr)),
}

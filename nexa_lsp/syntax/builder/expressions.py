"""Expressions: names, literals, calls and run entries, members, operators, `match`,
conditions. Also reports the forms Nexa 2.x lacks (parentheses, unary minus, list literals)."""

from __future__ import annotations

from collections.abc import Callable

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import patterns, statements, values
from nexa_lsp.syntax.builder.core import (
    Builder,
    Child,
    base_name,
    child_tokens,
    child_trees,
    find_child,
    find_children,
    first_token,
    rule_name,
)
from nexa_lsp.syntax.tree import Span


def expr(b: Builder, node: Child) -> t.Expr:
    """The expression ``node`` (a token or a tree of any expression rule)."""
    if isinstance(node, Token):
        base = base_name(node.type)
        if base in ("STRING", "MSTRING"):
            return values.string_lit(b, node)
        if base in ("INT", "FLOAT"):
            return values.number_lit(b, node)
        return t.Name(b.span(node), str(node))
    handler = _HANDLERS.get(rule_name(node))
    if handler is None:
        return t.Name(b.span(node), "")
    return handler(b, node)


def _name_expr(b: Builder, tree: Tree[Token]) -> t.Name:
    tok = first_token(tree)
    return t.Name(b.span(tok), str(tok))


def _template(b: Builder, tree: Tree[Token]) -> t.TemplateLit:
    raw = str(first_token(tree))
    body = raw[raw.index('"""') + 3 : -3] if raw.count('"""') >= 2 else ""
    return t.TemplateLit(b.span(tree), body)


def _paren(b: Builder, tree: Tree[Token]) -> t.Expr:
    items = [expr(b, c) for c in tree.children if not (isinstance(c, Token) and base_name(c.type) == "COMMA")]
    sp = b.span(tree)
    b.error(
        "NX024",
        "parentheses do not group expressions in Nexa 2.x: split the expression into assignments, or use python!",
        sp,
    )
    return t.Parenthesized(sp, items)


def _bracket_list(b: Builder, tree: Tree[Token]) -> t.BracketList:
    items = [expr(b, c) for c in tree.children if not (isinstance(c, Token) and base_name(c.type) == "COMMA")]
    node = t.BracketList(b.span(tree), items)
    b.bracket_lists.append(node)
    return node


def args_of(b: Builder, tree: Tree[Token]) -> list[t.Argument]:
    args_tree = find_child(tree, "args")
    if args_tree is None:
        return []
    result = []
    for child in args_tree.children:
        if isinstance(child, Tree) and rule_name(child) in ("keyword_arg", "field_arg"):
            key = child.children[0]
            assert isinstance(key, Token)
            value = expr(b, child.children[1])
            style = "keyword" if rule_name(child) == "keyword_arg" else "field"
            result.append(t.Argument(b.span(child), value, str(key), b.span(key), style))
        elif isinstance(child, Token) and base_name(child.type) == "COMMA":
            continue
        else:
            value = expr(b, child)
            result.append(t.Argument(value.span, value))
    return result


def _member(b: Builder, tree: Tree[Token]) -> t.Member:
    name_tok = tree.children[-1]
    assert isinstance(name_tok, Token)
    return t.Member(b.span(tree), expr(b, tree.children[0]), str(name_tok), b.span(name_tok))


def call_of(b: Builder, tree: Tree[Token], callee: t.Expr, run_entry: str | None = None) -> t.Call:
    """A call node for a rule with ``LPAR args? RPAR`` among its children."""
    parens = [c for c in tree.children if isinstance(c, Token) and base_name(c.type) in ("LPAR", "RPAR")]
    paren_span = args_span = None
    if parens and base_name(parens[0].type) == "LPAR":
        paren_span = b.span(parens[0])
        args_span = b.span_between(parens[0], parens[-1])
    return t.Call(b.span(tree), callee, args_of(b, tree), run_entry, paren_span, args_span)


def _call(b: Builder, tree: Tree[Token]) -> t.Call:
    callee = expr(b, tree.children[0])
    run_entry = None
    if isinstance(callee, t.Member) and callee.name == "run":
        run_entry = "run"
    return call_of(b, tree, callee, run_entry)


def _entry_member(b: Builder, tree: Tree[Token], rule: str) -> t.Member:
    """``obj.execute`` / ``obj.run`` of a 3.0 run entry: the receiver and the entry's word."""
    obj = expr(b, tree.children[0])
    entry_tree = find_child(tree, rule)
    assert entry_tree is not None
    entry_tok = first_token(entry_tree)
    return t.Member(b.span_between(tree.children[0], entry_tok), obj, str(entry_tok), b.span(entry_tok))


def _run_entry(b: Builder, tree: Tree[Token]) -> t.Call:
    member = _entry_member(b, tree, "run_entry_name")
    return call_of(b, tree, member, member.name)


def _removed_run_call(b: Builder, tree: Tree[Token]) -> t.Call:
    return call_of(b, tree, _entry_member(b, tree, "removed_run_name"), "run")


def _removed_run_member(b: Builder, tree: Tree[Token]) -> t.Member:
    return _entry_member(b, tree, "removed_run_name")


def _variant(b: Builder, tree: Tree[Token]) -> t.VariantRef:
    name_tok = tree.children[-1]
    assert isinstance(name_tok, Token)
    return t.VariantRef(b.span(tree), expr(b, tree.children[0]), str(name_tok), b.span(name_tok))


def _binary(b: Builder, tree: Tree[Token]) -> t.Expr:
    left, op_tree, right = tree.children
    assert isinstance(op_tree, Tree)
    op_tok = first_token(op_tree)
    left_expr = expr(b, left)
    right_expr = expr(b, right)
    op = str(op_tok)
    if op in ("|>>", "||", "&>>", "&&"):
        for side in (left_expr, right_expr):
            if isinstance(side, t.BracketList) and all(isinstance(i, t.Name) for i in side.items):
                b.dag_lists.add(id(side))
    return t.BinaryOp(b.span(tree), op, left_expr, right_expr, b.span(op_tok))


def _op_between(b: Builder, left: Child, right: Child, width: int) -> Span:
    end = b.span(left).rel_end
    start = b.span(right).rel_start
    return Span(max(end, start - width), start, b.anchor)


def _pipe(b: Builder, tree: Tree[Token]) -> t.BinaryOp:
    left, right = _trees_or_tokens(b, tree)
    return t.BinaryOp(b.span(tree), "|>", expr(b, left), expr(b, right), _op_between(b, left, right, 2))


def _fallback(b: Builder, tree: Tree[Token]) -> t.BinaryOp:
    left, right = _trees_or_tokens(b, tree)
    return t.BinaryOp(b.span(tree), "fallback", expr(b, left), expr(b, right), _op_between(b, left, right, 8))


def _coalesce(b: Builder, tree: Tree[Token]) -> t.BinaryOp:
    left, right = _trees_or_tokens(b, tree)
    return t.BinaryOp(b.span(tree), "??", expr(b, left), expr(b, right), _op_between(b, left, right, 2))


def _branch(b: Builder, tree: Tree[Token]) -> t.BranchOp:
    cond, then, other = _trees_or_tokens(b, tree)
    return t.BranchOp(b.span(tree), expr(b, cond), expr(b, then), expr(b, other))


def _case_branch(b: Builder, tree: Tree[Token]) -> t.CaseBranch:
    subject, table = _trees_or_tokens(b, tree)
    assert isinstance(table, Tree)
    return t.CaseBranch(b.span(tree), expr(b, subject), _case_arms(b, table))


def _case_arms(b: Builder, tree: Tree[Token]) -> list[t.CaseArm]:
    arms = []
    for arm in find_children(tree, "case_arm"):
        label_tok = arm.children[0]
        assert isinstance(label_tok, Token)
        arms.append(t.CaseArm(b.span(arm), values.string_lit(b, label_tok), expr(b, arm.children[1])))
    return arms


def _negate(b: Builder, tree: Tree[Token]) -> t.Negate:
    sp = b.span(tree)
    b.error("NX021", "there is no unary minus in Nexa 2.x: write `0 - N`", sp)
    return t.Negate(sp, expr(b, tree.children[-1]))


def _semantic_if_expr(b: Builder, tree: Tree[Token]) -> t.SemanticIfExpr:
    subject = expr(b, tree.children[0])
    question = next(c for c in tree.children[1:] if isinstance(c, Token) and base_name(c.type) == "STRING")
    return t.SemanticIfExpr(b.span(tree), subject, values.string_lit(b, question), _case_arms(b, tree))


def _spawn_actor(b: Builder, tree: Tree[Token]) -> t.SpecialExpr:
    name_tok = child_tokens(tree, "IDENT")[0]
    return t.SpecialExpr(b.span(tree), "spawn_actor", str(name_tok), b.span(name_tok), args_of(b, tree))


def _await_value(b: Builder, tree: Tree[Token]) -> t.SpecialExpr:
    name_tok = child_tokens(tree, "IDENT")[0]
    return t.SpecialExpr(b.span(tree), "await", str(name_tok), b.span(name_tok))


def _trees_or_tokens(b: Builder, tree: Tree[Token]) -> list[Child]:
    return [c for c in tree.children if not (isinstance(c, Token) and base_name(c.type) in ("COMMA", "SEMI"))]


def match_expr(b: Builder, tree: Tree[Token]) -> t.MatchExpr:
    subject = expr(b, tree.children[0])
    arms: list[t.MatchArm] = []
    for arm in child_trees(tree)[0 if not isinstance(tree.children[0], Tree) else 1 :]:
        kind = rule_name(arm)
        if kind not in ("pattern_arm", "intent_arm"):
            continue
        parts = [c for c in arm.children]
        if kind == "intent_arm":
            label = parts[0]
            assert isinstance(label, Token)
            body = _arm_body(b, parts[1])
            guard = expr(b, parts[2]) if len(parts) > 2 else None
            arms.append(t.MatchArm(b.span(arm), None, values.string_lit(b, label), body, guard))
        else:
            pattern = patterns.pattern(b, parts[0])
            body = _arm_body(b, parts[1])
            guard = expr(b, parts[2]) if len(parts) > 2 else None
            arms.append(t.MatchArm(b.span(arm), pattern, None, body, guard))
    return t.MatchExpr(b.span(tree), subject, arms)


def _arm_body(b: Builder, node: Child) -> t.Expr | t.Block:
    if isinstance(node, Tree) and rule_name(node) == "block":
        return statements.block(b, node)
    return expr(b, node)


def condition(b: Builder, node: Child) -> t.Condition:
    if isinstance(node, Tree) and rule_name(node) == "condition":
        parts: list[t.Expr] = []
        ops: list[str] = []
        for c in node.children:
            if isinstance(c, Tree) and rule_name(c) == "logic_operator":
                ops.append(str(first_token(c)))
            else:
                parts.append(expr(b, c))
        return t.Condition(b.span(node), parts, ops)
    e = expr(b, node)
    return t.Condition(e.span, [e], [])


def contracts(b: Builder, tree: Tree[Token]) -> list[t.Contract]:
    out = []
    for c in child_trees(tree):
        kind = rule_name(c)
        if kind in ("requires_clause", "ensures_clause"):
            out.append(t.Contract(b.span(c), kind.split("_")[0], condition(b, c.children[0])))
    return out


def _string(b: Builder, tree: Tree[Token]) -> t.Expr:
    return values.string_lit(b, first_token(tree))


def _number(b: Builder, tree: Tree[Token]) -> t.Expr:
    return values.number_lit(b, first_token(tree))


_HANDLERS: dict[str, Callable[[Builder, Tree[Token]], t.Expr]] = {
    "name": _name_expr,
    "string": _string,
    "mstring": _string,
    "template": _template,
    "int": _number,
    "float": _number,
    "true": lambda b, tr: t.BoolLit(b.span(tr), True),
    "false": lambda b, tr: t.BoolLit(b.span(tr), False),
    "paren": _paren,
    "bracket_list": _bracket_list,
    "semantic_if_expr": _semantic_if_expr,
    "match_expr": match_expr,
    "snapshot": lambda b, tr: t.SpecialExpr(b.span(tr), "snapshot"),
    "spawn_actor": _spawn_actor,
    "spawn_task": lambda b, tr: t.SpecialExpr(b.span(tr), "spawn", args=args_of(b, tr)),
    "await_value": _await_value,
    "receive": lambda b, tr: t.SpecialExpr(b.span(tr), "receive"),
    "member": _member,
    "call": _call,
    "run_entry": _run_entry,
    "removed_run_call": _removed_run_call,
    "removed_run_member": _removed_run_member,
    "index": lambda b, tr: t.Index(b.span(tr), expr(b, tr.children[0]), expr(b, tr.children[1])),
    "variant": _variant,
    "binary_op": _binary,
    "compare_op": _binary,
    "flow_op": _binary,
    "pipe_op": _pipe,
    "fallback_op": _fallback,
    "coalesce_op": _coalesce,
    "branch_op": _branch,
    "case_branch_op": _case_branch,
    "negate": _negate,
}

"""Turning one chunk's Lark tree into typed syntax nodes (:mod:`nexa_lsp.syntax.tree`).

This is the only module that reads Lark trees. It also reports the forms the
grammar accepts only to explain them (``flow main()``, list literals, member
assignment, ``print "text"`` ...), each with a message naming the accepted form.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterable

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Severity, TextEdit
from nexa_lsp.syntax.tree import Anchor, Span
from nexa_lsp.syntax.version import VersionPath

AGENT_DECORATORS = frozenset({"limit", "timeout", "retry", "temperature"})
STATEMENT_WORDS = frozenset({"let", "print", "if", "for", "while", "loop", "assert", "try", "python", "return"})
TOP_LEVEL_CALLS = frozenset({"spawn", "parallel", "race", "channel", "after", "schedule"})
_INTERPOLATION = re.compile(r"(?<!\\)#\{([^{}]*)\}")
_INTERP_PATH = re.compile(r"\s*([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[\d+\]|\[[A-Za-z_]\w*\])*)\s*")

Child = Tree[Token] | Token


_BASE_NAMES: dict[str, str] = {}


def _base(name: str) -> str:
    base = _BASE_NAMES.get(name)
    if base is None:
        base = name.rsplit("__", 1)[-1] if not name.startswith("__") else name
        _BASE_NAMES[name] = base
    return base


class ChunkBuilder:
    """Builds the typed items of one chunk; spans are relative to ``anchor``."""

    def __init__(self, anchor: Anchor, path: VersionPath) -> None:
        self.anchor = anchor
        self.path = path
        self.diagnostics: list[Diagnostic] = []
        self.bracket_lists: list[t.BracketList] = []
        self.dag_lists: set[int] = set()
        self._expr_handlers: dict[str, Callable[[Tree[Token]], t.Expr]] = {
            "name": self._name_expr,
            "string": lambda tr: self.string_lit(self._tok(tr)),
            "mstring": lambda tr: self.string_lit(self._tok(tr)),
            "template": self._template,
            "int": lambda tr: self.number(self._tok(tr)),
            "float": lambda tr: self.number(self._tok(tr)),
            "true": lambda tr: t.BoolLit(self.span(tr), True),
            "false": lambda tr: t.BoolLit(self.span(tr), False),
            "paren": self._paren,
            "bracket_list": self._bracket_list,
            "semantic_if_expr": self._semantic_if_expr,
            "match_expr": self.match_expr,
            "snapshot": lambda tr: t.SpecialExpr(self.span(tr), "snapshot"),
            "spawn_actor": self._spawn_actor,
            "spawn_task": lambda tr: t.SpecialExpr(self.span(tr), "spawn", args=self._args_of(tr)),
            "await_value": self._await_value,
            "receive": lambda tr: t.SpecialExpr(self.span(tr), "receive"),
            "member": self._member,
            "call": self._call,
            "run_entry": self._run_entry,
            "removed_run_call": self._removed_run_call,
            "removed_run_member": self._removed_run_member,
            "index": lambda tr: t.Index(self.span(tr), self.expr(tr.children[0]), self.expr(tr.children[1])),
            "variant": self._variant,
            "binary_op": self._binary,
            "compare_op": self._binary,
            "flow_op": self._binary,
            "pipe_op": self._pipe,
            "fallback_op": self._fallback,
            "coalesce_op": self._coalesce,
            "branch_op": self._branch,
            "case_branch_op": self._case_branch,
            "negate": self._negate,
        }
        self._stmt_handlers: dict[str, Callable[[Tree[Token]], t.Stmt]] = {
            "assign_stmt": self._assign,
            "expr_stmt": self._expr_stmt,
            "print_stmt": lambda tr: t.Print(self.span(tr), self._args_of(tr)),
            "print_legacy": self._print_legacy,
            "if_stmt": self._if,
            "for_each_stmt": self._for_each,
            "for_pattern_stmt": self._for_pattern,
            "while_stmt": lambda tr: t.While(self.span(tr), self.condition(tr.children[0]), self.block(tr.children[1])),
            "loop_stmt": lambda tr: t.Loop(self.span(tr), self.block(tr.children[0]), self.condition(tr.children[1])),
            "break_stmt": lambda tr: self._jump(tr, "break"),
            "continue_stmt": lambda tr: self._jump(tr, "continue"),
            "semantic_if_stmt": self._semantic_if_stmt,
            "let_stmt": self._let,
            "assert_stmt": lambda tr: self._keyword_stmt(tr, "assert"),
            "try_stmt": self._try,
            "defer_stmt": lambda tr: self._keyword_stmt(tr, "defer"),
            "python_stmt": self._python,
            "autoloop_stmt": lambda tr: self._block_stmt(tr, "autoloop"),
            "with_context_stmt": lambda tr: self._block_stmt(tr, "with_context"),
            "context_policy_stmt": lambda tr: self._block_stmt(tr, "context_policy"),
            "try_agent_stmt": lambda tr: self._block_stmt(tr, "try_agent"),
            "reflect_stmt": lambda tr: self._keyword_stmt(tr, "reflect"),
            "restore_stmt": lambda tr: self._keyword_stmt(tr, "restore"),
            "fork_stmt": self._fork,
            "verify_satisfies": lambda tr: self._keyword_stmt(tr, "verify", variant="satisfies"),
            "verify_call": lambda tr: self._keyword_stmt(tr, "verify", variant="call"),
            "verify_against": lambda tr: self._keyword_stmt(tr, "verify", variant="against"),
            "unharnessed_stmt": lambda tr: self._block_stmt(tr, "unharnessed"),
            "hook_stmt": self._hook,
            "pass_stmt": lambda tr: self._keyword_stmt(tr, "pass"),
            "receive_stmt": lambda tr: self._keyword_stmt(tr, "receive"),
            "stray_semi": lambda tr: t.StraySemicolon(self.span(tr)),
        }

    def reset(self, anchor: Anchor) -> None:
        """Start a new chunk (builders are reused: their handler tables are costly to make)."""
        self.anchor = anchor
        self.diagnostics = []
        self.bracket_lists = []
        self.dag_lists = set()

    # ------------------------------------------------------------------ basics

    def span(self, node: Child) -> Span:
        if isinstance(node, Token):
            start = node.start_pos or 0
            end = node.end_pos if node.end_pos is not None else start + len(node)
            return Span(start, end, self.anchor)
        meta = node.meta
        if getattr(meta, "empty", True):
            return Span(0, 0, self.anchor)
        return Span(meta.start_pos, meta.end_pos, self.anchor)

    def span_between(self, first: Child, last: Child) -> Span:
        return Span(self.span(first).rel_start, self.span(last).rel_end, self.anchor)

    def error(
        self,
        code: str,
        message: str,
        span: Span,
        severity: Severity = Severity.ERROR,
        fixes: Iterable[Fix] = (),
    ) -> None:
        self.diagnostics.append(Diagnostic(code, message, span, severity, tuple(fixes)))

    @staticmethod
    def _data(tree: Tree[Token]) -> str:
        return _base(str(tree.data))

    @staticmethod
    def _tok(tree: Tree[Token]) -> Token:
        child = tree.children[0]
        assert isinstance(child, Token)
        return child

    @staticmethod
    def _trees(tree: Tree[Token]) -> list[Tree[Token]]:
        return [c for c in tree.children if isinstance(c, Tree)]

    @staticmethod
    def _tokens(tree: Tree[Token], base: str | None = None) -> list[Token]:
        return [c for c in tree.children if isinstance(c, Token) and (base is None or _base(c.type) == base)]

    @staticmethod
    def _has(tree: Tree[Token], base: str) -> bool:
        return any(isinstance(c, Token) and _base(c.type) == base for c in tree.children)

    def _find(self, tree: Tree[Token], data: str) -> Tree[Token] | None:
        for c in tree.children:
            if isinstance(c, Tree) and self._data(c) == data:
                return c
        return None

    def _find_all(self, tree: Tree[Token], data: str) -> list[Tree[Token]]:
        return [c for c in tree.children if isinstance(c, Tree) and self._data(c) == data]

    # ------------------------------------------------------------------ literals

    def string_lit(self, tok: Token) -> t.StringLit:
        raw = str(tok)
        sp = self.span(tok)
        if raw.startswith('"""'):
            return t.StringLit(sp, raw[3:-3] if len(raw) >= 6 else raw[3:], multiline=True)
        value = raw[1:-1] if len(raw) >= 2 else raw[1:]
        interpolations = []
        for m in _INTERPOLATION.finditer(value):
            path = _INTERP_PATH.fullmatch(m.group(1))
            if path is None:
                continue
            start = sp.rel_start + 1 + m.start(1)
            interpolations.append(
                t.Interpolation(path.group(0).strip(), Span(start, start + len(m.group(1)), self.anchor), path.group(1))
            )
        return t.StringLit(sp, value, False, interpolations)

    def number(self, tok: Token) -> t.NumberLit:
        text = str(tok)
        value: int | float = float(text) if _base(tok.type) == "FLOAT" else int(text)
        return t.NumberLit(self.span(tok), value, text)

    def value(self, node: Child) -> t.Value:
        """A property value (agent / tool / context / config / decorator)."""
        if isinstance(node, Token):
            return self._token_value(node)
        kind = self._data(node)
        sp = self.span(node)
        if kind in ("value_string", "item_string", "lit_string", "json_string", "field_legacy_type"):
            lit = self.string_lit(self._tok(node))
            return t.Value(sp, t.ValueKind.MULTILINE_STRING if lit.multiline else t.ValueKind.STRING, lit.value)
        if kind == "value_mstring":
            lit = self.string_lit(self._tok(node))
            return t.Value(sp, t.ValueKind.MULTILINE_STRING, lit.value)
        if kind in ("value_name", "item_name", "lit_name", "json_name"):
            return t.Value(sp, t.ValueKind.NAME, str(self._tok(node)))
        if kind in ("value_int", "item_int", "lit_int", "json_int"):
            return t.Value(sp, t.ValueKind.INT, int(self._tok(node)))
        if kind in ("value_float", "item_float", "lit_float", "json_float"):
            return t.Value(sp, t.ValueKind.FLOAT, float(self._tok(node)))
        if kind in ("value_true", "lit_true", "json_true"):
            return t.Value(sp, t.ValueKind.BOOL, True)
        if kind in ("value_false", "lit_false", "json_false"):
            return t.Value(sp, t.ValueKind.BOOL, False)
        if kind in ("value_negative", "lit_negative"):
            tok = self._tok(node)
            number: int | float = -float(tok) if _base(tok.type) == "FLOAT" else -int(tok)
            self.error(
                "NX021",
                "negative literals are not Nexa 2.x: write `0 - N` where an expression is allowed",
                sp,
            )
            return t.Value(sp, t.ValueKind.NEGATIVE, number)
        if kind == "item_fallback":
            lit = self.string_lit(self._tok(node))
            return t.Value(sp, t.ValueKind.STRING, lit.value, is_fallback=True)
        if kind in ("value_list", "json_array"):
            return t.Value(
                sp,
                t.ValueKind.LIST,
                None,
                items=[self.value(c) for c in node.children if not (isinstance(c, Token) and _base(c.type) == "COMMA")],
            )
        if kind == "json_object":
            pairs = []
            for pair in self._find_all(node, "json_pair"):
                key_node = pair.children[0]
                key_tok = key_node if isinstance(key_node, Token) else self._tok(key_node)
                key = str(key_tok)
                if key.startswith('"'):
                    key = key[1:-1]
                else:
                    self.error(
                        "NX027",
                        f'object keys are quoted strings in Nexa: write "{key}"',
                        self.span(key_tok),
                        fixes=[Fix(f'Quote "{key}"', (TextEdit(self.span(key_tok), f'"{key}"'),))],
                    )
                pairs.append((key, self.span(key_tok), self.value(pair.children[1])))
            return t.Value(sp, t.ValueKind.OBJECT, None, pairs=pairs)
        # placeholder / unexpected shapes from error recovery
        return t.Value(sp, t.ValueKind.NAME, "")

    def _token_value(self, tok: Token) -> t.Value:
        base = _base(tok.type)
        sp = self.span(tok)
        if base in ("STRING", "MSTRING"):
            lit = self.string_lit(tok)
            return t.Value(sp, t.ValueKind.MULTILINE_STRING if lit.multiline else t.ValueKind.STRING, lit.value)
        if base == "INT":
            return t.Value(sp, t.ValueKind.INT, int(tok))
        if base == "FLOAT":
            return t.Value(sp, t.ValueKind.FLOAT, float(tok))
        return t.Value(sp, t.ValueKind.NAME, str(tok))

    def prop(self, key: Child, value: Child) -> t.Property:
        key_tok = key if isinstance(key, Token) else self._tok(key)
        val = self.value(value)
        return t.Property(self.span_between(key_tok, value), str(key_tok), self.span(key_tok), val)

    # ------------------------------------------------------------------ types

    def _type_of(self, tree: Tree[Token]) -> str | None:
        node = self._find(tree, "type_expr")
        return self._type_expr_text(node) if node is not None else None

    def _type_expr_text(self, node: Tree[Token]) -> str:
        options = []
        for opt in self._find_all(node, "type_opt"):
            core = opt.children[0]
            assert isinstance(core, Tree)
            text = self._type_core_text(core)
            if self._has(opt, "QMARK"):
                text += "?"
            options.append(text)
        return " | ".join(options)

    def _type_core_text(self, core: Tree[Token]) -> str:
        name = str(core.children[0])
        if self._data(core) == "type_angle":
            return f"{name}<{core.children[1]}>"
        args = [self._type_expr_text(c) for c in self._trees(core)]
        return f"{name}[{', '.join(args)}]" if args else name

    # ------------------------------------------------------------------ expressions

    def expr(self, node: Child) -> t.Expr:
        if isinstance(node, Token):
            base = _base(node.type)
            if base in ("STRING", "MSTRING"):
                return self.string_lit(node)
            if base in ("INT", "FLOAT"):
                return self.number(node)
            return t.Name(self.span(node), str(node))
        handler = self._expr_handlers.get(self._data(node))
        if handler is None:
            return t.Name(self.span(node), "")
        return handler(node)

    def _name_expr(self, tree: Tree[Token]) -> t.Name:
        tok = self._tok(tree)
        return t.Name(self.span(tok), str(tok))

    def _template(self, tree: Tree[Token]) -> t.TemplateLit:
        raw = str(self._tok(tree))
        body = raw[raw.index('"""') + 3 : -3] if raw.count('"""') >= 2 else ""
        return t.TemplateLit(self.span(tree), body)

    def _paren(self, tree: Tree[Token]) -> t.Expr:
        items = [self.expr(c) for c in tree.children if not (isinstance(c, Token) and _base(c.type) == "COMMA")]
        sp = self.span(tree)
        self.error(
            "NX024",
            "parentheses do not group expressions in Nexa 2.x: split the expression into assignments, or use python!",
            sp,
        )
        return t.Parenthesized(sp, items)

    def _bracket_list(self, tree: Tree[Token]) -> t.BracketList:
        items = [self.expr(c) for c in tree.children if not (isinstance(c, Token) and _base(c.type) == "COMMA")]
        node = t.BracketList(self.span(tree), items)
        self.bracket_lists.append(node)
        return node

    def _args_of(self, tree: Tree[Token]) -> list[t.Argument]:
        args_tree = self._find(tree, "args")
        if args_tree is None:
            return []
        result = []
        for child in args_tree.children:
            if isinstance(child, Tree) and self._data(child) in ("keyword_arg", "field_arg"):
                key = child.children[0]
                assert isinstance(key, Token)
                value = self.expr(child.children[1])
                style = "keyword" if self._data(child) == "keyword_arg" else "field"
                result.append(t.Argument(self.span(child), value, str(key), self.span(key), style))
            elif isinstance(child, Token) and _base(child.type) == "COMMA":
                continue
            else:
                value = self.expr(child)
                result.append(t.Argument(value.span, value))
        return result

    def _member(self, tree: Tree[Token]) -> t.Member:
        name_tok = tree.children[-1]
        assert isinstance(name_tok, Token)
        return t.Member(self.span(tree), self.expr(tree.children[0]), str(name_tok), self.span(name_tok))

    def _call(self, tree: Tree[Token]) -> t.Call:
        callee = self.expr(tree.children[0])
        run_entry = None
        if isinstance(callee, t.Member) and callee.name == "run":
            run_entry = "run"
        return t.Call(self.span(tree), callee, self._args_of(tree), run_entry)

    def _run_entry(self, tree: Tree[Token]) -> t.Call:
        obj = self.expr(tree.children[0])
        entry_tree = self._find(tree, "run_entry_name")
        assert entry_tree is not None
        entry_tok = self._tok(entry_tree)
        member = t.Member(self.span_between(tree.children[0], entry_tok), obj, str(entry_tok), self.span(entry_tok))
        return t.Call(self.span(tree), member, self._args_of(tree), str(entry_tok))

    def _removed_run_call(self, tree: Tree[Token]) -> t.Call:
        obj = self.expr(tree.children[0])
        sp = self.span(tree)
        obj_end = obj.span.rel_end
        # the `run` word follows the dot after the receiver
        name_span = Span(obj_end + 1, obj_end + 4, self.anchor)
        member = t.Member(Span(obj.span.rel_start, obj_end + 4, self.anchor), obj, "run", name_span)
        return t.Call(sp, member, self._args_of(tree), "run")

    def _removed_run_member(self, tree: Tree[Token]) -> t.Member:
        obj = self.expr(tree.children[0])
        sp = self.span(tree)
        return t.Member(sp, obj, "run", Span(sp.rel_end - 3, sp.rel_end, self.anchor))

    def _variant(self, tree: Tree[Token]) -> t.VariantRef:
        name_tok = tree.children[-1]
        assert isinstance(name_tok, Token)
        return t.VariantRef(self.span(tree), self.expr(tree.children[0]), str(name_tok), self.span(name_tok))

    def _binary(self, tree: Tree[Token]) -> t.Expr:
        left, op_tree, right = tree.children
        assert isinstance(op_tree, Tree)
        op_tok = self._tok(op_tree)
        left_expr = self.expr(left)
        right_expr = self.expr(right)
        op = str(op_tok)
        if op in ("|>>", "||", "&>>", "&&"):
            for side in (left_expr, right_expr):
                if isinstance(side, t.BracketList) and all(isinstance(i, t.Name) for i in side.items):
                    self.dag_lists.add(id(side))
        return t.BinaryOp(self.span(tree), op, left_expr, right_expr, self.span(op_tok))

    def _op_between(self, left: Child, right: Child, width: int) -> Span:
        end = self.span(left).rel_end
        start = self.span(right).rel_start
        return Span(max(end, start - width), start, self.anchor)

    def _pipe(self, tree: Tree[Token]) -> t.BinaryOp:
        left, right = self._trees_or_tokens(tree)
        return t.BinaryOp(self.span(tree), "|>", self.expr(left), self.expr(right), self._op_between(left, right, 2))

    def _fallback(self, tree: Tree[Token]) -> t.BinaryOp:
        left, right = self._trees_or_tokens(tree)
        return t.BinaryOp(
            self.span(tree), "fallback", self.expr(left), self.expr(right), self._op_between(left, right, 8)
        )

    def _coalesce(self, tree: Tree[Token]) -> t.BinaryOp:
        left, right = self._trees_or_tokens(tree)
        return t.BinaryOp(self.span(tree), "??", self.expr(left), self.expr(right), self._op_between(left, right, 2))

    def _branch(self, tree: Tree[Token]) -> t.BranchOp:
        cond, then, other = self._trees_or_tokens(tree)
        return t.BranchOp(self.span(tree), self.expr(cond), self.expr(then), self.expr(other))

    def _case_branch(self, tree: Tree[Token]) -> t.CaseBranch:
        subject, table = self._trees_or_tokens(tree)
        assert isinstance(table, Tree)
        return t.CaseBranch(self.span(tree), self.expr(subject), self._case_arms(table))

    def _case_arms(self, tree: Tree[Token]) -> list[t.CaseArm]:
        arms = []
        for arm in self._find_all(tree, "case_arm"):
            label_tok = arm.children[0]
            assert isinstance(label_tok, Token)
            arms.append(t.CaseArm(self.span(arm), self.string_lit(label_tok), self.expr(arm.children[1])))
        return arms

    def _negate(self, tree: Tree[Token]) -> t.Negate:
        sp = self.span(tree)
        self.error("NX021", "there is no unary minus in Nexa 2.x: write `0 - N`", sp)
        return t.Negate(sp, self.expr(tree.children[-1]))

    def _semantic_if_expr(self, tree: Tree[Token]) -> t.SemanticIfExpr:
        subject = self.expr(tree.children[0])
        question = next(c for c in tree.children[1:] if isinstance(c, Token) and _base(c.type) == "STRING")
        return t.SemanticIfExpr(self.span(tree), subject, self.string_lit(question), self._case_arms(tree))

    def _spawn_actor(self, tree: Tree[Token]) -> t.SpecialExpr:
        name_tok = self._tokens(tree, "IDENT")[0]
        return t.SpecialExpr(self.span(tree), "spawn_actor", str(name_tok), self.span(name_tok), self._args_of(tree))

    def _await_value(self, tree: Tree[Token]) -> t.SpecialExpr:
        name_tok = self._tokens(tree, "IDENT")[0]
        return t.SpecialExpr(self.span(tree), "await", str(name_tok), self.span(name_tok))

    def _trees_or_tokens(self, tree: Tree[Token]) -> list[Child]:
        return [c for c in tree.children if not (isinstance(c, Token) and _base(c.type) in ("COMMA", "SEMI"))]

    def match_expr(self, tree: Tree[Token]) -> t.MatchExpr:
        subject = self.expr(tree.children[0])
        arms: list[t.MatchArm] = []
        for arm in self._trees(tree)[0 if not isinstance(tree.children[0], Tree) else 1 :]:
            kind = self._data(arm)
            if kind not in ("pattern_arm", "intent_arm"):
                continue
            parts = [c for c in arm.children]
            if kind == "intent_arm":
                label = parts[0]
                assert isinstance(label, Token)
                body = self._arm_body(parts[1])
                guard = self.expr(parts[2]) if len(parts) > 2 else None
                arms.append(t.MatchArm(self.span(arm), None, self.string_lit(label), body, guard))
            else:
                pattern = self.pattern(parts[0])
                body = self._arm_body(parts[1])
                guard = self.expr(parts[2]) if len(parts) > 2 else None
                arms.append(t.MatchArm(self.span(arm), pattern, None, body, guard))
        return t.MatchExpr(self.span(tree), subject, arms)

    def _arm_body(self, node: Child) -> t.Expr | t.Block:
        if isinstance(node, Tree) and self._data(node) == "block":
            return self.block(node)
        return self.expr(node)

    def pattern(self, node: Child) -> t.Pattern:
        if isinstance(node, Token):
            name = str(node)
            if name == "_":
                return t.Pattern(self.span(node), "wildcard")
            return t.Pattern(self.span(node), "name", name, self.span(node))
        kind = self._data(node)
        sp = self.span(node)
        if kind == "pat_name":
            tok = self._tok(node)
            if str(tok) == "_":
                return t.Pattern(sp, "wildcard")
            return t.Pattern(sp, "name", str(tok), self.span(tok))
        if kind == "pat_literal":
            inner = node.children[0]
            val = self.value(inner)
            lit: t.Expr
            if val.kind is t.ValueKind.BOOL:
                lit = t.BoolLit(val.span, bool(val.value))
            elif val.kind in (t.ValueKind.INT, t.ValueKind.FLOAT, t.ValueKind.NEGATIVE):
                lit = t.NumberLit(val.span, val.value if isinstance(val.value, int | float) else 0, str(val.value))
            else:
                lit = t.StringLit(val.span, str(val.value))
            return t.Pattern(sp, "literal", literal=lit)
        if kind == "pat_tuple":
            return t.Pattern(sp, "tuple", items=[self.pattern(c) for c in self._pattern_children(node)])
        if kind == "pat_array":
            rest = self._find(node, "pat_rest")
            pat = t.Pattern(sp, "array", items=[self.pattern(c) for c in self._pattern_children(node)])
            self._set_rest(pat, rest)
            return pat
        if kind == "pat_map":
            pat = t.Pattern(sp, "map")
            for entry in self._find_all(node, "map_entry"):
                key_tok = entry.children[0]
                assert isinstance(key_tok, Token)
                pat.keys.append(str(key_tok))
                if len(entry.children) > 1:
                    pat.items.append(self.pattern(entry.children[1]))
                else:
                    pat.items.append(t.Pattern(self.span(key_tok), "name", str(key_tok), self.span(key_tok)))
            self._set_rest(pat, self._find(node, "pat_rest"))
            return pat
        if kind == "pat_variant":
            toks = self._tokens(node, "IDENT")
            pat = t.Pattern(sp, "variant", str(toks[0]), self.span(toks[0]), variant=str(toks[1]))
            pat.items = [self.pattern(c) for c in self._pattern_children(node)]
            return pat
        return t.Pattern(sp, "wildcard")

    def _pattern_children(self, node: Tree[Token]) -> list[Child]:
        out: list[Child] = []
        for c in node.children:
            if isinstance(c, Tree):
                if self._data(c) in ("pat_rest", "map_entry"):
                    continue
                out.append(c)
        return out

    def _set_rest(self, pat: t.Pattern, rest: Tree[Token] | None) -> None:
        if rest is not None:
            name_tok = self._tokens(rest, "IDENT")[0]
            pat.rest = str(name_tok)
            pat.rest_span = self.span(name_tok)

    def condition(self, node: Child) -> t.Condition:
        if isinstance(node, Tree) and self._data(node) == "condition":
            parts: list[t.Expr] = []
            ops: list[str] = []
            for c in node.children:
                if isinstance(c, Tree) and self._data(c) == "logic_operator":
                    ops.append(str(self._tok(c)))
                else:
                    parts.append(self.expr(c))
            return t.Condition(self.span(node), parts, ops)
        e = self.expr(node)
        return t.Condition(e.span, [e], [])

    # ------------------------------------------------------------------ statements

    def block(self, node: Child) -> t.Block:
        if not isinstance(node, Tree):
            return t.Block(self.span(node), [])
        stmts = []
        for c in node.children:
            if isinstance(c, Tree):
                st = self.stmt(c)
                if st is not None:
                    stmts.append(st)
        return t.Block(self.span(node), stmts)

    def stmt(self, tree: Tree[Token]) -> t.Stmt | None:
        handler = self._stmt_handlers.get(self._data(tree))
        return handler(tree) if handler is not None else None

    def _semicolon_fix(self, tree: Tree[Token], what: str) -> None:
        sp = self.span(tree)
        end = Span(sp.rel_end, sp.rel_end, self.anchor)
        self.error(
            "NX004",
            f"`{what}` needs a `;` after it (Nexa 2.x reads it without one as a bare name)",
            sp,
            Severity.WARNING,
            [Fix("Add `;`", (TextEdit(end, ";"),))],
        )

    def _assign(self, tree: Tree[Token]) -> t.Stmt:
        target = self.expr(tree.children[0])
        value = self.expr(tree.children[1])
        tail_tree = tree.children[2]
        tail = "plain"
        handler: t.Expr | t.Block | None = None
        has_semi = False
        if isinstance(tail_tree, Tree):
            kind = self._data(tail_tree)
            has_semi = self._has(tail_tree, "SEMI")
            if kind == "tail_propagate":
                tail = "propagate"
            elif kind == "tail_otherwise":
                tail = "otherwise"
                h = next(c for c in tail_tree.children if isinstance(c, Tree))
                handler = self.block(h) if self._data(h) == "block" else self.expr(h)
        sp = self.span(tree)
        if isinstance(value, t.SpecialExpr) and value.kind == "await":
            self.error(
                "NX026",
                "`x = await worker;` does not bind the result in Nexa 2.x (it reads `await;` "
                "then `worker;`): write `await worker;` on its own",
                value.span,
                Severity.WARNING,
            )
        if not isinstance(target, t.Name):
            self.error(
                "NX023",
                "Nexa 2.x assigns only to plain names (`x = ...`): member, index and "
                "computed targets are not supported",
                target.span,
            )
        return t.Assign(sp, target, value, tail, handler, has_semi)

    def _expr_stmt(self, tree: Tree[Token]) -> t.Stmt:
        inner = tree.children[0]
        e = self.expr(inner)
        if isinstance(e, t.SpecialExpr) and e.kind == "await":
            return t.KeywordStmt(
                self.span(tree),
                "await",
                names=[(e.name or "", e.name_span or e.span)],
                has_semicolon=self._has(tree, "SEMI"),
            )
        return t.ExprStmt(self.span(tree), e, self._has(tree, "QMARK"))

    def _print_legacy(self, tree: Tree[Token]) -> t.Stmt:
        value_node = tree.children[0]
        if isinstance(value_node, Tree):  # dotted name
            toks = self._tokens(value_node, "IDENT")
            e: t.Expr = t.Name(self.span(toks[0]), str(toks[0]))
            for tok in toks[1:]:
                e = t.Member(Span(e.span.rel_start, self.span(tok).rel_end, self.anchor), e, str(tok), self.span(tok))
        else:
            e = self.expr(value_node)
        sp = self.span(tree)
        vs = e.span
        fix = Fix(
            "Wrap in print(...)",
            (
                TextEdit(Span(vs.rel_start, vs.rel_start, self.anchor), "("),
                TextEdit(Span(vs.rel_end, vs.rel_end, self.anchor), ")"),
            ),
            safe=False,
            why_unsafe="Nexa 2.x printed nothing here; the fix makes the program print",
        )
        self.error(
            "NX025",
            "`print` without parentheses prints nothing in Nexa 2.x (it is the name `print` "
            "followed by a value): write print(...)",
            sp,
            Severity.WARNING,
            [fix],
        )
        return t.Print(sp, [t.Argument(e.span, e)], legacy=True)

    def _if(self, tree: Tree[Token]) -> t.If:
        cond = self.condition(tree.children[0])
        then = self.block(tree.children[1])
        other: t.Block | t.If | None = None
        if len(tree.children) > 2:
            else_tree = tree.children[2]
            assert isinstance(else_tree, Tree)
            inner = else_tree.children[0]
            assert isinstance(inner, Tree)
            other = self._if(inner) if self._data(else_tree) == "else_if" else self.block(inner)
        return t.If(self.span(tree), cond, then, other)

    def _for_each(self, tree: Tree[Token]) -> t.ForEach:
        names = self._tokens(tree, "IDENT")
        rest = [
            c
            for c in tree.children
            if isinstance(c, Tree) or (isinstance(c, Token) and _base(c.type) not in ("IDENT", "COMMA"))
        ]
        iterable_node = rest[0] if len(rest) > 1 else names[-1]
        body_node = rest[-1]
        if len(rest) == 1:  # iterable is a bare name token consumed as IDENT
            iterable_node = names.pop()
        item = names[0]
        index = names[1] if len(names) > 1 else None
        return t.ForEach(
            self.span(tree),
            str(item),
            self.span(item),
            str(index) if index else None,
            self.span(index) if index else None,
            self.expr(iterable_node),
            self.block(body_node),
        )

    def _for_pattern(self, tree: Tree[Token]) -> t.ForPattern:
        pat, iterable, body = tree.children[0], tree.children[1], tree.children[2]
        return t.ForPattern(self.span(tree), self.pattern(pat), self.expr(iterable), self.block(body))

    def _jump(self, tree: Tree[Token], keyword: str) -> t.Jump:
        has_semi = self._has(tree, "SEMI")
        if not has_semi:
            self._semicolon_fix(tree, keyword)
        return t.Jump(self.span(tree), keyword, has_semi)

    def _semantic_if_stmt(self, tree: Tree[Token]) -> t.SemanticIf:
        question_tok = tree.children[0]
        assert isinstance(question_tok, Token)
        fast = self._find(tree, "fast_match")
        fast_lit = None
        if fast is not None:
            tok = self._tokens(fast)[-1]
            raw = str(tok)
            start = 2 if raw.startswith("r") else 1
            fast_lit = t.StringLit(self.span(tok), raw[start:-1])
        rest = [c for c in tree.children[1:] if not (isinstance(c, Tree) and self._data(c) == "fast_match")]
        target = self.expr(rest[0])
        blocks = [self.block(c) for c in rest[1:]]
        return t.SemanticIf(
            self.span(tree),
            self.string_lit(question_tok),
            fast_lit,
            target,
            blocks[0],
            blocks[1] if len(blocks) > 1 else None,
        )

    def _let(self, tree: Tree[Token]) -> t.Let:
        if not self._has(tree, "SEMI"):
            self._semicolon_fix(tree, "let")
        return t.Let(self.span(tree), self.pattern(tree.children[0]), self.expr(tree.children[1]))

    def _try(self, tree: Tree[Token]) -> t.Try:
        blocks = self._find_all(tree, "block")
        name = self._tokens(tree, "IDENT")[0]
        return t.Try(self.span(tree), self.block(blocks[0]), str(name), self.span(name), self.block(blocks[1]))

    def _python(self, tree: Tree[Token]) -> t.PythonBlock:
        tok = self._tokens(tree)[-1]
        raw = str(tok)
        code = raw[3:-3] if raw.startswith('"""') else raw[1:-1]
        return t.PythonBlock(self.span(tree), code.strip())

    def _keyword_stmt(self, tree: Tree[Token], keyword: str, variant: str | None = None) -> t.KeywordStmt:
        exprs: list[t.Expr] = []
        names: list[tuple[str, Span]] = []
        type_text = None
        for c in tree.children:
            if isinstance(c, Token):
                base = _base(c.type)
                if base == "IDENT":
                    names.append((str(c), self.span(c)))
                elif base in ("STRING", "MSTRING"):
                    exprs.append(self.string_lit(c))
            elif self._data(c) == "type_expr":
                type_text = self._type_expr_text(c)
            else:
                exprs.append(self.expr(c))
        has_semi = self._has(tree, "SEMI")
        if not has_semi and keyword in ("assert", "defer", "reflect", "restore", "pass", "verify", "receive"):
            self._semicolon_fix(tree, keyword)
        if keyword == "verify" and variant == "call" and exprs:
            subject = exprs[0]
            if not (isinstance(subject, t.Call) and isinstance(subject.callee, t.Member) and not subject.args):
                self.error(
                    "NX033",
                    "`verify` needs `satisfies Type`, `against x`, or a method call with no "
                    "arguments (`verify x.valid();`)",
                    subject.span,
                )
        return t.KeywordStmt(self.span(tree), keyword, exprs, names, type_text, variant, has_semi)

    def _block_stmt(self, tree: Tree[Token], keyword: str) -> t.BlockStmt:
        settings: list[t.Property] = []
        blocks: list[t.Block] = []
        names: list[tuple[str, Span]] = []
        for c in tree.children:
            if isinstance(c, Tree):
                kind = self._data(c)
                if kind in ("loop_param", "ctx_pair"):
                    settings.append(self.prop(c.children[0], c.children[1]))
                elif kind == "block":
                    blocks.append(self.block(c))
                elif kind == "correction":
                    for tok in self._tokens(c, "IDENT"):
                        names.append((str(tok), self.span(tok)))
                    inner = self._find(c, "block")
                    if inner is not None:
                        blocks.append(self.block(inner))
            elif _base(c.type) in ("STRING",):
                settings.append(t.Property(self.span(c), "reason", self.span(c), self.value(c)))
        if keyword == "autoloop":
            for s in settings:
                if s.key not in ("max_steps", "exit_when", "timeout"):
                    self.error(
                        "NX033",
                        f"autoloop accepts max_steps, exit_when and timeout, not `{s.key}`",
                        s.key_span,
                    )
                elif s.value.kind is t.ValueKind.NAME:
                    self.error("NX027", f"autoloop `{s.key}` needs a literal value, not a variable", s.value.span)
        return t.BlockStmt(self.span(tree), keyword, settings, blocks, [], names)

    def _hook(self, tree: Tree[Token]) -> t.BlockStmt:
        kw_tree = self._find(tree, "hook_kw")
        assert kw_tree is not None
        keyword = str(self._tok(kw_tree))
        names = [(str(tok), self.span(tok)) for tok in self._tokens(tree, "IDENT")]
        blocks = [self.block(b) for b in self._find_all(tree, "block")]
        return t.BlockStmt(self.span(tree), keyword, [], blocks, [], names)

    def _fork(self, tree: Tree[Token]) -> t.BlockStmt:
        exprs: list[t.Expr] = []
        names: list[tuple[str, Span]] = []
        for branch in self._find_all(tree, "fork_branch"):
            toks = [c for c in branch.children if isinstance(c, Token) and _base(c.type) == "IDENT"]
            value = branch.children[-1]
            if len(branch.children) > 1 and toks:
                names.append((str(toks[0]), self.span(toks[0])))
            exprs.append(self.expr(value))
        merge = self._tokens(tree, "IDENT")
        if merge:
            names.append((str(merge[-1]), self.span(merge[-1])))
        return t.BlockStmt(self.span(tree), "fork", [], [], exprs, names)

    # ------------------------------------------------------------------ declarations

    def item(self, tree: Tree[Token], chunk_text: str) -> t.TopItem | None:
        kind = self._data(tree)
        method = getattr(self, f"_decl_{kind}", None)
        if method is not None:
            result: t.TopItem = method(tree, chunk_text)
            return result
        if kind in ("defer_stmt", "match_expr"):
            sp = self.span(tree)
            stmt: t.Stmt
            stmt = self._keyword_stmt(tree, "defer") if kind == "defer_stmt" else t.ExprStmt(sp, self.match_expr(tree))
            return t.TopLevelStatement(sp, "", Span(sp.rel_start, sp.rel_start, self.anchor), stmt)
        return None

    def _name_tok(self, tree: Tree[Token]) -> Token:
        for c in tree.children:
            if isinstance(c, Token) and _base(c.type) == "IDENT":
                return c
        sp = self.span(tree)
        return Token("IDENT", "", start_pos=sp.rel_start, end_pos=sp.rel_start)

    def _decl_version_decl(self, tree: Tree[Token], chunk_text: str) -> t.VersionDecl:
        sp = self.span(tree)
        value = self._find(tree, "version_value")
        version = str(self._tok(value)) if value is not None else None
        return t.VersionDecl(
            sp,
            "nexa",
            Span(sp.rel_start, sp.rel_start + 4, self.anchor),
            version,
            self.span(value) if value is not None else None,
        )

    def _decl_include_decl(self, tree: Tree[Token], chunk_text: str) -> t.Include:
        tok = self._tokens(tree, "STRING")[0]
        has_semi = self._has(tree, "SEMI")
        if not has_semi:
            self._semicolon_fix(tree, "include")
        return t.Include(self.span(tree), str(tok)[1:-1], self.span(tok), has_semi)

    def _decl_use_config_decl(self, tree: Tree[Token], chunk_text: str) -> t.UseConfig:
        tok = self._name_tok(tree)
        has_semi = self._has(tree, "SEMI")
        if not has_semi:
            self._semicolon_fix(tree, "use config")
        return t.UseConfig(self.span(tree), str(tok), self.span(tok), has_semi)

    def _decl_tool_decl(self, tree: Tree[Token], chunk_text: str) -> t.ToolDecl:
        name = self._name_tok(tree)
        props: list[t.Property] = []
        body = self._find(tree, "tool_props")
        if body is not None:
            for p in body.children:
                if not isinstance(p, Tree):
                    continue
                if self._data(p) == "tool_mcp_prop":
                    key_tok = p.children[0]
                    assert isinstance(key_tok, Token)
                    val = self.value(p.children[1])
                    props.append(
                        t.Property(
                            self.span(p),
                            "mcp",
                            Span(self.span(key_tok).rel_start, self.span(key_tok).rel_end - 1, self.anchor),
                            val,
                        )
                    )
                else:
                    prop = self.prop(p.children[0], p.children[1])
                    if not _is_placeholder(prop.value):
                        props.append(prop)
        decl = t.ToolDecl(self.span(tree), str(name), self.span(name), props)
        self._check_tool_body(decl)
        return decl

    def _check_tool_body(self, decl: t.ToolDecl) -> None:
        keys = [p.key for p in decl.properties if p.key != "approval"]
        shapes = (["description", "parameters"], ["mcp"], ["python"])
        if keys not in [list(s) for s in shapes]:
            self.error(
                "NX032",
                f'tool {decl.name} needs either `description: "...", parameters: {{...}}`, '
                'or `mcp: "uri"`, or `python: "module.function"`',
                decl.name_span,
            )
        for p in decl.properties:
            if p.key in ("description", "mcp", "python", "approval") and not p.value.is_string:
                self.error("NX027", f"`{p.key}` takes a string", p.value.span)
            if p.key == "parameters":
                if p.value.kind is not t.ValueKind.OBJECT:
                    self.error("NX027", '`parameters` takes an object of strings: {"name": "type"}', p.value.span)
                else:
                    for key, _ks, v in p.value.pairs:
                        if not v.is_string:
                            self.error(
                                "NX027",
                                f"parameter `{key}`: Nexa 2.x accepts only string type "
                                'descriptions here ("string", "number")',
                                v.span,
                            )

    def _params(self, tree: Tree[Token] | None) -> list[t.Param]:
        if tree is None:
            return []
        out = []
        for p in self._find_all(tree, "param"):
            name = self._tokens(p, "IDENT")[0]
            type_node = self._find(p, "type_expr")
            default = next((c for c in p.children if isinstance(c, Tree) and self._data(c) != "type_expr"), None)
            out.append(
                t.Param(
                    self.span(p),
                    str(name),
                    self.span(name),
                    self._type_expr_text(type_node) if type_node is not None else None,
                    self.value(default) if default is not None else None,
                )
            )
        return out

    def _decl_tool_fn_decl(self, tree: Tree[Token], chunk_text: str) -> t.ToolFunction:
        cfg = self._find(tree, "tool_fn_config")
        description = ""
        config: list[t.Property] = []
        if cfg is not None:
            desc_tok = self._tokens(cfg, "STRING")
            description = str(desc_tok[0])[1:-1] if desc_tok else ""
            for pair in self._trees(cfg):
                config.append(self.prop(pair.children[0], pair.children[1]))
                if self._data(pair) == "cfg_pair_eq":
                    self.error("NX033", "@tool settings use `key: value`, not `key = value`", self.span(pair))
        name = self._name_tok(tree)
        params = self._params(self._find(tree, "params"))
        for p in params:
            if p.type_text is None:
                self.error(
                    "NX033",
                    f"parameter `{p.name}` of an @tool function needs a type (`{p.name}: str`)",
                    p.name_span,
                )
        ret = self._type_of(tree)
        body = self._find(tree, "block")
        return t.ToolFunction(
            self.span(tree),
            str(name),
            self.span(name),
            description,
            config,
            params,
            ret,
            self.block(body) if body is not None else None,
        )

    def _decl_agent_decl(self, tree: Tree[Token], chunk_text: str) -> t.AgentDecl:
        name = self._name_tok(tree)
        decl = t.AgentDecl(self.span(tree), str(name), self.span(name))
        for deco in self._find_all(tree, "decorator"):
            deco_name = self._tokens(deco, "IDENT")[0]
            args: list[t.Property] = []
            deco_args = self._find(deco, "deco_args")
            if deco_args is not None:
                for a in self._trees(deco_args):
                    args.append(self.prop(a.children[0], a.children[1]))
                    if self._data(a) == "deco_arg_colon":
                        self.error("NX033", "decorator arguments use `name=value`", self.span(a))
            decl.decorators.append(t.Decorator(self.span(deco), str(deco_name), self.span(deco_name), args))
            if str(deco_name) not in AGENT_DECORATORS:
                self.error(
                    "NX034",
                    f"unknown agent decorator @{deco_name}: Nexa agents accept "
                    "@limit, @timeout, @retry and @temperature",
                    self.span(deco_name),
                )
        ret = self._find(tree, "agent_return")
        if ret is not None:
            parts = self._tokens(ret, "IDENT")
            decl.return_type = str(parts[0]) + (f"<{parts[1]}>" if len(parts) > 1 else "")
        uses = self._find(tree, "uses_clause")
        if uses is not None:
            for item in self._trees(uses):
                kind = self._data(item)
                if kind == "use_name":
                    dotted = self._trees(item)[0]
                    words = [str(p) for p in self._tokens(dotted, "IDENT")]
                    text = ".".join(words)
                    if len(words) > 2 or (len(words) == 2 and words[0] != "std"):
                        self.error(
                            "NX033",
                            f"`uses {text}`: write a tool or agent name, or a two-part std namespace such as std.fs",
                            self.span(item),
                        )
                    decl.uses.append(t.UseItem(self.span(item), "std" if len(words) > 1 else "name", text))
                elif kind == "use_skill":
                    decl.uses.append(t.UseItem(self.span(item), "skill", str(self._tokens(item)[0])[1:-1]))
                else:
                    decl.uses.append(t.UseItem(self.span(item), "mcp", str(self._tokens(item, "STRING")[0])[1:-1]))
        impl = self._find(tree, "implements_clause")
        if impl is not None:
            tok = self._tokens(impl, "IDENT")[0]
            decl.implements = str(tok)
            decl.implements_span = self.span(tok)
        decl.contracts = self._contracts(tree)
        header_end = max(
            [decl.name_span.rel_end]
            + [self.span(c).rel_end for c in self._trees(tree) if self._data(c) != "agent_item"]
        )
        brace = chunk_text.find("{", header_end)
        if brace != -1 and brace < decl.span.rel_end:
            decl.body_span = Span(brace, decl.span.rel_end, self.anchor)
        for item in self._find_all(tree, "agent_item"):
            inner = item.children[0]
            if isinstance(inner, Token):
                continue
            kind = self._data(inner)
            if kind == "agent_property":
                prop = self.prop(inner.children[0], inner.children[1])
                if not _is_placeholder(prop.value):  # `model: ,` already has its syntax error
                    decl.properties.append(prop)
            elif kind == "context_block":
                entries = [self.prop(e.children[0], e.children[1]) for e in self._find_all(inner, "ctx_entry")]
                entries = [e for e in entries if not _is_placeholder(e.value)]
                decl.context_blocks.append(t.ContextBlock(self.span(inner), entries))
        for item in self._find_all(tree, "stray_semicolon"):
            self.error(
                "NX028",
                "`;` does not separate agent properties: use `,` or a new line",
                self.span(item),
                fixes=[Fix("Replace `;` with `,`", (TextEdit(self.span(item), ","),))],
            )
        for item in self._find_all(tree, "agent_item"):
            if isinstance(item.children[0], Token):
                sp = self.span(item.children[0])
                self.error(
                    "NX028",
                    "`;` does not separate agent properties: use `,` or a new line",
                    sp,
                    fixes=[Fix("Replace `;` with `,`", (TextEdit(sp, ","),))],
                )
        return decl

    def _contracts(self, tree: Tree[Token]) -> list[t.Contract]:
        out = []
        for c in self._trees(tree):
            kind = self._data(c)
            if kind in ("requires_clause", "ensures_clause"):
                out.append(t.Contract(self.span(c), kind.split("_")[0], self.condition(c.children[0])))
        return out

    def _decl_flow_decl(self, tree: Tree[Token], chunk_text: str) -> t.FlowDecl:
        name = self._name_tok(tree)
        decl = t.FlowDecl(self.span(tree), str(name), self.span(name))
        params_tree = self._find(tree, "flow_params")
        if params_tree is not None:
            decl.params = self._params(self._find(params_tree, "params"))
            if not decl.params:
                sp = self.span(params_tree)
                self.error(
                    "NX020",
                    f"`flow {name}()`: a flow without parameters is written without parentheses: `flow {name}`",
                    sp,
                    fixes=[Fix("Remove `()`", (TextEdit(sp, ""),))],
                )
            for p in decl.params:
                if p.type_text is None:
                    self.error("NX033", f"flow parameter `{p.name}` needs a type (`{p.name}: str`)", p.name_span)
                if p.default is not None:
                    self.error("NX033", "flow parameters have no default values", p.default.span)
        ret = self._find(tree, "flow_return") or self._find(tree, "flow_return_colon")
        if ret is not None:
            type_node = self._find(ret, "type_expr")
            decl.return_type = self._type_expr_text(type_node) if type_node is not None else None
            if self._data(ret) == "flow_return_colon":
                self.error("NX033", "a flow's return type is written with `->`, not `:`", self.span(ret))
        decl.contracts = self._contracts(tree)
        body = self._find(tree, "block")
        decl.body = self.block(body) if body is not None else None
        return decl

    def _decl_test_decl(self, tree: Tree[Token], chunk_text: str) -> t.TestDecl:
        tok = self._tokens(tree, "STRING")[0]
        body = self._find(tree, "block")
        return t.TestDecl(self.span(tree), str(tok)[1:-1], self.span(tok), self.block(body) if body else None)

    def _decl_protocol_decl(self, tree: Tree[Token], chunk_text: str) -> t.ProtocolDecl:
        name = self._name_tok(tree)
        decl = t.ProtocolDecl(self.span(tree), str(name), self.span(name))
        for f in self._find_all(tree, "protocol_field"):
            key = f.children[0]
            key_tok = key if isinstance(key, Token) else self._tok(key)
            type_node = f.children[1]
            if isinstance(type_node, Tree) and self._data(type_node) == "field_legacy_type":
                type_text = str(self._tok(type_node))[1:-1]
                legacy = True
            else:
                assert isinstance(type_node, Tree)
                type_text = self._type_expr_text(type_node)
                legacy = False
            decl.fields.append(t.ProtocolField(self.span(f), str(key_tok), self.span(key_tok), type_text, legacy))
        for semi in self._tokens(tree, "SEMI"):
            self.error(
                "NX028",
                "`;` does not separate protocol fields: use `,` or a new line",
                self.span(semi),
                fixes=[Fix("Replace `;` with `,`", (TextEdit(self.span(semi), ","),))],
            )
        return decl

    def _decl_type_decl(self, tree: Tree[Token], chunk_text: str) -> t.TypeDecl:
        name = self._name_tok(tree)
        type_text = self._type_of(tree) or ""
        strings = self._tokens(tree, "STRING")
        return t.TypeDecl(
            self.span(tree), str(name), self.span(name), type_text, str(strings[0])[1:-1] if strings else None
        )

    def _adt_members(self, tree: Tree[Token], kinds: tuple[str, ...]) -> list[t.AdtMember]:
        members = []
        for m in self._trees(tree):
            kind = self._data(m)
            if kind not in kinds:
                continue
            name = self._tokens(m, "IDENT")[0]
            detail = None
            if kind == "struct_field":
                detail = self._type_of(m)
            elif kind == "enum_variant":
                nl = self._find(m, "name_list")
                if nl is not None:
                    detail = "(" + ", ".join(str(x) for x in self._tokens(nl, "IDENT")) + ")"
            elif kind in ("trait_method", "impl_method"):
                detail = self._type_of(m)
            body = self._find(m, "block")
            members.append(
                t.AdtMember(
                    self.span(m),
                    str(name),
                    self.span(name),
                    detail,
                    self._params(self._find(m, "params")),
                    self.block(body) if body is not None else None,
                )
            )
        return members

    def _decl_struct_decl(self, tree: Tree[Token], chunk_text: str) -> t.AdtDecl:
        name = self._name_tok(tree)
        return t.AdtDecl(
            self.span(tree), str(name), self.span(name), "struct", self._adt_members(tree, ("struct_field",))
        )

    def _decl_enum_decl(self, tree: Tree[Token], chunk_text: str) -> t.AdtDecl:
        name = self._name_tok(tree)
        return t.AdtDecl(
            self.span(tree), str(name), self.span(name), "enum", self._adt_members(tree, ("enum_variant",))
        )

    def _decl_trait_decl(self, tree: Tree[Token], chunk_text: str) -> t.AdtDecl:
        name = self._name_tok(tree)
        return t.AdtDecl(
            self.span(tree), str(name), self.span(name), "trait", self._adt_members(tree, ("trait_method",))
        )

    def _decl_impl_decl(self, tree: Tree[Token], chunk_text: str) -> t.AdtDecl:
        names = self._tokens(tree, "IDENT")
        return t.AdtDecl(
            self.span(tree),
            str(names[0]),
            self.span(names[0]),
            "impl",
            self._adt_members(tree, ("impl_method",)),
            str(names[1]) if len(names) > 1 else None,
            self.span(names[1]) if len(names) > 1 else None,
        )

    def _decl_job_decl(self, tree: Tree[Token], chunk_text: str) -> t.JobDecl:
        name = self._name_tok(tree)
        queue = self._tokens(tree, "STRING")
        decl = t.JobDecl(self.span(tree), str(name), self.span(name), str(queue[0])[1:-1] if queue else "")
        opts = self._find(tree, "job_options")
        if opts is not None:
            for o in self._trees(opts):
                decl.options.append(self.prop(o.children[0], o.children[1]))
                if self._data(o) == "job_option_colon":
                    self.error("NX033", "job options in parentheses use `key = value` (`(retry = 2)`)", self.span(o))
        for c in self._find_all(tree, "job_config"):
            decl.config.append(self.prop(c.children[0], c.children[1]))
        perform = self._find(tree, "perform_block")
        if perform is None:
            self.error("NX033", f"job {name} needs a `perform(args) {{ ... }}` block", decl.name_span)
        else:
            nl = self._find(perform, "name_list")
            decl.perform_params = [str(x) for x in self._tokens(nl, "IDENT")] if nl is not None else []
            body = self._find(perform, "block")
            decl.perform = self.block(body) if body is not None else None
        failure = self._find(tree, "on_failure_block")
        if failure is not None:
            nl = self._find(failure, "name_list")
            decl.on_failure_params = [str(x) for x in self._tokens(nl, "IDENT")] if nl is not None else []
            if len(decl.on_failure_params) != 2:
                self.error("NX033", "`on_failure` takes exactly two names: (error, attempt)", self.span(failure))
            body = self._find(failure, "block")
            decl.on_failure = self.block(body) if body is not None else None
        return decl

    def _decl_server_decl(self, tree: Tree[Token], chunk_text: str) -> t.ServerDecl:
        port = tree.children[0]
        port_tok = port if isinstance(port, Token) else self._tok(port)
        if isinstance(port, Tree):
            self.error(
                "NX033",
                "a server is declared with its port number: `server 8080 { ... }`",
                self.span(port_tok),
            )
        decl = t.ServerDecl(self.span(tree), str(port_tok), self.span(port_tok))
        self._server_items(tree, decl, 0)
        return decl

    def _server_items(self, tree: Tree[Token], decl: t.ServerDecl, depth: int) -> None:
        order = {"directive": 0, "route": 1, "group": 2}
        last = 0
        for item in self._trees(tree):
            kind = self._data(item)
            if kind in ("server_static", "server_cors", "server_middleware", "server_require_auth"):
                cls = "directive"
                if kind == "server_cors":
                    cors = self.value(item.children[0])
                    for key, _ks, val in cors.pairs:
                        if not val.is_string:
                            self.error("NX027", f'cors `{key}` takes a string (`cors {{"origins": "*"}}`)', val.span)
                decl.directives.append((kind.removeprefix("server_"), self.span(item)))
            elif kind in ("route", "semantic_route"):
                cls = "route"
                method = "semantic"
                if kind == "route":
                    mt = self._find(item, "http_method")
                    method = str(self._tok(mt)) if mt is not None else "GET"
                path_tok = self._tokens(item, "STRING")[0]
                handler = self._find(item, "route_handler")
                handlers = [(str(h), self.span(h)) for h in self._tokens(handler, "IDENT")] if handler else []
                decl.routes.append(t.Route(self.span(item), method, str(path_tok)[1:-1], handlers))
            elif kind == "route_group":
                cls = "group"
                self._server_items(item, decl, depth + 1)
            else:
                continue
            if order[cls] < last:
                self.error(
                    "NX033",
                    "inside a server, directives come first, then routes, then groups",
                    self.span(item),
                )
            last = max(last, order[cls])

    def _decl_resource_decl(self, tree: Tree[Token], chunk_text: str) -> t.ResourceDecl:
        kind_tree = self._find(tree, "resource_kind")
        kind = str(self._tok(kind_tree)) if kind_tree is not None else "db"
        idents = self._tokens(tree, "IDENT")
        name, func = idents[0], idents[1] if len(idents) > 1 else idents[0]
        arg = self._tokens(tree, "STRING")
        expected = {"db": "connect", "auth": "enable_auth", "kv": "open"}[kind]
        if str(func) != expected:
            self.error("NX033", f'`{kind} {name} = ...` takes `{expected}("...")`', self.span(func))
        return t.ResourceDecl(
            self.span(tree), str(name), self.span(name), kind, str(func), str(arg[0])[1:-1] if arg else ""
        )

    def _decl_top_call(self, tree: Tree[Token], chunk_text: str) -> t.TopLevelStatement:
        name = self._tokens(tree, "IDENT")[0]
        sp = self.span(tree)
        call = t.Call(sp, t.Name(self.span(name), str(name)), self._args_of(tree))
        if str(name) in STATEMENT_WORDS:
            self.error(
                "NX031",
                f"`{name}` cannot stand at top level: only declarations can; put it inside a flow",
                self.span(name),
            )
        elif str(name) not in TOP_LEVEL_CALLS:
            self.error(
                "NX031",
                f"`{name}(...)` cannot stand at top level: only declarations and "
                "spawn/parallel/race/channel/after/schedule(...) can; call it inside a flow",
                sp,
            )
        return t.TopLevelStatement(sp, "", Span(sp.rel_start, sp.rel_start, self.anchor), t.ExprStmt(sp, call))


def _is_placeholder(value: t.Value) -> bool:
    """A value inserted by error recovery (an empty name)."""
    return value.kind is t.ValueKind.NAME and value.value == ""


_BUILDERS = threading.local()
# Deeply nested sources (long operator chains) need more than Python's default
# 1,000 frames while their tree is built; Python 3.11 frames do not use the C stack.
_BUILD_RECURSION_LIMIT = 12_000


def _builder_for(path: VersionPath) -> ChunkBuilder:
    """One reusable builder per thread and path."""
    cache: dict[VersionPath, ChunkBuilder] | None = getattr(_BUILDERS, "by_path", None)
    if cache is None:
        cache = _BUILDERS.by_path = {}
    builder = cache.get(path)
    if builder is None:
        builder = cache[path] = ChunkBuilder(Anchor(0), path)
    return builder


def build_chunk(
    tree: Tree[Token] | None, chunk_text: str, anchor: Anchor, path: VersionPath
) -> tuple[list[t.TopItem], list[Diagnostic]]:
    """Typed items and builder diagnostics of one parsed chunk."""
    if tree is None:
        return [], []
    builder = _builder_for(path)
    builder.reset(anchor)
    limit = sys.getrecursionlimit()
    if limit < _BUILD_RECURSION_LIMIT:
        sys.setrecursionlimit(_BUILD_RECURSION_LIMIT)
    try:
        return _build_items(builder, tree, chunk_text)
    finally:
        if limit < _BUILD_RECURSION_LIMIT:
            sys.setrecursionlimit(limit)


def _build_items(builder: ChunkBuilder, tree: Tree[Token], chunk_text: str) -> tuple[list[t.TopItem], list[Diagnostic]]:
    chunk = tree.children[0] if tree.children and isinstance(tree.children[0], Tree) else tree
    items: list[t.TopItem] = []
    for child in chunk.children:
        if isinstance(child, Tree):
            try:
                item = builder.item(child, chunk_text)
            except (AssertionError, IndexError, StopIteration, ValueError):
                item = None  # a shape produced by error recovery; its syntax error is already reported
            except RecursionError:
                item = None
                builder.error(
                    "NX006",
                    "this item nests too deeply to be analysed (hundreds of levels of blocks or operators); "
                    "split it into smaller flows or assignments",
                    builder.span(child),
                )
            if item is not None:
                items.append(item)
    _check_lists(items, builder)
    return items, builder.diagnostics


def _check_lists(items: list[t.TopItem], builder: ChunkBuilder) -> None:
    """List literals are only the agent lists of DAG operators."""
    for node in builder.bracket_lists:
        if id(node) not in builder.dag_lists:
            builder.error(
                "NX022",
                "list literals are not Nexa 2.x: brackets only list agents around "
                "|>>, ||, &>> and && (use python! or a tool for data lists)",
                node.span,
            )

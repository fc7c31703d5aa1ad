"""The state of building one chunk and the helpers every grammar area uses to read Lark trees."""

from __future__ import annotations

from collections.abc import Iterable

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Severity, TextEdit
from nexa_lsp.syntax.tree import Anchor, Span
from nexa_lsp.syntax.version import VersionPath

Child = Tree[Token] | Token

_BASE_NAMES: dict[str, str] = {}


def base_name(name: str) -> str:
    """A rule or terminal name without the grammar prefix Lark adds on import (``common__IDENT``)."""
    base = _BASE_NAMES.get(name)
    if base is None:
        base = name.rsplit("__", 1)[-1] if not name.startswith("__") else name
        _BASE_NAMES[name] = base
    return base


class Builder:
    """What is known while one chunk is built: its anchor, text and path, and what it reports.

    Every span made here is relative to ``anchor`` (the chunk's start in its document).
    """

    __slots__ = ("anchor", "bracket_lists", "dag_lists", "diagnostics", "path", "text")

    def __init__(self, anchor: Anchor, text: str, path: VersionPath) -> None:
        self.anchor = anchor
        self.text = text
        self.path = path
        self.diagnostics: list[Diagnostic] = []
        self.bracket_lists: list[t.BracketList] = []
        self.dag_lists: set[int] = set()

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

    def semicolon_separator(self, span: Span, separated: str) -> None:
        """NX028: a `;` used between ``separated`` (agent properties, protocol fields), with its fix."""
        self.error(
            "NX028",
            f"`;` does not separate {separated}: use `,` or a new line",
            span,
            fixes=[Fix("Replace `;` with `,`", (TextEdit(span, ","),))],
        )


def rule_name(tree: Tree[Token]) -> str:
    """The rule (or alias) that made ``tree``, without the grammar prefix."""
    return base_name(str(tree.data))


def first_token(tree: Tree[Token]) -> Token:
    """The token that is ``tree``'s first child."""
    child = tree.children[0]
    assert isinstance(child, Token)
    return child


def child_trees(tree: Tree[Token]) -> list[Tree[Token]]:
    """The children of ``tree`` that are trees."""
    return [c for c in tree.children if isinstance(c, Tree)]


def child_tokens(tree: Tree[Token], base: str | None = None) -> list[Token]:
    """The children of ``tree`` that are tokens (of terminal ``base`` only, when given)."""
    return [c for c in tree.children if isinstance(c, Token) and (base is None or base_name(c.type) == base)]


def has_token(tree: Tree[Token], base: str) -> bool:
    """True when ``tree`` has a token of terminal ``base`` among its children."""
    return any(isinstance(c, Token) and base_name(c.type) == base for c in tree.children)


def find_child(tree: Tree[Token], data: str) -> Tree[Token] | None:
    """The first child tree made by rule ``data``."""
    for c in tree.children:
        if isinstance(c, Tree) and rule_name(c) == data:
            return c
    return None


def find_children(tree: Tree[Token], data: str) -> list[Tree[Token]]:
    """Every child tree made by rule ``data``."""
    return [c for c in tree.children if isinstance(c, Tree) and rule_name(c) == data]


def name_token(b: Builder, tree: Tree[Token]) -> Token:
    """The first name of ``tree`` (a declaration's name); an empty name when recovery left none."""
    for c in tree.children:
        if isinstance(c, Token) and base_name(c.type) == "IDENT":
            return c
    sp = b.span(tree)
    return Token("IDENT", "", start_pos=sp.rel_start, end_pos=sp.rel_start)

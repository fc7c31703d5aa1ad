"""Statement nodes of flow-like bodies."""

from __future__ import annotations

from dataclasses import dataclass, field

from nexa_lsp.syntax.tree.expressions import Argument, Expr, Name, Pattern, StringLit
from nexa_lsp.syntax.tree.spans import Node, Span
from nexa_lsp.syntax.tree.types import TypeExpr
from nexa_lsp.syntax.tree.values import Property


@dataclass(slots=True, eq=False)
class Block(Node):
    statements: list[Stmt]


@dataclass(slots=True, eq=False)
class Assign(Node):
    """``target = value`` with an optional ``?`` or ``otherwise handler`` tail."""

    target: Expr
    value: Expr
    tail: str = "plain"  # "plain" | "propagate" | "otherwise"
    handler: Expr | Block | None = None
    has_semicolon: bool = False

    @property
    def target_name(self) -> Name | None:
        return self.target if isinstance(self.target, Name) else None


@dataclass(slots=True, eq=False)
class ExprStmt(Node):
    expr: Expr
    propagate: bool = False


@dataclass(slots=True, eq=False)
class Print(Node):
    """``print(args)``; ``legacy`` for the 2.0-era ``print "text";`` form."""

    args: list[Argument]
    legacy: bool = False


@dataclass(slots=True, eq=False)
class Condition(Node):
    """An ``if`` / ``while`` / ``until`` condition: expressions joined by and/or."""

    parts: list[Expr]
    operators: list[str]


@dataclass(slots=True, eq=False)
class If(Node):
    condition: Condition
    then: Block
    otherwise: Block | If | None = None


@dataclass(slots=True, eq=False)
class ForEach(Node):
    """``for each item(, index)? in iterable { }`` (the first name is the element)."""

    item: str
    item_span: Span
    index: str | None
    index_span: Span | None
    iterable: Expr
    body: Block


@dataclass(slots=True, eq=False)
class ForPattern(Node):
    pattern: Pattern
    iterable: Expr
    body: Block


@dataclass(slots=True, eq=False)
class While(Node):
    condition: Condition
    body: Block


@dataclass(slots=True, eq=False)
class Loop(Node):
    body: Block
    until: Condition


@dataclass(slots=True, eq=False)
class Jump(Node):
    """``break;`` or ``continue;`` (``keyword`` says which)."""

    keyword: str
    has_semicolon: bool = True


@dataclass(slots=True, eq=False)
class SemanticIf(Node):
    question: StringLit
    fast_match: StringLit | None
    target: Expr
    then: Block
    otherwise: Block | None


@dataclass(slots=True, eq=False)
class Let(Node):
    pattern: Pattern
    value: Expr


@dataclass(slots=True, eq=False)
class Try(Node):
    body: Block
    error_name: str
    error_span: Span
    handler: Block


@dataclass(slots=True, eq=False)
class PythonBlock(Node):
    code: str


@dataclass(slots=True, eq=False)
class KeywordStmt(Node):
    """Statements made of a keyword and operands: ``assert``, ``defer``,
    ``reflect``, ``restore``, ``pass``, ``verify``, ``receive``.

    ``exprs`` holds their expressions in source order, ``names`` the plain names
    they mention (``restore(snap)``, ``pass x to worker``), ``type`` a type
    (``verify x satisfies T``, ``receive(): T``).
    """

    keyword: str
    exprs: list[Expr] = field(default_factory=list)
    names: list[tuple[str, Span]] = field(default_factory=list)
    type: TypeExpr | None = None
    variant: str | None = None
    has_semicolon: bool = True

    @property
    def type_text(self) -> str | None:
        return self.type.text if self.type is not None else None


@dataclass(slots=True, eq=False)
class BlockStmt(Node):
    """Harness statements with bodies: ``autoloop``, ``with_context``,
    ``context_policy``, ``try_agent``, ``unharnessed``, lifecycle hooks,
    ``fork``. ``settings`` are their ``key: value`` pairs; ``blocks`` their bodies
    (for ``try_agent``: the body, then each ``catch_correction``)."""

    keyword: str
    settings: list[Property] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    exprs: list[Expr] = field(default_factory=list)
    names: list[tuple[str, Span]] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class StraySemicolon(Node):
    pass


Stmt = (
    Assign
    | ExprStmt
    | Print
    | If
    | ForEach
    | ForPattern
    | While
    | Loop
    | Jump
    | SemanticIf
    | Let
    | Try
    | PythonBlock
    | KeywordStmt
    | BlockStmt
    | StraySemicolon
)

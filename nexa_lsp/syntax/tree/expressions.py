"""Expression nodes (and the patterns of `match`, `let` and `for`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nexa_lsp.syntax.tree.spans import Node, Span

if TYPE_CHECKING:
    from nexa_lsp.syntax.tree.statements import Block


@dataclass(slots=True, eq=False)
class Name(Node):
    """A bare identifier used as a value (a variable, agent, flow, tool ...)."""

    id: str


@dataclass(slots=True, eq=False)
class Interpolation:
    """A `#{path}` inside a plain string: the dotted/indexed path, its span (between
    the braces), and its first name ``root`` with ``root_span``."""

    path: str
    span: Span
    root: str
    root_span: Span


@dataclass(slots=True, eq=False)
class StringLit(Node):
    """A `"..."` or `\"\"\"...\"\"\"` literal; ``value`` is the text between the quotes."""

    value: str
    multiline: bool = False
    interpolations: list[Interpolation] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class TemplateLit(Node):
    """`template\"\"\"...\"\"\"`: a template body for the template mini-language."""

    body: str


@dataclass(slots=True, eq=False)
class NumberLit(Node):
    value: int | float
    text: str


@dataclass(slots=True, eq=False)
class BoolLit(Node):
    value: bool


@dataclass(slots=True, eq=False)
class Argument(Node):
    """One call argument: positional (``name`` None), ``name = value`` or ``name: value``."""

    value: Expr
    name: str | None = None
    name_span: Span | None = None
    style: str = "positional"  # "positional" | "keyword" (=) | "field" (:)


@dataclass(slots=True, eq=False)
class Call(Node):
    """``callee(args)``. For ``Agent.method(...)`` the callee is a :class:`Member`.

    ``run_entry`` names an agent run entry: ``"run"`` (2.4 ``A.run``; an error on
    3.0), or ``"execute"``, ``"continue"``, ``"resume"`` on the 3.0 path.
    ``paren_span`` is the span of the call's ``(`` and ``args_span`` that of its
    whole argument list, ``(`` through ``)`` (empty at the end when error recovery
    supplied the ``)``). A method's name is ``callee.name_span`` (:class:`Member`).
    """

    callee: Expr
    args: list[Argument]
    run_entry: str | None = None
    paren_span: Span | None = None
    args_span: Span | None = None

    @property
    def receiver_name(self) -> Name | None:
        """For ``A.m(...)`` the ``A`` name node."""
        if isinstance(self.callee, Member) and isinstance(self.callee.obj, Name):
            return self.callee.obj
        return None

    @property
    def method(self) -> str | None:
        return self.callee.name if isinstance(self.callee, Member) else None

    @property
    def function_name(self) -> Name | None:
        """For a plain ``f(...)`` call the ``f`` name node."""
        return self.callee if isinstance(self.callee, Name) else None


@dataclass(slots=True, eq=False)
class Member(Node):
    """``obj.name``; ``name_span`` is the span of the member's name (``run`` in ``A . run``)."""

    obj: Expr
    name: str
    name_span: Span


@dataclass(slots=True, eq=False)
class Index(Node):
    obj: Expr
    index: Expr


@dataclass(slots=True, eq=False)
class VariantRef(Node):
    """``Enum::Variant`` (call it for payloads)."""

    obj: Expr
    name: str
    name_span: Span


@dataclass(slots=True, eq=False)
class BinaryOp(Node):
    """Binary operators: arithmetic, comparison, ``>>``, DAG (``|>> || &>> &&``),
    ``|>``, ``??`` and ``fallback``."""

    op: str
    left: Expr
    right: Expr
    op_span: Span


@dataclass(slots=True, eq=False)
class Negate(Node):
    """Unary minus (not Nexa 2.x; kept so the diagnostic can point at it)."""

    operand: Expr


@dataclass(slots=True, eq=False)
class BranchOp(Node):
    """``cond ?? a : b``."""

    condition: Expr
    then: Expr
    otherwise: Expr


@dataclass(slots=True, eq=False)
class CaseArm(Node):
    label: StringLit
    value: Expr


@dataclass(slots=True, eq=False)
class CaseBranch(Node):
    """``subject ?? { "label" => expr, ... }``."""

    subject: Expr
    cases: list[CaseArm]


@dataclass(slots=True, eq=False)
class BracketList(Node):
    """``[A, B]``: agent lists of the DAG operators (list literals are not 2.x)."""

    items: list[Expr]


@dataclass(slots=True, eq=False)
class Parenthesized(Node):
    """``(a)`` or ``(a, b)``: not Nexa 2.x; kept for diagnostics."""

    items: list[Expr]


@dataclass(slots=True, eq=False)
class SemanticIfExpr(Node):
    """``semantic_if (subject, "question") { "label" => expr, ... }``."""

    subject: Expr
    question: StringLit
    cases: list[CaseArm]


@dataclass(slots=True, eq=False)
class Pattern(Node):
    """A match / let / for pattern.

    ``kind`` is one of ``wildcard``, ``name``, ``literal``, ``tuple``, ``array``,
    ``map``, ``variant``. ``name`` holds the bound name (``name``), the enum
    (``variant``); ``variant`` the variant name; ``rest`` the ``..rest`` name.
    """

    kind: str
    name: str | None = None
    name_span: Span | None = None
    variant: str | None = None
    literal: Expr | None = None
    items: list[Pattern] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    rest: str | None = None
    rest_span: Span | None = None

    def bound_names(self) -> Iterator[tuple[str, Span]]:
        """Every name this pattern binds, with its span."""
        if self.kind == "name" and self.name is not None and self.name_span is not None:
            yield self.name, self.name_span
        for item in self.items:
            yield from item.bound_names()
        if self.rest is not None and self.rest_span is not None:
            yield self.rest, self.rest_span


@dataclass(slots=True, eq=False)
class MatchArm(Node):
    """``pattern => body (if guard)?`` or ``intent("...") => body``."""

    pattern: Pattern | None
    intent: StringLit | None
    body: Expr | Block
    guard: Expr | None = None


@dataclass(slots=True, eq=False)
class MatchExpr(Node):
    subject: Expr
    arms: list[MatchArm]


@dataclass(slots=True, eq=False)
class SpecialExpr(Node):
    """Harness / actor values: ``snapshot()``, ``spawn Agent(args)``,
    ``spawn(expr)``, ``await name``, ``receive()``. ``kind`` says which."""

    kind: str
    name: str | None = None
    name_span: Span | None = None
    args: list[Argument] = field(default_factory=list)


Expr = (
    Name
    | StringLit
    | TemplateLit
    | NumberLit
    | BoolLit
    | Call
    | Member
    | Index
    | VariantRef
    | BinaryOp
    | Negate
    | BranchOp
    | CaseBranch
    | BracketList
    | Parenthesized
    | SemanticIfExpr
    | MatchExpr
    | SpecialExpr
)

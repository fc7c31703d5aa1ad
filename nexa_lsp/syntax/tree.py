"""Typed syntax tree for Nexa sources.

Every node carries ``span`` (the whole construct) and, where it declares or
names something, ``name_span``. Later layers (analysis, IDE features, runtime)
use only these classes; they never see Lark trees.

Offsets are code points into the document. A node's offsets are stored relative
to the *chunk* (run of top-level items, see :mod:`nexa_lsp.syntax.chunks`) it
was parsed from, plus that chunk's :class:`Anchor`; this lets an edit reuse every
untouched chunk by moving its anchor instead of rebuilding its nodes.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


class Anchor:
    """Where a chunk currently starts in its document (shared by the chunk's spans)."""

    __slots__ = ("base",)

    def __init__(self, base: int = 0) -> None:
        self.base = base

    def __repr__(self) -> str:
        return f"Anchor({self.base})"


_ROOT_ANCHOR = Anchor(0)


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of code-point offsets ``[start, end)`` in a document."""

    rel_start: int
    rel_end: int
    anchor: Anchor = field(default=_ROOT_ANCHOR, compare=False, repr=False)

    @property
    def start(self) -> int:
        return self.anchor.base + self.rel_start

    @property
    def end(self) -> int:
        return self.anchor.base + self.rel_end

    def contains(self, offset: int) -> bool:
        """True when ``offset`` is inside the span or right at its end."""
        return self.start <= offset <= self.end

    def __repr__(self) -> str:
        return f"Span({self.start}, {self.end})"


def absolute_span(start: int, end: int) -> Span:
    """A span that does not belong to any chunk (document-level facts)."""
    return Span(start, end)


@dataclass(slots=True, eq=False)
class Node:
    """Base class of all syntax nodes."""

    span: Span


# ------------------------------------------------------------------ expressions


@dataclass(slots=True, eq=False)
class Name(Node):
    """A bare identifier used as a value (a variable, agent, flow, tool ...)."""

    id: str


@dataclass(slots=True, eq=False)
class Interpolation:
    """A `#{path}` inside a plain string: the dotted/indexed path and its span."""

    path: str
    span: Span
    root: str


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
    """

    callee: Expr
    args: list[Argument]
    run_entry: str | None = None

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


# ------------------------------------------------------------------ statements


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
    they mention (``restore(snap)``, ``pass x to worker``), ``type_text`` a type
    (``verify x satisfies T``, ``receive(): T``).
    """

    keyword: str
    exprs: list[Expr] = field(default_factory=list)
    names: list[tuple[str, Span]] = field(default_factory=list)
    type_text: str | None = None
    variant: str | None = None
    has_semicolon: bool = True


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


# ------------------------------------------------------------------ values of properties


class ValueKind(enum.Enum):
    """What kind of value a property (agent, tool, context, config) has."""

    STRING = "string"
    MULTILINE_STRING = "multiline string"
    NAME = "name"
    INT = "integer"
    FLOAT = "float"
    BOOL = "boolean"
    NEGATIVE = "negative number"
    LIST = "list"
    OBJECT = "object"


@dataclass(slots=True, eq=False)
class Value(Node):
    """A literal property value.

    ``value`` is the Python value: ``str`` for strings and names, ``int``,
    ``float``, ``bool``; for lists ``items`` holds the elements (a model list's
    fallback entries have ``is_fallback``), for objects ``pairs``.
    """

    kind: ValueKind
    value: str | int | float | bool | None = None
    items: list[Value] = field(default_factory=list)
    pairs: list[tuple[str, Span, Value]] = field(default_factory=list)
    is_fallback: bool = False

    @property
    def is_string(self) -> bool:
        return self.kind in (ValueKind.STRING, ValueKind.MULTILINE_STRING)

    @property
    def text(self) -> str | None:
        """The string or name this value holds, else None."""
        return self.value if isinstance(self.value, str) else None


@dataclass(slots=True, eq=False)
class Property(Node):
    """``key: value`` in an agent, tool, context block, protocol or config."""

    key: str
    key_span: Span
    value: Value


# ------------------------------------------------------------------ declarations


@dataclass(slots=True, eq=False)
class Decl(Node):
    """Base of top-level items; ``name`` is empty for anonymous items."""

    name: str
    name_span: Span


@dataclass(slots=True, eq=False)
class VersionDecl(Decl):
    """``nexa 3.0;`` (``name`` is "nexa"; ``version`` the text after it, if any)."""

    version: str | None = None
    version_span: Span | None = None


@dataclass(slots=True, eq=False)
class Include(Decl):
    """``include "path";`` (``name`` is the path)."""

    has_semicolon: bool = True


@dataclass(slots=True, eq=False)
class UseConfig(Decl):
    has_semicolon: bool = True


@dataclass(slots=True, eq=False)
class ToolDecl(Decl):
    """``tool Name { description: ..., parameters: {...} }`` / ``mcp:`` / ``python:``."""

    properties: list[Property] = field(default_factory=list)

    def get_property(self, key: str) -> Property | None:
        for prop in self.properties:
            if prop.key == key:
                return prop
        return None

    @property
    def description(self) -> str | None:
        prop = self.get_property("description")
        return prop.value.text if prop else None

    @property
    def parameters(self) -> list[tuple[str, str]]:
        """``(name, type description)`` pairs of the parameters object."""
        prop = self.get_property("parameters")
        if prop is None:
            return []
        return [(key, str(value.value)) for key, _span, value in prop.value.pairs]

    @property
    def approval(self) -> str | None:
        prop = self.get_property("approval")
        return prop.value.text if prop else None


@dataclass(slots=True, eq=False)
class Param(Node):
    name: str
    name_span: Span
    type_text: str | None = None
    default: Value | None = None


@dataclass(slots=True, eq=False)
class ToolFunction(Decl):
    """``@tool("description", key: value) fn name(params): T { body }``."""

    description: str = ""
    config: list[Property] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    return_type: str | None = None
    body: Block | None = None

    @property
    def requires_approval(self) -> bool:
        return any(p.key == "requires_approval" and p.value.value is True for p in self.config)


@dataclass(slots=True, eq=False)
class Decorator(Node):
    """``@limit(max_tokens=800)`` on an agent."""

    name: str
    name_span: Span
    args: list[Property] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class UseItem(Node):
    """One ``uses`` entry: ``kind`` is ``name`` (tool/agent), ``std`` (``std.fs``),
    ``skill`` (markdown path) or ``mcp`` (server URI)."""

    kind: str
    text: str


@dataclass(slots=True, eq=False)
class Contract(Node):
    """``requires`` / ``ensures`` clause: a semantic string or a condition."""

    keyword: str
    condition: Condition


@dataclass(slots=True, eq=False)
class ContextBlock(Node):
    entries: list[Property] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class AgentDecl(Decl):
    decorators: list[Decorator] = field(default_factory=list)
    return_type: str | None = None
    uses: list[UseItem] = field(default_factory=list)
    implements: str | None = None
    implements_span: Span | None = None
    contracts: list[Contract] = field(default_factory=list)
    properties: list[Property] = field(default_factory=list)
    context_blocks: list[ContextBlock] = field(default_factory=list)
    body_span: Span | None = None

    def get_property(self, key: str) -> Property | None:
        """The last property with this key (later keys win, as in 2.x)."""
        found = None
        for prop in self.properties:
            if prop.key == key:
                found = prop
        return found

    def text_property(self, key: str) -> str | None:
        prop = self.get_property(key)
        if prop is None:
            return None
        if prop.value.kind is ValueKind.LIST:
            primary = [item for item in prop.value.items if not item.is_fallback]
            return primary[0].text if primary else None
        return prop.value.text

    @property
    def prompt(self) -> str | None:
        return self.text_property("prompt")

    @property
    def role(self) -> str | None:
        return self.text_property("role")

    @property
    def model(self) -> str | None:
        return self.text_property("model")


@dataclass(slots=True, eq=False)
class FlowDecl(Decl):
    params: list[Param] | None = None
    return_type: str | None = None
    contracts: list[Contract] = field(default_factory=list)
    body: Block | None = None


@dataclass(slots=True, eq=False)
class TestDecl(Decl):
    """``test "name" { }`` (``name`` is the test's string)."""

    body: Block | None = None


@dataclass(slots=True, eq=False)
class ProtocolField(Node):
    name: str
    name_span: Span
    type_text: str
    legacy: bool  # a "string" description rather than a type expression


@dataclass(slots=True, eq=False)
class ProtocolDecl(Decl):
    fields: list[ProtocolField] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class TypeDecl(Decl):
    type_text: str = ""
    constraint: str | None = None


@dataclass(slots=True, eq=False)
class AdtMember(Node):
    """A member of a struct / enum / trait / impl (``fields`` of ADT declarations)."""

    name: str
    name_span: Span
    detail: str | None = None
    params: list[Param] = field(default_factory=list)
    body: Block | None = None


@dataclass(slots=True, eq=False)
class AdtDecl(Decl):
    """``struct``, ``enum``, ``trait`` or ``impl`` (``keyword``); for ``impl T for S``
    ``name`` is the trait and ``target`` the type."""

    keyword: str = "struct"
    members: list[AdtMember] = field(default_factory=list)
    target: str | None = None
    target_span: Span | None = None


@dataclass(slots=True, eq=False)
class JobDecl(Decl):
    queue: str = ""
    options: list[Property] = field(default_factory=list)
    config: list[Property] = field(default_factory=list)
    perform: Block | None = None
    perform_params: list[str] = field(default_factory=list)
    on_failure: Block | None = None
    on_failure_params: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Route(Node):
    """A server route: ``method`` is an HTTP method or ``semantic``."""

    method: str
    path: str
    handlers: list[tuple[str, Span]]


@dataclass(slots=True, eq=False)
class ServerDecl(Decl):
    """``server 8080 { ... }`` (``name`` is the port text)."""

    directives: list[tuple[str, Span]] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ResourceDecl(Decl):
    """``db x = connect("...")``, ``auth a = enable_auth("...")``, ``kv c = open("...")``."""

    kind: str = "db"
    function: str = ""
    argument: str = ""


@dataclass(slots=True, eq=False)
class TopLevelStatement(Decl):
    """A statement at top level: ``defer``, ``match`` or a concurrency call."""

    statement: Stmt | None = None


TopItem = (
    VersionDecl
    | Include
    | UseConfig
    | ToolDecl
    | ToolFunction
    | AgentDecl
    | FlowDecl
    | TestDecl
    | ProtocolDecl
    | TypeDecl
    | AdtDecl
    | JobDecl
    | ServerDecl
    | ResourceDecl
    | TopLevelStatement
)


# ------------------------------------------------------------------ generic traversal


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("span", "name_span"))
        _CHILD_FIELDS[cls] = names
    return names


def iter_children(node: Any) -> Iterator[Any]:
    """Direct child nodes of ``node`` (nodes inside lists and tuples included)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Node):
                    yield item
                elif isinstance(item, tuple):
                    for part in item:
                        if isinstance(part, Node):
                            yield part


def walk(node: Any) -> Iterator[Any]:
    """``node`` and all its descendants, depth first in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = list(iter_children(current))
        children.reverse()
        stack.extend(children)

"""Top-level declarations: agents, tools, flows, protocols, types, jobs, servers ..."""

from __future__ import annotations

from dataclasses import dataclass, field

from nexa_lsp.syntax.tree.spans import Node, Span
from nexa_lsp.syntax.tree.statements import Block, Condition, Stmt
from nexa_lsp.syntax.tree.types import TypeExpr
from nexa_lsp.syntax.tree.values import Property, Value, ValueKind


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
    """``tool Name { description: ..., parameters: {...} }`` (optionally with ``python:``) / ``mcp:`` / ``python:``."""

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

    @property
    def python(self) -> str | None:
        """The ``python: "module.function"`` that implements the tool, if the tool names one."""
        prop = self.get_property("python")
        return prop.value.text if prop else None


@dataclass(slots=True, eq=False)
class Param(Node):
    name: str
    name_span: Span
    type: TypeExpr | None = None
    default: Value | None = None

    @property
    def type_text(self) -> str | None:
        return self.type.text if self.type is not None else None


@dataclass(slots=True, eq=False)
class ToolFunction(Decl):
    """``@tool("description", key: value) fn name(params): T { body }``."""

    description: str = ""
    config: list[Property] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    returns: TypeExpr | None = None
    body: Block | None = None

    @property
    def return_type(self) -> str | None:
        return self.returns.text if self.returns is not None else None

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
    returns: TypeExpr | None = None  # `-> T` or `-> List<T>`
    uses: list[UseItem] = field(default_factory=list)
    implements: str | None = None
    implements_span: Span | None = None
    contracts: list[Contract] = field(default_factory=list)
    properties: list[Property] = field(default_factory=list)
    context_blocks: list[ContextBlock] = field(default_factory=list)
    body_span: Span | None = None

    @property
    def return_type(self) -> str | None:
        return self.returns.text if self.returns is not None else None

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
    returns: TypeExpr | None = None
    contracts: list[Contract] = field(default_factory=list)
    body: Block | None = None

    @property
    def return_type(self) -> str | None:
        return self.returns.text if self.returns is not None else None


@dataclass(slots=True, eq=False)
class TestDecl(Decl):
    """``test "name" { }`` (``name`` is the test's string)."""

    body: Block | None = None


@dataclass(slots=True, eq=False)
class ProtocolField(Node):
    """``name: type``, or the 2.0-era ``name: "description"`` (``legacy_text``, and no ``type``)."""

    name: str
    name_span: Span
    type: TypeExpr | None
    legacy_text: str | None = None

    @property
    def legacy(self) -> bool:
        return self.type is None

    @property
    def type_text(self) -> str:
        return self.type.text if self.type is not None else self.legacy_text or ""


@dataclass(slots=True, eq=False)
class ProtocolDecl(Decl):
    fields: list[ProtocolField] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class TypeDecl(Decl):
    type: TypeExpr | None = None
    constraint: str | None = None

    @property
    def type_text(self) -> str:
        return self.type.text if self.type is not None else ""


@dataclass(slots=True, eq=False)
class AdtMember(Node):
    """A member of a struct / enum / trait / impl (``fields`` of ADT declarations)."""

    name: str
    name_span: Span
    detail: str | None = None  # the type (fields, methods) or `(a, b)` (enum variants), as shown
    params: list[Param] = field(default_factory=list)
    body: Block | None = None
    type: TypeExpr | None = None  # a field's type or a method's return type


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

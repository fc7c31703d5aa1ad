"""Symbols, references and name resolution across a file and its includes.

What a name means is decided in two steps:

* per chunk (see :mod:`nexa_lsp.syntax.chunks`): every name a top-level item
  mentions, with the *role* its position gives it (the receiver of ``A.run`` must
  be an agent, a ``uses`` entry a tool or agent, ``implements P`` a protocol ...),
  and the local variables of flows. This depends only on the chunk's text, so it
  is cached per parsed chunk and reused while an edit leaves the chunk alone;
* per file: the chunk facts are put together and resolved against the file's
  own declarations and those of the files it includes (one level, as in 2.x).

Spans stay anchored to their chunk, so cached facts remain correct when an edit
earlier in the document moves the chunk.
"""

from __future__ import annotations

import enum
import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.syntax.tree import Span

# ---------------------------------------------------------------------- kinds


class DeclKind(enum.Enum):
    """What a named top-level declaration declares."""

    AGENT = "agent"
    TOOL = "tool"
    FLOW = "flow"
    PROTOCOL = "protocol"
    TYPE = "type"
    STRUCT = "struct"
    ENUM = "enum"
    TRAIT = "trait"
    JOB = "job"
    RESOURCE = "resource"


def declared_kind(item: object) -> DeclKind | None:
    """The kind of name ``item`` declares, or None when it declares no name."""
    if isinstance(item, t.AgentDecl):
        return DeclKind.AGENT
    if isinstance(item, t.ToolDecl | t.ToolFunction):
        return DeclKind.TOOL
    if isinstance(item, t.FlowDecl):
        return DeclKind.FLOW
    if isinstance(item, t.ProtocolDecl):
        return DeclKind.PROTOCOL
    if isinstance(item, t.TypeDecl):
        return DeclKind.TYPE
    if isinstance(item, t.AdtDecl):
        return {"struct": DeclKind.STRUCT, "enum": DeclKind.ENUM, "trait": DeclKind.TRAIT}.get(item.keyword)
    if isinstance(item, t.JobDecl):
        return DeclKind.JOB
    if isinstance(item, t.ResourceDecl):
        return DeclKind.RESOURCE
    return None


class RefRole(enum.Enum):
    """What the position of a name requires it to be."""

    RUN_RECEIVER = "run receiver"  # `A.run(...)`, `A.execute(...)`: an agent
    AGENT = "agent"  # pipeline stage, DAG list, join(...), spawn A(...)
    USES = "uses"  # agent `uses` entry: a tool or an agent
    PROTOCOL = "protocol"  # `implements P`
    HANDLER = "handler"  # server route handler: an agent or a flow
    TYPE = "type"  # a name inside a type expression
    CALL = "call"  # `f(...)`: a flow, a tool function or a built-in
    VALUE = "value"  # any other name


#: Type words that never name a declaration.
BUILTIN_TYPES = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "unit",
        "list",
        "dict",
        "Option",
        "Result",
        "string",
        "number",
        "integer",
        "boolean",
        "any",
        "object",
        "array",
        "true",
        "false",
    }
)
#: Names with a built-in meaning inside flows (never references to declarations).
BUILTIN_NAMES = frozenset({"std", "join", "img", "print", "input", "exit", "secret", "len", "str", "int"})

#: Members of a run value (Nexa 3.0).
RUN_MEMBERS = ("output", "status", "success", "settled", "run_id", "session_id", "parent_run_id", "usage")


@dataclass(frozen=True, slots=True)
class NameRef:
    """A name that may refer to a top-level declaration."""

    name: str
    span: Span
    role: RefRole


@dataclass(slots=True, eq=False)
class LocalVar:
    """A parameter or variable of one flow (or tool function, test, job ...).

    ``bindings`` are where it gets a value (parameters, assignments, loop
    variables, patterns); ``uses`` where it is read. ``run_agent`` and
    ``run_entry`` record ``r = Agent.execute(...)`` so members of the run can be
    offered.
    """

    name: str
    owner: t.Node
    kind: str  # "parameter" | "variable"
    bindings: list[Span] = field(default_factory=list)
    uses: list[Span] = field(default_factory=list)
    type_text: str | None = None
    run_agent: str | None = None
    run_entry: str | None = None

    def occurrences(self) -> list[tuple[Span, bool]]:
        """All occurrences in source order, ``True`` for the ones that bind."""
        out = [(s, True) for s in self.bindings] + [(s, False) for s in self.uses]
        out.sort(key=lambda pair: pair[0].start)
        return out

    @property
    def definition(self) -> Span | None:
        if self.bindings:
            return min(self.bindings, key=lambda s: s.start)
        return min(self.uses, key=lambda s: s.start) if self.uses else None


@dataclass(slots=True)
class ChunkFacts:
    """What one chunk declares and mentions (depends on the chunk's text only)."""

    refs: list[NameRef]
    locals: list[LocalVar]
    symbols: list[Symbol]  # the chunk's named declarations
    decl_hash: int  # summarises (name, kind) of the declarations


# ---------------------------------------------------------------------- per-chunk cache

T = TypeVar("T")


class ChunkCache(Generic[T]):
    """Results computed from one parsed chunk, kept while the chunk is in use.

    Parsed chunks are reused by identity between versions of a document, so a
    cached result is valid exactly as long as the chunk object is. Entries whose
    chunk nothing else references any more are dropped when the cache grows.
    """

    def __init__(self, compute: Callable[[ParsedChunk], T], min_size: int = 4096) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[ParsedChunk, T]] = {}
        self._min_size = min_size
        self._prune_at = min_size

    def get(self, chunk: ParsedChunk) -> T:
        entry = self._entries.get(id(chunk))
        if entry is not None and entry[0] is chunk:
            return entry[1]
        value = self._compute(chunk)
        self._entries[id(chunk)] = (chunk, value)
        if len(self._entries) > self._prune_at:
            self.prune()
        return value

    def prune(self) -> None:
        """Forget chunks that only this cache still holds."""
        dead = [key for key, (chunk, _value) in self._entries.items() if sys.getrefcount(chunk) <= 3]
        for key in dead:
            del self._entries[key]
        self._prune_at = max(self._min_size, 2 * len(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


# ---------------------------------------------------------------------- collecting names of one chunk

#: A Nexa name (checks a name the user types, e.g. for rename; never used to read sources).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Scope:
    """Local names of one flow-like body (Python function scoping, as in 2.x)."""

    def __init__(self, owner: t.Node) -> None:
        self.owner = owner
        self.vars: dict[str, LocalVar] = {}

    def bind(self, name: str, span: Span | None, kind: str = "variable") -> LocalVar:
        var = self.vars.get(name)
        if var is None:
            var = self.vars[name] = LocalVar(name, self.owner, kind)
        if span is not None:
            var.bindings.append(span)
        return var


class _Collector:
    """Reads names from the nodes of one chunk (never from its text)."""

    def __init__(self) -> None:
        self.refs: list[NameRef] = []
        self.locals: list[LocalVar] = []
        self.scope: _Scope | None = None

    # -- helpers

    def ref(self, name: str, span: Span, role: RefRole) -> None:
        if not name:
            return
        if self.scope is not None and role is not RefRole.TYPE:
            var = self.scope.vars.get(name)
            if var is not None:
                var.uses.append(span)
                return
        if role in (RefRole.VALUE, RefRole.CALL) and name in BUILTIN_NAMES:
            return
        self.refs.append(NameRef(name, span, role))

    def type_refs(self, type_expr: t.TypeExpr | None) -> None:
        """The declared names a type mentions (``Report`` in ``list[Report] | None``)."""
        if type_expr is None:
            return
        for named in type_expr.names():
            if named.name and named.name not in BUILTIN_TYPES:
                self.refs.append(NameRef(named.name, named.name_span, RefRole.TYPE))

    def open_scope(self, owner: t.Node) -> _Scope:
        scope = _Scope(owner)
        self.scope = scope
        return scope

    def close_scope(self) -> None:
        if self.scope is not None:
            self.locals.extend(self.scope.vars.values())
        self.scope = None

    # -- top-level items

    def item(self, item: t.TopItem) -> None:
        if isinstance(item, t.AgentDecl):
            self.agent(item)
        elif isinstance(item, t.FlowDecl):
            self.flow_like(item, item.params or [], item.body, item.contracts)
            self.type_refs(item.returns)
        elif isinstance(item, t.ToolFunction):
            self.flow_like(item, item.params, item.body, [])
            self.type_refs(item.returns)
        elif isinstance(item, t.TestDecl):
            self.flow_like(item, [], item.body, [])
        elif isinstance(item, t.ProtocolDecl):
            for fld in item.fields:
                self.type_refs(fld.type)
        elif isinstance(item, t.TypeDecl):
            self.type_refs(item.type)
        elif isinstance(item, t.AdtDecl):
            self.adt(item)
        elif isinstance(item, t.JobDecl):
            for params, block in ((item.perform_params, item.perform), (item.on_failure_params, item.on_failure)):
                if block is None:
                    continue
                scope = self.open_scope(item)
                for name in params:
                    scope.bind(name, None, "parameter")
                self.body(block)
                self.close_scope()
        elif isinstance(item, t.ServerDecl):
            for route in item.routes:
                for name, span in route.handlers:
                    self.ref(name, span, RefRole.HANDLER)
        elif isinstance(item, t.TopLevelStatement) and item.statement is not None:
            self.open_scope(item)
            self.bind_block_statements([item.statement])
            self.stmt(item.statement)
            self.close_scope()

    def agent(self, item: t.AgentDecl) -> None:
        self.type_refs(item.returns)
        for use in item.uses:
            if use.kind == "name":
                self.refs.append(NameRef(use.text, use.span, RefRole.USES))
        if item.implements and item.implements_span is not None:
            self.refs.append(NameRef(item.implements, item.implements_span, RefRole.PROTOCOL))
        for contract in item.contracts:
            for part in contract.condition.parts:
                self.expr(part)
        for prop in item.properties:
            # `tools: [a, b]` and `protocol: P` are read by no runtime, but they name declarations.
            if prop.key in ("tools", "protocol", "uses"):
                values = prop.value.items if prop.value.kind is t.ValueKind.LIST else [prop.value]
                for value in values:
                    if value.kind is t.ValueKind.NAME and isinstance(value.value, str):
                        self.refs.append(NameRef(value.value, value.span, RefRole.VALUE))

    def adt(self, item: t.AdtDecl) -> None:
        if item.keyword == "impl":
            if item.name:
                self.refs.append(NameRef(item.name, item.name_span, RefRole.TYPE))
            if item.target and item.target_span is not None:
                self.refs.append(NameRef(item.target, item.target_span, RefRole.TYPE))
        for member in item.members:
            self.type_refs(member.type)
            for param in member.params:
                self.type_refs(param.type)
            if member.body is not None:
                scope = self.open_scope(member)
                for param in member.params:
                    scope.bind(param.name, param.name_span, "parameter")
                self.body(member.body)
                self.close_scope()

    def flow_like(
        self, owner: t.Node, params: list[t.Param], body: t.Block | None, contracts: list[t.Contract]
    ) -> None:
        scope = self.open_scope(owner)
        for param in params:
            var = scope.bind(param.name, param.name_span, "parameter")
            var.type_text = param.type_text
            self.type_refs(param.type)
        for contract in contracts:
            for part in contract.condition.parts:
                self.expr(part)
        if body is not None:
            self.body(body)
        self.close_scope()

    def body(self, block: t.Block) -> None:
        self.bind_block_statements(block.statements)
        for stmt in block.statements:
            self.stmt(stmt)

    # -- pass 1: bindings

    def bind_block_statements(self, statements: Iterable[t.Stmt]) -> None:
        scope = self.scope
        if scope is None:
            return
        for stmt in statements:
            for node in t.walk(stmt):
                if isinstance(node, t.Assign):
                    target = node.target_name
                    if target is not None:
                        var = scope.bind(target.id, target.span)
                        call = node.value
                        if isinstance(call, t.Call) and call.run_entry is not None:
                            receiver = call.receiver_name
                            if receiver is not None:
                                var.run_agent = receiver.id
                                var.run_entry = call.run_entry
                elif isinstance(node, t.ForEach):
                    scope.bind(node.item, node.item_span)
                    if node.index is not None:
                        scope.bind(node.index, node.index_span)
                elif isinstance(node, t.Pattern):
                    if node.kind == "name" and node.name and node.name_span is not None:
                        scope.bind(node.name, node.name_span)
                    if node.rest and node.rest_span is not None:
                        scope.bind(node.rest, node.rest_span)
                elif isinstance(node, t.Try):
                    scope.bind(node.error_name, node.error_span)
                elif isinstance(node, t.BlockStmt):
                    if node.keyword == "fork":
                        for name, span in node.names[:-1]:
                            scope.bind(name, span)
                    elif node.keyword in ("try_agent", "on_error"):
                        for name, span in node.names[0::2]:
                            scope.bind(name, span)

    # -- pass 2: uses (a work list, not recursion: nesting depth is the user's choice)

    def stmt(self, node: t.Stmt | t.Block | None) -> None:
        if node is not None:
            self._run(node, None)

    def expr(self, node: object, role: RefRole = RefRole.VALUE) -> None:
        self._run(node, role)

    def _run(self, node: object, role: RefRole | None) -> None:
        todo: list[tuple[object, RefRole | None]] = [(node, role)]
        while todo:
            current, current_role = todo.pop()
            if current is None:
                continue
            if current_role is None:
                self._statement(current, todo)
            else:
                self._expression(current, current_role, todo)

    def _statement(self, node: object, todo: list[tuple[object, RefRole | None]]) -> None:
        value = RefRole.VALUE

        def s(child: object) -> None:
            todo.append((child, None))

        def e(child: object, role: RefRole = value) -> None:
            todo.append((child, role))

        if isinstance(node, t.Block):
            for inner in reversed(node.statements):
                s(inner)
        elif isinstance(node, t.Assign):
            if node.target_name is None:
                e(node.target)
            e(node.value)
            if isinstance(node.handler, t.Block):
                s(node.handler)
            elif node.handler is not None:
                e(node.handler)
        elif isinstance(node, t.ExprStmt):
            e(node.expr)
        elif isinstance(node, t.Print):
            for arg in node.args:
                e(arg.value)
        elif isinstance(node, t.If):
            self._condition(node.condition, todo)
            s(node.then)
            s(node.otherwise)
        elif isinstance(node, t.ForEach | t.ForPattern):
            e(node.iterable)
            s(node.body)
        elif isinstance(node, t.While):
            self._condition(node.condition, todo)
            s(node.body)
        elif isinstance(node, t.Loop):
            s(node.body)
            self._condition(node.until, todo)
        elif isinstance(node, t.SemanticIf):
            e(node.target)
            s(node.then)
            s(node.otherwise)
        elif isinstance(node, t.Let):
            e(node.value)
        elif isinstance(node, t.Try):
            s(node.body)
            s(node.handler)
        elif isinstance(node, t.KeywordStmt):
            for child in node.exprs:
                e(child)
            for name, span in node.names:
                self.ref(name, span, RefRole.TYPE if node.keyword == "verify" else RefRole.VALUE)
            self.type_refs(node.type)
        elif isinstance(node, t.BlockStmt):
            for child in node.exprs:
                e(child)
            if node.keyword in ("before_tool", "after_tool"):
                for name, span in node.names:
                    self.ref(name, span, RefRole.VALUE)
            elif node.keyword in ("try_agent", "on_error"):
                for name, span in node.names[1::2]:
                    self.ref(name, span, RefRole.TYPE)
            for block in node.blocks:
                s(block)

    @staticmethod
    def _condition(cond: t.Condition, todo: list[tuple[object, RefRole | None]]) -> None:
        for part in cond.parts:
            todo.append((part, RefRole.VALUE))

    def _expression(self, node: object, role: RefRole, todo: list[tuple[object, RefRole | None]]) -> None:
        value = RefRole.VALUE

        def e(child: object, child_role: RefRole = value) -> None:
            todo.append((child, child_role))

        def named(child: object, when_name: RefRole) -> None:
            e(child, when_name if isinstance(child, t.Name) else value)

        if isinstance(node, t.Name):
            self.ref(node.id, node.span, role)
        elif isinstance(node, t.StringLit):
            for interp in node.interpolations:
                self.ref(interp.root, interp.root_span, RefRole.VALUE)
        elif isinstance(node, t.Call):
            self._call(node, todo)
        elif isinstance(node, t.Member):
            if not (isinstance(node.obj, t.Name) and node.obj.id == "std"):
                e(node.obj)
        elif isinstance(node, t.VariantRef):
            named(node.obj, RefRole.TYPE)
        elif isinstance(node, t.BinaryOp):
            op = node.op
            if op in ("&>>", "&&"):
                self._agents(node.left, todo)
            else:
                e(node.left)
            if op in ("|>>", "||"):
                self._agents(node.right, todo)
            elif op in (">>", "&>>", "&&"):
                named(node.right, RefRole.AGENT)
            elif op == "|>":
                named(node.right, RefRole.CALL)
            else:
                e(node.right)
        elif isinstance(node, t.SpecialExpr):
            if node.name is not None and node.name_span is not None:
                self.ref(node.name, node.name_span, RefRole.AGENT if node.kind == "spawn_actor" else RefRole.VALUE)
            for arg in node.args:
                e(arg.value)
        elif isinstance(node, t.MatchExpr):
            e(node.subject)
            for arm in node.arms:
                if arm.pattern is not None:
                    for sub in t.walk(arm.pattern):
                        if isinstance(sub, t.Pattern) and sub.literal is not None:
                            e(sub.literal)
                if isinstance(arm.body, t.Block):
                    todo.append((arm.body, None))
                else:
                    e(arm.body)
                if arm.guard is not None:
                    e(arm.guard)
        elif isinstance(node, t.Node):
            for child in t.iter_children(node):
                if isinstance(child, t.Block):
                    todo.append((child, None))
                elif isinstance(child, t.Argument | t.CaseArm):
                    e(child.value)
                else:
                    e(child)

    @staticmethod
    def _agents(node: object, todo: list[tuple[object, RefRole | None]]) -> None:
        """The `[A, B]` list of a DAG operator (anything else is visited as usual)."""
        if isinstance(node, t.BracketList):
            for item in node.items:
                todo.append((item, RefRole.AGENT if isinstance(item, t.Name) else RefRole.VALUE))
        else:
            todo.append((node, RefRole.VALUE))

    def _call(self, node: t.Call, todo: list[tuple[object, RefRole | None]]) -> None:
        callee = node.callee
        args_role = RefRole.VALUE
        if node.run_entry is not None and isinstance(callee, t.Member):
            todo.append((callee.obj, RefRole.RUN_RECEIVER if isinstance(callee.obj, t.Name) else RefRole.VALUE))
        elif isinstance(callee, t.Name):
            if callee.id == "join":
                args_role = RefRole.AGENT
            else:
                self.ref(callee.id, callee.span, RefRole.CALL)
        elif isinstance(callee, t.Member):
            obj = callee.obj
            if isinstance(obj, t.Call) and isinstance(obj.callee, t.Name) and obj.callee.id == "join":
                todo.append((obj, RefRole.VALUE))
                self.ref(callee.name, callee.name_span, RefRole.AGENT)
            else:
                todo.append((callee, RefRole.VALUE))
        else:
            todo.append((callee, RefRole.VALUE))
        for arg in node.args:
            todo.append((arg.value, args_role if isinstance(arg.value, t.Name) else RefRole.VALUE))


def _collect_chunk(chunk: ParsedChunk) -> ChunkFacts:
    collector = _Collector()
    symbols: list[Symbol] = []
    for item in chunk.items:
        collector.item(item)
        kind = declared_kind(item)
        if kind is not None and item.name:
            symbols.append(Symbol(item, kind, None))
    decl_hash = hash(tuple((sym.name, sym.kind.value) for sym in symbols)) if symbols else 0
    return ChunkFacts(collector.refs, collector.locals, symbols, decl_hash)


_FACTS: ChunkCache[ChunkFacts] = ChunkCache(_collect_chunk)


def chunk_facts(chunk: ParsedChunk) -> ChunkFacts:
    """Names mentioned by one chunk (cached while the chunk is reused)."""
    return _FACTS.get(chunk)


# ---------------------------------------------------------------------- one file


@dataclass(slots=True, eq=False)
class FileSymbols:
    """The declarations and name uses of one parsed file."""

    source: SourceFile
    declarations: dict[str, list[t.Decl]]
    refs: list[NameRef]
    locals: list[LocalVar]
    symbols: dict[str, list[Symbol]]  # the same declarations as symbols of this file
    signature: int  # changes when a declared name or kind changes (not when a body does)


_FILE_MEMO: OrderedDict[int, tuple[SourceFile, FileSymbols]] = OrderedDict()
_MEMO_SIZE = 64
_HASH_MASK = (1 << 64) - 1


def file_symbols(source: SourceFile) -> FileSymbols:
    """Declarations and references of ``source`` (memoised per parsed version)."""
    entry = _FILE_MEMO.get(id(source))
    if entry is not None and entry[0] is source:
        _FILE_MEMO.move_to_end(id(source))
        return entry[1]
    declarations: dict[str, list[t.Decl]] = {}
    symbols: dict[str, list[Symbol]] = {}
    refs: list[NameRef] = []
    local_vars: list[LocalVar] = []
    signature = 0
    for chunk in source.chunks:
        facts = chunk_facts(chunk)
        for symbol in facts.symbols:
            declarations.setdefault(symbol.name, []).append(symbol.decl)
            symbols.setdefault(symbol.name, []).append(symbol)
        signature = (signature + facts.decl_hash) & _HASH_MASK
        refs.extend(facts.refs)
        local_vars.extend(facts.locals)
    result = FileSymbols(source, declarations, refs, local_vars, symbols, signature)
    _FILE_MEMO[id(source)] = (source, result)
    while len(_FILE_MEMO) > _MEMO_SIZE:
        _FILE_MEMO.popitem(last=False)
    return result


# ---------------------------------------------------------------------- a file with its includes

#: ``(include path as written, path of the including file) -> (resolved path, parsed file)``;
#: the parsed file is None when the include cannot be found or read.
IncludeLocator = Callable[[str, Path | None], tuple[Path | None, SourceFile | None]]

SECRETS_SUFFIX = ".nxs"


def locator_from_resolver(resolver: IncludeResolver) -> IncludeLocator:
    """Adapt a plain :data:`IncludeResolver` (no paths known)."""

    def locate(include: str, including: Path | None) -> tuple[Path | None, SourceFile | None]:
        return None, resolver(include, including)

    return locate


@dataclass(slots=True, eq=False)
class IncludedFile:
    """One ``include`` of the analysed file and what it resolved to."""

    include: t.Include
    path: Path | None
    symbols: FileSymbols | None
    secrets: bool = False  # `.nxs` files are read by the runtime, never parsed

    @property
    def missing(self) -> bool:
        return self.symbols is None and not self.secrets


class Symbol:
    """A named declaration, in the analysed file (``include`` None) or an included one."""

    __slots__ = ("decl", "include", "kind", "name")

    def __init__(self, decl: t.Decl, kind: DeclKind, include: IncludedFile | None) -> None:
        self.name = decl.name
        self.decl = decl
        self.kind = kind
        self.include = include

    @property
    def name_span(self) -> Span:
        return self.decl.name_span

    @property
    def source(self) -> SourceFile | None:
        return self.include.symbols.source if self.include and self.include.symbols else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and other.decl is self.decl

    def __hash__(self) -> int:
        return id(self.decl)

    def __repr__(self) -> str:
        where = f" in {self.include.include.name}" if self.include else ""
        return f"Symbol({self.kind.value} {self.name}{where})"


@dataclass(slots=True, eq=False)
class Occurrence:
    """A name in the analysed file and what it stands for."""

    span: Span
    symbol: Symbol | None = None
    local: LocalVar | None = None
    role: RefRole | None = None
    is_declaration: bool = False


@dataclass(slots=True, eq=False)
class Analysis:
    """The analysed file, its includes, and every name visible in it."""

    file: FileSymbols
    includes: list[IncludedFile]
    scope: dict[str, list[Symbol]]
    signature: int  # changes when any visible declaration's name or kind changes
    _index: list[tuple[int, int, Occurrence]] | None = None
    _starts: list[int] | None = None

    @property
    def source(self) -> SourceFile:
        return self.file.source

    def lookup(self, name: str) -> Symbol | None:
        """The declaration ``name`` refers to (the file's own first, then the includes')."""
        found = self.scope.get(name)
        return found[0] if found else None

    def local_named(self, name: str, offset: int) -> LocalVar | None:
        """The variable or parameter ``name`` of the flow (tool function ...) holding ``offset``."""
        for var in self.file.locals:
            if var.name == name and var.owner.span.start <= offset <= var.owner.span.end:
                return var
        return None

    def symbols(self, kinds: Iterable[DeclKind] | None = None) -> Iterator[Symbol]:
        """Every visible declaration (first of each name), optionally of some kinds."""
        wanted = set(kinds) if kinds is not None else None
        for symbols in self.scope.values():
            symbol = symbols[0]
            if wanted is None or symbol.kind in wanted:
                yield symbol

    # -- positions

    def _build_index(self) -> list[tuple[int, int, Occurrence]]:
        entries: list[tuple[int, int, Occurrence]] = []
        for ref in self.file.refs:
            symbol = self.lookup(ref.name)
            entries.append((ref.span.start, ref.span.end, Occurrence(ref.span, symbol, role=ref.role)))
        for var in self.file.locals:
            for span, binds in var.occurrences():
                entries.append((span.start, span.end, Occurrence(span, local=var, is_declaration=binds)))
        for item in self.source.items:
            kind = declared_kind(item)
            if kind is not None and item.name:
                symbol = Symbol(item, kind, None)
                span = item.name_span
                entries.append((span.start, span.end, Occurrence(span, symbol, is_declaration=True)))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        return entries

    def occurrences(self) -> list[tuple[int, int, Occurrence]]:
        if self._index is None:
            self._index = self._build_index()
            self._starts = [entry[0] for entry in self._index]
        return self._index

    def occurrence_at(self, offset: int) -> Occurrence | None:
        """The name at ``offset`` (a cursor right after a name still counts)."""
        import bisect

        index = self.occurrences()
        assert self._starts is not None
        pos = bisect.bisect_right(self._starts, offset)
        best: Occurrence | None = None
        for i in range(max(0, pos - 3), min(len(index), pos + 1)):
            start, end, occ = index[i]
            if start <= offset <= end and (best is None or start >= best.span.start):
                best = occ
        return best

    def references_to(self, symbol: Symbol) -> list[Span]:
        """Spans in the analysed file that name ``symbol`` (declaration excluded)."""
        return [ref.span for ref in self.file.refs if ref.name == symbol.name and self.lookup(ref.name) == symbol]


_ANALYSIS_MEMO: OrderedDict[tuple[int, ...], tuple[SourceFile, list[SourceFile | None], Analysis]] = OrderedDict()


def analyze(source: SourceFile, path: Path | None = None, locate: IncludeLocator | None = None) -> Analysis:
    """Resolve the names of ``source`` against its declarations and its includes.

    ``locate`` finds included files; without it, includes are not followed (and
    not reported missing).
    """
    own = file_symbols(source)
    includes: list[IncludedFile] = []
    for item in source.items:
        if not isinstance(item, t.Include) or not item.name:
            continue
        if item.name.endswith(SECRETS_SUFFIX):
            includes.append(IncludedFile(item, None, None, secrets=True))
            continue
        if locate is None:
            continue
        inc_path, inc_source = locate(item.name, path)
        if inc_source is source:
            inc_source = None  # a file including itself adds nothing
        includes.append(IncludedFile(item, inc_path, file_symbols(inc_source) if inc_source else None))
    key = (id(source), *(id(i.symbols.source) if i.symbols else 0 for i in includes))
    memo = _ANALYSIS_MEMO.get(key)
    if memo is not None and memo[0] is source:
        previous = memo[2]
        if [i.path for i in previous.includes] == [i.path for i in includes]:
            _ANALYSIS_MEMO.move_to_end(key)
            return previous
    scope: dict[str, list[Symbol]] = dict(own.symbols)  # the file's own lists are shared, never changed
    include_facts: list[tuple[str, str, int | None, bool]] = []
    for inc in includes:
        include_facts.append(
            (inc.include.name, str(inc.path), inc.symbols.signature if inc.symbols else None, inc.secrets)
        )
        if inc.symbols is None:
            continue
        for name, decls in inc.symbols.declarations.items():
            added = [Symbol(d, kind, inc) for d in decls if (kind := declared_kind(d)) is not None]
            scope[name] = [*scope.get(name, ()), *added]
    signature = hash((own.signature, tuple(include_facts)))
    analysis = Analysis(own, includes, scope, signature)
    _ANALYSIS_MEMO[key] = (source, [i.symbols.source if i.symbols else None for i in includes], analysis)
    while len(_ANALYSIS_MEMO) > _MEMO_SIZE:
        _ANALYSIS_MEMO.popitem(last=False)
    return analysis


def is_identifier(text: str) -> bool:
    return _IDENTIFIER.fullmatch(text) is not None

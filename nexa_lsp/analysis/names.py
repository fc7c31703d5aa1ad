"""What names are: declaration kinds, reference roles, name references, local
variables, and a cache of results per parsed chunk (used by symbols and semantic rules)."""

from __future__ import annotations

import enum
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk
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
        _CHUNK_CACHES.add(self)

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
        """Forget chunks that only chunk caches (this one and the others) still hold."""
        caches = list(_CHUNK_CACHES)
        dead = []
        for key, (chunk, _value) in self._entries.items():
            holders = sum(1 for cache in caches if cache._entries.get(key, (None,))[0] is chunk)
            if sys.getrefcount(chunk) <= 2 + holders:  # the loop's name and getrefcount's argument
                dead.append(key)
        for key in dead:
            del self._entries[key]
        self._prune_at = max(self._min_size, 2 * len(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


_CHUNK_CACHES: weakref.WeakSet[ChunkCache[Any]] = weakref.WeakSet()

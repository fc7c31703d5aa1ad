"""The declarations the migration rules read: agents, tools, flows and server routes.

A flow's rewrite depends on the agents it runs (their protocol, memory and tools) and on
the other flows it calls or that call it; :class:`Program` answers those questions for one
source. What one chunk says (the agents and flows a flow names, the names it binds) is
kept per chunk; the program puts it together per version, which costs a few dictionary
operations per declaration.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nexa_lsp.analysis.symbols import SECRETS_SUFFIX, ChunkCache, chunk_facts
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk, SourceFile

#: Not Nexa syntax: words of a `python!` block, Python code, which the Nexa grammar keeps as opaque text.
#: Every identifier-like word counts as a possible read of a flow variable (an
#: over-approximation that can only make a rewrite unsafe, never wrong).
_PYTHON_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Not Nexa syntax: `{{ name ... }}` in a `template\"\"\"...\"\"\"` body: the template mini-language, which the
#: Nexa grammar also keeps as opaque text.
_TEMPLATE_REF = re.compile(r"\{\{\{?\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\}?\}\}|[^}]*\}\})")


def python_words(code: str) -> list[str]:
    """The identifier-like words of `python!` code, sorted, each once."""
    return sorted(set(_PYTHON_WORD.findall(code)))


def template_refs(body: str) -> list[tuple[str, bool]]:
    """The names a template reads, with True when the reference is a plain ``{{ name }}``."""
    return [(m.group(1), m.group(2).strip() in ("}}", "}}}")) for m in _TEMPLATE_REF.finditer(body)]


@dataclass(frozen=True, slots=True)
class FlowSummary:
    """What a flow's body names, from its text alone: the agents it surely runs, names
    that run an agent if they are one, names that call a flow if they are one."""

    runs: frozenset[str]
    maybe_agents: frozenset[str]
    maybe_flows: frozenset[str]


def _flow_summaries(chunk: ParsedChunk) -> dict[str, FlowSummary]:
    out: dict[str, FlowSummary] = {}
    for item in chunk.items:
        if not isinstance(item, t.FlowDecl):
            continue
        runs: set[str] = set()
        names: set[str] = set()
        calls: set[str] = set()
        for node in t.walk(item.body) if item.body is not None else ():
            if isinstance(node, t.Call):
                receiver = node.receiver_name
                if node.run_entry is not None and receiver is not None:
                    runs.add(receiver.id)
                fn = node.function_name
                if fn is not None:
                    calls.add(fn.id)
            elif isinstance(node, t.Name):
                names.add(node.id)
            elif isinstance(node, t.Member) and node.name == "run" and isinstance(node.obj, t.Name):
                runs.add(node.obj.id)
        out[item.name] = FlowSummary(frozenset(runs), frozenset(names), frozenset(calls))
    return out


def _chunk_names(chunk: ParsedChunk) -> frozenset[str]:
    """Every name the chunk declares, binds or reads, `python!` and template words included."""
    facts = chunk_facts(chunk)
    names = {ref.name for ref in facts.refs} | {var.name for var in facts.locals} | {s.name for s in facts.symbols}
    for item in chunk.items:
        for node in t.walk(item):
            if isinstance(node, t.PythonBlock):
                names.update(python_words(node.code))
            elif isinstance(node, t.TemplateLit):
                names.update(name for name, _plain in template_refs(node.body))
    return frozenset(names)


_FLOW_SUMMARIES: ChunkCache[dict[str, FlowSummary]] = ChunkCache(_flow_summaries)
_CHUNK_NAMES: ChunkCache[frozenset[str]] = ChunkCache(_chunk_names)


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What the rules read of one agent: everything a rewrite of its runs depends on."""

    declared: bool
    structured: str | None  # `implements P` or `-> T`: a 2.4 run gave the validated object
    memory: str | None
    approval_tools: tuple[str, ...]  # its tools that require approval on the 3.0 path
    tools_all_known: bool  # every tool it uses is declared here, so its approvals are known


_STAMPS: OrderedDict[tuple[object, ...], tuple[object, ...]] = OrderedDict()
_STAMP_LIMIT = 64
_UNDECLARED = AgentFacts(False, None, None, (), False)
#: Each combination of tool approvals and declared names seen, numbered.
_TOOL_KEYS: dict[tuple[frozenset[str], tuple[str, ...], frozenset[str]], int] = {}
#: id(agent declaration) -> (declaration, tools key, facts).
_AGENT_FACTS: dict[int, tuple[t.AgentDecl, int, AgentFacts]] = {}
_FACTS_LIMIT = 50_000
_TOOL_KEY_NUMBERS = itertools.count()
#: The declarations a program tables (a server's routes are read only in ``_read_all``).
_DECLS = (t.AgentDecl, t.FlowDecl, t.ToolDecl, t.ToolFunction, t.ServerDecl)
_DECLARING = (t.AgentDecl, t.ToolDecl, t.ToolFunction)
#: At most this many changed chunks (old and new together) are swapped into the last program.
_JOIN_WINDOW = 32
#: Each content of a chunk's agents and tools seen (``_declared``), numbered.
_DECLARED_NUMBERS: dict[tuple[object, ...], int] = {}
_DECLARED_COUNT = itertools.count()


def _declared(chunk: ParsedChunk) -> int:
    """A number for what the chunk's agents and tools say, as far as agent facts read it
    (names, `implements` / `-> T`, memory, `uses`, approvals): equal numbers, same facts."""
    parts: list[tuple[object, ...]] = []
    for item in chunk.items:
        if isinstance(item, t.AgentDecl):
            uses = tuple((use.kind, use.text) for use in item.uses) if item.uses else None
            memory = item.text_property("memory")
            parts.append(("agent", item.name, item.implements, item.return_type, memory, uses))
        elif isinstance(item, t.ToolDecl):
            parts.append(("tool", item.name, item.approval))
        elif isinstance(item, t.ToolFunction):
            parts.append(("function", item.name, item.requires_approval))
    key = tuple(parts)
    number = _DECLARED_NUMBERS.get(key)
    if number is None:
        if len(_DECLARED_NUMBERS) > _FACTS_LIMIT:
            _DECLARED_NUMBERS.clear()  # numbers are never reused, so this only costs reuse
        number = _DECLARED_NUMBERS[key] = next(_DECLARED_COUNT)
    return number


_DECLARED: ChunkCache[int] = ChunkCache(_declared)
#: The last program built for a file without includes (see ``Program.__init__``).
_LAST: Program | None = None


def _shared(old: Sequence[object], new: Sequence[object], limit: int) -> int:
    """How many leading items (at most ``limit``) ``old`` and ``new`` share, by identity."""
    same = list(itertools.islice(map(operator.is_, old, new), limit))
    return same.index(False) if False in same else len(same)


def included_sources(source: SourceFile, includes: IncludeResolver | None) -> list[SourceFile]:
    """The files ``source`` includes, in order (`.nxs` secrets and missing files left out)."""
    if includes is None:
        return []
    out: list[SourceFile] = []
    for item in source.items:
        if isinstance(item, t.Include) and item.name and not item.name.endswith(SECRETS_SUFFIX):
            found = includes(item.name, None)
            if found is not None and found is not source and found not in out:
                out.append(found)
    return out


class Program:
    """What one source declares, with what the files it includes declare (one level, as in
    2.x; the file's own declarations come first, then the includes in order)."""

    def __init__(self, source: SourceFile, included: Sequence[SourceFile] = (), incremental: bool = True) -> None:
        """With ``incremental``, a program of the same file's previous version that shares
        all but a few chunks, whose changed chunks declare the same names in the same order
        and no server, is updated with the changed chunks; else every chunk is read. Both
        give the same program (``tests/migration/test_program_join.py``)."""
        global _LAST
        self.source = source
        self.included = list(included)
        #: The previous version's program this one was updated from, and how many chunks at
        #: the head and the tail the two share (None when every chunk was read).
        self.base: Program | None = None
        self.diff: tuple[int, int] = (0, 0)
        last = _LAST
        if not (incremental and not self.included and last is not None and self._update(last)):
            self._read_all()
        if incremental:
            _LAST = self if not self.included else None
        key = (tuple(self._declaring), tuple(self.flows))
        #: The same object for every version whose agents and tools say the same (in what the
        #: agent facts read, ``_declared``) and with the same flow names: then which names are
        #: agents or flows, and every agent's facts, are the same too.
        self.stamp: tuple[object, ...] = _STAMPS.setdefault(key, key)
        _STAMPS.move_to_end(key)
        while len(_STAMPS) > _STAMP_LIMIT:
            _STAMPS.popitem(last=False)
        self._tools_key: int | None = None  # names the tools and approvals the agent facts depend on
        self._approval_names: set[str] = set()
        self._flow_runs: dict[str, frozenset[str]] = {}
        self._name_sets: list[frozenset[str]] | None = None
        base = self.base
        if base is not None and base.stamp is self.stamp:
            # the same stamp: the same tools, approvals and declared names (``agent_facts``)
            self._tools_key = base._tools_key
            self._approval_names = base._approval_names

    def _read_all(self) -> None:
        self.agents: dict[str, t.AgentDecl] = {}
        self.tools: dict[str, t.ToolDecl] = {}
        self.tool_functions: dict[str, t.ToolFunction] = {}
        self.flows: dict[str, t.FlowDecl] = {}
        self.routed: set[str] = set()
        self._chunk_of: dict[int, ParsedChunk] = {}  # agent and flow declarations -> their chunk
        self._declaring: list[int] = []  # ``_declared`` of the chunks that declare agents or tools
        self._own_declares: list[bool] = []  # per chunk of the source: does it declare agents or tools
        chunks = [(c, False) for inc in reversed(self.included) for c in inc.chunks]
        chunks += [(c, True) for c in self.source.chunks]
        for chunk, own in chunks:
            declares = False
            for item in chunk.items:
                if isinstance(item, t.AgentDecl):
                    self.agents[item.name] = item
                    self._chunk_of[id(item)] = chunk
                    declares = True
                elif isinstance(item, t.FlowDecl):
                    self.flows[item.name] = item
                    self._chunk_of[id(item)] = chunk
                elif isinstance(item, t.ToolDecl):
                    self.tools[item.name] = item
                    declares = True
                elif isinstance(item, t.ToolFunction):
                    self.tool_functions[item.name] = item
                    declares = True
                elif isinstance(item, t.ServerDecl) and own:
                    self.routed.update(handler for route in item.routes for handler, _span in route.handlers)
            if declares:
                self._declaring.append(_DECLARED.get(chunk))
            if own:
                self._own_declares.append(declares)

    def _update(self, last: Program) -> bool:
        """Take ``last``'s tables with the changed chunks swapped in; False when that is not
        possible (see ``__init__``)."""
        if last.included:
            return False
        old, new = last.source.chunks, self.source.chunks
        limit = min(len(old), len(new))
        head = _shared(old, new, limit)
        tail = _shared(old[::-1], new[::-1], limit - head)
        gone, came = old[head : len(old) - tail], new[head : len(new) - tail]
        if len(gone) + len(came) > _JOIN_WINDOW:
            return False
        gone_items = [(item, chunk) for chunk in gone for item in chunk.items if isinstance(item, _DECLS)]
        came_items = [(item, chunk) for chunk in came for item in chunk.items if isinstance(item, _DECLS)]
        if [(type(i), i.name) for i, _c in gone_items] != [(type(i), i.name) for i, _c in came_items]:
            return False
        if any(isinstance(item, t.ServerDecl) for item, _chunk in gone_items):
            return False
        self.agents = dict(last.agents)
        self.tools = dict(last.tools)
        self.tool_functions = dict(last.tool_functions)
        self.flows = dict(last.flows)
        self.routed = set(last.routed)
        self._chunk_of = dict(last._chunk_of)
        for (was, _old_chunk), (item, chunk) in zip(gone_items, came_items, strict=True):
            table: dict[str, Any] = (
                self.agents
                if isinstance(item, t.AgentDecl)
                else self.flows
                if isinstance(item, t.FlowDecl)
                else self.tools
                if isinstance(item, t.ToolDecl)
                else self.tool_functions
            )
            if table[item.name] is was:
                table[item.name] = item
            if isinstance(item, t.AgentDecl | t.FlowDecl):
                del self._chunk_of[id(was)]
                self._chunk_of[id(item)] = chunk
        came_declares = [any(isinstance(i, _DECLARING) for i in chunk.items) for chunk in came]
        flags = last._own_declares
        before, after = sum(flags[:head]), sum(flags[len(flags) - tail :])
        middle = [_DECLARED.get(chunk) for chunk, declares in zip(came, came_declares, strict=True) if declares]
        self._declaring = last._declaring[:before] + middle + last._declaring[len(last._declaring) - after :]
        self._own_declares = flags[:head] + came_declares + flags[len(flags) - tail :]
        self.base = last
        self.diff = (head, tail)
        return True

    def agent_facts(self, agent: str) -> AgentFacts:
        decl = self.agents.get(agent)
        if decl is None:
            return _UNDECLARED
        if self._tools_key is None:
            approval = {name for name, tool in self.tools.items() if tool.approval == "required"} | {
                name for name, function in self.tool_functions.items() if function.requires_approval
            }
            known = frozenset(self.tools) | frozenset(self.tool_functions) | frozenset(self.agents)
            key = (frozenset(approval), tuple(self.tool_functions), known)
            if len(_TOOL_KEYS) > _STAMP_LIMIT:
                _TOOL_KEYS.clear()
            self._tools_key = _TOOL_KEYS.setdefault(key, next(_TOOL_KEY_NUMBERS))
            self._approval_names = approval
        kept = _AGENT_FACTS.get(id(decl))
        if kept is not None and kept[0] is decl and kept[1] == self._tools_key:
            return kept[2]
        names = [u.text for u in decl.uses if u.kind == "name"] if decl.uses else list(self.tool_functions)
        facts = AgentFacts(
            True,
            decl.implements or decl.return_type,
            decl.text_property("memory"),
            tuple(name for name in names if name in self._approval_names),
            all(
                use.kind == "name"
                and (use.text in self.tools or use.text in self.tool_functions or use.text in self.agents)
                for use in decl.uses
            ),
        )
        if len(_AGENT_FACTS) > _FACTS_LIMIT:
            _AGENT_FACTS.clear()
        _AGENT_FACTS[id(decl)] = (decl, self._tools_key, facts)
        return facts

    def share_flow_runs(self, other: Program) -> None:
        """Answer ``flow_runs`` from ``other``'s table: the caller knows both programs have the
        same flows and agents and every flow names the same agents and flows."""
        self._flow_runs = other._flow_runs

    def share_names(self, other: Program) -> None:
        """Answer ``name_taken`` like ``other``: the caller knows the same names are taken."""
        if other._name_sets is not None:
            self._name_sets = other._name_sets

    def name_taken(self, name: str) -> bool:
        """Does the file declare, bind or read ``name`` anywhere?"""
        if self._name_sets is None:
            sources = [self.source, *self.included]
            self._name_sets = [_CHUNK_NAMES.get(chunk) for s in sources for chunk in s.chunks]
        return any(name in names for names in self._name_sets)

    def _summary(self, flow: str) -> FlowSummary:
        decl = self.flows[flow]
        return _FLOW_SUMMARIES.get(self._chunk_of[id(decl)])[flow]

    def flow_runs(self, flow: str) -> frozenset[str]:
        """Agents ``flow`` may run, directly or through the flows it calls (syntactic)."""
        found = self._flow_runs.get(flow)
        if found is not None:
            return found
        if flow not in self.flows:
            return frozenset()
        agents: set[str] = set()
        seen = {flow}
        todo = [flow]
        while todo:
            summary = self._summary(todo.pop())
            agents |= summary.runs
            agents.update(n for n in summary.maybe_agents if n in self.agents)
            for callee in summary.maybe_flows:
                if callee in self.flows and callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        found = frozenset(agents)
        self._flow_runs[flow] = found
        return found

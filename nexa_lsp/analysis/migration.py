"""Migration lints 2.4 -> 3.0 (spec section 4), the static run checks of 3.0 (section 3.3),
and whole-file migration (:func:`migrate_source`).

How a flow is read
------------------
Each executable body (a flow, a test, a job block, a top-level statement) is walked once
in evaluation order with a small abstract state, joined at branches and iterated to a
fixed point around loops:

* ``hist``: for every agent, which of its runs in this body may be the latest one before
  the current point (``_NONE`` = no run yet on some path). This is the history rule of
  spec section 4: a ``.run`` with no earlier run is an independent task (``execute``); a
  ``.run`` whose earlier run is held in a variable ``v`` on every path continues it
  (``continue(v, ...)``); anything else needs a person.
* ``defs``: reaching definitions of every variable, so we know whether ``v`` still holds
  that run, where a run value is read, and which run a ``continue``/``resume`` refers to.
* ``ext``: agents whose 2.4 history other flows may have extended before this point (a
  called flow that runs the agent, a flow called after the agent ran). The spec rule
  still picks the rewrite; those runs only make the rewrite unsafe.

Where a run's value goes decides whether the rewrite means the same thing (spec 3.1:
where text is expected a run stands for its output). Each use gets a context: discarded,
text (print, interpolation, pipelines, an agent's input), a run member (``r.output``), a
binding (then that variable's uses count), or a value use (comparison, ``+``, a function
argument, a condition ...). A value use of a variable that holds a run on every path is
rewritten to ``v.output`` as part of the fix (exactly the 2.4 text); anything that cannot
be rewritten, or where 2.4 and 3.0 differ in other ways (errors are raised by a 2.4 run but
are a status of a 3.0 run; protocol objects; approvals that start to apply), makes the fix
unsafe: offered, labelled, never applied by fix-all, ``--fix`` or ``--migrate``.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from nexa_lsp.analysis.migration_codes import MIGRATION_CODES, migration_severity
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.source import SourceFile, parse_source
from nexa_lsp.syntax.tree import Anchor, Span, absolute_span
from nexa_lsp.syntax.version import VersionPath

__all__ = ["MigrationResult", "migrate_source", "migration_diagnostics"]

_NONE = 0  # "no run yet" in a history set, "not assigned" in a definition set
_LOOP_LIMIT = 12

#: Members of a 3.0 run value (spec 3.1).
RUN_MEMBERS = frozenset({"output", "status", "success", "settled", "run_id", "session_id", "parent_run_id", "usage"})
_SETTLED_STATUSES = frozenset({"completed", "failed", "cancelled", "timed_out", "budget_exhausted"})
#: The 2.x human-in-the-loop helpers a flow can call (runtime notes, section 7).
HITL_HELPERS = frozenset({"wait_for_human", "approve_request", "reject_request", "ask_human"})
_HARNESS_SKIP = frozenset({"autoloop", "with_context", "try_agent"})
_HOOKS = frozenset({"before_step", "after_step", "on_error", "before_tool", "after_tool"})
_DAG_OPERATORS = frozenset({">>", "|>>", "||", "&>>", "&&"})
_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})

_RUN_WORD = re.compile(r"\s*\.\s*(run)\b")
_OPEN_PAREN = re.compile(r"\s*\(")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TEMPLATE_REF = re.compile(r"\{\{\{?\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\}?\}\}|[^}]*\}\})")

_ERR_PROPAGATE = (
    "`?` propagated a failed 2.4 run as an error; a failed 3.0 run is a value whose status is "
    "`failed`, nothing is raised"
)
_ERR_OTHERWISE = (
    "`otherwise` handled a failed 2.4 run; a failed 3.0 run is a value whose status is `failed`, "
    "so the handler would never run"
)
_ERR_FALLBACK = (
    "`fallback` ran its right side when the 2.4 run raised; a failed 3.0 run raises nothing, so "
    "the fallback would never run"
)
_ERR_TRY = (
    "it is inside `try`: a failed 2.4 run raised an error that `catch` handled; a failed 3.0 run is a "
    "value whose status is `failed`, nothing is raised"
)
_ERR_TRY_AGENT = "it is inside `try_agent`: its corrections react to errors a 3.0 run no longer raises"


# ----------------------------------------------------------------------------- abstract state


@dataclass(frozen=True, slots=True)
class _Ctx:
    """Where a value goes. ``kind``: discard | text | run (a run entry's run argument) |
    member (``v.name``) | bind (assigned: ``def_id``) | value (any other use: ``reason``;
    ``rewritable`` when ``.output`` gives exactly the 2.4 text there)."""

    kind: str
    reason: str = ""
    def_id: int = 0
    direct: bool = False
    rewritable: bool = False

    def indirect(self) -> _Ctx:
        return _Ctx(self.kind, self.reason, self.def_id, False, self.rewritable) if self.direct else self


_DISCARD = _Ctx("discard")
_TEXT = _Ctx("text")
_RUN_ARG = _Ctx("run")


def _value(reason: str, rewritable: bool = True) -> _Ctx:
    return _Ctx("value", reason, rewritable=rewritable)


class _State:
    """Reaching definitions, possible latest runs per agent, externally touched agents."""

    __slots__ = ("defs", "ext", "hist")

    def __init__(
        self,
        defs: dict[str, frozenset[int]],
        hist: dict[str, frozenset[int]],
        ext: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        self.defs = defs
        self.hist = hist
        self.ext = ext

    def reaching(self, name: str) -> frozenset[int]:
        return self.defs.get(name, frozenset({_NONE}))

    def history(self, agent: str) -> frozenset[int]:
        return self.hist.get(agent, frozenset({_NONE}))

    def define(self, name: str, def_id: int) -> _State:
        defs = dict(self.defs)
        defs[name] = frozenset({def_id})
        return _State(defs, self.hist, self.ext)

    def ran(self, agent: str, site_id: int) -> _State:
        hist = dict(self.hist)
        hist[agent] = frozenset({site_id})
        return _State(self.defs, hist, self.ext)

    def touched(self, items: Iterable[tuple[str, str]]) -> _State:
        return _State(self.defs, self.hist, self.ext | frozenset(items))

    def ran_agents(self) -> set[str]:
        return {a for a, runs in self.hist.items() if runs != frozenset({_NONE})} | {a for a, _ in self.ext}

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _State) and self.defs == other.defs and self.hist == other.hist and self.ext == other.ext
        )


_Body = Callable[[_State], _State]


def _join(a: _State | None, b: _State | None) -> _State | None:
    if a is None:
        return b
    if b is None or a is b:
        return a

    def merge(x: dict[str, frozenset[int]], y: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
        out: dict[str, frozenset[int]] = {}
        for key in x.keys() | y.keys():
            out[key] = x.get(key, frozenset({_NONE})) | y.get(key, frozenset({_NONE}))
        return out

    return _State(merge(a.defs, b.defs), merge(a.hist, b.hist), a.ext | b.ext)


def _join_all(states: Iterable[_State | None]) -> _State | None:
    out: _State | None = None
    for st in states:
        out = _join(out, st)
    return out


@dataclass(frozen=True, slots=True)
class _Guard:
    condition: t.Condition
    branch: str  # "then" | "else"


@dataclass(eq=False, slots=True)
class _Unit:
    label: str
    flow: str | None = None


@dataclass(eq=False)
class _Site:
    """One run of an agent: an entry call, a `x |> A.run` pipe, or an implicit run
    (the agent as a pipeline stage, or runs inside a called flow)."""

    id: int
    agent: str
    kind: str  # run | run_member | execute | continue | resume | implicit
    node: t.Node
    unit: _Unit
    receiver: t.Expr | None = None
    call: t.Call | None = None
    piped: t.Expr | None = None
    history: frozenset[int] = frozenset()
    defs_at: dict[str, frozenset[int]] = field(default_factory=dict)
    ext: frozenset[tuple[str, str]] = frozenset()
    ctx: _Ctx = _DISCARD
    err: str | None = None
    in_try: str | None = None
    in_defer: bool = False
    in_hook: bool = False
    in_loop: bool = False
    guards: tuple[_Guard, ...] = ()
    stmt: t.Stmt | None = None
    bound_def: int | None = None
    expr_stmt: t.ExprStmt | None = None


@dataclass(eq=False, slots=True)
class _Def:
    id: int
    name: str
    offset: int
    site: _Site | None = None


@dataclass(eq=False, slots=True)
class _Use:
    name: str
    defs: frozenset[int]
    ctx: _Ctx
    start: int
    end: int


@dataclass(eq=False, slots=True)
class _FlowCall:
    flow: str
    offset: int
    ctx: _Ctx
    ran_before: frozenset[str]
    in_loop: bool


# ----------------------------------------------------------------------------- findings


@dataclass(eq=False)
class _Finding:
    code: str
    message: str
    start: int
    end: int
    fixes: list[Fix] = field(default_factory=list)  # the first is the planned rewrite (safe or not)
    unnecessary: bool = False
    related: list[Related] = field(default_factory=list)

    @property
    def blocks(self) -> bool:
        """True when the finding is an error on the 3.0 path and has no safe rewrite."""
        if MIGRATION_CODES[self.code].severity is not Severity.ERROR:
            return False
        return not (self.fixes and self.fixes[0].safe)


@dataclass(eq=False)
class _Analysis:
    source: SourceFile
    findings: list[_Finding]
    notes: list[str]
    too_deep: bool = False


def _agent_snake(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return re.sub(r"[^a-z0-9_]", "_", out) or "agent"


class _Analyzer:
    """Walks every executable body of one source and turns what it sees into findings."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.text = source.text
        self.path = source.path
        items = source.items
        self.agents: dict[str, t.AgentDecl] = {i.name: i for i in items if isinstance(i, t.AgentDecl)}
        self.tools: dict[str, t.ToolDecl] = {i.name: i for i in items if isinstance(i, t.ToolDecl)}
        self.tool_functions: dict[str, t.ToolFunction] = {i.name: i for i in items if isinstance(i, t.ToolFunction)}
        self.flows: dict[str, t.FlowDecl] = {i.name: i for i in items if isinstance(i, t.FlowDecl)}
        self._next_id = 1
        self.sites: dict[int, _Site] = {}
        self.site_by_id: dict[int, _Site] = {}
        self.defs: dict[int, _Def] = {}
        self._def_keys: dict[tuple[int, str], int] = {}
        self.uses: dict[tuple[int, int], _Use] = {}
        self.hitl: dict[int, tuple[t.Call, str, _Unit]] = {}
        self.member_runs: dict[int, tuple[t.Member, _Unit]] = {}
        self.flow_calls: dict[int, _FlowCall] = {}
        self.returned: dict[int, str] = {}
        self.flow_runs = self._flow_runs()
        self.entry_ext: dict[str, frozenset[tuple[str, str]]] = {}
        # walk context
        self._unit = _Unit("")
        self._stmt: t.Stmt | None = None
        self._guards: list[_Guard] = []
        self._loops: list[list[_State]] = []
        self._collectors: list[list[_State]] = []
        self._try: list[str] = []
        self._defer = 0
        self._hook = 0

    # ------------------------------------------------------------------ small helpers

    def _new_id(self) -> int:
        value = self._next_id
        self._next_id += 1
        return value

    def line(self, offset: int) -> int:
        return self.source.lines.line_of(offset) + 1

    def snippet(self, node: t.Node) -> str:
        return self.text[node.span.start : node.span.end]

    def _def_for(self, node: object, name: str, offset: int) -> _Def:
        key = (id(node), name)
        def_id = self._def_keys.get(key)
        if def_id is None:
            def_id = self._new_id()
            self._def_keys[key] = def_id
            self.defs[def_id] = _Def(def_id, name, offset)
        return self.defs[def_id]

    def _bind_names(self, st: _State, node: object, names: Iterable[tuple[str, int]]) -> _State:
        for name, offset in names:
            st = st.define(name, self._def_for(node, name, offset).id)
        return st

    def approval_tools(self, agent: str) -> list[str]:
        """Tools of ``agent`` (declared in this file) that require approval on the 3.0 path."""
        decl = self.agents.get(agent)
        if decl is None:
            return []
        names = [u.text for u in decl.uses if u.kind == "name"] if decl.uses else list(self.tool_functions)
        out = []
        for name in names:
            tool = self.tools.get(name)
            function = self.tool_functions.get(name)
            if (tool is not None and tool.approval == "required") or (
                function is not None and function.requires_approval
            ):
                out.append(name)
        return out

    def tools_all_known(self, agent: str) -> bool:
        """True when every tool of ``agent`` is declared in this file (so its approvals are known)."""
        decl = self.agents.get(agent)
        if decl is None:
            return False
        for use in decl.uses:
            if use.kind != "name" or not (
                use.text in self.tools or use.text in self.tool_functions or use.text in self.agents
            ):
                return False
        return True

    def _flow_runs(self) -> dict[str, set[str]]:
        """Agents each flow may run, directly or through the flows it calls (syntactic)."""
        direct: dict[str, set[str]] = {}
        calls: dict[str, set[str]] = {}
        for name, flow in self.flows.items():
            agents: set[str] = set()
            called: set[str] = set()
            for node in t.walk(flow.body) if flow.body is not None else ():
                if isinstance(node, t.Call):
                    receiver = node.receiver_name
                    if node.run_entry is not None and receiver is not None:
                        agents.add(receiver.id)
                    fn = node.function_name
                    if fn is not None and fn.id in self.flows:
                        called.add(fn.id)
                elif isinstance(node, t.Name) and node.id in self.agents:
                    agents.add(node.id)
                elif isinstance(node, t.Member) and node.name == "run" and isinstance(node.obj, t.Name):
                    agents.add(node.obj.id)
            direct[name] = agents
            calls[name] = called
        closed = {name: set(agents) for name, agents in direct.items()}
        changed = True
        while changed:
            changed = False
            for name, called in calls.items():
                for callee in called:
                    extra = closed.get(callee, set()) - closed[name]
                    if extra:
                        closed[name] |= extra
                        changed = True
        return closed

    # ------------------------------------------------------------------ units

    def run(self) -> None:
        units = list(self._units())
        for _round in range(4):
            self.flow_calls.clear()
            for unit, body, params in units:
                self._walk_unit(unit, body, params)
            new_entry = self._entry_ext()
            if new_entry == self.entry_ext:
                break
            self.entry_ext = new_entry

    def _units(self) -> Iterator[tuple[_Unit, list[t.Stmt], list[t.Param]]]:
        for item in self.source.items:
            if isinstance(item, t.FlowDecl) and item.body is not None:
                yield _Unit(f"flow `{item.name}`", item.name), item.body.statements, list(item.params or [])
            elif isinstance(item, t.TestDecl) and item.body is not None:
                yield _Unit(f'test "{item.name}"'), item.body.statements, []
            elif isinstance(item, t.JobDecl):
                if item.perform is not None:
                    yield _Unit(f"job `{item.name}`"), item.perform.statements, []
                if item.on_failure is not None:
                    yield _Unit(f"job `{item.name}` (on_failure)"), item.on_failure.statements, []
            elif isinstance(item, t.ToolFunction) and item.body is not None:
                yield _Unit(f"tool `{item.name}`"), item.body.statements, list(item.params)
            elif isinstance(item, t.AdtDecl):
                for member in item.members:
                    if member.body is not None:
                        yield _Unit(f"method `{member.name}`"), member.body.statements, list(member.params)
            elif isinstance(item, t.TopLevelStatement) and item.statement is not None:
                yield _Unit("top-level statement"), [item.statement], []

    def _entry_ext(self) -> dict[str, frozenset[tuple[str, str]]]:
        """Agents whose 2.4 history may already hold turns when each flow starts."""
        by_flow: dict[str, list[_FlowCall]] = {}
        for call in self.flow_calls.values():
            by_flow.setdefault(call.flow, []).append(call)
        routed = {
            h
            for item in self.source.items
            if isinstance(item, t.ServerDecl)
            for route in item.routes
            for h, _span in route.handlers
        }
        out: dict[str, frozenset[tuple[str, str]]] = {}
        for flow, calls in by_flow.items():
            items: set[tuple[str, str]] = set()
            for call in calls:
                for agent in call.ran_before:
                    items.add((agent, f"flow `{flow}` is called on line {self.line(call.offset)} after {agent} ran"))
            if len(calls) > 1 or any(c.in_loop for c in calls) or flow in routed:
                why = "handles a server route" if flow in routed else "is called more than once"
                for agent in self.flow_runs.get(flow, ()):
                    items.add((agent, f"flow `{flow}` {why}, so its earlier runs of {agent} come first"))
            out[flow] = frozenset(items)
        for flow in routed:
            if flow in self.flows and flow not in out:
                out[flow] = frozenset(
                    (a, f"flow `{flow}` handles a server route, so its earlier runs of {a} come first")
                    for a in self.flow_runs.get(flow, ())
                )
        return out

    def _walk_unit(self, unit: _Unit, statements: list[t.Stmt], params: list[t.Param]) -> None:
        self._unit = unit
        self._guards, self._loops, self._collectors, self._try = [], [], [], []
        self._defer = self._hook = 0
        st = _State({}, {}, self.entry_ext.get(unit.flow or "", frozenset()))
        st = self._bind_names(st, unit, [(p.name, p.name_span.start) for p in params])
        for stmt in statements:
            st = self.stmt(stmt, st)
        if unit.flow is not None:
            target = self._return_target(statements)
            for def_id in st.reaching(target):
                definition = self.defs.get(def_id)
                if definition is not None and definition.site is not None:
                    self.returned[def_id] = unit.flow

    @staticmethod
    def _return_target(statements: list[t.Stmt]) -> str:
        """The variable a 2.x flow returns: its last top-level assignment (syntax reference 4.6)."""
        for stmt in reversed(statements):
            if isinstance(stmt, t.ExprStmt | t.Print) or (
                isinstance(stmt, t.BlockStmt) and stmt.keyword in _HARNESS_SKIP
            ):
                continue
            if isinstance(stmt, t.Assign) and stmt.target_name is not None:
                return stmt.target_name.id
            break
        return "result"

    # ------------------------------------------------------------------ statements

    def block(self, block: t.Block | None, st: _State) -> _State:
        if block is None:
            return st
        for stmt in block.statements:
            st = self.stmt(stmt, st)
        return st

    def stmt(self, stmt: t.Stmt, st: _State) -> _State:
        previous = self._stmt
        self._stmt = stmt
        try:
            st = self._stmt_inner(stmt, st)
        finally:
            self._stmt = previous
        for collector in self._collectors:
            collector.append(st)
        return st

    def _stmt_inner(self, s: t.Stmt, st: _State) -> _State:
        if isinstance(s, t.Assign):
            return self._assign(s, st)
        if isinstance(s, t.ExprStmt):
            st = self.expr(s.expr, st, _DISCARD, _ERR_PROPAGATE if s.propagate else None)
            site = self.sites.get(id(s.expr))
            if site is not None and not s.propagate:
                site.expr_stmt = s
            return st
        if isinstance(s, t.Print):
            for arg in s.args:
                st = self.expr(arg.value, st, _TEXT)
            return st
        if isinstance(s, t.If):
            return self._if(s, st)
        if isinstance(s, t.ForEach):
            st = self.expr(s.iterable, st, _value("iterated by `for each`"))
            names = [(s.item, s.item_span.start)] + (
                [(s.index, s.index_span.start)] if s.index and s.index_span else []
            )
            return self._loop(st, lambda h: self.block(s.body, self._bind_names(h, s, names)))
        if isinstance(s, t.ForPattern):
            st = self.expr(s.iterable, st, _value("iterated by `for`", rewritable=False))
            names = [(n, sp.start) for n, sp in s.pattern.bound_names()]
            return self._loop(st, lambda h: self.block(s.body, self._bind_names(h, s, names)))
        if isinstance(s, t.While):
            return self._while(s, st)
        if isinstance(s, t.Loop):
            return self._loop(
                st, lambda h: self._condition(s.until, self.block(s.body, h), "tested by `until`"), at_least_once=True
            )
        if isinstance(s, t.Jump):
            if self._loops:
                self._loops[-1].append(st)
            return st
        if isinstance(s, t.SemanticIf):
            st = self.expr(s.target, st, _TEXT)
            then = self.block(s.then, st)
            other = self.block(s.otherwise, st) if s.otherwise is not None else st
            return _join(then, other) or st
        if isinstance(s, t.Let):
            if s.pattern.kind == "name" and s.pattern.name is not None:
                definition = self._def_for(s, s.pattern.name, s.pattern.span.start)
                st = self.expr(s.value, st, _Ctx("bind", def_id=definition.id, direct=True))
                return st.define(definition.name, definition.id)
            st = self.expr(s.value, st, _value("destructured by `let`", rewritable=False))
            return self._bind_names(st, s, [(n, sp.start) for n, sp in s.pattern.bound_names()])
        if isinstance(s, t.Try):
            return self._try_block(s.body, [(s.handler, [(s.error_name, s.error_span.start)])], st, _ERR_TRY, s)
        if isinstance(s, t.PythonBlock):
            for index, word in enumerate(sorted(set(_WORD.findall(s.code)))):
                if word in st.defs:
                    self.uses[(id(s), index)] = _Use(
                        word,
                        st.reaching(word),
                        _value("read by `python!` code", rewritable=False),
                        s.span.start,
                        s.span.start,
                    )
            return st
        if isinstance(s, t.KeywordStmt):
            return self._keyword(s, st)
        if isinstance(s, t.BlockStmt):
            return self._block_stmt(s, st)
        return st

    def _assign(self, s: t.Assign, st: _State) -> _State:
        target = s.target_name
        err = _ERR_PROPAGATE if s.tail == "propagate" else _ERR_OTHERWISE if s.tail == "otherwise" else None
        if target is None:
            st = self.expr(s.target, st, _value("assigned to a member", rewritable=False))
            return self.expr(s.value, st, _value("stored in a member or index", rewritable=False), err)
        definition = self._def_for(s, target.id, target.span.start)
        ctx = _Ctx("bind", def_id=definition.id, direct=True)
        st = self.expr(s.value, st, ctx, err)
        if s.tail == "otherwise" and s.handler is not None:
            if isinstance(s.handler, t.Block):
                alt = self.block(s.handler, st)
            else:
                alt = self.expr(s.handler, st, ctx.indirect())
            st = _join(st, alt) or st
        return st.define(target.id, definition.id)

    def _if(self, s: t.If, st: _State) -> _State:
        st = self._condition(s.condition, st, "tested in an `if` condition")
        self._guards.append(_Guard(s.condition, "then"))
        then = self.block(s.then, st)
        self._guards[-1] = _Guard(s.condition, "else")
        if isinstance(s.otherwise, t.If):
            other = self._if(s.otherwise, st)
        elif s.otherwise is not None:
            other = self.block(s.otherwise, st)
        else:
            other = st
        self._guards.pop()
        return _join(then, other) or st

    def _while(self, s: t.While, st: _State) -> _State:
        exits: list[_State] = []

        def body(head: _State) -> _State:
            tested = self._condition(s.condition, head, "tested in a `while` condition")
            exits.append(tested)
            self._guards.append(_Guard(s.condition, "then"))
            try:
                return self.block(s.body, tested)
            finally:
                self._guards.pop()

        out = self._loop(st, body)
        return _join_all([out, *exits[-1:]]) or out

    def _loop(self, st: _State, body: _Body, at_least_once: bool = False) -> _State:
        """Iterate ``body`` to a fixed point; the result joins every way out of the loop."""
        jumps: list[_State] = []
        self._loops.append(jumps)
        head = st
        out = st
        try:
            for _ in range(_LOOP_LIMIT):
                jumps.clear()
                out = body(head)
                new_head = _join_all([head, out, *jumps]) or head
                if new_head == head:
                    break
                head = new_head
        finally:
            self._loops.pop()
        ways_out = [out, *jumps] if at_least_once else [head, out, *jumps]
        return _join_all(ways_out) or st

    def _try_block(
        self, body: t.Block, handlers: list[tuple[t.Block, list[tuple[str, int]]]], st: _State, why: str, node: object
    ) -> _State:
        collected: list[_State] = [st]
        self._collectors.append(collected)
        self._try.append(why)
        try:
            out = self.block(body, st)
        finally:
            self._try.pop()
            self._collectors.pop()
        start = _join_all(collected) or st
        results = [out]
        for handler, names in handlers:
            results.append(self.block(handler, self._bind_names(start, node, names)))
        return _join_all(results) or out

    def _keyword(self, s: t.KeywordStmt, st: _State) -> _State:
        if s.keyword == "defer":
            self._defer += 1
            try:
                for e in s.exprs:
                    st = self.expr(e, st, _DISCARD)
            finally:
                self._defer -= 1
            return st
        reasons = {"assert": "asserted", "verify": "checked by `verify`", "pass": "sent to an actor with `pass`"}
        ctx = _value(reasons.get(s.keyword, f"used by `{s.keyword}`"), rewritable=s.keyword == "assert")
        for e in s.exprs:
            st = self.expr(e, st, ctx)
        return st

    def _block_stmt(self, s: t.BlockStmt, st: _State) -> _State:
        names = [(n, sp.start) for n, sp in s.names]
        if s.keyword == "autoloop":
            return self._loop(st, lambda h: self.block(s.blocks[0] if s.blocks else None, h), at_least_once=True)
        if s.keyword == "try_agent" and s.blocks:
            return self._try_block(s.blocks[0], [(b, names) for b in s.blocks[1:]], st, _ERR_TRY_AGENT, s)
        if s.keyword == "fork":
            for e in s.exprs:
                st = self.expr(e, st, _value("merged by `fork`", rewritable=False))
            return self._bind_names(st, s, names)
        if s.keyword in _HOOKS:
            self._hook += 1
            try:
                return self._loop(st, lambda h: self._seq(s.blocks, self._bind_names(h, s, names)))
            finally:
                self._hook -= 1
        return self._seq(s.blocks, st)

    def _seq(self, blocks: list[t.Block], st: _State) -> _State:
        for b in blocks:
            st = self.block(b, st)
        return st

    def _condition(self, cond: t.Condition, st: _State, why: str) -> _State:
        for part in cond.parts:
            st = self.expr(part, st, _value(why))
        return st

    # ------------------------------------------------------------------ expressions

    def expr(self, e: t.Expr, st: _State, ctx: _Ctx, err: str | None = None) -> _State:
        if isinstance(e, t.Name):
            self.uses[(id(e), 0)] = _Use(e.id, st.reaching(e.id), ctx, e.span.start, e.span.end)
            return st
        if isinstance(e, t.StringLit):
            for index, interp in enumerate(e.interpolations):
                use_ctx = (
                    _TEXT
                    if interp.path == interp.root
                    else (
                        _Ctx("member", interp.path[len(interp.root) + 1 :])
                        if interp.path[len(interp.root) :][:1] == "."
                        and interp.path[len(interp.root) + 1 :] in RUN_MEMBERS
                        else _value(f"read as `#{{{interp.path}}}`", rewritable=False)
                    )
                )
                start = interp.span.start + (len(interp.path) - len(interp.path.lstrip()))
                self.uses[(id(e), index)] = _Use(interp.root, st.reaching(interp.root), use_ctx, start, start)
            return st
        if isinstance(e, t.TemplateLit):
            for index, match in enumerate(_TEMPLATE_REF.finditer(e.body)):
                name = match.group(1)
                simple = match.group(2).strip() in ("}}", "}}}")
                use_ctx = _TEXT if simple else _value("used by a template expression", rewritable=False)
                self.uses[(id(e), index)] = _Use(name, st.reaching(name), use_ctx, e.span.start, e.span.start)
            return st
        if isinstance(e, t.Call):
            return self._call(e, st, ctx, err)
        if isinstance(e, t.Member):
            if e.name == "run":
                self.member_runs[id(e)] = (e, self._unit)
                return st
            if isinstance(e.obj, t.Name):
                inner = (
                    _Ctx("member", e.name)
                    if e.name in RUN_MEMBERS
                    else _value(f"read as `.{e.name}`", rewritable=False)
                )
                return self.expr(e.obj, st, inner)
            return self.expr(e.obj, st, _value(f"read as `.{e.name}`", rewritable=False))
        if isinstance(e, t.Index):
            st = self.expr(e.obj, st, _value("indexed"))
            return self.expr(e.index, st, _value("used as an index"))
        if isinstance(e, t.VariantRef):
            return self.expr(e.obj, st, _value("used with `::`", rewritable=False))
        if isinstance(e, t.BinaryOp):
            return self._binary(e, st, ctx, err)
        if isinstance(e, t.Negate):
            return self.expr(e.operand, st, _value("negated"))
        if isinstance(e, t.BranchOp):
            st = self.expr(e.condition, st, _value("tested by `?? :`"))
            return _join(self.expr(e.then, st, ctx.indirect()), self.expr(e.otherwise, st, ctx.indirect())) or st
        if isinstance(e, t.CaseBranch | t.SemanticIfExpr):
            st = self.expr(e.subject, st, _TEXT)
            arms = [self.expr(arm.value, st, ctx.indirect()) for arm in e.cases]
            return _join_all([st, *arms]) or st
        if isinstance(e, t.BracketList | t.Parenthesized):
            for item in e.items:
                st = self.expr(item, st, _value("put in brackets", rewritable=False))
            return st
        if isinstance(e, t.MatchExpr):
            return self._match(e, st, ctx)
        if isinstance(e, t.SpecialExpr):
            for arg in e.args:
                st = self.expr(arg.value, st, _value(f"passed to `{e.kind}`", rewritable=False))
            return st
        return st

    def _match(self, e: t.MatchExpr, st: _State, ctx: _Ctx) -> _State:
        by_intent = all(
            arm.intent is not None or (arm.pattern is not None and arm.pattern.kind == "wildcard") for arm in e.arms
        )
        st = self.expr(e.subject, st, _TEXT if by_intent else _value("matched against patterns"))
        outs: list[_State | None] = [st]
        for arm in e.arms:
            arm_st = st
            if arm.pattern is not None:
                arm_st = self._bind_names(arm_st, arm, [(n, sp.start) for n, sp in arm.pattern.bound_names()])
            if arm.guard is not None:
                arm_st = self.expr(arm.guard, arm_st, _value("tested by a match guard"))
            if isinstance(arm.body, t.Block):
                outs.append(self.block(arm.body, arm_st))
            else:
                outs.append(self.expr(arm.body, arm_st, ctx.indirect()))
        return _join_all(outs) or st

    def _binary(self, e: t.BinaryOp, st: _State, ctx: _Ctx, err: str | None) -> _State:
        op = e.op
        if op in _DAG_OPERATORS:
            st = self._pipeline_input(e.left, st) if op in (">>", "|>>", "||") else self._stage(e.left, st)
            return self._stage(e.right, st)
        if op == "|>":
            return self._pipe(e, st, ctx, err)
        if op == "??":
            st = self.expr(e.left, st, ctx.indirect(), err)
            return _join(st, self.expr(e.right, st, ctx.indirect())) or st
        if op == "fallback":
            st = self.expr(e.left, st, ctx.indirect(), _ERR_FALLBACK)
            return _join(st, self.expr(e.right, st, ctx.indirect())) or st
        if op in _COMPARISONS:
            why = f"compared with `{op}`"
        elif op == "+":
            why = "joined with `+`"
        else:
            why = f"used with `{op}`"
        st = self.expr(e.left, st, _value(why))
        return self.expr(e.right, st, _value(why))

    def _pipeline_input(self, e: t.Expr, st: _State) -> _State:
        if isinstance(e, t.BracketList):
            return self._stage(e, st)
        return self.expr(e, st, _TEXT)

    def _stage(self, e: t.Expr, st: _State) -> _State:
        """An operand of `>>` or a DAG operator in stage position: agents named there run."""
        if isinstance(e, t.Name) and e.id in self.agents:
            return self._implicit(e, e.id, st)
        if isinstance(e, t.BracketList):
            for item in e.items:
                st = self._stage(item, st)
            return st
        if isinstance(e, t.BinaryOp) and e.op in _DAG_OPERATORS:
            return self._binary(e, st, _TEXT, None)
        if isinstance(e, t.Call) and e.run_entry is not None:
            return self.expr(e, st, _value("used as a pipeline stage", rewritable=False))
        return self.expr(e, st, _TEXT)

    def _pipe(self, e: t.BinaryOp, st: _State, ctx: _Ctx, err: str | None) -> _State:
        right = e.right
        if isinstance(right, t.Member) and right.name == "run":
            st = self.expr(e.left, st, _TEXT)
            agent = right.obj.id if isinstance(right.obj, t.Name) else self.snippet(right.obj)
            return self._run_site(e, agent, "run_member", right.obj, None, st, ctx, err, piped=e.left)
        if isinstance(right, t.Call) and right.run_entry is not None:
            st = self.expr(e.left, st, _TEXT)
            return self._call(right, st, ctx, err, piped=e.left)
        if isinstance(right, t.Name) and right.id in self.agents:
            st = self.expr(e.left, st, _TEXT)
            return self._implicit(right, right.id, st)
        target = self._callable_name(right)
        st = self.expr(e.left, st, _value(f"piped into `{target}`"))
        if isinstance(right, t.Call):
            return self._call(right, st, _DISCARD, None)
        if isinstance(right, t.Member):
            return self.expr(right.obj, st, _DISCARD)
        return st

    def _callable_name(self, e: t.Expr) -> str:
        if isinstance(e, t.Call):
            return self._callable_name(e.callee)
        if isinstance(e, t.Name | t.Member):
            return self.snippet(e)
        return "a function"

    def _call(self, e: t.Call, st: _State, ctx: _Ctx, err: str | None, piped: t.Expr | None = None) -> _State:
        entry = e.run_entry
        callee = e.callee
        if entry is not None and isinstance(callee, t.Member):
            for index, arg in enumerate(e.args):
                arg_ctx = _RUN_ARG if entry in ("continue", "resume") and index == 0 and piped is None else _TEXT
                st = self.expr(arg.value, st, arg_ctx)
            agent = callee.obj.id if isinstance(callee.obj, t.Name) else self.snippet(callee.obj)
            if not isinstance(callee.obj, t.Name):
                st = self.expr(callee.obj, st, _DISCARD)
            return self._run_site(e, agent, entry, callee.obj, e, st, ctx, err, piped=piped)
        name = self._callable_name(callee)
        method = callee.name if isinstance(callee, t.Member) else callee.id if isinstance(callee, t.Name) else ""
        if method in HITL_HELPERS:
            self.hitl[id(e)] = (e, method, self._unit)
        if isinstance(callee, t.Name) and callee.id == "join":
            for arg in e.args:
                st = self._stage(arg.value, st)
            return st
        if (
            isinstance(callee, t.Member)
            and isinstance(callee.obj, t.Call)
            and isinstance(callee.obj.callee, t.Name)
            and callee.obj.callee.id == "join"
        ):
            st = self._call(callee.obj, st, _TEXT, None)
            for arg in e.args:
                st = self.expr(arg.value, st, _TEXT)
            return self._implicit(e, callee.name, st)
        is_print = isinstance(callee, t.Name) and callee.id == "print"
        arg_ctx = _TEXT if is_print else _value(f"passed to `{name}(...)`")
        if isinstance(callee, t.Member):
            st = self.expr(callee.obj, st, _value(f"used to call `.{callee.name}(...)`", rewritable=False))
        for arg in e.args:
            st = self.expr(arg.value, st, arg_ctx)
        if isinstance(callee, t.Name) and callee.id in self.flows:
            runs = self.flow_runs.get(callee.id, set())
            self.flow_calls[id(e)] = _FlowCall(
                callee.id, e.span.start, ctx, frozenset(st.ran_agents()), bool(self._loops)
            )
            line = self.line(e.span.start)
            st = st.touched((a, f"flow `{callee.id}` (called on line {line}) runs {a}") for a in runs)
        return st

    def _implicit(self, node: t.Node, agent: str, st: _State) -> _State:
        site = self.sites.get(id(node))
        if site is None:
            site = _Site(self._new_id(), agent, "implicit", node, self._unit)
            self.sites[id(node)] = site
            self.site_by_id[site.id] = site
        site.history = st.history(agent)
        return st.ran(agent, site.id)

    def _run_site(
        self,
        node: t.Node,
        agent: str,
        kind: str,
        receiver: t.Expr,
        call: t.Call | None,
        st: _State,
        ctx: _Ctx,
        err: str | None,
        piped: t.Expr | None = None,
    ) -> _State:
        site = self.sites.get(id(node))
        if site is None:
            site = _Site(self._new_id(), agent, kind, node, self._unit, receiver, call, piped)
            self.sites[id(node)] = site
            self.site_by_id[site.id] = site
        site.history = st.history(agent)
        site.defs_at = st.defs
        site.ext = frozenset(item for item in st.ext if item[0] == agent)
        site.ctx = ctx
        site.err = err
        site.in_try = self._try[-1] if self._try else None
        site.in_defer = self._defer > 0
        site.in_hook = self._hook > 0
        site.in_loop = bool(self._loops)
        site.guards = tuple(self._guards)
        site.stmt = self._stmt
        if ctx.kind == "bind" and ctx.direct and err is not _ERR_OTHERWISE:
            site.bound_def = ctx.def_id
            self.defs[ctx.def_id].site = site
        return st.ran(agent, site.id)


# ----------------------------------------------------------------------------- turning sites into findings


class _Findings:
    """Builds the findings of one analysed source (path-independent; fixes are planned)."""

    def __init__(self, analyzer: _Analyzer) -> None:
        self.a = analyzer
        self.text = analyzer.text
        self.path = analyzer.path
        self.uses_by_def: dict[int, list[_Use]] = {}
        for use in analyzer.uses.values():
            for def_id in use.defs:
                self.uses_by_def.setdefault(def_id, []).append(use)
        self.flow_calls: dict[str, list[_FlowCall]] = {}
        for call in analyzer.flow_calls.values():
            self.flow_calls.setdefault(call.flow, []).append(call)
        self.names_in_file = {m.group(0) for m in _WORD.finditer(self.text)}
        self.findings: list[_Finding] = []
        self.notes: list[str] = []

    def build(self) -> _Analysis:
        a = self.a
        for site in sorted(a.sites.values(), key=lambda s: s.node.span.start):
            if site.kind in ("run", "run_member"):
                self.findings.append(self._run_finding(site))
            elif self.path is VersionPath.NEXA_30 and site.kind in ("continue", "resume"):
                self.findings.extend(self._entry_checks(site))
        for member, _unit in a.member_runs.values():
            agent = self.a.snippet(member.obj)
            self.findings.append(
                _Finding(
                    "NXM006",
                    f"`{agent}.run` is used without calling it: Nexa 3.0 removes `.run`; call the entry you mean "
                    f"explicitly, `{agent}.execute(...)` for an independent task or `{agent}.continue(r, ...)` for "
                    "the next turn of run `r`",
                    member.span.start,
                    member.span.end,
                )
            )
        for call, helper, unit in a.hitl.values():
            self.findings.append(self._hitl_finding(call, helper, unit))
        if self.path is VersionPath.COMPAT_24:
            self._approval_findings()
        else:
            for tool in self._approval_tool_names():
                self.notes.append(tool)
        self.findings.sort(key=lambda f: (f.start, f.end, f.code))
        return _Analysis(a.source, self.findings, self.notes)

    # ------------------------------------------------------------------ run values

    def _all_runs(self, defs: frozenset[int]) -> bool:
        for def_id in defs:
            definition = self.a.defs.get(def_id)
            if def_id == _NONE or definition is None or definition.site is None:
                return False
        return True

    def _ctx_outcome(self, ctx: _Ctx, end: int, seen: set[int]) -> tuple[str | None, list[TextEdit]]:
        """Does a run reaching ``ctx`` mean the same as the 2.4 text? Edits make it so."""
        if ctx.kind in ("discard", "text", "run", "member"):
            return None, []
        if ctx.kind == "bind":
            return self._def_outcome(ctx.def_id, seen)
        if ctx.rewritable:
            return None, [TextEdit(absolute_span(end, end), ".output")]
        return f"its result is {ctx.reason}", []

    def _def_outcome(self, def_id: int, seen: set[int]) -> tuple[str | None, list[TextEdit]]:
        if def_id in seen:
            return None, []
        seen.add(def_id)
        definition = self.a.defs[def_id]
        edits: list[TextEdit] = []
        for use in sorted(self.uses_by_def.get(def_id, []), key=lambda u: u.start):
            where = f"`{use.name}` is"
            line = self.a.line(use.start)
            if use.ctx.kind in ("discard", "text", "run"):
                continue
            if use.ctx.kind == "member":
                if not self._all_runs(use.defs):
                    return f"{where} read as `.{use.ctx.reason}` on line {line} where it may not hold a run", []
                continue
            if use.ctx.kind == "bind":
                problem, more = self._def_outcome(use.ctx.def_id, seen)
                if problem:
                    return problem, []
                edits.extend(more)
                continue
            if use.ctx.rewritable and self._all_runs(use.defs) and use.end > use.start:
                edits.append(TextEdit(absolute_span(use.end, use.end), ".output"))
                continue
            if use.ctx.rewritable:
                return (
                    f"{where} {use.ctx.reason} on line {line}, where it holds a run on some paths and "
                    "other values on others"
                ), []
            return f"{where} {use.ctx.reason} on line {line}", []
        flow = self.a.returned.get(def_id)
        for call in self.flow_calls.get(flow or "", []):
            if call.ctx.kind == "bind":
                problem, _edits = self._def_outcome(call.ctx.def_id, seen)
            elif call.ctx.kind == "value":
                problem = f"its result is {call.ctx.reason}"
            else:
                problem = None
            if problem:
                return (
                    f"`{definition.name}` is what flow `{flow}` returns, so its caller on line "
                    f"{self.a.line(call.offset)} would receive the run, and there {problem}"
                ), []
        return None, edits

    def _value_problems(self, site: _Site) -> tuple[list[str], list[TextEdit]]:
        problems: list[str] = []
        if site.err:
            problems.append(site.err)
        if site.in_try:
            problems.append(site.in_try)
        if site.in_defer:
            problems.append("it runs when the flow exits (`defer`), after runs the history rule cannot order")
        if site.in_hook:
            problems.append("it runs inside a lifecycle hook, at points the flow does not control")
        problem, edits = self._ctx_outcome(site.ctx, site.node.span.end, set())
        if problem:
            problems.append(problem)
        decl = self.a.agents.get(site.agent)
        if decl is not None:
            structured = decl.implements or decl.return_type
            if structured and site.ctx.kind != "discard":
                problems.append(
                    f"{site.agent} returns `{structured}`: a 2.4 run gave the validated object, a 3.0 "
                    "run's output is its text"
                )
            approvals = self.a.approval_tools(site.agent)
            if approvals:
                problems.append(
                    f"{site.agent} can call `{approvals[0]}`, which declares approval: 2.4 called it "
                    "without asking, a 3.0 run pauses in `waiting_approval` first"
                )
        call = site.call
        if call is not None and any(arg.name is not None for arg in call.args):
            problems.append("it passes named arguments, which 3.0 run entries do not take as input")
        return problems, edits

    def _inputs(self, site: _Site) -> list[t.Expr]:
        inputs = [site.piped] if site.piped is not None else []
        if site.call is not None:
            skip = 1 if site.kind in ("continue", "resume") and site.piped is None else 0
            inputs.extend(arg.value for arg in site.call.args[skip:])
        return inputs

    @staticmethod
    def _empty(inputs: list[t.Expr]) -> bool:
        return all(isinstance(e, t.StringLit) and not e.value.strip() and not e.interpolations for e in inputs)

    # ------------------------------------------------------------------ `.run` -> execute / continue

    def _run_word(self, site: _Site) -> tuple[int, int] | None:
        receiver = site.receiver
        if receiver is None:
            return None
        match = _RUN_WORD.match(self.text, receiver.span.end)
        return match.span(1) if match else None

    def _execute_edits(self, site: _Site) -> list[TextEdit] | None:
        agent = self.a.snippet(site.receiver) if site.receiver is not None else site.agent
        if site.kind == "run_member" and site.piped is not None:
            return [
                TextEdit(absolute_span(site.piped.span.start, site.piped.span.start), f"{agent}.execute("),
                TextEdit(absolute_span(site.piped.span.end, site.node.span.end), ")"),
            ]
        word = self._run_word(site)
        if word is None:
            return None
        return [TextEdit(absolute_span(*word), "execute")]

    def _continue_edits(self, site: _Site, var: str) -> list[TextEdit] | None:
        agent = self.a.snippet(site.receiver) if site.receiver is not None else site.agent
        if site.piped is not None:
            head = TextEdit(absolute_span(site.piped.span.start, site.piped.span.start), f"{agent}.continue({var}, ")
            if site.kind == "run_member":
                return [head, TextEdit(absolute_span(site.piped.span.end, site.node.span.end), ")")]
            call = site.call
            word = self._run_word(site)
            if call is None or word is None:
                return None
            paren = _OPEN_PAREN.match(self.text, word[1])
            if paren is None:
                return None
            tail = ", " if call.args else ""
            return [head, TextEdit(absolute_span(site.piped.span.end, paren.end()), tail)]
        word = self._run_word(site)
        if word is None:
            return None
        paren = _OPEN_PAREN.match(self.text, word[1])
        if paren is None:
            return None
        has_args = site.call is not None and bool(site.call.args)
        return [TextEdit(absolute_span(word[0], paren.end()), f"continue({var}, " if has_args else f"continue({var}")]

    def _run_finding(self, site: _Site) -> _Finding:
        a = self.a
        agent = site.agent
        shown = f"{agent}.run(...)" if site.kind == "run" else f"x |> {agent}.run"
        earlier = [a.site_by_id[i] for i in sorted(site.history) if i != _NONE]
        first = _NONE in site.history
        where = site.unit.label
        removed = "`.run` is removed in Nexa 3.0" if self.path is VersionPath.NEXA_30 else "Nexa 3.0 removes `.run`"
        problems, output_edits = self._value_problems(site)
        inputs = self._inputs(site)
        if first:
            code = "NXM002"
            lines = ", ".join(str(a.line(s.node.span.start)) for s in earlier)
            if earlier:
                problems.insert(
                    0,
                    f"on some paths {agent} already ran before this call (line {lines}, "
                    f"{'an earlier pass of the loop' if site.in_loop else 'a branch'}) and 2.4 "
                    "continued that conversation here",
                )
            problems.extend(why for _agent, why in sorted(site.ext))
            decl = a.agents.get(agent)
            if decl is not None and decl.text_property("memory") == "persistent":
                problems.append(
                    f"{agent} has `memory: persistent`: 2.4 continued the history saved by earlier "
                    "processes, `execute` starts a new conversation"
                )
            message = (
                f"`{shown}` is the first run of {agent} in {where}: {removed}; an independent task is "
                f"`{agent}.execute(...)` (new run id, session and budget)"
            )
            fixes: list[Fix] = []
            if self._empty(inputs):
                message += (
                    f". Not rewritten: the call has no input, and 3.0 refuses an empty task; give {agent} its task"
                )
            else:
                edits = self._execute_edits(site)
                if edits is not None:
                    fixes.append(
                        self._fix(f"Use `{agent}.execute(...)` (independent task)", edits + output_edits, problems)
                    )
                message += self._why_not(problems, edits is None)
            return _Finding(
                code, message, site.node.span.start, site.node.span.end, fixes, related=self._related(earlier, agent)
            )
        code = "NXM003"
        lines = ", ".join(str(a.line(s.node.span.start)) for s in earlier)
        var = self._bound_var(site, earlier)
        problems.extend(why for _agent, why in sorted(site.ext))
        base = (
            f"in 2.4 this `{shown}` continued the conversation of {agent}'s earlier run (line {lines}), "
            f"because 2.4 shares each agent's history between runs; {removed} and history is explicit"
        )
        fixes = []
        if var is not None:
            message = f"{base}: the next turn of run `{var}` is `{agent}.continue({var}, ...)`"
            if self._empty(inputs):
                message += ". Not rewritten: the call has no input, and 3.0 refuses to continue with an empty message"
            else:
                edits = self._continue_edits(site, var)
                if edits is not None:
                    fixes.append(
                        self._fix(
                            f"Use `{agent}.continue({var}, ...)` (next turn of `{var}`)", edits + output_edits, problems
                        )
                    )
                message += self._why_not(problems, edits is None)
            return _Finding(
                code, message, site.node.span.start, site.node.span.end, fixes, related=self._related(earlier, agent)
            )
        reason = self._unbound_reason(site, earlier)
        message = (
            f"{base}, but {reason}. No automatic rewrite: bind the earlier run "
            f"(`r = {agent}.execute(...)`) and continue it here with `{agent}.continue(r, ...)`, or use "
            f"`{agent}.execute(...)` if this should be an independent task"
        )
        bind = self._bind_fix(site, earlier, inputs)
        if bind is not None:
            fixes.append(bind)
        return _Finding(
            code, message, site.node.span.start, site.node.span.end, fixes, related=self._related(earlier, agent)
        )

    def _related(self, earlier: list[_Site], agent: str) -> list[Related]:
        return [
            Related(absolute_span(s.node.span.start, s.node.span.end), f"earlier run of {agent}") for s in earlier[:3]
        ]

    def _why_not(self, problems: list[str], no_edit: bool) -> str:
        if no_edit:
            return ". No automatic rewrite: the call's text could not be located"
        if not problems:
            return ""
        shown = "; ".join(problems[:2]) + ("; ..." if len(problems) > 2 else "")
        if self.path is VersionPath.NEXA_30:
            return f". The rewrite is offered only as an unsafe fix (review it): {shown}"
        return f". Not rewritten automatically, because the meaning would change: {shown}"

    @staticmethod
    def _fix(title: str, edits: list[TextEdit], problems: list[str]) -> Fix:
        unique = _dedupe_edits(edits)
        if problems:
            return Fix(title, tuple(unique), safe=False, why_unsafe="; ".join(problems))
        return Fix(title, tuple(unique))

    def _bound_var(self, site: _Site, earlier: list[_Site]) -> str | None:
        """The variable that holds the latest earlier run on every path, if there is one."""
        if not earlier:
            return None
        names: set[str] = set()
        defs: set[int] = set()
        for e in earlier:
            if e.bound_def is None or e.kind == "implicit":
                return None
            names.add(self.a.defs[e.bound_def].name)
            defs.add(e.bound_def)
        if len(names) != 1:
            return None
        var = names.pop()
        if site.defs_at.get(var) != frozenset(defs):
            return None
        return var

    def _unbound_reason(self, site: _Site, earlier: list[_Site]) -> str:
        implicit = [e for e in earlier if e.kind == "implicit"]
        if implicit:
            return f"that run (line {self.a.line(implicit[0].node.span.start)}) is a pipeline stage, not a value"
        unbound = [e for e in earlier if e.bound_def is None]
        if unbound:
            return (
                f"the earlier run's result (line {self.a.line(unbound[0].node.span.start)}) is not kept in a variable"
            )
        names = sorted({self.a.defs[e.bound_def].name for e in earlier if e.bound_def is not None})
        if len(names) > 1:
            return f"depending on the path the latest run is held in different variables ({', '.join(names)})"
        return f"`{names[0]}` no longer holds that run here (it is reassigned, or not assigned on every path)"

    def _bind_fix(self, site: _Site, earlier: list[_Site], inputs: list[t.Expr]) -> Fix | None:
        if len(earlier) != 1 or self._empty(inputs):
            return None
        e = earlier[0]
        if e.expr_stmt is None or e.kind == "implicit":
            return None
        var = _agent_snake(site.agent) + "_run"
        n = 2
        base = var
        while var in self.names_in_file:
            var = f"{base}_{n}"
            n += 1
        edits = self._continue_edits(site, var)
        if edits is None:
            return None
        start = e.expr_stmt.span.start
        problems, output_edits = self._value_problems(site)
        why = [
            "binding changes the earlier statement, which you should review (the spec keeps this rewrite manual)",
            *problems,
        ]
        return Fix(
            f"Bind the earlier run of {site.agent} to `{var}` and continue it here",
            tuple(_dedupe_edits([TextEdit(absolute_span(start, start), f"{var} = "), *edits, *output_edits])),
            safe=False,
            why_unsafe="; ".join(why),
        )

    # ------------------------------------------------------------------ 3.0 run checks (spec 3.3)

    def _origins(self, site: _Site) -> tuple[str | None, list[_Site]]:
        """The run a continue/resume refers to: its variable name and the runs it may hold."""
        call = site.call
        if call is None or not call.args:
            return None, []
        first = call.args[0].value
        if isinstance(first, t.Call):
            inner = self.a.sites.get(id(first))
            return None, [inner] if inner is not None else []
        if not isinstance(first, t.Name):
            return None, []
        runs = []
        for def_id in site.defs_at.get(first.id, frozenset({_NONE})):
            definition = self.a.defs.get(def_id)
            if definition is not None and definition.site is not None:
                runs.append(definition.site)
        return first.id, runs

    def _entry_checks(self, site: _Site) -> list[_Finding]:
        out: list[_Finding] = []
        call = site.call
        if call is None:
            return out
        agent = site.agent
        span = (call.span.start, call.span.end)
        var, origins = self._origins(site)
        shown = var or "the run"
        if site.kind == "continue":
            inputs = self._inputs(site)
            if not call.args:
                out.append(
                    _Finding(
                        "NXM011",
                        f'`{agent}.continue()` needs the run to continue and the next message: `continue(r, "...")`',
                        *span,
                    )
                )
            elif self._empty(inputs):
                what = "no input" if not inputs else "an empty input"
                out.append(
                    _Finding(
                        "NXM011",
                        f"`{agent}.continue({shown}, ...)` has {what}: a new turn needs a "
                        "non-empty message (the runtime refuses to continue with empty input)",
                        *span,
                    )
                )
        others = sorted({o.agent for o in origins if o.agent != agent})
        if others:
            lines = ", ".join(str(self.a.line(o.node.span.start)) for o in origins if o.agent != agent)
            entry = "continue" if site.kind == "continue" else "resume"
            message = (
                f"`{shown}` is a run of {others[0]} (line {lines}), but `{agent}.{entry}` would "
                f"{'continue' if entry == 'continue' else 'resume'} it with {agent}: a run is continued or "
                "resumed by the agent that ran it (the agent definition must match)"
            )
            fixes = []
            if len(others) == 1 and site.receiver is not None:
                fixes.append(
                    Fix(
                        f"Use `{others[0]}.{entry}(...)`",
                        (TextEdit(absolute_span(site.receiver.span.start, site.receiver.span.end), others[0]),),
                        safe=False,
                        why_unsafe=f"the turn would run {others[0]}'s definition instead of "
                        f"{agent}'s; check which agent you meant",
                    )
                )
            out.append(_Finding("NXM012", message, *span, fixes))
        if site.kind == "continue" and var is not None:
            approving = [(o.agent, tools) for o in origins for tools in [self.a.approval_tools(o.agent)] if tools]
            if approving and not self._tested(site, var):
                origin, tools = approving[0]
                message = (
                    f"`{var}` may not be settled: {origin} can call `{tools[0]}`, which requires approval, "
                    f"so its run can stop in `waiting_approval`, and continuing an unsettled run is refused "
                    f"at run time. Test `{var}.success` (or `{var}.settled` / `{var}.status`) first, or "
                    f"resume it with `{origin}.resume({var})` once approved"
                )
                fix = self._guard_fix(site, var)
                out.append(_Finding("NXM010", message, *span, [fix] if fix is not None else []))
        if site.kind == "resume" and origins:
            settled_by = self._known_settled(site, var, origins)
            if settled_by:
                out.append(
                    _Finding(
                        "NXM013",
                        f"`{shown}` is known to be settled here ({settled_by}): a settled "
                        f"run is continued, not resumed, and resuming it is refused at run time; use "
                        f'`{agent}.continue({shown}, "...")` for a new turn',
                        *span,
                    )
                )
        return out

    @staticmethod
    def _mentions(cond: t.Condition, var: str) -> bool:
        for part in cond.parts:
            for node in t.walk(part):
                if (
                    isinstance(node, t.Member)
                    and node.name in ("success", "settled", "status")
                    and isinstance(node.obj, t.Name)
                    and node.obj.id == var
                ):
                    return True
        return False

    def _tested(self, site: _Site, var: str) -> bool:
        return any(self._mentions(g.condition, var) for g in site.guards)

    def _known_settled(self, site: _Site, var: str | None, origins: list[_Site]) -> str | None:
        if var is not None:
            for guard in site.guards:
                if guard.branch != "then" or "or" in guard.condition.operators:
                    continue
                for part in guard.condition.parts:
                    if (
                        isinstance(part, t.Member)
                        and isinstance(part.obj, t.Name)
                        and part.obj.id == var
                        and part.name in ("success", "settled")
                    ):
                        return f"inside `if ({var}.{part.name})`"
                    if isinstance(part, t.BinaryOp) and part.op == "==":
                        sides = (part.left, part.right)
                        member = next(
                            (
                                s
                                for s in sides
                                if isinstance(s, t.Member)
                                and s.name == "status"
                                and isinstance(s.obj, t.Name)
                                and s.obj.id == var
                            ),
                            None,
                        )
                        literal = next((s for s in sides if isinstance(s, t.StringLit)), None)
                        if member is not None and literal is not None and literal.value in _SETTLED_STATUSES:
                            return f'inside `if ({var}.status == "{literal.value}")`'
        agents = {o.agent for o in origins}
        if all(self.a.tools_all_known(a) and not self.a.approval_tools(a) for a in agents):
            names = ", ".join(sorted(agents))
            return f"{names} can call no approval-required tool, so its runs return settled"
        return None

    def _guard_fix(self, site: _Site, var: str) -> Fix | None:
        stmt = site.stmt
        if stmt is None:
            return None
        start, end = stmt.span.start, stmt.span.end
        line_start = self.text.rfind("\n", 0, start) + 1
        indent = self.text[line_start:start]
        why = (
            f"the turn (and everything in the statement) is skipped when `{var}` did not succeed; decide what "
            "should happen then (for example resume it after approval)"
        )
        title = f"Continue only if `{var}.success`"
        if indent.strip():
            edits = (
                TextEdit(absolute_span(start, start), f"if ({var}.success) {{ "),
                TextEdit(absolute_span(end, end), " }"),
            )
        else:
            edits = (
                TextEdit(absolute_span(start, start), f"if ({var}.success) {{\n{indent}    "),
                TextEdit(absolute_span(end, end), f"\n{indent}}}"),
            )
        return Fix(title, edits, safe=False, why_unsafe=why)

    # ------------------------------------------------------------------ approvals and human helpers

    def _hitl_finding(self, call: t.Call, helper: str, unit: _Unit) -> _Finding:
        where = unit.label or "this flow"
        if helper in ("approve_request", "reject_request"):
            what = (
                f"`{helper}(...)` in {where} only edits a 2.x in-memory approval record (it never wakes a waiting flow)"
            )
        elif helper == "ask_human":
            what = f"`ask_human(...)` in {where} reads a person's answer from the terminal (2.x)"
        else:
            what = f"`{helper}(...)` in {where} blocks the flow until a person answers (2.x human-in-the-loop)"
        message = (
            f'{what}; in Nexa 3.0 approvals belong to tools: declare `approval: "required"` on the tool '
            "that needs a person's consent; its calls then pause the run in `waiting_approval` until "
            "approved or denied, and the flow resumes it with `Agent.resume(r)`"
        )
        return _Finding("NXM005", message, call.span.start, call.span.end)

    def _approval_tool_names(self) -> list[str]:
        notes = []
        for tool in self.a.tools.values():
            if tool.approval == "required":
                notes.append(
                    f'tool `{tool.name}` declares `approval: "required"`: on Nexa 3.0 its calls pause '
                    "the run until approved"
                )
        for function in self.a.tool_functions.values():
            if function.requires_approval:
                notes.append(
                    f"`@tool` `{function.name}` has `requires_approval: true`: on Nexa 3.0 its calls pause "
                    "the run until approved"
                )
        return notes

    def _approval_findings(self) -> None:
        for tool in self.a.tools.values():
            prop = tool.get_property("approval")
            if prop is None:
                continue
            self.findings.append(
                _Finding(
                    "NXM004",
                    f"`approval:` on tool `{tool.name}` has no effect on the 2.4 compatibility path: the tool is "
                    'called without asking. In Nexa 3.0, `approval: "required"` pauses the run in '
                    "`waiting_approval` before each call until it is approved or denied",
                    prop.span.start,
                    prop.span.end,
                    unnecessary=True,
                )
            )
        for function in self.a.tool_functions.values():
            for prop in function.config:
                if prop.key == "requires_approval" and prop.value.value is True:
                    self.findings.append(
                        _Finding(
                            "NXM004",
                            f"`requires_approval: true` on `@tool` `{function.name}` is recorded but never enforced "
                            "on the 2.4 path (2.x agents call the tool without asking). In Nexa 3.0 its calls pause "
                            "the run in `waiting_approval` until approved or denied",
                            prop.span.start,
                            prop.span.end,
                            unnecessary=True,
                        )
                    )
        for note in self._approval_tool_names():
            self.notes.append(note)


def _dedupe_edits(edits: Iterable[TextEdit]) -> list[TextEdit]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for edit in edits:
        key = (edit.span.start, edit.span.end, edit.new_text)
        if key not in seen:
            seen.add(key)
            out.append(edit)
    return out


def _analyse(source: SourceFile) -> _Analysis:
    """All findings of ``source``; a pathologically nested file gives none (``too_deep``)."""
    try:
        analyzer = _Analyzer(source)
        analyzer.run()
        return _Findings(analyzer).build()
    except RecursionError:
        return _Analysis(source, [], [], too_deep=True)


# ----------------------------------------------------------------------------- whole-file migration


@dataclass(frozen=True, slots=True)
class MigrationResult:
    """What migrating one source to Nexa 3.0 gives.

    ``text`` is the migrated text when the migration is complete, else the original.
    ``edits`` turn the original into ``text`` (empty when blocked or nothing changes).
    ``blockers`` say what prevents an automatic migration (spans on the original text):
    findings without a safe rewrite, syntax errors, an unusable version declaration.
    ``applied`` lists each rewrite made (the finding and its fix); ``notes`` behaviour that
    changes with the move itself (tool approvals that start to apply).
    """

    original: str
    text: str
    edits: tuple[TextEdit, ...]
    blockers: tuple[Diagnostic, ...]
    applied: tuple[tuple[Diagnostic, Fix], ...]
    notes: tuple[str, ...]
    was_30: bool

    @property
    def blocked(self) -> bool:
        return bool(self.blockers)

    @property
    def changed(self) -> bool:
        return self.text != self.original

    @property
    def migrated(self) -> bool:
        """True when the text was changed into a Nexa 3.0 file."""
        return self.changed and not self.blocked


@dataclass(frozen=True, slots=True)
class _Plan:
    edits: list[TextEdit]
    applied: list[tuple[Diagnostic, Fix]]
    blockers: list[Diagnostic]
    notes: list[str]


def _declaration_edit(source: SourceFile) -> TextEdit | None:
    decl = source.version.declaration
    if source.path is VersionPath.NEXA_30:
        return None
    if decl is None:
        text = source.text
        eol = "\r\n" if "\r\n" in text else "\n"
        pos = 1 if text.startswith("\ufeff") else 0
        if text.startswith("#!", pos):
            newline = text.find("\n", pos)
            pos = len(text) if newline == -1 else newline + 1
            prefix = "" if newline != -1 else eol
            return TextEdit(absolute_span(pos, pos), f"{prefix}nexa 3.0;{eol}")
        return TextEdit(absolute_span(pos, pos), f"nexa 3.0;{eol}")
    if decl.problem is None and decl.version == "2.4":
        return TextEdit(absolute_span(decl.version_start, decl.version_end), "3.0")
    return None


def _to_diagnostic(f: _Finding, path: VersionPath, with_fixes: bool = True) -> Diagnostic:
    return Diagnostic(
        f.code,
        f.message,
        absolute_span(f.start, f.end),
        migration_severity(f.code, path),
        tuple(f.fixes) if with_fixes else (),
        tuple(f.related),
        f.unnecessary,
    )


def _plan(source: SourceFile, analysis: _Analysis) -> _Plan:
    blockers: list[Diagnostic] = []
    decl = source.version.declaration
    if decl is not None and decl.problem is not None:
        blockers.append(
            Diagnostic(
                "NX010" if decl.problem == "unsupported" else "NX013",
                f"the version declaration `{source.text[decl.start : decl.end]}` is not usable: "
                "fix it (or remove it) before migrating",
                absolute_span(decl.start, decl.end),
                Severity.ERROR,
            )
        )
    if analysis.too_deep:
        blockers.append(
            Diagnostic(
                "NXM001",
                "the file is nested too deeply to analyse its runs: migrate it by hand",
                absolute_span(0, 0),
                Severity.ERROR,
            )
        )
    syntax = [d for d in source.diagnostics if d.severity is Severity.ERROR and d.code not in ("NX010", "NX013")]
    if syntax:
        blockers.extend(syntax)
    edits: list[TextEdit] = []
    applied: list[tuple[Diagnostic, Fix]] = []
    occupied: dict[tuple[int, int], str] = {}
    taken: list[tuple[int, int, str]] = []  # accepted edits, sorted: overlap checks look at neighbours only
    for finding in analysis.findings:
        diagnostic = _to_diagnostic(finding, VersionPath.NEXA_30)
        if finding.blocks:
            blockers.append(diagnostic)
            continue
        if (
            not finding.fixes
            or not finding.fixes[0].safe
            or MIGRATION_CODES[finding.code].severity is not Severity.ERROR
        ):
            continue
        fix = finding.fixes[0]
        new = [
            e
            for e in fix.edits
            if (e.span.start, e.span.end) not in occupied or occupied[(e.span.start, e.span.end)] != e.new_text
        ]
        if any(_overlaps_any(e, taken) for e in new):
            blockers.append(
                Diagnostic(
                    finding.code,
                    finding.message + " (its rewrite overlaps another one; "
                    "migrate again after fixing this call by hand)",
                    diagnostic.span,
                    Severity.ERROR,
                )
            )
            continue
        for e in new:
            occupied[(e.span.start, e.span.end)] = e.new_text
            edits.append(e)
            bisect.insort(taken, (e.span.start, e.span.end, e.new_text))
        applied.append((diagnostic, fix))
    declaration = _declaration_edit(source)
    if declaration is not None:
        edits.insert(0, declaration)
    return _Plan(edits, applied, blockers, list(analysis.notes))


def _overlaps_any(edit: TextEdit, taken: list[tuple[int, int, str]]) -> bool:
    """Does ``edit`` overlap one of the (non-overlapping, sorted) accepted edits?"""
    index = bisect.bisect_left(taken, (edit.span.start, edit.span.end, edit.new_text))
    for near in taken[max(0, index - 2) : index + 2]:
        if _overlap(edit.span.start, edit.span.end, near[0], near[1]):
            return True
    return False


def _overlap(a0: int, a1: int, b0: int, b1: int) -> bool:
    if a0 == a1 and b0 == b1:
        return a0 == b0
    if a0 == a1:
        return b0 < a0 < b1
    if b0 == b1:
        return a0 < b0 < a1
    return a0 < b1 and b0 < a1


def _apply(text: str, edits: list[TextEdit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.span.start, e.span.end))
    out: list[str] = []
    cursor = 0
    for edit in ordered:
        out.append(text[cursor : edit.span.start])
        out.append(edit.new_text)
        cursor = max(cursor, edit.span.end)
    out.append(text[cursor:])
    return "".join(out)


def _original_offset(offset: int, edits: list[TextEdit]) -> int:
    """Map an offset of the edited text back to the original text."""
    delta = 0
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        new_start = edit.span.start + delta
        new_end = new_start + len(edit.new_text)
        if offset < new_start:
            break
        if offset < new_end:
            return edit.span.start
        delta += len(edit.new_text) - (edit.span.end - edit.span.start)
    return max(0, offset - delta)


def migrate_source(text: str, source: SourceFile | None = None) -> MigrationResult:
    """Move ``text`` to Nexa 3.0: the version declaration plus every safe rewrite, verified.

    The result is complete (parses on the 3.0 path with no errors, from the parser or the
    migration checks) or nothing changes and ``blockers`` say why. Idempotent: migrating a
    migrated text changes nothing.
    """
    if source is None or source.text != text:
        source = parse_source(text)
    analysis = _analyse(source)
    plan = _plan(source, analysis)
    was_30 = source.path is VersionPath.NEXA_30
    if plan.blockers:
        return MigrationResult(text, text, (), tuple(plan.blockers), (), tuple(plan.notes), was_30)
    if not plan.edits:
        return MigrationResult(text, text, (), (), (), tuple(plan.notes), was_30)
    candidate = _apply(text, plan.edits)
    reparsed = parse_source(candidate)
    problems: list[Diagnostic] = []
    if reparsed.path is not VersionPath.NEXA_30:
        problems.append(Diagnostic("NX013", "the migrated file is not on the 3.0 path", absolute_span(0, 0)))
    errors = [d for d in reparsed.diagnostics if d.severity is Severity.ERROR]
    errors += [d for d in migration_diagnostics(reparsed) if d.severity is Severity.ERROR]
    for d in errors:
        start = _original_offset(d.span.start, plan.edits)
        line = reparsed.lines.line_of(d.span.start) + 1
        problems.append(
            Diagnostic(
                d.code, f"after migration, line {line}: {d.message}", absolute_span(start, start), Severity.ERROR
            )
        )
    if problems:
        return MigrationResult(text, text, (), tuple(problems), (), tuple(plan.notes), was_30)
    ordered = tuple(sorted(plan.edits, key=lambda e: (e.span.start, e.span.end)))
    return MigrationResult(text, candidate, ordered, (), tuple(plan.applied), tuple(plan.notes), was_30)


# ----------------------------------------------------------------------------- diagnostics


def _first_line_span(text: str) -> Span:
    start = 1 if text.startswith("\ufeff") else 0
    end = text.find("\n", start)
    end = len(text) if end == -1 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return absolute_span(start, end)


def migration_diagnostics(source: SourceFile, hints_on_24: bool = True) -> list[Diagnostic]:
    """Lints for the 2.4 -> 3.0 move: hints on the 2.4 path, errors on 3.0 (with the 3.3 run checks).

    The analysis covers the whole file, so its result is cached: an edit that changes
    nothing the lints read (an agent's prompt, role or model, say) reuses the previous
    findings, whose spans are anchored to their chunks and so move with the edit.
    """
    if source.path is VersionPath.COMPAT_24 and not hints_on_24:
        return []
    key = _lint_signature(source, hints_on_24)
    live = {id(chunk.anchor) for chunk in source.chunks}
    with _CACHE_LOCK:
        cached = _LINT_CACHE.get(key)
        if cached is not None and all(id(anchor) in live for anchor in cached[1]):
            _LINT_CACHE.move_to_end(key)
            return list(cached[0])
    found = _migration_diagnostics(source, hints_on_24)
    anchored = _anchored(found, source)
    if anchored is not None:
        with _CACHE_LOCK:
            _LINT_CACHE[key] = anchored
            while len(_LINT_CACHE) > _LINT_CACHE_SIZE:
                _LINT_CACHE.popitem(last=False)
        return list(anchored[0])
    return found


_LINT_CACHE_SIZE = 32
_LINT_CACHE: OrderedDict[tuple[object, ...], tuple[list[Diagnostic], list[Anchor]]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _lint_signature(source: SourceFile, hints_on_24: bool) -> tuple[object, ...]:
    """Everything the lints read: every chunk's text, except chunks of agents only, which
    count by the parts the analysis uses (uses, implements, return type, memory) and their
    line count (messages name lines)."""
    decl = source.version.declaration
    parts: list[object] = [
        source.path,
        hints_on_24,
        (decl.start, decl.end, decl.version, decl.problem) if decl is not None else None,
        any(d.severity is Severity.ERROR for d in source.diagnostics),
        not source.text.strip(),
    ]
    for chunk in source.chunks:
        if chunk.items and all(isinstance(item, t.AgentDecl) for item in chunk.items):
            parts.append(
                (
                    chunk.text.count("\n"),
                    tuple(
                        (
                            item.name,
                            tuple((u.kind, u.text) for u in item.uses),
                            item.implements,
                            item.return_type,
                            item.text_property("memory"),
                        )
                        for item in chunk.items
                        if isinstance(item, t.AgentDecl)
                    ),
                )
            )
        else:
            parts.append(chunk.text)
    return tuple(parts)


def _anchored(diagnostics: list[Diagnostic], source: SourceFile) -> tuple[list[Diagnostic], list[Anchor]] | None:
    """The diagnostics with spans tied to the chunk they lie in; None when one crosses chunks."""
    starts = [chunk.anchor.base for chunk in source.chunks]
    anchors: dict[int, Anchor] = {}

    def tie(span: Span) -> Span | None:
        index = max(0, bisect.bisect_right(starts, span.start) - 1)
        chunk = source.chunks[index]
        end_of_chunk = chunk.anchor.base + len(chunk.text)
        if span.end > end_of_chunk:
            return None
        anchors[id(chunk.anchor)] = chunk.anchor
        base = chunk.anchor.base
        return Span(span.start - base, span.end - base, chunk.anchor)

    out: list[Diagnostic] = []
    for diag in diagnostics:
        span = tie(diag.span)
        related = [(tie(r.span), r.message) for r in diag.related]
        fixes = []
        for fix in diag.fixes:
            edits = [(tie(e.span), e.new_text) for e in fix.edits]
            if any(sp is None for sp, _ in edits):
                return None
            fixes.append(dataclasses.replace(fix, edits=tuple(TextEdit(sp, text) for sp, text in edits if sp)))
        if span is None or any(sp is None for sp, _ in related):
            return None
        out.append(
            dataclasses.replace(
                diag,
                span=span,
                related=tuple(Related(sp, message) for sp, message in related if sp),
                fixes=tuple(fixes),
            )
        )
    return out, list(anchors.values())


def _migration_diagnostics(source: SourceFile, hints_on_24: bool) -> list[Diagnostic]:
    analysis = _analyse(source)
    if source.path is VersionPath.NEXA_30:
        return [_to_diagnostic(f, source.path) for f in analysis.findings]
    # 2.4 path: the file is valid as it is. A single rewrite would call a method 2.4 does not
    # have, so the hints carry no individual fix; the migrate fix applies them all at once.
    # A file with syntax errors gets no NXM001: those come first (and block migrating).
    out = [_to_diagnostic(f, source.path, with_fixes=False) for f in analysis.findings]
    broken = any(d.severity is Severity.ERROR for d in source.diagnostics)
    if source.version.declaration is None and source.text.strip() and not broken:
        plan = _plan(source, analysis)
        message = (
            "no version declaration: this file follows the Nexa 2.4 compatibility path (a run returns "
            "text and each agent's history is shared implicitly between runs). Nexa 3.0 makes runs values "
            "with explicit entries (`execute`, `continue`, `resume`) and enforces tool approvals; migrate "
            'with `nexa-lsp check --migrate` or the "Migrate this file to Nexa 3.0" action'
        )
        fixes: tuple[Fix, ...] = ()
        if plan.blockers:
            first = plan.blockers[0]
            line = source.lines.line_of(first.span.start) + 1
            count = len(plan.blockers)
            message += (
                f". Automatic migration is blocked by {count} finding{'s' if count != 1 else ''} that "
                f"need{'s' if count == 1 else ''} a manual change (first: line {line}, {first.code})"
            )
        else:
            fixes = (
                Fix(
                    "Migrate this file to Nexa 3.0",
                    tuple(sorted(plan.edits, key=lambda e: e.span.start)),
                    safe=False,
                    why_unsafe="moves the whole file to the Nexa 3.0 path (runs become values, declared tool "
                    "approvals start to apply); every rewrite in it keeps the meaning, but review the result "
                    "as a whole",
                ),
            )
        out.append(Diagnostic("NXM001", message, _first_line_span(source.text), Severity.HINT, fixes))
    return out

"""The abstract state a flow is walked with, and the records the walk leaves behind.

``State`` holds reaching definitions (``defs``), the possible latest run of each agent
(``hist``) and the agents other flows may have touched (``ext``); see the package
docstring. ``Site`` is one run of an agent, ``Def`` one definition of a variable,
``Use`` one read of it, ``FlowCall`` one call of another flow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nexa_lsp.analysis.symbols import RUN_MEMBERS as _RUN_MEMBER_NAMES
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.tree import Span

NONE = 0  # "no run yet" in a history set, "not assigned" in a definition set
LOOP_LIMIT = 12

#: Members of a 3.0 run value (spec 3.1).
RUN_MEMBERS = frozenset(_RUN_MEMBER_NAMES)
SETTLED_STATUSES = frozenset({"completed", "failed", "cancelled", "timed_out", "budget_exhausted"})
#: The 2.x human-in-the-loop helpers a flow can call (runtime notes, section 7).
HITL_HELPERS = frozenset({"wait_for_human", "approve_request", "reject_request", "ask_human"})
HARNESS_SKIP = frozenset({"autoloop", "with_context", "try_agent"})
HOOKS = frozenset({"before_step", "after_step", "on_error", "before_tool", "after_tool"})
DAG_OPERATORS = frozenset({">>", "|>>", "||", "&>>", "&&"})
COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})

ERR_PROPAGATE = (
    "`?` propagated a failed 2.4 run as an error; a failed 3.0 run is a value whose status is "
    "`failed`, nothing is raised"
)
ERR_OTHERWISE = (
    "`otherwise` handled a failed 2.4 run; a failed 3.0 run is a value whose status is `failed`, "
    "so the handler would never run"
)
ERR_FALLBACK = (
    "`fallback` ran its right side when the 2.4 run raised; a failed 3.0 run raises nothing, so "
    "the fallback would never run"
)
ERR_TRY = (
    "it is inside `try`: a failed 2.4 run raised an error that `catch` handled; a failed 3.0 run is a "
    "value whose status is `failed`, nothing is raised"
)
ERR_TRY_AGENT = "it is inside `try_agent`: its corrections react to errors a 3.0 run no longer raises"


@dataclass(frozen=True, slots=True)
class Ctx:
    """Where a value goes. ``kind``: discard | text | run (a run entry's run argument) |
    member (``v.name``) | bind (assigned: ``def_id``) | value (any other use: ``reason``;
    ``rewritable`` when ``.output`` gives exactly the 2.4 text there)."""

    kind: str
    reason: str = ""
    def_id: int = 0
    direct: bool = False
    rewritable: bool = False

    def indirect(self) -> Ctx:
        return Ctx(self.kind, self.reason, self.def_id, False, self.rewritable) if self.direct else self


DISCARD = Ctx("discard")
TEXT = Ctx("text")
RUN_ARG = Ctx("run")


def value_use(reason: str, rewritable: bool = True) -> Ctx:
    return Ctx("value", reason, rewritable=rewritable)


class State:
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
        return self.defs.get(name, frozenset({NONE}))

    def history(self, agent: str) -> frozenset[int]:
        return self.hist.get(agent, frozenset({NONE}))

    def define(self, name: str, def_id: int) -> State:
        defs = dict(self.defs)
        defs[name] = frozenset({def_id})
        return State(defs, self.hist, self.ext)

    def ran(self, agent: str, site_id: int) -> State:
        hist = dict(self.hist)
        hist[agent] = frozenset({site_id})
        return State(self.defs, hist, self.ext)

    def touched(self, items: Iterable[tuple[str, str]]) -> State:
        return State(self.defs, self.hist, self.ext | frozenset(items))

    def ran_agents(self) -> set[str]:
        return {a for a, runs in self.hist.items() if runs != frozenset({NONE})} | {a for a, _ in self.ext}

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State) and self.defs == other.defs and self.hist == other.hist and self.ext == other.ext
        )


Body = Callable[[State], State]


def join(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b
    if b is None or a is b:
        return a

    def merge(x: dict[str, frozenset[int]], y: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
        out: dict[str, frozenset[int]] = {}
        for key in x.keys() | y.keys():
            out[key] = x.get(key, frozenset({NONE})) | y.get(key, frozenset({NONE}))
        return out

    return State(merge(a.defs, b.defs), merge(a.hist, b.hist), a.ext | b.ext)


def join_all(states: Iterable[State | None]) -> State | None:
    out: State | None = None
    for st in states:
        out = join(out, st)
    return out


@dataclass(frozen=True, slots=True)
class Guard:
    condition: t.Condition
    branch: str  # "then" | "else"


@dataclass(eq=False, slots=True)
class Unit:
    label: str
    flow: str | None = None


@dataclass(eq=False)
class Site:
    """One run of an agent: an entry call, a `x |> A.run` pipe, or an implicit run
    (the agent as a pipeline stage, or runs inside a called flow)."""

    id: int
    agent: str
    kind: str  # run | run_member | execute | continue | resume | implicit
    node: t.Node
    unit: Unit
    receiver: t.Expr | None = None
    call: t.Call | None = None
    piped: t.Expr | None = None
    history: frozenset[int] = frozenset()
    defs_at: dict[str, frozenset[int]] = field(default_factory=dict)
    ext: frozenset[tuple[str, str]] = frozenset()
    ctx: Ctx = DISCARD
    err: str | None = None
    in_try: str | None = None
    in_defer: bool = False
    in_hook: bool = False
    in_loop: bool = False
    guards: tuple[Guard, ...] = ()
    stmt: t.Stmt | None = None
    bound_def: int | None = None
    expr_stmt: t.ExprStmt | None = None


@dataclass(eq=False, slots=True)
class Def:
    id: int
    name: str
    site: Site | None = None


@dataclass(eq=False, slots=True)
class Use:
    name: str
    defs: frozenset[int]
    ctx: Ctx
    span: Span  # anchored to the unit's chunk

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        return self.span.end


@dataclass(eq=False, slots=True)
class FlowCall:
    """A call of flow ``flow``; ``line`` is a line marker (see ``positions``)."""

    flow: str
    line: str
    ctx: Ctx
    ran_before: frozenset[str]
    in_loop: bool

"""The expression half of the walk: where each value goes, and the runs of agents.

:class:`ExpressionWalker` holds the records of the walk (sites, definitions, uses, flow
calls ...) and reads expressions; :class:`nexa_lsp.analysis.migration.walker.Walker` adds
the statements and the bodies.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from nexa_lsp.analysis.migration.positions import line_marker
from nexa_lsp.analysis.migration.program import template_refs
from nexa_lsp.analysis.migration.state import (
    COMPARISONS,
    DAG_OPERATORS,
    DISCARD,
    ERR_FALLBACK,
    ERR_OTHERWISE,
    HITL_HELPERS,
    RUN_ARG,
    RUN_MEMBERS,
    TEXT,
    Ctx,
    Def,
    FlowCall,
    Guard,
    Site,
    State,
    Unit,
    Use,
    join,
    join_all,
    value_use,
)
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.tree import Anchor, Span

if TYPE_CHECKING:
    from nexa_lsp.analysis.migration.findings import WalkEnv
    from nexa_lsp.analysis.migration.units import UnitSpec


class ExpressionWalker:
    """The records of one walk, and how expressions are read."""

    def __init__(self, spec: UnitSpec, chunk_text: str, anchor: Anchor, serial: int, env: WalkEnv) -> None:
        self.spec = spec
        self.chunk_text = chunk_text
        self.anchor = anchor
        self.serial = serial
        self.env: WalkEnv | None = env
        #: Every answer the walk got from ``env``: the walk is valid while they stay the same.
        self.reads: dict[tuple[str, str], object] = {}
        self.stamp: object = None  # the program stamp ``reads`` were last checked against
        #: ``reads`` about flow bodies and histories, set when the walk ends (see ``WalkEnv.still_walk``).
        self.body_reads: tuple[tuple[str, str, object], ...] = ()
        self._next_id = 1
        self.sites: dict[int, Site] = {}
        self.site_by_id: dict[int, Site] = {}
        self.defs: dict[int, Def] = {}
        self._def_keys: dict[tuple[int, str], int] = {}
        self.uses: dict[tuple[int, int], Use] = {}
        self.hitl: dict[int, tuple[t.Call, str, Unit]] = {}
        self.member_runs: dict[int, tuple[t.Member, Unit]] = {}
        self.flow_calls: dict[int, FlowCall] = {}
        self.returned: dict[int, str] = {}
        self._uses_by_def: dict[int, list[Use]] | None = None
        # walk context
        self._unit = spec.unit
        self._stmt: t.Stmt | None = None
        self._guards: list[Guard] = []
        self._loops: list[list[State]] = []
        self._collectors: list[list[State]] = []
        self._try: list[str] = []
        self._defer = 0
        self._hook = 0

    # ------------------------------------------------------------------ small helpers

    def ask(self, kind: str, name: str) -> object:
        """What the rest of the file says (recorded, see ``reads``)."""
        assert self.env is not None, "the walk is over"
        answer = self.env.answer(kind, name)
        self.reads[(kind, name)] = answer
        return answer

    def is_agent(self, name: str) -> bool:
        return self.ask("agent", name) is True

    def uses_by_def(self) -> dict[int, list[Use]]:
        """The uses each definition reaches (after the walk)."""
        if self._uses_by_def is None:
            self._uses_by_def = {}
            for use in self.uses.values():
                for def_id in use.defs:
                    self._uses_by_def.setdefault(def_id, []).append(use)
        return self._uses_by_def

    def _new_id(self) -> int:
        value = self._next_id
        self._next_id += 1
        return value

    def line(self, offset: int) -> str:
        """The line of ``offset`` (in this unit), as a marker rendered later."""
        return line_marker(self.serial, offset - self.anchor.base)

    def at(self, start: int, end: int) -> Span:
        """A span of this unit's chunk (moves with the chunk)."""
        return Span(start - self.anchor.base, end - self.anchor.base, self.anchor)

    def snippet(self, node: t.Node) -> str:
        return self.chunk_text[node.span.rel_start : node.span.rel_end]

    def _def_for(self, node: object, name: str) -> Def:
        key = (id(node), name)
        def_id = self._def_keys.get(key)
        if def_id is None:
            def_id = self._new_id()
            self._def_keys[key] = def_id
            self.defs[def_id] = Def(def_id, name)
        return self.defs[def_id]

    def _bind_names(self, st: State, node: object, names: Iterable[str]) -> State:
        for name in names:
            st = st.define(name, self._def_for(node, name).id)
        return st

    def block(self, block: t.Block | None, st: State) -> State:
        """Walk a block of statements (the statements walker provides it)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ expressions

    def expr(self, e: t.Expr, st: State, ctx: Ctx, err: str | None = None) -> State:
        if isinstance(e, t.Name):
            self.uses[(id(e), 0)] = Use(e.id, st.reaching(e.id), ctx, e.span)
            return st
        if isinstance(e, t.StringLit):
            for index, interp in enumerate(e.interpolations):
                use_ctx = (
                    TEXT
                    if interp.path == interp.root
                    else (
                        Ctx("member", interp.path[len(interp.root) + 1 :])
                        if interp.path[len(interp.root) :][:1] == "."
                        and interp.path[len(interp.root) + 1 :] in RUN_MEMBERS
                        else value_use(f"read as `#{{{interp.path}}}`", rewritable=False)
                    )
                )
                start = interp.span.start + (len(interp.path) - len(interp.path.lstrip()))
                self.uses[(id(e), index)] = Use(interp.root, st.reaching(interp.root), use_ctx, self.at(start, start))
            return st
        if isinstance(e, t.TemplateLit):
            for index, (name, simple) in enumerate(template_refs(e.body)):
                use_ctx = TEXT if simple else value_use("used by a template expression", rewritable=False)
                self.uses[(id(e), index)] = Use(name, st.reaching(name), use_ctx, self.at(e.span.start, e.span.start))
            return st
        if isinstance(e, t.Call):
            return self._call(e, st, ctx, err)
        if isinstance(e, t.Member):
            if e.name == "run":
                self.member_runs[id(e)] = (e, self._unit)
                return st
            if isinstance(e.obj, t.Name):
                inner = (
                    Ctx("member", e.name)
                    if e.name in RUN_MEMBERS
                    else value_use(f"read as `.{e.name}`", rewritable=False)
                )
                return self.expr(e.obj, st, inner)
            return self.expr(e.obj, st, value_use(f"read as `.{e.name}`", rewritable=False))
        if isinstance(e, t.Index):
            st = self.expr(e.obj, st, value_use("indexed"))
            return self.expr(e.index, st, value_use("used as an index"))
        if isinstance(e, t.VariantRef):
            return self.expr(e.obj, st, value_use("used with `::`", rewritable=False))
        if isinstance(e, t.BinaryOp):
            return self._binary(e, st, ctx, err)
        if isinstance(e, t.Negate):
            return self.expr(e.operand, st, value_use("negated"))
        if isinstance(e, t.BranchOp):
            st = self.expr(e.condition, st, value_use("tested by `?? :`"))
            return join(self.expr(e.then, st, ctx.indirect()), self.expr(e.otherwise, st, ctx.indirect())) or st
        if isinstance(e, t.CaseBranch | t.SemanticIfExpr):
            st = self.expr(e.subject, st, TEXT)
            arms = [self.expr(arm.value, st, ctx.indirect()) for arm in e.cases]
            return join_all([st, *arms]) or st
        if isinstance(e, t.BracketList | t.Parenthesized):
            for item in e.items:
                st = self.expr(item, st, value_use("put in brackets", rewritable=False))
            return st
        if isinstance(e, t.MatchExpr):
            return self._match(e, st, ctx)
        if isinstance(e, t.SpecialExpr):
            for arg in e.args:
                st = self.expr(arg.value, st, value_use(f"passed to `{e.kind}`", rewritable=False))
            return st
        return st

    def _match(self, e: t.MatchExpr, st: State, ctx: Ctx) -> State:
        by_intent = all(
            arm.intent is not None or (arm.pattern is not None and arm.pattern.kind == "wildcard") for arm in e.arms
        )
        st = self.expr(e.subject, st, TEXT if by_intent else value_use("matched against patterns"))
        outs: list[State | None] = [st]
        for arm in e.arms:
            arm_st = st
            if arm.pattern is not None:
                arm_st = self._bind_names(arm_st, arm, [n for n, _sp in arm.pattern.bound_names()])
            if arm.guard is not None:
                arm_st = self.expr(arm.guard, arm_st, value_use("tested by a match guard"))
            if isinstance(arm.body, t.Block):
                outs.append(self.block(arm.body, arm_st))
            else:
                outs.append(self.expr(arm.body, arm_st, ctx.indirect()))
        return join_all(outs) or st

    def _binary(self, e: t.BinaryOp, st: State, ctx: Ctx, err: str | None) -> State:
        op = e.op
        if op in DAG_OPERATORS:
            st = self._pipeline_input(e.left, st) if op in (">>", "|>>", "||") else self._stage(e.left, st)
            return self._stage(e.right, st)
        if op == "|>":
            return self._pipe(e, st, ctx, err)
        if op == "??":
            st = self.expr(e.left, st, ctx.indirect(), err)
            return join(st, self.expr(e.right, st, ctx.indirect())) or st
        if op == "fallback":
            st = self.expr(e.left, st, ctx.indirect(), ERR_FALLBACK)
            return join(st, self.expr(e.right, st, ctx.indirect())) or st
        if op in COMPARISONS:
            why = f"compared with `{op}`"
        elif op == "+":
            why = "joined with `+`"
        else:
            why = f"used with `{op}`"
        st = self.expr(e.left, st, value_use(why))
        return self.expr(e.right, st, value_use(why))

    def _pipeline_input(self, e: t.Expr, st: State) -> State:
        if isinstance(e, t.BracketList):
            return self._stage(e, st)
        return self.expr(e, st, TEXT)

    def _stage(self, e: t.Expr, st: State) -> State:
        """An operand of `>>` or a DAG operator in stage position: agents named there run."""
        if isinstance(e, t.Name) and self.is_agent(e.id):
            return self._implicit(e, e.id, st)
        if isinstance(e, t.BracketList):
            for item in e.items:
                st = self._stage(item, st)
            return st
        if isinstance(e, t.BinaryOp) and e.op in DAG_OPERATORS:
            return self._binary(e, st, TEXT, None)
        if isinstance(e, t.Call) and e.run_entry is not None:
            return self.expr(e, st, value_use("used as a pipeline stage", rewritable=False))
        return self.expr(e, st, TEXT)

    def _pipe(self, e: t.BinaryOp, st: State, ctx: Ctx, err: str | None) -> State:
        right = e.right
        if isinstance(right, t.Member) and right.name == "run":
            st = self.expr(e.left, st, TEXT)
            agent = right.obj.id if isinstance(right.obj, t.Name) else self.snippet(right.obj)
            return self._run_site(e, agent, "run_member", right.obj, None, st, ctx, err, piped=e.left)
        if isinstance(right, t.Call) and right.run_entry is not None:
            st = self.expr(e.left, st, TEXT)
            return self._call(right, st, ctx, err, piped=e.left)
        if isinstance(right, t.Name) and self.is_agent(right.id):
            st = self.expr(e.left, st, TEXT)
            return self._implicit(right, right.id, st)
        target = self._callable_name(right)
        st = self.expr(e.left, st, value_use(f"piped into `{target}`"))
        if isinstance(right, t.Call):
            return self._call(right, st, DISCARD, None)
        if isinstance(right, t.Member):
            return self.expr(right.obj, st, DISCARD)
        return st

    def _callable_name(self, e: t.Expr) -> str:
        if isinstance(e, t.Call):
            return self._callable_name(e.callee)
        if isinstance(e, t.Name | t.Member):
            return self.snippet(e)
        return "a function"

    def _call(self, e: t.Call, st: State, ctx: Ctx, err: str | None, piped: t.Expr | None = None) -> State:
        entry = e.run_entry
        callee = e.callee
        if entry is not None and isinstance(callee, t.Member):
            for index, arg in enumerate(e.args):
                arg_ctx = RUN_ARG if entry in ("continue", "resume") and index == 0 and piped is None else TEXT
                st = self.expr(arg.value, st, arg_ctx)
            agent = callee.obj.id if isinstance(callee.obj, t.Name) else self.snippet(callee.obj)
            if not isinstance(callee.obj, t.Name):
                st = self.expr(callee.obj, st, DISCARD)
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
            st = self._call(callee.obj, st, TEXT, None)
            for arg in e.args:
                st = self.expr(arg.value, st, TEXT)
            return self._implicit(e, callee.name, st)
        is_print = isinstance(callee, t.Name) and callee.id == "print"
        arg_ctx = TEXT if is_print else value_use(f"passed to `{name}(...)`")
        if isinstance(callee, t.Member):
            st = self.expr(callee.obj, st, value_use(f"used to call `.{callee.name}(...)`", rewritable=False))
        for arg in e.args:
            st = self.expr(arg.value, st, arg_ctx)
        if isinstance(callee, t.Name) and self.ask("flow", callee.id) is True:
            runs = cast(frozenset[str], self.ask("runs", callee.id))
            line = self.line(e.span.start)
            self.flow_calls[id(e)] = FlowCall(callee.id, line, ctx, frozenset(st.ran_agents()), bool(self._loops))
            st = st.touched((a, f"flow `{callee.id}` (called on line {line}) runs {a}") for a in runs)
        return st

    def _implicit(self, node: t.Node, agent: str, st: State) -> State:
        site = self.sites.get(id(node))
        if site is None:
            site = Site(self._new_id(), agent, "implicit", node, self._unit)
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
        st: State,
        ctx: Ctx,
        err: str | None,
        piped: t.Expr | None = None,
    ) -> State:
        site = self.sites.get(id(node))
        if site is None:
            site = Site(self._new_id(), agent, kind, node, self._unit, receiver, call, piped)
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
        if ctx.kind == "bind" and ctx.direct and err is not ERR_OTHERWISE:
            site.bound_def = ctx.def_id
            self.defs[ctx.def_id].site = site
        return st.ran(agent, site.id)

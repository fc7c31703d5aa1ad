"""The walk over every executable body of one source (see the package docstring).

Each body (a flow, a test, a job block, a tool function, an ADT method, a top-level
statement) is walked once in evaluation order with the abstract :class:`State`, joined at
branches and iterated to a fixed point around loops. The walk records every run of an
agent (:class:`Site`), every definition and use of a variable, the calls of other flows
and the 2.x human-approval helpers; the rules turn those records into findings.
"""

from __future__ import annotations

from typing import cast

from nexa_lsp.analysis.migration.expressions import ExpressionWalker
from nexa_lsp.analysis.migration.program import python_words
from nexa_lsp.analysis.migration.state import (
    DISCARD,
    ERR_OTHERWISE,
    ERR_PROPAGATE,
    ERR_TRY,
    ERR_TRY_AGENT,
    HARNESS_SKIP,
    HOOKS,
    LOOP_LIMIT,
    TEXT,
    Body,
    Ctx,
    Guard,
    State,
    Use,
    join,
    join_all,
    value_use,
)
from nexa_lsp.syntax import tree as t


class Walker(ExpressionWalker):
    """Walks one executable body and records what it sees."""

    # ------------------------------------------------------------------ the unit

    def walk(self) -> None:
        """Walk the unit once; afterwards the records are final and ``env`` is let go."""
        spec = self.spec
        unit, statements = spec.unit, spec.statements
        entry = cast(frozenset[tuple[str, str]], self.ask("entry", unit.flow or ""))
        st = State({}, {}, entry)
        st = self._bind_names(st, unit, [p.name for p in spec.params])
        for stmt in statements:
            st = self.stmt(stmt, st)
        if unit.flow is not None:
            target = self._return_target(statements)
            for def_id in st.reaching(target):
                definition = self.defs.get(def_id)
                if definition is not None and definition.site is not None:
                    self.returned[def_id] = unit.flow
        self.env = None

    @staticmethod
    def _return_target(statements: list[t.Stmt]) -> str:
        """The variable a 2.x flow returns: its last top-level assignment (syntax reference 4.6)."""
        for stmt in reversed(statements):
            if isinstance(stmt, t.ExprStmt | t.Print) or (
                isinstance(stmt, t.BlockStmt) and stmt.keyword in HARNESS_SKIP
            ):
                continue
            if isinstance(stmt, t.Assign) and stmt.target_name is not None:
                return stmt.target_name.id
            break
        return "result"

    # ------------------------------------------------------------------ statements

    def block(self, block: t.Block | None, st: State) -> State:
        if block is None:
            return st
        for stmt in block.statements:
            st = self.stmt(stmt, st)
        return st

    def stmt(self, stmt: t.Stmt, st: State) -> State:
        previous = self._stmt
        self._stmt = stmt
        try:
            st = self._stmt_inner(stmt, st)
        finally:
            self._stmt = previous
        for collector in self._collectors:
            collector.append(st)
        return st

    def _stmt_inner(self, s: t.Stmt, st: State) -> State:
        if isinstance(s, t.Assign):
            return self._assign(s, st)
        if isinstance(s, t.ExprStmt):
            st = self.expr(s.expr, st, DISCARD, ERR_PROPAGATE if s.propagate else None)
            site = self.sites.get(id(s.expr))
            if site is not None and not s.propagate:
                site.expr_stmt = s
            return st
        if isinstance(s, t.Print):
            for arg in s.args:
                st = self.expr(arg.value, st, TEXT)
            return st
        if isinstance(s, t.If):
            return self._if(s, st)
        if isinstance(s, t.ForEach):
            st = self.expr(s.iterable, st, value_use("iterated by `for each`"))
            names = [s.item] + ([s.index] if s.index and s.index_span else [])
            return self._loop(st, lambda h: self.block(s.body, self._bind_names(h, s, names)))
        if isinstance(s, t.ForPattern):
            st = self.expr(s.iterable, st, value_use("iterated by `for`", rewritable=False))
            names = [n for n, _sp in s.pattern.bound_names()]
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
            st = self.expr(s.target, st, TEXT)
            then = self.block(s.then, st)
            other = self.block(s.otherwise, st) if s.otherwise is not None else st
            return join(then, other) or st
        if isinstance(s, t.Let):
            if s.pattern.kind == "name" and s.pattern.name is not None:
                definition = self._def_for(s, s.pattern.name)
                st = self.expr(s.value, st, Ctx("bind", def_id=definition.id, direct=True))
                return st.define(definition.name, definition.id)
            st = self.expr(s.value, st, value_use("destructured by `let`", rewritable=False))
            return self._bind_names(st, s, [n for n, _sp in s.pattern.bound_names()])
        if isinstance(s, t.Try):
            return self._try_block(s.body, [(s.handler, [s.error_name])], st, ERR_TRY, s)
        if isinstance(s, t.PythonBlock):
            for index, word in enumerate(python_words(s.code)):
                if word in st.defs:
                    self.uses[(id(s), index)] = Use(
                        word,
                        st.reaching(word),
                        value_use("read by `python!` code", rewritable=False),
                        self.at(s.span.start, s.span.start),
                    )
            return st
        if isinstance(s, t.KeywordStmt):
            return self._keyword(s, st)
        if isinstance(s, t.BlockStmt):
            return self._block_stmt(s, st)
        return st

    def _assign(self, s: t.Assign, st: State) -> State:
        target = s.target_name
        err = ERR_PROPAGATE if s.tail == "propagate" else ERR_OTHERWISE if s.tail == "otherwise" else None
        if target is None:
            st = self.expr(s.target, st, value_use("assigned to a member", rewritable=False))
            return self.expr(s.value, st, value_use("stored in a member or index", rewritable=False), err)
        definition = self._def_for(s, target.id)
        ctx = Ctx("bind", def_id=definition.id, direct=True)
        st = self.expr(s.value, st, ctx, err)
        if s.tail == "otherwise" and s.handler is not None:
            if isinstance(s.handler, t.Block):
                alt = self.block(s.handler, st)
            else:
                alt = self.expr(s.handler, st, ctx.indirect())
            st = join(st, alt) or st
        return st.define(target.id, definition.id)

    def _if(self, s: t.If, st: State) -> State:
        st = self._condition(s.condition, st, "tested in an `if` condition")
        self._guards.append(Guard(s.condition, "then"))
        then = self.block(s.then, st)
        self._guards[-1] = Guard(s.condition, "else")
        if isinstance(s.otherwise, t.If):
            other = self._if(s.otherwise, st)
        elif s.otherwise is not None:
            other = self.block(s.otherwise, st)
        else:
            other = st
        self._guards.pop()
        return join(then, other) or st

    def _while(self, s: t.While, st: State) -> State:
        exits: list[State] = []

        def body(head: State) -> State:
            tested = self._condition(s.condition, head, "tested in a `while` condition")
            exits.append(tested)
            self._guards.append(Guard(s.condition, "then"))
            try:
                return self.block(s.body, tested)
            finally:
                self._guards.pop()

        out = self._loop(st, body)
        return join_all([out, *exits[-1:]]) or out

    def _loop(self, st: State, body: Body, at_least_once: bool = False) -> State:
        """Iterate ``body`` to a fixed point; the result joins every way out of the loop."""
        jumps: list[State] = []
        self._loops.append(jumps)
        head = st
        out = st
        try:
            for _ in range(LOOP_LIMIT):
                jumps.clear()
                out = body(head)
                new_head = join_all([head, out, *jumps]) or head
                if new_head == head:
                    break
                head = new_head
        finally:
            self._loops.pop()
        ways_out = [out, *jumps] if at_least_once else [head, out, *jumps]
        return join_all(ways_out) or st

    def _try_block(
        self, body: t.Block, handlers: list[tuple[t.Block, list[str]]], st: State, why: str, node: object
    ) -> State:
        collected: list[State] = [st]
        self._collectors.append(collected)
        self._try.append(why)
        try:
            out = self.block(body, st)
        finally:
            self._try.pop()
            self._collectors.pop()
        start = join_all(collected) or st
        results = [out]
        for handler, names in handlers:
            results.append(self.block(handler, self._bind_names(start, node, names)))
        return join_all(results) or out

    def _keyword(self, s: t.KeywordStmt, st: State) -> State:
        if s.keyword == "defer":
            self._defer += 1
            try:
                for e in s.exprs:
                    st = self.expr(e, st, DISCARD)
            finally:
                self._defer -= 1
            return st
        reasons = {"assert": "asserted", "verify": "checked by `verify`", "pass": "sent to an actor with `pass`"}
        ctx = value_use(reasons.get(s.keyword, f"used by `{s.keyword}`"), rewritable=s.keyword == "assert")
        for e in s.exprs:
            st = self.expr(e, st, ctx)
        return st

    def _block_stmt(self, s: t.BlockStmt, st: State) -> State:
        names = [n for n, _sp in s.names]
        if s.keyword == "autoloop":
            return self._loop(st, lambda h: self.block(s.blocks[0] if s.blocks else None, h), at_least_once=True)
        if s.keyword == "try_agent" and s.blocks:
            return self._try_block(s.blocks[0], [(b, names) for b in s.blocks[1:]], st, ERR_TRY_AGENT, s)
        if s.keyword == "fork":
            for e in s.exprs:
                st = self.expr(e, st, value_use("merged by `fork`", rewritable=False))
            return self._bind_names(st, s, names)
        if s.keyword in HOOKS:
            self._hook += 1
            try:
                return self._loop(st, lambda h: self._seq(s.blocks, self._bind_names(h, s, names)))
            finally:
                self._hook -= 1
        return self._seq(s.blocks, st)

    def _seq(self, blocks: list[t.Block], st: State) -> State:
        for b in blocks:
            st = self.block(b, st)
        return st

    def _condition(self, cond: t.Condition, st: State, why: str) -> State:
        for part in cond.parts:
            st = self.expr(part, st, value_use(why))
        return st

"""Collecting the names one chunk mentions, from its nodes (never from its text).

Every name with the role its position gives it (see :class:`~nexa_lsp.analysis.names.RefRole`)
and the local variables of flow-like bodies. Nesting depth is the user's choice,
so expressions and statements are walked with a work list, not recursion.
"""

from __future__ import annotations

from collections.abc import Iterable

from nexa_lsp.analysis.names import BUILTIN_NAMES, BUILTIN_TYPES, LocalVar, NameRef, RefRole
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.tree import Span


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


class NameCollector:
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

"""The declarations the migration rules read: agents, tools, flows and server routes.

A flow's rewrite depends on the agents it runs (their protocol, memory and tools) and on
the other flows it calls or that call it; :class:`Program` answers those questions for
one source.
"""

from __future__ import annotations

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile


class Program:
    """What one source declares, as the migration rules look it up."""

    def __init__(self, source: SourceFile) -> None:
        items = source.items
        self.agents: dict[str, t.AgentDecl] = {i.name: i for i in items if isinstance(i, t.AgentDecl)}
        self.tools: dict[str, t.ToolDecl] = {i.name: i for i in items if isinstance(i, t.ToolDecl)}
        self.tool_functions: dict[str, t.ToolFunction] = {i.name: i for i in items if isinstance(i, t.ToolFunction)}
        self.flows: dict[str, t.FlowDecl] = {i.name: i for i in items if isinstance(i, t.FlowDecl)}
        self.routed: set[str] = {
            handler
            for item in items
            if isinstance(item, t.ServerDecl)
            for route in item.routes
            for handler, _span in route.handlers
        }
        self.flow_runs = self._flow_runs()

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

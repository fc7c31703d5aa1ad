"""What every migration rule reads about one walked unit: its records, the declarations,
and the shared judgement of whether a rewrite keeps the meaning.

A rule module (``rules/nxm0xx_*.py``) turns the records of a walk into :class:`Finding`
objects; :class:`RuleContext` gives it the facts it needs and records every fact it reads
from outside the unit (an agent's declaration, the callers of a flow, whether a name is
taken), so the findings can be reused while those facts stay the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from nexa_lsp.analysis.migration.program import AgentFacts
from nexa_lsp.analysis.migration.state import NONE, Ctx, FlowCall, Site
from nexa_lsp.analysis.migration.walker import Walker
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.tree import Span
from nexa_lsp.syntax.version import VersionPath

#: Longest fix title: a code action title is at most 60 characters, " (unsafe)" included.
TITLE_LIMIT = 51


def short(name: str, limit: int = 12) -> str:
    """``name`` for a title: cut with an ellipsis when longer than ``limit``."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def fit(*titles: str) -> str:
    """The first title that fits :data:`TITLE_LIMIT` (the last one, cut, otherwise)."""
    for title in titles:
        if len(title) <= TITLE_LIMIT:
            return title
    return titles[-1][: TITLE_LIMIT - 1] + "…"


@dataclass(eq=False)
class Finding:
    """One migration finding before it becomes a diagnostic (spans move with their chunk;
    messages hold line markers, see ``positions``)."""

    code: str
    message: str
    span: Span
    fixes: list[Fix] = field(default_factory=list)  # the first is the planned rewrite (safe or not)
    unnecessary: bool = False
    related: list[Related] = field(default_factory=list)
    #: Its diagnostics by (path, with fixes), when the message names no line (see ``plan``).
    converted: dict[tuple[VersionPath, bool, Severity], Diagnostic] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class RunCall:
    """A `.run` site as the NXM002 / NXM003 rules see it."""

    site: Site
    agent: str
    shown: str  # `A.run(...)` or `x |> A.run`
    earlier: list[Site]  # runs of the agent that may come right before this one
    first: bool  # no earlier run on some path
    removed: str  # how the message says `.run` goes away
    problems: list[str]  # why the rewrite would change the meaning
    output_edits: list[TextEdit]  # `.output` reads that keep the meaning
    inputs: list[t.Expr]


class FileFacts(Protocol):
    """What the rules may ask about the rest of the file."""

    path: VersionPath
    text: str

    def agent_facts(self, agent: str) -> AgentFacts: ...

    def callers(self, flow: str) -> list[tuple[FlowCall, Walker]]: ...

    def name_taken(self, name: str) -> bool: ...

    def rendered(self, text: str) -> str: ...


def _point_after(span: Span) -> Span:
    return Span(span.rel_end, span.rel_end, span.anchor)


class RuleContext:
    """The records of one walk, and what the rules read from the rest of the file."""

    def __init__(self, walk: Walker, facts: FileFacts) -> None:
        self.a = walk
        self.facts = facts
        self.text = facts.text  # the current text: read while building, never kept
        self.path = facts.path
        #: Every fact read from outside the unit, with the answer (see the module docstring).
        self.reads: dict[tuple[str, str], object] = {}

    def agent(self, name: str) -> AgentFacts:
        answer = self.facts.agent_facts(name)
        self.reads[("agent", name)] = answer
        return answer

    def callers(self, flow: str) -> list[tuple[FlowCall, Walker]]:
        answer = self.facts.callers(flow)
        self.reads[("callers", flow)] = tuple(call for call, _walk in answer)
        return answer

    def name_taken(self, name: str) -> bool:
        answer = self.facts.name_taken(name)
        self.reads[("taken", name)] = answer
        return answer

    def ext_reasons(self, site: Site) -> list[str]:
        """Why other flows make the rewrite unsafe, in the order of their rendered text (the
        order depends on line numbers, so it is read as a fact when there are several)."""
        if len(site.ext) < 2:
            return [why for _agent, why in site.ext]

        def key(item: tuple[str, str]) -> tuple[str, str]:
            shown = self.facts.rendered(item[1])
            self.reads[("rendered", item[1])] = shown
            return item[0], shown

        return [why for _agent, why in sorted(site.ext, key=key)]

    def at(self, start: int, end: int) -> Span:
        """A span of the unit's chunk for offsets of the current text."""
        return self.a.at(start, end)

    def run_call(self, site: Site) -> RunCall:
        earlier = [self.a.site_by_id[i] for i in sorted(site.history) if i != NONE]
        removed = "`.run` is removed in Nexa 3.0" if self.path is VersionPath.NEXA_30 else "Nexa 3.0 removes `.run`"
        problems, output_edits = self.value_problems(site)
        return RunCall(
            site,
            site.agent,
            f"{site.agent}.run(...)" if site.kind == "run" else f"x |> {site.agent}.run",
            earlier,
            NONE in site.history,
            removed,
            problems,
            output_edits,
            self.inputs(site),
        )

    # ------------------------------------------------------------------ run values

    @staticmethod
    def all_runs(walk: Walker, defs: frozenset[int]) -> bool:
        for def_id in defs:
            definition = walk.defs.get(def_id)
            if def_id == NONE or definition is None or definition.site is None:
                return False
        return True

    def ctx_outcome(self, ctx: Ctx, node: t.Node, seen: set[tuple[int, int]]) -> tuple[str | None, list[TextEdit]]:
        """Does a run reaching ``ctx`` mean the same as the 2.4 text? Edits make it so."""
        if ctx.kind in ("discard", "text", "run", "member"):
            return None, []
        if ctx.kind == "bind":
            return self.def_outcome(self.a, ctx.def_id, seen)
        if ctx.rewritable:
            return None, [TextEdit(_point_after(node.span), ".output")]
        return f"its result is {ctx.reason}", []

    def def_outcome(self, walk: Walker, def_id: int, seen: set[tuple[int, int]]) -> tuple[str | None, list[TextEdit]]:
        """How the run held by definition ``def_id`` of ``walk`` is used, through variables
        and callers of the flow that returns it: a problem, or the edits that keep the meaning."""
        if (id(walk), def_id) in seen:
            return None, []
        seen.add((id(walk), def_id))
        definition = walk.defs[def_id]
        edits: list[TextEdit] = []
        for use in sorted(walk.uses_by_def().get(def_id, []), key=lambda u: u.start):
            where = f"`{use.name}` is"
            line = walk.line(use.start)
            if use.ctx.kind in ("discard", "text", "run"):
                continue
            if use.ctx.kind == "member":
                if not self.all_runs(walk, use.defs):
                    return f"{where} read as `.{use.ctx.reason}` on line {line} where it may not hold a run", []
                continue
            if use.ctx.kind == "bind":
                problem, more = self.def_outcome(walk, use.ctx.def_id, seen)
                if problem:
                    return problem, []
                edits.extend(more)
                continue
            if use.ctx.rewritable and self.all_runs(walk, use.defs) and use.end > use.start:
                edits.append(TextEdit(_point_after(use.span), ".output"))
                continue
            if use.ctx.rewritable:
                return (
                    f"{where} {use.ctx.reason} on line {line}, where it holds a run on some paths and "
                    "other values on others"
                ), []
            return f"{where} {use.ctx.reason} on line {line}", []
        flow = walk.returned.get(def_id)
        for call, caller in self.callers(flow) if flow is not None else ():
            if call.ctx.kind == "bind":
                problem, _edits = self.def_outcome(caller, call.ctx.def_id, seen)
            elif call.ctx.kind == "value":
                problem = f"its result is {call.ctx.reason}"
            else:
                problem = None
            if problem:
                return (
                    f"`{definition.name}` is what flow `{flow}` returns, so its caller on line "
                    f"{call.line} would receive the run, and there {problem}"
                ), []
        return None, edits

    def value_problems(self, site: Site) -> tuple[list[str], list[TextEdit]]:
        problems: list[str] = []
        if site.err:
            problems.append(site.err)
        if site.in_try:
            problems.append(site.in_try)
        if site.in_defer:
            problems.append("it runs when the flow exits (`defer`), after runs the history rule cannot order")
        if site.in_hook:
            problems.append("it runs inside a lifecycle hook, at points the flow does not control")
        problem, edits = self.ctx_outcome(site.ctx, site.node, set())
        if problem:
            problems.append(problem)
        agent = self.agent(site.agent)
        if agent.declared:
            structured = agent.structured
            if structured and site.ctx.kind != "discard":
                problems.append(
                    f"{site.agent} returns `{structured}`: a 2.4 run gave the validated object, a 3.0 "
                    "run's output is its text"
                )
            approvals = agent.approval_tools
            if approvals:
                problems.append(
                    f"{site.agent} can call `{approvals[0]}`, which declares approval: 2.4 called it "
                    "without asking, a 3.0 run pauses in `waiting_approval` first"
                )
        call = site.call
        if call is not None and any(arg.name is not None for arg in call.args):
            problems.append("it passes named arguments, which 3.0 run entries do not take as input")
        return problems, edits

    def inputs(self, site: Site) -> list[t.Expr]:
        inputs = [site.piped] if site.piped is not None else []
        if site.call is not None:
            skip = 1 if site.kind in ("continue", "resume") and site.piped is None else 0
            inputs.extend(arg.value for arg in site.call.args[skip:])
        return inputs

    @staticmethod
    def empty(inputs: list[t.Expr]) -> bool:
        return all(isinstance(e, t.StringLit) and not e.value.strip() and not e.interpolations for e in inputs)

    # ------------------------------------------------------------------ `.run` -> execute / continue

    @staticmethod
    def run_word(site: Site) -> tuple[int, int] | None:
        """The span of the word ``run`` of the site's ``A.run`` (the parser's member-name span)."""
        member: t.Expr | None = None
        if site.call is not None:
            member = site.call.callee
        elif isinstance(site.node, t.BinaryOp):  # `x |> A.run`
            member = site.node.right
        if not isinstance(member, t.Member) or member.name != "run" or member.obj is not site.receiver:
            return None
        return member.name_span.start, member.name_span.end

    @staticmethod
    def open_paren_end(site: Site) -> int | None:
        """Where the ``(`` of the site's call ends (the parser's call-paren span)."""
        call = site.call
        if call is None or call.paren_span is None:
            return None
        return call.paren_span.end

    def related(self, earlier: list[Site], agent: str) -> list[Related]:
        return [Related(s.node.span, f"earlier run of {agent}") for s in earlier[:3]]

    def why_not(self, problems: list[str], no_edit: bool) -> str:
        if no_edit:
            return ". No automatic rewrite: the call's text could not be located"
        if not problems:
            return ""
        shown = "; ".join(problems[:2]) + ("; ..." if len(problems) > 2 else "")
        if self.path is VersionPath.NEXA_30:
            return f". The rewrite is offered only as an unsafe fix (review it): {shown}"
        return f". Not rewritten automatically, because the meaning would change: {shown}"

    @staticmethod
    def fix(title: str, edits: list[TextEdit], problems: list[str]) -> Fix:
        unique = dedupe_edits(edits)
        if problems:
            return Fix(title, tuple(unique), safe=False, why_unsafe="; ".join(problems))
        return Fix(title, tuple(unique))

    # ------------------------------------------------------------------ 3.0 run checks (spec 3.3)

    def origins(self, site: Site) -> tuple[str | None, list[Site]]:
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
        for def_id in site.defs_at.get(first.id, frozenset({NONE})):
            definition = self.a.defs.get(def_id)
            if definition is not None and definition.site is not None:
                runs.append(definition.site)
        return first.id, runs


def dedupe_edits(edits: Iterable[TextEdit]) -> list[TextEdit]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for edit in edits:
        key = (edit.span.start, edit.span.end, edit.new_text)
        if key not in seen:
            seen.add(key)
            out.append(edit)
    return out
